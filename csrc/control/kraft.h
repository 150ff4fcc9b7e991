/* The pieces of Kraft's macro-step and order controller (kraft2021 §8-§11, Listings 3.1-3.3, 4.1; eq. 5.1/5.2),
 * as pure functions without state: testable alone (cosim.control) and used by control/adaptive.c.
 *
 * Symbols: κ (kappa) is the degree of the coupling-variable polynomial; the step ratios of a macro step
 * T_N -> T_{N+1} are a_i = (T_{N+1} - T_{N+1-i}) / H, a_1 = 1 (kraft2021 §8.1). */
#ifndef COSIM_KRAFT_H
#define COSIM_KRAFT_H

#include "common.h"

#define CS_KRAFT_KMAX 7        /* error constants computed for κ <= 7: exMD's ratio C^{κ+1}/C^κ at κ_max = 6 */

enum { CS_ORDER_IDA = 0, CS_ORDER_CONSERVATIVE = 1, CS_ORDER_FIXED = 2 };

/* Error constants C^κ_pos, C^κ_vel of eqs. 3.11/3.15 in closed form (kraft2021 §8.1):
 *   C_pos = Σ_{k=0}^{κ-1} (-1)^k e_k(1/a_2, ..., 1/a_κ) / ((k+2)(k+3)),
 *   C_vel = Σ_{k=0}^{κ-1} (-1)^k e_k(1/a_2, ..., 1/a_κ) / ((k+1)(k+2)),
 * e_k the elementary symmetric polynomials; κ = 0: C_pos = 1/2, C_vel = 1. a holds a_2..a_κ (κ-1 values, each
 * >= 1 for macro steps in time order; any nonzero value is accepted). */
int cs_kraft_error_constants(int kappa, const double *a, double *cpos, double *cvel, cs_err *err);

/* Divided difference u[T_0, ..., T_{n-1}] of n >= 1 samples (distinct times, any order). */
double cs_kraft_divided_difference(int n, const double *T, const double *u);

/* Newton-form predictor difference (3.26): P_{κ+1}(t) - P_κ(t) = u[T_M..T_{M-κ-1}] Π_{j=0}^{κ} (t - T_{M-j}),
 * T and u newest first (κ+2 samples). */
double cs_kraft_newton_difference(int kappa, const double *T, const double *u, double t);

/* Weighted root-mean-square norm (3.21): sqrt(1/n Σ (ε_i W_i)^2); 0 for n = 0. */
double cs_kraft_wrms(int n, const double *eps, const double *w);

/* Order selection: Listing 3.2 (CS_ORDER_IDA) or 3.1 (CS_ORDER_CONSERVATIVE). sdn[j] = SDN(j) for j = 0..nsdn-1
 * (sdn[0] unused); a decrease needs SDN(1..κ+1), an increase SDN(κ+2): the decisions whose SDN are missing are not
 * taken. Returns κ_new in 0..k_max. */
int cs_kraft_select_order(int kappa, const double *sdn, int nsdn, int n_succ, int n_fail, int k_max, int strategy);

/* Step-ratio limits of Listing 3.3: r in, limited r out. dead_zone = 0 replaces the dead zone by r_min <= r <= r_max
 * when no attempt failed. */
double cs_kraft_limit_step_ratio(double r, int n_fail, double r_min, double r_max, int dead_zone, int corrector_failed);

/* Listing 4.1: the next micro step h given the time left to T_{N+1}: stretched by up to 10 % onto T_{N+1}, or the
 * remainder split in two equal steps when less than 2h is left. */
double cs_kraft_land_micro_step(double h, double remaining);

/* NRMSE (5.1/5.2) of Z (nt x nz, row-major) against Zref: sqrt(Σ_j nrmse_j^2) with
 * nrmse_j = sqrt(Σ_i (Zref_ij - Z_ij)^2 / Σ_i (Zref_ij - mean_j)^2). A reference column without variance gives
 * inf (or 0 if it matches exactly). */
double cs_kraft_nrmse(long nt, int nz, const double *Z, const double *Zref);

#endif
