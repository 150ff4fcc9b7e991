/* Error estimator (DESIGN.md §2 "Estimator"): after the scheme step and the update of a macro step, before the step
 * controller judges it, the estimator measures the error of the candidate step T_N -> T_{N+1} (kraft2021 §8: exLE,
 * exMD, exCV; the implicit ones; ECCO's energy residual) into an estimate record (controller.h: cs_estimate) that the
 * controller's judge consumes. Generic object {content, ops}; each kind its own ops.
 *
 *   estimate(view, est)   fills est (zeroed before the call) for the step in view: est->eps >= 0 (a normalised
 *                         error: the controller accepts eps <= 1);
 *                         it may re-integrate units from their saved state at T_N (view->usnap, present when
 *                         needs_snapshot is set or the controller may reject) but must leave every unit as it found
 *                         it (at T_{N+1}, with the actual step's state)
 *   commit(view)          optional: the step was accepted (history of the estimator)
 *   destroy()             free content (cs_estimator_destroy then frees the object) */
#ifndef COSIM_ESTIMATOR_H
#define COSIM_ESTIMATOR_H

#include <stdlib.h>

#include "common.h"
#include "control/controller.h"
#include "coupling/coupling.h"
#include "input/input.h"
#include "network/network.h"
#include "parallel/share.h"

typedef struct cs_estimate_view {
    const cs_step_plan *plan;       /* T_N, T_{N+1}, H */
    int nsub;
    const cs_network *net;
    cs_coupling *coupling;
    const double *y0, *u0;          /* consistent outputs / inputs at T_N */
    const double *y1, *u1;          /* candidate outputs / inputs at T_{N+1} (after the update) */
    const double *upre;             /* predicted inputs at T_{N+1} (the input functions' end values) */
    void *const *usnap;             /* units saved at T_N, or NULL */
    const cs_input *const *used;    /* the input function each unit used on this step */
    /* iterative schemes (scheme op `predictor`), else NULL: the predictor j = 0 of the step (kraft2021 §8.5/8.6) */
    const double *xpre;             /* stacked states of all units after the predictor integration */
    const double *upre0;            /* predicted inputs u^pre_{N+1} (upre above holds the converged end values) */
    cs_share *share;                /* units distributed over processes (parallel/share.h), or NULL */
} cs_estimate_view;

/* Estimator kinds (cs_estimator.kind; type tests read this, never compare ops tables). Kraft's (kraft2021 §8,
 * control/adaptive.h): exLE, exMD, exCV on explicit schemes; imMD (Milne device with the predictor states, eq.
 * 3.18/3.19), imCV (eq. 3.20) with cosim.Implicit, waCV (the same with waveform relaxation) need the scheme's
 * predictor. ECCO's energy residual (control/ecco.h). */
enum { CS_EST_EXLE = 0, CS_EST_EXMD = 1, CS_EST_EXCV = 2, CS_EST_IMMD = 3, CS_EST_IMCV = 4, CS_EST_WACV = 5 };
enum { CS_EST_ECCO = 6 };   /* apart: chosen through ECCO's own options, not an estimator code of StepControl */

typedef struct cs_estimator cs_estimator;

typedef struct cs_estimator_ops {
    int (*estimate)(cs_estimator *e, const cs_estimate_view *v, cs_estimate *est, cs_err *err);
    void (*commit)(cs_estimator *e, const cs_estimate_view *v);
    void (*destroy)(cs_estimator *e);
} cs_estimator_ops;

struct cs_estimator {
    const cs_estimator_ops *ops;
    void *content;
    int kind;                       /* CS_EST_* */
    int needs_snapshot;             /* the master saves the units at T_N before every step */
};

/* The ops through these (optional ops' defaults here, once). */
static inline int cs_estimator_estimate(cs_estimator *e, const cs_estimate_view *v, cs_estimate *est, cs_err *err) {
    *est = (cs_estimate){0};
    return e->ops->estimate(e, v, est, err);
}
static inline void cs_estimator_commit(cs_estimator *e, const cs_estimate_view *v) {
    if (e->ops->commit) e->ops->commit(e, v);
}
static inline void cs_estimator_destroy(cs_estimator *e) {
    if (!e) return;
    if (e->ops && e->ops->destroy) e->ops->destroy(e);
    free(e);
}

#endif
