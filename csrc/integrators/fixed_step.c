/* Explicit Euler and classical Runge-Kutta 4 with n equal micro steps per macro step (h = H/n), or a fixed
 * micro step h (n = ceil(H/h)); moshagen.md §5 uses both (e.g. B8/B9 with H = 4h). */
/* The loops here run over a unit's nx states, mostly a handful: vector-loop set-up (alias checks, peeling) at
 * every macro step costs more than the vector arithmetic saves. */
#pragma GCC optimize("no-tree-vectorize")
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "integrators/stepper.h"

typedef struct fixed_content {
    int substeps;
    double h;
    double *k1, *k2, *k3, *k4, *xt; /* one allocation of 5 nx */
} fixed_content;

/* One explicit Euler step x += h f(t, x, u(t)) (the one definition, for both do_step ops below). */
static inline int euler_micro_step(cs_stepper *st, double *restrict k1, double t, double h, const cs_input *in,
                                   cs_err *err) {
    cs_model *m = st->model;
    double *restrict x = st->x;
    cs_input_eval(in, t, st->u);
    CS_TRY(cs_model_rhs(m, t, x, st->u, k1, err));
    for (int j = 0, nx = m->nx; j < nx; j++) x[j] += h * k1[j];
    return CS_OK;
}

/* n explicit Euler steps of length h from T (the last one ends exactly at T + H). */
static int euler_steps(cs_stepper *st, fixed_content *c, double T, double H, double h, long n, const cs_input *in,
                       cs_err *err) {
    const int tracing = st->tracing;
    for (long i = 0; i < n; i++) {
        int rc = euler_micro_step(st, c->k1, T + i * h, h, in, err); /* t by multiplication, not accumulation */
        if (rc) { st->stats.steps += i; return rc; }
        if (tracing) cs_stepper_trace_push(st, (i == n - 1) ? T + H : T + (i + 1) * h, err); /* reserved */
    }
    st->stats.steps += n;
    return CS_OK;
}

