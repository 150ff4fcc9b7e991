#include "integrators/stepper.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

cs_stepper *cs_stepper_new_empty(cs_model *model, const cs_stepper_ops *ops, cs_err *err) {
    cs_stepper *st = calloc(1, sizeof *st);
    if (st) {
        st->x = calloc((size_t)model->nx + 1, sizeof(double));
        st->u = calloc((size_t)model->nu + 1, sizeof(double));
    }
    if (!st || !st->x || !st->u) {
        if (st) { free(st->x); free(st->u); free(st); }
        cs_fail(err, CS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    st->model = model;
    st->ops = ops;
    return st;
}

cs_stepper *cs_stepper_new_empty_with(cs_model *model, const cs_stepper_ops *ops, size_t content_size, size_t nwork,
                                      double **work, cs_err *err) {
    cs_stepper *st = cs_stepper_new_empty(model, ops, err);
    if (!st) return NULL;
    void *c = calloc(1, content_size);
    double *mem = malloc(sizeof(double) * (nwork + 1));
    if (!c || !mem) {
        free(c); free(mem);
        cs_stepper_free_empty(st); /* the content's destroy must not run on a content that does not exist */
        cs_fail(err, CS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    st->content = c;
    *work = mem;
    return st;
}

void cs_stepper_destroy(cs_stepper *st) {
    if (st && st->ops && st->ops->destroy) st->ops->destroy(st);
    cs_stepper_free_empty(st);
}

void cs_stepper_free_empty(cs_stepper *st) {
    if (!st) return;
    free(st->x);
    free(st->u);
    free(st->tr_t);
    free(st->tr_x);
    free(st);
}

int cs_stepper_trace_reserve(cs_stepper *st, long n, cs_err *err) {
    if (n <= st->tr_cap) return CS_OK;
    size_t nx = (size_t)st->model->nx;
    double *t = realloc(st->tr_t, sizeof(double) * (size_t)n);
    if (t) st->tr_t = t;
    double *x = t ? realloc(st->tr_x, sizeof(double) * (size_t)n * (nx ? nx : 1)) : NULL;
    if (!t || !x) return cs_fail(err, CS_ERR_NOMEM, "subsystem %s: out of memory (micro-step trace)", st->model->name);
    st->tr_x = x;
    st->tr_cap = n;
    return CS_OK;
}

int cs_stepper_step_traced(cs_stepper *st, double T, double H, const cs_input *in, int restart, cs_err *err) {
    st->tr_n = 0;
    CS_TRY(cs_stepper_trace_push(st, T, err));
    int rc = cs_stepper_do_step(st, T, H, in, st->reset ? CS_RESTART : restart, err);
    if (rc == CS_OK) st->reset = 0;
    /* integrators without micro steps of their own (exact) leave only the start point: add the end point */
    if (rc == CS_OK && st->tr_t[st->tr_n - 1] < T + H) rc = cs_stepper_trace_push(st, T + H, err);
    return rc;
}

int cs_stepper_check_finite(const cs_stepper *st, double T, double H, cs_err *err) {
    for (int i = 0; i < st->model->nx; i++)
        if (!(fabs(st->x[i]) <= 1.79e308))
            return cs_fail(err, CS_ERR_DIVERGED, "subsystem %s: state x[%d] became non-finite in [%.10g, %.10g]",
                           st->model->name, i, T, T + H);
    return CS_OK;
}

void cs_stepper_set_state(cs_stepper *st, double t, const double *x) {
    st->reset = 1;
    st->gen = 0;
    st->t = t;
    memcpy(st->x, x, sizeof(double) * st->model->nx);
}

int cs_stepper_state_alloc(const cs_stepper *st, cs_stepper_state *s) {
    memset(s, 0, sizeof *s);
    s->x = calloc((size_t)st->model->nx + 1, sizeof(double));
    return s->x ? CS_OK : CS_ERR_NOMEM;
}

void cs_stepper_state_free(cs_stepper_state *s) { free(s->x); s->x = NULL; }

void cs_stepper_save(cs_stepper *st, cs_stepper_state *s) {
    s->t = st->t;
    s->gen = st->pinned = st->gen;
    memcpy(s->x, st->x, sizeof(double) * st->model->nx);
    s->stats = st->stats;
    s->nrhs = st->model->nrhs;
    s->nout = st->model->nout;
}

void cs_stepper_restore(cs_stepper *st, const cs_stepper_state *s) {
    st->reset = !(s->gen > 0 && st->ops->resume && st->ops->resume(st, s->gen));
    st->gen = s->gen;   /* names the state also when the integrator restarts there (CVODE's warm start) */
    st->tr_n = 0;
    st->t = s->t;
    memcpy(st->x, s->x, sizeof(double) * st->model->nx);
    st->stats = s->stats;
    st->model->nrhs = s->nrhs;
    st->model->nout = s->nout;
}

int cs_stepper_create(cs_model *model, const cs_solver_opts *opts, cs_stepper **out, cs_err *err) {
    switch (opts->kind) {
    case CS_SOLVER_EULER:
    case CS_SOLVER_RK4: return cs_fixed_step_create(model, opts, out, err);
    case CS_SOLVER_EXACT: return cs_exact_create(model, out, err);
    case CS_SOLVER_CVODE: return cs_cvode_create(model, opts, out, err);
    case CS_SOLVER_AB2: return cs_ab2_create(model, opts, out, err);
    default: return cs_fail(err, CS_ERR_ARG, "solver: unknown kind %d", opts->kind);
    }
}

/* ---- the parameters of cs_solver_opts (master/registry.c) ---- */

#define P(name, type) CS_PARAM_FIELD(cs_solver_opts, #name, type, name)
static const cs_param solver_params[] = {
    P(kind, CS_PARAM_INT), P(substeps, CS_PARAM_INT), P(h, CS_PARAM_DOUBLE), P(rtol, CS_PARAM_DOUBLE),
    P(atol, CS_PARAM_DOUBLE), P(adams, CS_PARAM_INT), P(max_steps, CS_PARAM_LONG), P(max_h, CS_PARAM_DOUBLE),
    P(continue_smooth, CS_PARAM_FLAG), P(continue_agreeing, CS_PARAM_FLAG),
    P(continue_jumps, CS_PARAM_FLAG), P(warm_start, CS_PARAM_FLAG), P(starter, CS_PARAM_INT), P(linear_solver, CS_PARAM_INT),
    P(band_lower, CS_PARAM_INT), P(band_upper, CS_PARAM_INT),
};
#undef P

static void solver_defaults(void *spec) {
    cs_solver_opts *o = spec;
    o->band_lower = o->band_upper = -1;   /* found from the model */
}

const cs_kind cs_solver_kind = {"solver", solver_params, CS_NPARAMS(solver_params), sizeof(cs_solver_opts),
                                solver_defaults, {NULL}, NULL};
