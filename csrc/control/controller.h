/* Step controller: decides the macro grid (DESIGN.md §2 "Step controller", shaped like SUNDIALS'
 * SUNAdaptController). Generic object {content, ops}.
 *
 *   propose(T, plan)            the next step from T: plan->T1, plan->H = T1 - T and plan->Hnom (> 0 when the step is
 *                               regular, T1 = T + Hnom on a uniform grid; 0 for start-up, shortened or explicit steps)
 *   judge(plan, est, accept)    optional: accept or reject the step just taken, given the estimator's record est
 *                               (cs_estimate; all zero without an estimator) (NULL: always accept)
 *   commit(plan)                the step was accepted: advance the controller's own state
 * propose must not change the state, so that a rejected step can be proposed again. may_reject tells the algorithm
 * whether it must save the units and the coupling before each step (rollback). */
#ifndef COSIM_CONTROLLER_H
#define COSIM_CONTROLLER_H

#include "common.h"

typedef struct cs_step_plan {
    double T, T1, H, Hnom;
    int kappa;                 /* degree κ of the coupling polynomials for this step (adaptive controllers, set by
                                * propose); -1: the coupling's own degree */
} cs_step_plan;

/* What an error estimator (control/estimator.h) reports of the step just taken and a controller's judge consumes
 * (SUNAdaptController's shape: the estimator measures, the controller decides). Filled anew by every estimate. */
enum { CS_EST_NGROUP = 3 };
typedef struct cs_estimate {
    double eps;                      /* the error test's value: a step passes with eps <= 1 */
    double norm[CS_EST_NGROUP];      /* per monitored group (Kraft: positions, velocities, coupling variables) the
                                      * norm behind eps, for the step-size rule; used[g] = 0: group not measured */
    int used[CS_EST_NGROUP];
    int tested;                      /* 1: eps is a real test (0: too little history to tell) */
    const double *u0, *u1;           /* the coupling variables at T_N (consistent) and T_{N+1} (candidate), all of
                                      * them (network order); valid until the next step */
    long integrations;               /* unit integrations the estimate took (comparative runs) */
} cs_estimate;

typedef struct cs_controller cs_controller;

typedef struct cs_controller_ops {
    int (*propose)(cs_controller *c, double T, cs_step_plan *p, cs_err *err);
    int (*judge)(cs_controller *c, const cs_step_plan *p, const cs_estimate *est, int *accept, cs_err *err);
    void (*commit)(cs_controller *c, const cs_step_plan *p);
    void (*destroy)(cs_controller *c);
    /* optional: the scheme could not converge on the step p (kraft2021 §19 corConvFail); return 1 when a smaller
     * step will be proposed (r = 0.25, Listing 3.3), 0 when the controller cannot retry (NULL: never) */
    int (*retry)(cs_controller *c, const cs_step_plan *p);
} cs_controller_ops;

/* Controller kinds (cs_controller.kind; type tests read this, never compare ops tables). */
enum { CS_CTL_FIXED = 0, CS_CTL_REJECT_TEST = 1, CS_CTL_KRAFT = 2, CS_CTL_ECCO = 3 };

/* What a controller counts (cs_controller_get_stats). */
typedef struct cs_controller_stats {
    long rejected;             /* attempts not kept: judged and rejected, or retried after the scheme failed */
} cs_controller_stats;

struct cs_controller {
    const cs_controller_ops *ops;
    void *content;
    int kind;                  /* CS_CTL_* */
    int may_reject;
    cs_controller_stats stats; /* written by the wrappers below only; read through cs_controller_get_stats */
};

/* The ops through these (optional ops' defaults here, once). */
static inline int cs_controller_propose(cs_controller *c, double T, cs_step_plan *p, cs_err *err) {
    return c->ops->propose(c, T, p, err);
}
static inline int cs_controller_judge(cs_controller *c, const cs_step_plan *p, const cs_estimate *est, int *accept,
                                      cs_err *err) {
    *accept = 1;
    int rc = c->ops->judge ? c->ops->judge(c, p, est, accept, err) : CS_OK;
    if (!rc && !*accept) c->stats.rejected++;
    return rc;
}
static inline void cs_controller_commit(cs_controller *c, const cs_step_plan *p) { c->ops->commit(c, p); }
static inline int cs_controller_retry(cs_controller *c, const cs_step_plan *p) {
    if (!c->ops->retry || !c->ops->retry(c, p)) return 0;
    c->stats.rejected++;
    return 1;
}
static inline void cs_controller_get_stats(const cs_controller *c, cs_controller_stats *s) { *s = c->stats; }

enum { CS_STARTUP_NONE = 0, CS_STARTUP_KRAFT = 1 };

/* Fixed macro step H from t0 to t_end (kraft2021 §5). startup = CS_STARTUP_KRAFT: the start-up grid of Listing 5.1,
 * steps factor*H*2^n until T = t0 + 2H, then H. grid (ngrid points from t0 to t_end, strictly increasing; copied)
 * replaces both. The last step ends exactly at t_end (shortened when t_end is not on the grid). */
int cs_fixed_controller_create(double t0, double t_end, double H, int startup, double factor, const double *grid,
                               long ngrid, cs_controller **out, cs_err *err);

/* Test controller: the fixed controller whose judge rejects each step listed in reject (indices N of accepted macro
 * steps) once, on its first attempt; the retry with the same step is accepted. Proves the rollback. */
int cs_reject_controller_create(double t0, double t_end, double H, const long *reject, int nreject,
                                cs_controller **out, cs_err *err);

/* Upper bound on the number of accepted steps a fixed controller makes (record capacity). */
long cs_fixed_controller_max_steps(const cs_controller *c);

void cs_controller_destroy(cs_controller *c);

#endif
