/* Observer: sees the run after the initial point and after every accepted macro step (DESIGN.md §2 "Observer").
 * Implementations: the recorder (master/recorder.c: macro-point records into caller-owned buffers), the user hook
 * and the interrupt check (master/hooks.c). on_step may return CS_STOPPED (stop the run, not an error) or an error
 * code (CS_ERR_INTERRUPTED for Ctrl-C). */
#ifndef COSIM_OBSERVER_H
#define COSIM_OBSERVER_H

#include "common.h"
#include "units/unit.h"

/* The states of one unit as the master reads them: its states() view (fixed for the unit's lifetime), or NULL for
 * a unit whose states are not accessible (recorded as 0), and their number. */
typedef struct cs_states_ref {
    const double *x;
    int nx;
} cs_states_ref;

/* What an observer may read: the state of the run at time t (after an accepted step, or the initial point). */
typedef struct cs_run_view {
    double t;
    long step;                  /* accepted macro steps so far */
    int final;                  /* t is the end of the run */
    int nsub;
    cs_unit *const *units;
    const cs_states_ref *xs;    /* per unit */
    const double *const *xp;    /* per state (nx): where it lives; an inaccessible state points at a 0 */
    const double *y, *u;        /* consistent outputs and inputs at t (stacked) */
    int nx, ny, nu;             /* totals */
} cs_run_view;

typedef struct cs_observer cs_observer;

typedef struct cs_observer_ops {
    int (*on_start)(cs_observer *o, const cs_run_view *v, cs_err *err);   /* optional */
    int (*on_step)(cs_observer *o, const cs_run_view *v, cs_err *err);    /* required */
    /* optional: a point of the user's output grid (dense output, between or at macro points) */
    int (*on_output)(cs_observer *o, const cs_run_view *v, cs_err *err);
    void (*destroy)(cs_observer *o);                                      /* optional */
} cs_observer_ops;

struct cs_observer {
    const cs_observer_ops *ops;
    void *content;
    long skip;   /* accepted steps the algorithm lets pass without on_step (set by the observer; 0: call each step) */
};

/* The ops through these (optional ops' defaults here, once). */
static inline int cs_observer_on_start(cs_observer *o, const cs_run_view *v, cs_err *err) {
    return o->ops->on_start ? o->ops->on_start(o, v, err) : CS_OK;
}
static inline int cs_observer_on_step(cs_observer *o, const cs_run_view *v, cs_err *err) {
    return o->ops->on_step(o, v, err);
}
static inline int cs_observer_on_output(cs_observer *o, const cs_run_view *v, cs_err *err) {
    return o->ops->on_output ? o->ops->on_output(o, v, err) : CS_OK;
}

void cs_observer_destroy(cs_observer *o);

/* Recorder: row n of t (cap), x (cap x nx), y (cap x ny), u (cap x nu) for each recorded point; buffers owned by
 * the caller (the bindings hand over NumPy arrays' memory: no copy at the end). `every`: record each every-th
 * accepted step (>= 1; the final point of the run is always recorded). Running out of capacity is an error. */
int cs_recorder_create(long cap, double *t, double *x, double *y, double *u, long every, cs_observer **out,
                       cs_err *err);
/* The same buffers filled at the points of an output grid (dense output, cs_algorithm_config.t_out) instead of the
 * macro points: the start point and every on_output call. */
int cs_dense_recorder_create(long cap, double *t, double *x, double *y, double *u, cs_observer **out, cs_err *err);
long cs_recorder_count(const cs_observer *o);
/* Growing recorder (runs whose number of steps is not known in advance, e.g. adaptive macro steps): owns its
 * buffers (rows of 1, nx, ny, nu doubles), starts with about `cap` rows and doubles them when full (no allocation
 * per step). cs_recorder_buffers reads the current buffers (valid until the next record); after the run,
 * cs_recorder_hand_over hands them over to the caller (who frees them with free()). */
int cs_growing_recorder_create(long cap, int nx, int ny, int nu, cs_observer **out, cs_err *err);
void cs_recorder_buffers(const cs_observer *o, double **t, double **x, double **y, double **u);
/* After the run: a growing recorder hands its buffers over (1, the caller frees them), others keep theirs (0). */
int cs_recorder_hand_over(cs_observer *o, double **t, double **x, double **y, double **u);

/* User hook: fn(ctx, v) after every every-th accepted step; fn returns CS_OK, CS_STOPPED or an error code. */
typedef int (*cs_hook_fn)(void *ctx, const cs_run_view *v, cs_err *err);
int cs_hook_observer_create(cs_hook_fn fn, void *ctx, long every, cs_observer **out, cs_err *err);

/* Interrupt check: check(ctx) about every `interval` seconds of wall time (counted in steps, re-estimated at each
 * check, so no clock is read per step); check returns CS_OK or CS_ERR_INTERRUPTED. */
typedef int (*cs_interrupt_fn)(void *ctx);
int cs_interrupt_observer_create(cs_interrupt_fn check, void *ctx, double interval, cs_observer **out, cs_err *err);

#endif
