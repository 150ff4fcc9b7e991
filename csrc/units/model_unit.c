/* Model + integrator unit: a cs_model (models/) integrated by a cs_stepper (integrators/: Euler, RK4, CVODE, and
 * the exact LTI propagator, which makes this also the exact LTI unit). The unit owns the stepper, not the model. */
#include "units/model_unit.h"

#include <stdlib.h>
#include <string.h>

#include "models/quadrature.h"

typedef struct model_unit {
    cs_stepper *st;
    double *work;      /* nx + ny + nu doubles for output rates by difference quotients */
} model_unit;

static cs_stepper *ST(const cs_unit *u) { return ((model_unit *)u->content)->st; }

static int mu_do_step(cs_unit *u, double T, double H, const cs_input *in, int restart, cs_err *err) {
    return cs_stepper_step(ST(u), T, H, in, restart, err);
}

static int mu_get_outputs(cs_unit *u, double t, const double *uin, double *y, cs_err *err) {
    cs_stepper *st = ST(u);
    return cs_model_output(st->model, t, st->x, uin, y, err);
}

static void *mu_snapshot_create(cs_unit *u) {
    cs_stepper_state *s = calloc(1, sizeof *s);
    if (s && cs_stepper_state_alloc(ST(u), s)) { free(s); s = NULL; }
    return s;
}

static void mu_save(cs_unit *u, void *snap) { cs_stepper_save(ST(u), snap); }
static void mu_restore(cs_unit *u, const void *snap) { cs_stepper_restore(ST(u), snap); }

static void mu_snapshot_destroy(void *snap) {
    if (!snap) return;
    cs_stepper_state_free(snap);
    free(snap);
}

static int mu_set_state(cs_unit *u, double t, const double *x, cs_err *err) {
    cs_stepper_set_state(ST(u), t, x);
    return CS_OK;
}

static int mu_output_jacobian(cs_unit *u, double t, const double *uin, double *G, cs_err *err) {
    cs_stepper *st = ST(u);
    return cs_model_output_du(st->model, t, st->x, uin, G, ((model_unit *)u->content)->work, err);
}

static int mu_output_rates(cs_unit *u, double t, const double *uin, const double *udot, double *ydot, cs_err *err) {
    cs_stepper *st = ST(u);
    return cs_model_output_dt(st->model, t, st->x, uin, udot, ydot, ((model_unit *)u->content)->work, err);
}

static const double *mu_states(const cs_unit *u) { return ST(u)->x; }

static void mu_stats(const cs_unit *u, cs_unit_stats *s) {
    cs_stepper *st = ST(u);
    s->steps = st->stats.steps;
    s->failures = st->stats.failures;
    s->jac_evals = st->stats.jac_evals;
    s->restarts = st->stats.restarts;
    s->rhs_calls = st->model->nrhs;
    s->output_calls = st->model->nout;
}

static void mu_destroy(cs_unit *u) {
    model_unit *m = u->content;
    if (!m) return;
    cs_stepper_free(m->st);
    free(m->work);
    free(m);
    u->content = NULL;
}

static const cs_unit_ops MODEL_UNIT_OPS = {
    .do_step = mu_do_step,
    .get_outputs = mu_get_outputs,
    .snapshot_create = mu_snapshot_create,
    .save_state = mu_save,
    .restore_state = mu_restore,
    .snapshot_destroy = mu_snapshot_destroy,
    .set_state = mu_set_state,
    .output_jacobian = mu_output_jacobian,
    .output_rates = mu_output_rates,
    .states = mu_states,
    .get_stats = mu_stats,
    .destroy = mu_destroy,
};

cs_unit *cs_model_unit_new(cs_model *model, const cs_solver_opts *opts, cs_err *err) {
    cs_unit *u = cs_unit_alloc(&MODEL_UNIT_OPS, model->nx, model->nu, model->ny, model->name, err);
    if (!u) return NULL;
    model_unit *m = calloc(1, sizeof *m);
    if (!m) { cs_unit_destroy(u); cs_fail(err, CS_ERR_NOMEM, "out of memory"); return NULL; }
    u->content = m;
    m->work = calloc((size_t)model->nx + 2 * (size_t)model->ny + 2 * (size_t)model->nu + 1, sizeof(double));
    if (!m->work) { cs_unit_destroy(u); cs_fail(err, CS_ERR_NOMEM, "out of memory"); return NULL; }
    m->st = cs_stepper_new(model, opts, err);
    if (!m->st) { cs_unit_destroy(u); return NULL; }
    u->feedthrough = model->feedthrough;
    u->linear = model->D != NULL; /* LTI: dy/du = D */
    return u;
}

