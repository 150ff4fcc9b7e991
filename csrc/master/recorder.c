/* Recorder observer: the macro-point history of a run, written once into buffers the caller owns. */
/* Rows are short (a unit's few states): vector-loop set-up would cost more than it saves. No memcpy calls either:
 * their 16-byte loads of y and u, which the update has just written 8 bytes at a time, cannot take the values from
 * the store buffer and wait for the stores to retire (store-to-load forwarding fails): 0.5-1 ms of a 1e5-step
 * run, invisible in instruction counts. */
#pragma GCC optimize("no-tree-vectorize", "no-tree-loop-distribute-patterns")
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "master/observer.h"

typedef struct recorder {
    long cap, n, every;
    double *t, *x, *y, *u;
    int owns;                   /* growing recorder: owns the buffers and doubles them when full */
    int nx, ny, nu;
} recorder;

static int grow_buffers(recorder *r) {
    long cap = r->cap > 0 ? 2 * r->cap : 256;
    double *b[4] = {r->t, r->x, r->y, r->u};
    const size_t w[4] = {1, (size_t)r->nx, (size_t)r->ny, (size_t)r->nu};
    for (int q = 0; q < 4; q++) {
        double *nb = realloc(b[q], sizeof(double) * (w[q] * (size_t)cap + 1));
        if (!nb) return -1;
        b[q] = nb;
        if (q == 0) r->t = nb; else if (q == 1) r->x = nb; else if (q == 2) r->y = nb; else r->u = nb;
    }
    r->cap = cap;
    return 0;
}

/* A short row, copied 8 bytes at a time (see the pragma above) */
static inline void copy_row(double *restrict dst, const double *restrict src, int n) {
    for (const double *end = src + n; src < end;) *dst++ = *src++;
}

static int full(recorder *r, const cs_run_view *v, cs_err *err) {
    if (r->owns && !grow_buffers(r)) return CS_OK;
    if (r->owns)
        return cs_fail(err, CS_ERR_NOMEM, "recorder: out of memory for %ld records at t = %.10g", 2 * r->cap, v->t);
    return cs_fail(err, CS_ERR_NOMEM, "recorder: more records than the %ld reserved at t = %.10g", r->cap, v->t);
}

static inline int record(recorder *r, const cs_run_view *v, cs_err *err) {
    if (r->n >= r->cap) CS_TRY(full(r, v, err));
    long n = r->n;
    r->t[n] = v->t;
    double *restrict x = r->x + (size_t)n * v->nx;
    const double *const *xp = v->xp;
    for (int q = 0, nx = v->nx; q < nx; q++) x[q] = *xp[q];
    copy_row(r->y + (size_t)n * v->ny, v->y, v->ny);
    copy_row(r->u + (size_t)n * v->nu, v->u, v->nu);
    r->n = n + 1;
    return CS_OK;
}

static int rec_start(cs_observer *o, const cs_run_view *v, cs_err *err) { return record(o->content, v, err); }

static int rec_step(cs_observer *o, const cs_run_view *v, cs_err *err) {
    recorder *r = o->content;
    if (r->every > 1 && v->step % r->every && !v->final) return CS_OK;
    return record(r, v, err);
}

static void rec_destroy(cs_observer *o) {
    recorder *r = o->content;
    if (r && r->owns) { free(r->t); free(r->x); free(r->y); free(r->u); }
    free(r);
    o->content = NULL;
}

static int rec_none(cs_observer *o, const cs_run_view *v, cs_err *err) { return CS_OK; }

static const cs_observer_ops RECORDER_OPS = {.on_start = rec_start, .on_step = rec_step, .destroy = rec_destroy};
static const cs_observer_ops DENSE_OPS = {.on_start = rec_start, .on_step = rec_none, .on_output = rec_start,
                                          .destroy = rec_destroy};

int cs_recorder_create(long cap, double *t, double *x, double *y, double *u, long every, cs_observer **out,
                       cs_err *err) {
    *out = NULL;
    if (every < 1) return cs_fail(err, CS_ERR_ARG, "record_every: must be >= 1");
    cs_observer *o = calloc(1, sizeof *o);
    recorder *r = calloc(1, sizeof *r);
    if (!o || !r) { free(o); free(r); return cs_fail(err, CS_ERR_NOMEM, "recorder: out of memory"); }
    r->cap = cap; r->every = every;
    r->t = t; r->x = x; r->y = y; r->u = u;
    o->ops = &RECORDER_OPS;
    o->content = r;
    *out = o;
    return CS_OK;
}

int cs_dense_recorder_create(long cap, double *t, double *x, double *y, double *u, cs_observer **out, cs_err *err) {
    CS_TRY(cs_recorder_create(cap, t, x, y, u, 1, out, err));
    (*out)->ops = &DENSE_OPS;
    (*out)->skip = LONG_MAX; /* records at the output points only: no call at the macro points */
    return CS_OK;
}

long cs_recorder_count(const cs_observer *o) { return ((const recorder *)o->content)->n; }

int cs_growing_recorder_create(long cap, int nx, int ny, int nu, cs_observer **out, cs_err *err) {
    CS_TRY(cs_recorder_create(0, NULL, NULL, NULL, NULL, 1, out, err));
    recorder *r = (*out)->content;
    r->owns = 1;
    r->nx = nx; r->ny = ny; r->nu = nu;
    r->cap = cap > 1 ? cap / 2 : 0;
    if (grow_buffers(r)) {
        cs_observer_destroy(*out);
        *out = NULL;
        return cs_fail(err, CS_ERR_NOMEM, "recorder: out of memory");
    }
    return CS_OK;
}

void cs_recorder_buffers(const cs_observer *o, double **t, double **x, double **y, double **u) {
    const recorder *r = o->content;
    *t = r->t; *x = r->x; *y = r->y; *u = r->u;
}

int cs_recorder_hand_over(cs_observer *o, double **t, double **x, double **y, double **u) {
    recorder *r = o->content;
    if (!r->owns) return 0;
    r->owns = 0;
    *t = r->t; *x = r->x; *y = r->y; *u = r->u;
    return 1;
}

void cs_observer_destroy(cs_observer *o) {
    if (!o) return;
    if (o->ops && o->ops->destroy) o->ops->destroy(o);
    free(o);
}
