/* ECCO: energy-conservation-based co-simulation (Sadjina et al.; libcosim's ecco_algorithm), as an error estimator
 * (control/estimator.h) plus a step controller (control/controller.h) on the shared interfaces.
 *
 * Power bonds: bond b couples side a and side b through effort/flow pairs (one pair per dimension d; multi-
 * dimensional bonds allowed). Each signal is an output (its value y(T_{N+1}) after the step) or an input (the value
 * the unit actually applied at T_{N+1}-, i.e. the end value of its input function). The powers
 *     P_a = sum_d e_a,d f_a,d ,   P_b = sum_d e_b,d f_b,d
 * agree for an exact coupling; the energy residual of the step is  dE_b = |P_a - P_b| H  and the energy level
 * E_b = max(|P_a|, |P_b|) H. The error measure is the WRMS over the bonds
 *     eps = sqrt( (1/n_b) sum_b ( dE_b / (atol + rtol E_b) )^2 ).
 * PI controller (as libcosim's ecco_algorithm): after an accepted step with eps, eps_prev > 0,
 *     H_new = clamp( H * clamp( safety * eps^(-kI-kP) * eps_prev^(kP), r_min, r_max ), H_min, H_max );
 * the step is kept when eps or eps_prev is 0. Non-rejecting by default (libcosim); with reject set, a step with
 * eps > 1 and H > H_min is rolled back and retried with H * clamp(safety * eps^(-kI-kP), r_min, 1) (>= H_min). */
#ifndef COSIM_ECCO_H
#define COSIM_ECCO_H

#include "kind.h"
#include "control/controller.h"
#include "control/estimator.h"

typedef struct cs_ecco_spec {
    int nbonds;
    const int *bond_off;   /* nbonds + 1: bond b has the dimensions bond_off[b] .. bond_off[b+1]-1 */
    const int *sig;        /* 4 per dimension: effort_a, flow_a, effort_b, flow_b; code >= 0: global output index,
                            * code < 0: global input index -(code + 1) */
    double rtol, atol, safety, kP, kI, H_min, H_max, r_min, r_max;
    int reject;            /* roll back steps with eps > 1 */
} cs_ecco_spec;

/* Validates the spec against ny outputs / nu inputs (copied). */
int cs_ecco_estimator_create(const cs_ecco_spec *s, int ny, int nu, cs_estimator **out, cs_err *err);
/* dE_b = |P_a - P_b| H of the last estimate per bond (nbonds values; stable pointer). */
const double *cs_ecco_residuals(const cs_estimator *e);

/* Steps from t0 to t_end starting with H0 in [H_min, H_max]; the last step ends exactly at t_end. */
int cs_ecco_controller_create(const cs_ecco_spec *s, double t0, double t_end, double H0, cs_controller **out,
                              cs_err *err);
/* Upper bound on the accepted steps ((t_end - t0) / H_min + 2), -1 if it does not fit a long. */
long cs_ecco_max_steps(const cs_ecco_spec *s, double t0, double t_end);

/* The kind (master/registry.c). */
extern const cs_kind cs_control_ecco_kind;

#endif