/* --- Model unit with step integrals (moshagen §2.6; models/quadrature.h) -------------------------------------
 * The stepper integrates the augmented model [x; q]' = [f; g]; the unit shows only x (nx = the model's nx) and
 * returns Q = q(T+H) - q(T) of its last do_step through the step_integral op. q is never reset (a reset would
 * break the history of an integrator that continues across macro points); the difference of the running
 * integral loses about eps * T / H relative accuracy, far below any integrator tolerance. */
typedef struct quad_unit {
    model_unit mu;      /* first: the model unit's ops read content as a model_unit */
    cs_model *aug;      /* owned */
    double *xa;         /* nx + ny: set_state */
    double *Q;          /* ny: the last step's integral */
    int nx, ny;
} quad_unit;

static int qu_do_step(cs_unit *u, double T, double H, const cs_input *in, int restart, cs_err *err) {
    quad_unit *q = u->content;
    cs_stepper *st = q->mu.st;
    for (int j = 0; j < q->ny; j++) q->Q[j] = st->x[q->nx + j];
    int rc = cs_stepper_step(st, T, H, in, restart, err);
    for (int j = 0; j < q->ny; j++) q->Q[j] = rc ? 0.0 : st->x[q->nx + j] - q->Q[j];
    return rc;
}

static int qu_set_state(cs_unit *u, double t, const double *x, cs_err *err) {
    quad_unit *q = u->content;
    memset(q->xa, 0, sizeof(double) * ((size_t)q->nx + q->ny));
    if (x) memcpy(q->xa, x, sizeof(double) * q->nx);
    memset(q->Q, 0, sizeof(double) * q->ny);
    cs_stepper_set_state(q->mu.st, t, q->xa);
    return CS_OK;
}

static int qu_step_integral(const cs_unit *u, double *Q) {
    const quad_unit *q = u->content;
    memcpy(Q, q->Q, sizeof(double) * q->ny);
    return CS_OK;
}

static void qu_destroy(cs_unit *u) {
    quad_unit *q = u->content;
    if (!q) return;
    cs_stepper_free(q->mu.st);
    cs_model_free(q->aug);
    free(q->mu.work); free(q->xa); free(q->Q);
    free(q);
    u->content = NULL;
}

static const cs_unit_ops QUAD_UNIT_OPS = {
    .do_step = qu_do_step,
    .get_outputs = mu_get_outputs,
    .snapshot_create = mu_snapshot_create,
    .save_state = mu_save,
    .restore_state = mu_restore,
    .snapshot_destroy = mu_snapshot_destroy,
    .set_state = qu_set_state,
    .output_jacobian = mu_output_jacobian,
    .output_rates = mu_output_rates,
    .states = mu_states,
    .get_stats = mu_stats,
    .destroy = qu_destroy,
    .step_integral = qu_step_integral,
};

cs_unit *cs_model_unit_new_quadrature(cs_model *model, const cs_solver_opts *opts, cs_err *err) {
    cs_unit *u = cs_unit_alloc(&QUAD_UNIT_OPS, model->nx, model->nu, model->ny, model->name, err);
    if (!u) return NULL;
    quad_unit *q = calloc(1, sizeof *q);
    if (!q) { cs_unit_destroy(u); cs_fail(err, CS_ERR_NOMEM, "out of memory"); return NULL; }
    u->content = q;
    q->nx = model->nx;
    q->ny = model->ny;
    q->mu.work = calloc((size_t)model->nx + 3 * (size_t)model->ny + 2 * (size_t)model->nu + 1, sizeof(double));
    q->xa = calloc((size_t)model->nx + model->ny + 1, sizeof(double));
    q->Q = calloc((size_t)model->ny + 1, sizeof(double));
    if (!q->mu.work || !q->xa || !q->Q) { cs_unit_destroy(u); cs_fail(err, CS_ERR_NOMEM, "out of memory"); return NULL; }
    q->aug = cs_quadrature_model_new(model, err);
    if (!q->aug) { cs_unit_destroy(u); return NULL; }
    q->mu.st = cs_stepper_new(q->aug, opts, err);
    if (!q->mu.st) { cs_unit_destroy(u); return NULL; }
    u->feedthrough = model->feedthrough;
    u->linear = model->D != NULL;
    return u;
}
