/* Observers that call out of the engine: the user's step hook and the Ctrl-C check. */
#include <stdlib.h>
#include <time.h>

#include "master/observer.h"

typedef struct hook {
    cs_hook_fn fn;
    void *ctx;
    long every;
} hook;

static int hook_step(cs_observer *o, const cs_run_view *v, cs_err *err) {
    hook *h = o->content;
    if (h->every > 1 && v->step % h->every) return CS_OK;
    return h->fn(h->ctx, v, err);
}

static void free_content(cs_observer *o) { free(o->content); o->content = NULL; }

static const cs_observer_ops HOOK_OPS = {.on_step = hook_step, .destroy = free_content};

int cs_hook_observer_create(cs_hook_fn fn, void *ctx, long every, cs_observer **out, cs_err *err) {
    *out = NULL;
    if (!fn) return cs_fail(err, CS_ERR_ARG, "step_finished: no function");
    if (every < 1) return cs_fail(err, CS_ERR_ARG, "step_finished_every: must be >= 1");
    cs_observer *o = calloc(1, sizeof *o);
    hook *h = calloc(1, sizeof *h);
    if (!o || !h) { free(o); free(h); return cs_fail(err, CS_ERR_NOMEM, "observer: out of memory"); }
    h->fn = fn; h->ctx = ctx; h->every = every;
    o->ops = &HOOK_OPS;
    o->content = h;
    *out = o;
    return CS_OK;
}

/* The interval between checks is counted in steps: after each check the count is rescaled so that the next check
 * comes about `interval` seconds later (one clock read per check, none per step). */
typedef struct interrupt {
    cs_interrupt_fn check;
    void *ctx;
    double interval, last;
    long every;                /* steps between checks, re-estimated at each check */
} interrupt;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int interrupt_start(cs_observer *o, const cs_run_view *v, cs_err *err) {
    interrupt *q = o->content;
    q->last = now();
    q->every = 1;
    o->skip = 0;
    return CS_OK;
}

/* Called every q->every accepted steps (the algorithm skips the others: o->skip). */
static int interrupt_step(cs_observer *o, const cs_run_view *v, cs_err *err) {
    interrupt *q = o->content;
    double t = now(), dt = t - q->last;
    q->last = t;
    double scale = dt > 0.0 ? q->interval / dt : 8.0;
    if (scale > 8.0) scale = 8.0;
    long next = (long)(q->every * scale);
    q->every = next < 1 ? 1 : next > (1L << 20) ? (1L << 20) : next;
    o->skip = q->every - 1;
    if (q->check(q->ctx)) return cs_fail(err, CS_ERR_INTERRUPTED, "interrupted at t = %.10g", v->t);
    return CS_OK;
}

static const cs_observer_ops INTERRUPT_OPS = {.on_start = interrupt_start, .on_step = interrupt_step,
                                              .destroy = free_content};

int cs_interrupt_observer_create(cs_interrupt_fn check, void *ctx, double interval, cs_observer **out, cs_err *err) {
    *out = NULL;
    if (!check || !(interval > 0.0)) return cs_fail(err, CS_ERR_ARG, "interrupt: need a check and an interval > 0");
    cs_observer *o = calloc(1, sizeof *o);
    interrupt *q = calloc(1, sizeof *q);
    if (!o || !q) { free(o); free(q); return cs_fail(err, CS_ERR_NOMEM, "observer: out of memory"); }
    q->check = check; q->ctx = ctx; q->interval = interval;
    q->every = 1;
    o->ops = &INTERRUPT_OPS;
    o->content = q;
    *out = o;
    return CS_OK;
}
