/* The co-simulation master (DESIGN.md §2 "Algorithm", libcosim's shape): an algorithm over units, a network, a
 * coupling, a scheme, a step controller and observers, none of which it owns.
 *
 * Call order: cs_algorithm_create -> cs_algorithm_initialize (start values, consistent initial coupling values
 * u_0 = phi(y_0), kraft2021 §4.3) -> cs_algorithm_do_step ... or cs_algorithm_run -> cs_algorithm_destroy.
 *
 * One macro step T_N -> T_{N+1} is a transaction (kraft2021 §5, busch2016 §2):
 *   save      units and coupling history (only when the controller may reject)
 *   predict   the coupling extrapolates every exchanged output on [T_N, T_{N+1}]
 *   scheme    the units step (Jacobi / Gauss-Seidel)
 *   update    outputs and inputs at T_{N+1}: consistent, u = L g(x, u) + r solved by the network (kraft2021 eq.
 *             2.22), or simplified, y = g(x, ũ(T_{N+1})) with the predicted inputs (black-box tools; costs an order
 *             with feed-through, kraft2021 App. B); Hermite: output rates y' (consistent or lagged, moshagen eq. 90)
 *   estimate  error estimate eps of the candidate step (control/estimator.h; 0 without an estimator)
 *   judge     accept: divergence check, commit the history, advance the controller, observers;
 *             reject: restore units and coupling exactly and ask the controller again.
 *   a scheme that does not converge (CS_ERR_CONVERGENCE) is retried like a rejection when the controller has the
 *   optional op retry (kraft2021 §19 corConvFail: r = 0.25); otherwise its error ends the run.
 * The master never touches a model or a state vector: it reads states only through the units' states() view for
 * the divergence check. */
#ifndef COSIM_ALGORITHM_H
#define COSIM_ALGORITHM_H

#include "control/controller.h"
#include "control/estimator.h"
#include "coupling/coupling.h"
#include "master/observer.h"
#include "network/network.h"
#include "schemes/scheme.h"
#include "units/unit.h"

typedef struct cs_algorithm_config {
    int nsub;
    cs_unit **units;            /* not owned */
    cs_network *net;            /* not owned */
    cs_coupling *coupling;      /* not owned */
    cs_scheme *scheme;          /* not owned */
    cs_controller *controller;  /* not owned */
    cs_estimator *estimator;    /* not owned; NULL: eps = 0 */
    cs_observer **observers;    /* not owned */
    int nobs;
    int update;                 /* CS_UPDATE_* */
    double divergence_bound;    /* stop when |state| or |output| exceeds it (<= 0: only non-finite values stop) */
    int continue_always;        /* the units' input continues across macro points (monolithic system) */
    double t0, t_end;
    const double *x0;           /* stacked start values (units' nx), copied at initialize */
    const double *t_out;        /* optional output grid (dense output): t_out[0] = t0 < ... ; observers' on_output
                                 * sees every point; between macro points the units re-integrate from T_N with the
                                 * step's own input functions (exact for exact LTI units) */
    long nout;
    int timing;                 /* wall clocks of the interface work and of the rollback snapshots */
    cs_share *share;            /* not owned; units distributed over processes (parallel/share.h), or NULL: the
                                 * scheme, the estimator and the dense output step only this process's units and
                                 * exchange the results, so that every process holds the same data */
} cs_algorithm_config;

/* Timing of a run (cfg.timing): seconds in the scheme (units stepping, incl. waits), in the interface (predict,
 * update, divergence check, accept: kraft2021 §16.3 part 5) and in save/restore of the units and coupling. */
typedef struct cs_algorithm_timing {
    double scheme, interface, save;
    double run;                 /* all macro steps: scheme + the master's serial part (interface, save, control, output) */
} cs_algorithm_timing;

typedef struct cs_algorithm cs_algorithm;

int cs_algorithm_create(const cs_algorithm_config *cfg, cs_algorithm **out, cs_err *err);
int cs_algorithm_initialize(cs_algorithm *a, cs_err *err);
/* One accepted macro step (rejections retried inside). */
int cs_algorithm_do_step(cs_algorithm *a, cs_err *err);
/* Steps until t_end. Returns CS_OK, CS_STOPPED (an observer stopped the run) or an error; the observers have seen
 * every accepted step (partial result). */
int cs_algorithm_run(cs_algorithm *a, cs_err *err);
void cs_algorithm_destroy(cs_algorithm *a);
/* Replace the observers (before initialize). */
void cs_algorithm_set_observers(cs_algorithm *a, cs_observer **obs, int n);

double cs_algorithm_time(const cs_algorithm *a);
long cs_algorithm_steps(const cs_algorithm *a);
long cs_algorithm_rejected(const cs_algorithm *a);
/* The view observers get (current time, outputs, inputs). */
void cs_algorithm_view(const cs_algorithm *a, cs_run_view *v);
void cs_algorithm_get_timing(const cs_algorithm *a, cs_algorithm_timing *t);

#endif