/* n classical Runge-Kutta 4 steps of length h from T. */
static int rk4_steps(cs_stepper *st, fixed_content *c, double T, double H, double h, long n, const cs_input *in,
                     cs_err *err) {
    cs_model *m = st->model;
    const int nx = m->nx;
    double *restrict x = st->x, *restrict u = st->u, *restrict xt = c->xt;
    double *restrict k1 = c->k1, *restrict k2 = c->k2, *restrict k3 = c->k3, *restrict k4 = c->k4;
    for (long i = 0; i < n; i++) {
        double t = T + i * h;
        double t1 = (i == n - 1) ? T + H : t + h;
        cs_input_eval(in, t, u);
        CS_TRY(cs_model_rhs(m, t, x, u, k1, err));
        for (int j = 0; j < nx; j++) xt[j] = x[j] + 0.5 * h * k1[j];
        cs_input_eval(in, t + 0.5 * h, u);
        CS_TRY(cs_model_rhs(m, t + 0.5 * h, xt, u, k2, err));
        for (int j = 0; j < nx; j++) xt[j] = x[j] + 0.5 * h * k2[j];
        CS_TRY(cs_model_rhs(m, t + 0.5 * h, xt, u, k3, err));
        for (int j = 0; j < nx; j++) xt[j] = x[j] + h * k3[j];
        cs_input_eval(in, t1, u);
        CS_TRY(cs_model_rhs(m, t1, xt, u, k4, err));
        for (int j = 0; j < nx; j++) x[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
        st->stats.steps++;
        if (st->tracing) cs_stepper_trace_push(st, (i == n - 1) ? T + H : T + (i + 1) * h, err); /* reserved */
    }
    return CS_OK;
}

/* The micro steps of one macro step: n (>= 1) and their length h = H/n. */
static inline int micro_steps(cs_stepper *st, const fixed_content *c, double H, long *n, double *h, cs_err *err) {
    *n = c->substeps;
    if (c->h > 0.0) {
        double r = H / c->h;
        r -= 1e-9 * r;
        if (!(r <= (double)CS_MAX_MICRO_STEPS)) /* also NaN; never convert an out-of-range double */
            return cs_fail(err, CS_ERR_ARG, "h: H/h = %g/%g needs %g micro steps per macro step, more than the cap "
                           "of %ld (CS_MAX_MICRO_STEPS); use a larger h", H, c->h, ceil(r), CS_MAX_MICRO_STEPS);
        *n = (long)ceil(r);
        if (*n < 1) *n = 1;
    }
    *h = H / (double)*n;
    if (st->tracing) CS_TRY(cs_stepper_trace_reserve(st, *n + 1, err));
    return CS_OK;
}

typedef int (*steps_fn)(cs_stepper *st, fixed_content *c, double T, double H, double h, long n, const cs_input *in,
                        cs_err *err);

/* One do_step op per method (euler_step, rk4_step): the dispatch is the ops table, and with `steps` inlined each
 * op's frame holds only its own loop. */
static inline int fixed_do_step(cs_stepper *st, double T, double H, const cs_input *in, steps_fn steps, cs_err *err) {
    fixed_content *c = st->content;
    long n = 1;
    double h = H;
    CS_TRY(micro_steps(st, c, H, &n, &h, err));
    CS_TRY(steps(st, c, T, H, h, n, in, err));
    st->t = T + H;
    return CS_OK;
}

static __attribute__((noinline)) int euler_step(cs_stepper *st, double T, double H, const cs_input *in, int restart,
                                               cs_err *err) {
    return fixed_do_step(st, T, H, in, euler_steps, err);
}

/* Euler with one micro step per macro step (substeps = 1, no h), the common case of a co-simulation benchmark or
 * a chain of small units: its own do_step op with a small frame (the same arithmetic as euler_steps with n = 1:
 * h = H / 1 = H, t = T); a traced step takes the general path. */
static int euler_one_step(cs_stepper *st, double T, double H, const cs_input *in, int restart, cs_err *err) {
    if (st->tracing) return euler_step(st, T, H, in, restart, err);
    CS_TRY(euler_micro_step(st, ((fixed_content *)st->content)->k1, T, H, in, err));
    st->stats.steps++;
    st->t = T + H;
    return CS_OK;
}

static int rk4_step(cs_stepper *st, double T, double H, const cs_input *in, int restart, cs_err *err) {
    return fixed_do_step(st, T, H, in, rk4_steps, err);
}

static void fixed_destroy(cs_stepper *st) {
    fixed_content *c = st->content;
    if (c) free(c->k1);
    free(c);
    st->content = NULL;
}

static const cs_stepper_ops EULER_OPS = {euler_step, fixed_destroy};
static const cs_stepper_ops EULER_ONE_OPS = {euler_one_step, fixed_destroy};
static const cs_stepper_ops RK4_OPS = {rk4_step, fixed_destroy};

int cs_fixed_step_create(cs_model *model, const cs_solver_opts *opts, cs_stepper **out, cs_err *err) {
    if (opts->h <= 0.0 && opts->substeps < 1)
        return cs_fail(err, CS_ERR_ARG, "solver: substeps must be >= 1 (or give a positive micro step h)");
    if (opts->h <= 0.0 && opts->substeps > CS_MAX_MICRO_STEPS)
        return cs_fail(err, CS_ERR_ARG, "substeps: %d exceeds the cap of %ld micro steps per macro step "
                       "(CS_MAX_MICRO_STEPS)", opts->substeps, CS_MAX_MICRO_STEPS);
    double *mem;
    const cs_stepper_ops *ops = opts->kind == CS_SOLVER_RK4                ? &RK4_OPS
                                : opts->h <= 0.0 && opts->substeps == 1 ? &EULER_ONE_OPS
                                                                        : &EULER_OPS;
    cs_stepper *st = cs_stepper_new_empty_with(model, ops, sizeof(fixed_content), 5 * (size_t)model->nx, &mem, err);
    if (!st) return CS_ERR_NOMEM;
    fixed_content *c = st->content;
    c->substeps = opts->substeps;
    c->h = opts->h;
    c->k1 = mem; c->k2 = mem + model->nx; c->k3 = c->k2 + model->nx; c->k4 = c->k3 + model->nx;
    c->xt = c->k4 + model->nx;
    *out = st;
    return CS_OK;
}
