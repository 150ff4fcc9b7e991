/* The co-simulation master: the macro-step loop (DESIGN.md §1 "master").
 *
 * Call order (as in libcosim's algorithm/simulator separation): the caller creates models and steppers, fills a
 * cs_master_config and calls cs_master_run, which owns nothing but its workspace and the result arrays.
 *
 * One macro step T_N -> T_{N+1} = T_N + H (kraft2021 §5, busch2016 §2):
 *   1. every exchanged output y_j gets a polynomial approximation on [T_N, T_{N+1}] (coupling/approx.h):
 *      extrapolated from y(T_N), y(T_{N-1}), ...; under Gauss-Seidel, outputs of subsystems already advanced
 *      in this step are interpolated through y(T_{N+1}), y(T_N), ... (busch2016 eq. 13);
 *   2. subsystem i integrates with the input function u_i(t) = L_i y~(t) + r_i (Jacobi: all from step 1 and
 *      independent; Gauss-Seidel: in the given order);
 *   3. update at T_{N+1}: outputs and inputs made consistent by solving u = L g(x, u) + r (kraft2021 eq. 2.22,
 *      "consistent"), or outputs evaluated with the predicted inputs u~(T_{N+1}) ("simplified", the black-box
 *      variant that costs an order with feed-through, kraft2021 App. B);
 *   4. (Hermite) output derivatives y' at T_{N+1}, from the consistent inputs or the lagged ones (moshagen eq. 90);
 *   5. divergence check, history and record. */
#ifndef COSIM_MASTER_H
#define COSIM_MASTER_H

#include "coupling/approx.h"
#include "coupling/network.h"
#include "integrators/stepper.h"

enum { CS_SCHEME_JACOBI = 0, CS_SCHEME_GAUSS_SEIDEL = 1 };
enum { CS_UPDATE_CONSISTENT = 0, CS_UPDATE_SIMPLIFIED = 1 };
enum { CS_DERIV_CONSISTENT = 0, CS_DERIV_LAGGED = 1 };
enum { CS_STARTUP_NONE = 0, CS_STARTUP_KRAFT = 1 };

typedef struct cs_master_config {
    int nsub;
    cs_stepper **steppers;      /* not owned; their models form the network */
    cs_network *net;            /* not owned, initialised by the caller */
    const double *x0;           /* stacked initial states (net->nx) */
    int scheme;                 /* CS_SCHEME_* */
    const int *order;           /* Gauss-Seidel order (permutation of 0..nsub-1); NULL = as given */
    cs_approx_spec approx;
    int deriv_mode;             /* CS_DERIV_* (Hermite only) */
    int update;                 /* CS_UPDATE_* */
    double t0, t_end, H;
    int startup;                /* CS_STARTUP_KRAFT: kraft2021 Listing 5.1 start-up grid */
    double startup_factor;      /* first reduced step = factor * H (Listing 5.1: 1e-5) */
    double divergence_bound;    /* stop when a state exceeds it in magnitude (<= 0: only non-finite values stop) */
    int restart_each_step;      /* re-initialise integrators at macro points (co-simulation: 1) */
    const double *grid;         /* optional explicit macro grid T_0 = t0 < T_1 < ... < T_n = t_end (overrides H) */
    long ngrid;
} cs_master_config;

typedef struct cs_master_result {
    long n, cap;                /* records written, capacity */
    double *t, *x, *y, *u;      /* cap, cap*nx, cap*ny, cap*nu (row per macro point) */
    long macro_steps;
    long newton_iterations;
} cs_master_result;

/* Maximum number of records a run with this configuration can produce. */
long cs_master_capacity(const cs_master_config *cfg);
int cs_master_result_alloc(cs_master_result *res, long cap, int nx, int ny, int nu);
void cs_master_result_free(cs_master_result *res);

/* Run the co-simulation. On failure the records up to the last completed macro step stay in `res` (partial result)
 * and the error code is returned (CS_ERR_DIVERGED, CS_ERR_SOLVER, CS_ERR_CALLBACK, ...). */
int cs_master_run(const cs_master_config *cfg, cs_master_result *res, cs_err *err);

#endif
