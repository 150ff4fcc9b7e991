/* Adams-Bashforth 2 with n equal micro steps per macro step (h = H/n), restarted at every macro point with a
 * one-step starter (moshagen §4.2.3, moshagen.md §3.8 "multistep pitfall"):
 *     x_1     = starter step (explicit Euler, local error O(h²), or Heun, O(h³)),
 *     x_{j+1} = x_j + h (3/2 f_j - 1/2 f_{j-1}),  j >= 1.
 * The start-up error recurs at every macro step: with an Euler starter the co-simulation drops to order 1 even
 * for H = n h with n fixed (spec P1), with Heun it keeps order 2. */
#include <stdlib.h>
#include <string.h>

#include "integrators/stepper.h"

typedef struct ab2_content {
    int heun;
    int substeps;
    double *f0, *f1, *xt;   /* f_{j-1}, f_j, Heun stage */
} ab2_content;

static int ab2_step(cs_stepper *st, double T, double H, const cs_input *in, int restart, cs_err *err) {
    ab2_content *c = st->content;
    cs_model *m = st->model;
    const int nx = m->nx;
    const long n = c->substeps;
    const double h = H / (double)n;
    double *x = st->x, *u = st->u;
    for (long i = 0; i < n; i++) {
        const double t = T + i * h;
        cs_input_eval(in, t, u);
        CS_TRY(cs_model_rhs(m, t, x, u, c->f1, err));
        if (i == 0) {
            if (!c->heun) {
                for (int j = 0; j < nx; j++) x[j] += h * c->f1[j];
            } else {
                const double t1 = (n == 1) ? T + H : t + h;
                for (int j = 0; j < nx; j++) c->xt[j] = x[j] + h * c->f1[j];
                cs_input_eval(in, t1, u);
                CS_TRY(cs_model_rhs(m, t1, c->xt, u, c->f0, err));
                for (int j = 0; j < nx; j++) x[j] += 0.5 * h * (c->f1[j] + c->f0[j]);
            }
        } else {
            for (int j = 0; j < nx; j++) x[j] += h * (1.5 * c->f1[j] - 0.5 * c->f0[j]);
        }
        double *tmp = c->f0; c->f0 = c->f1; c->f1 = tmp;   /* f_j becomes f_{j-1} */
        st->stats.steps++;
    }
    st->stats.restarts++;
    st->t = T + H;
    return CS_OK;
}

static void ab2_destroy(cs_stepper *st) {
    ab2_content *c = st->content;
    if (c) free(c->xt);
    free(c);
    st->content = NULL;
}

static const cs_stepper_ops AB2_OPS = {ab2_step, ab2_destroy};

int cs_ab2_create(cs_model *model, const cs_solver_opts *opts, cs_stepper **out, cs_err *err) {
    if (opts->substeps < 1 || opts->substeps > CS_MAX_MICRO_STEPS)
        return cs_fail(err, CS_ERR_ARG, "substeps: must be in 1..%ld, got %d", CS_MAX_MICRO_STEPS, opts->substeps);
    if (opts->starter != CS_AB2_EULER && opts->starter != CS_AB2_HEUN)
        return cs_fail(err, CS_ERR_ARG, "starter: unknown starter code %d", opts->starter);
    double *mem;
    cs_stepper *st = cs_stepper_new_empty_with(model, &AB2_OPS, sizeof(ab2_content), 3 * (size_t)model->nx, &mem,
                                               err);
    if (!st) return CS_ERR_NOMEM;
    ab2_content *c = st->content;
    c->heun = opts->starter == CS_AB2_HEUN;
    c->substeps = opts->substeps;
    c->xt = mem; c->f0 = mem + model->nx; c->f1 = c->f0 + model->nx;
    *out = st;
    return CS_OK;
}
