/* Kraft's adaptive macro-step and order control (kraft2021 §8-§11, §19): one step controller (controller.h) and
 * one error estimator per kind (estimator.h); the estimator's record is what the controller reads.
 *
 * Estimators (kraft2021 §8, explicit schemes): exLE (local extrapolation, eq. 3.2-3.6), exMD (Milne device,
 * eq. 3.7-3.14 with the erratum: the actual step uses p^pre), exCV (coupling-variable local extrapolation, eq.
 * 3.16). exLE/exMD integrate every unit that has monitored states a second time from its saved state at T_N with
 * the comparative input polynomial (coupling op `comparative`); exCV needs no extra integration.
 * Controller: local error test (3.21-3.23), I-controller (3.27/3.28) with the a-priori estimate (3.26) after an
 * order change, Listing 3.3 limits with or without dead zone, safety factor Γ, H_min/H_max, the initial phase of
 * §19 (H doubled while κ rises), order control by Listing 3.2 (IDA), 3.1 (conservative) or a fixed κ; the degree
 * reaches the coupling through cs_step_plan.kappa (coupling op `set_degree`). */
#ifndef COSIM_ADAPTIVE_H
#define COSIM_ADAPTIVE_H

#include "kind.h"
#include "control/controller.h"
#include "control/estimator.h"
#include "control/kraft.h"
#include "coupling/coupling.h"
#include "unit_access.h"

#define CS_EST_COMPARATIVE(e) ((e) == CS_EST_EXLE || (e) == CS_EST_EXMD) /* second integration from T_N */
#define CS_EST_ON_STATES(e) (CS_EST_COMPARATIVE(e) || (e) == CS_EST_IMMD)  /* monitors states, else u */
enum { CS_GROUP_POS = 0, CS_GROUP_VEL = 1 }; /* monitored states: positions (order κ+3) or velocities (κ+2) */

typedef struct cs_kraft_opts {
    int estimator;              /* CS_EST_* */
    double rtol;                /* rtol of (3.22)/(3.23) */
    double safety;              /* Γ of (3.27)/(3.28) */
    double r_min, r_max;        /* Listing 3.3 */
    int dead_zone;              /* 1: dead zone [1, r_max) */
    int order;                  /* CS_ORDER_IDA (Listing 3.2), CS_ORDER_CONSERVATIVE (3.1), CS_ORDER_FIXED */
    int k_max;                  /* κ_max (fixed order: the κ) */
    double H_init, H_min, H_max;
    int initial_phase;          /* §19: H doubled and κ raised by one per step until κ_max, a failure or a reduction */
    int nstate;                 /* monitored states (exLE, exMD): global state index, CS_GROUP_*, atol */
    const int *state_index, *state_group;
    const double *state_atol;
    int nin;                    /* monitored coupling variables u (exCV; SDN and (3.26) of every estimator) */
    const int *in_index;
    const double *in_atol;
} cs_kraft_opts;

/* The controller and the estimator o->estimator (CS_EST_EXLE..CS_EST_WACV) for a run from t0 to t_end, after one
 * check of the options. The two share no state: the estimator's record (cs_estimate) is all the controller reads.
 * units/coupling: not owned (must outlive the objects). */
int cs_kraft_control_create(const cs_kraft_opts *o, double t0, double t_end, const cs_unit_access *units,
                            cs_coupling *coupling, cs_controller **ctl, cs_estimator **est, cs_err *err);

/* The parts alone (options not checked beyond what each reads). */
int cs_kraft_controller_create(const cs_kraft_opts *o, double t0, double t_end, cs_controller **out, cs_err *err);
int cs_kraft_estimator_create(const cs_kraft_opts *o, double t0, const cs_unit_access *units, cs_coupling *coupling,
                              cs_estimator **out, cs_err *err);

/* What the controller decided, per accepted step n: T[n] (end time), H[n], κ[n] and the estimate eps[n]
 * (max of the WRMS norms, the value of the local error test); rejected attempts: their end time and H. */
typedef struct cs_kraft_records {
    long n;
    const double *T, *H, *eps;
    const int *k;
    long nrej;
    const double *Trej, *Hrej;
    long comparative_steps;     /* unit integrations of the comparative runs (exLE, exMD) */
    int hmin_failed;            /* the run stopped because the step fell below H_min */
    long conv_fail;             /* steps retried after the scheme did not converge (corConvFail, r = 0.25) */
} cs_kraft_records;

/* 0 if ctl is not a Kraft controller. */
int cs_kraft_control_records(const cs_controller *ctl, cs_kraft_records *r);

/* The kind (master/registry.c). */
extern const cs_kind cs_control_kraft_kind;

#endif
