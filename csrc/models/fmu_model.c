/* Model-exchange FMU as a cs_model (models/fmu_model.h). */
#include "models/fmu_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fmu_model {
    cs_model *m;             /* back pointer: messages go to m->msg */
    cs_fmi_inst *inst;
    int nx, nz, nu, ny;
    unsigned *vr_u;
    int *type_u;
    int *elem_u;             /* element index within an array variable (NULL: scalars) */
    cs_fmi_io io_u, io_y;    /* all inputs, outputs (typed) */
    double *zz;              /* nz scratch */
    cs_fmu_events ev;
    /* inputs of discrete variability (set in event mode only): io_d; the others, io_c, in continuous-time mode.
     * nd = 0: every input is continuous (io_u). */
    int nd;
    int *d_idx;
    cs_fmi_io io_c, io_d;
    double *ud_set;          /* nd: the discrete values the FMU holds (d_known: valid) */
    int d_known;
} fmu_model;

static void fm_destroy(void *ctx) {
    fmu_model *f = ctx;
    if (!f) return;
    cs_fmi_inst_destroy(f->inst);
    free(f->vr_u); free(f->type_u); free(f->elem_u); free(f->zz); free(f->ev.z);
    cs_fmi_io_free(&f->io_u); cs_fmi_io_free(&f->io_y); cs_fmi_io_free(&f->io_c); cs_fmi_io_free(&f->io_d);
    free(f->d_idx); free(f->ud_set);
    free(f);
}

static int fail(fmu_model *f, cs_err *e) {
    snprintf(f->m->msg, sizeof f->m->msg, "%s", e->msg);
    return e->code ? e->code : CS_ERR_SOLVER;
}

/* time, states and inputs into the FMU */
static int put(fmu_model *f, double t, const double *x, const double *u, cs_err *e) {
    cs_fmi_inst *in = f->inst;
    CS_TRY(cs_fmi_me_set_time(in, t, e));
    CS_TRY(cs_fmi_me_set_states(in, x, f->nx, t, e));
    return cs_fmi_io_set(in, f->nd ? &f->io_c : &f->io_u, u, t, e);
}

static int fm_rhs(void *ctx, double t, const double *x, const double *u, double *xdot) {
    fmu_model *f = ctx;
    cs_err e = {0};
    if (put(f, t, x, u, &e)) return fail(f, &e);
    if (cs_fmi_me_derivatives(f->inst, xdot, f->nx, t, &e)) return fail(f, &e);
    return CS_OK;
}

static int fm_output(void *ctx, double t, const double *x, const double *u, double *y) {
    fmu_model *f = ctx;
    cs_err e = {0};
    if (put(f, t, x, u, &e) || cs_fmi_io_get(f->inst, &f->io_y, y, t, &e)) return fail(f, &e);
    return CS_OK;
}

static unsigned *copy_vr(const unsigned *v, int n) {
    unsigned *o = malloc(sizeof(unsigned) * (size_t)(n + 1));
    if (o && n) memcpy(o, v, sizeof(unsigned) * (size_t)n);
    return o;
}

static const cs_model_ops FMU_MODEL_OPS = {CS_MODEL_FMU, fm_rhs, fm_output, NULL, NULL, NULL, fm_destroy};

int cs_fmu_model_create(cs_fmi_inst *inst, int nx, int nz, int nu, int ny, const unsigned *vr_u, const unsigned *vr_y,
                        const int *type_u, const int *type_y, const int *elem_u, const int *elem_y, int feedthrough,
                        const char *name, cs_model **out, cs_err *err) {
    if (inst->kind != CS_FMI_ME) {
        cs_fmi_inst_destroy(inst);
        return cs_fail(err, CS_ERR_ARG, "fmu: model exchange needs a model-exchange instance");
    }
    cs_model *m = cs_model_new_empty(nx, nu, ny, name);
    fmu_model *f = calloc(1, sizeof *f);
    if (!m || !f) {
        cs_model_free_empty(m); free(f);
        cs_fmi_inst_destroy(inst);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    f->m = m;
    f->inst = inst;
    f->nx = nx; f->nz = nz; f->nu = nu; f->ny = ny;
    cs_model_attach(m, &FMU_MODEL_OPS, f);
    m->feedthrough = feedthrough;
    f->vr_u = copy_vr(vr_u, nu);
    f->type_u = malloc(sizeof(int) * (size_t)(nu + 1));
    int *sig = malloc(sizeof(int) * (size_t)(nu + ny + 1));
    f->zz = calloc((size_t)nz + 1, sizeof(double));
    f->ev.z = calloc((size_t)nz + 1, sizeof(double));
    if (!f->vr_u || !f->type_u || !sig || !f->zz || !f->ev.z) {
        free(sig);
        cs_model_destroy(m);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    if (nu) memcpy(f->type_u, type_u, sizeof(int) * (size_t)nu);
    if (elem_u && !(f->elem_u = malloc(sizeof(int) * (size_t)(nu + 1)))) {
        free(sig);
        cs_model_destroy(m);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    if (elem_u && nu) memcpy(f->elem_u, elem_u, sizeof(int) * (size_t)nu);
    for (int k = 0; k < nu + ny; k++) sig[k] = k < nu ? k : k - nu;
    int rc = cs_fmi_io_init(&f->io_u, nu, vr_u, type_u, elem_u, sig, err);
    if (!rc) rc = cs_fmi_io_init(&f->io_y, ny, vr_y, type_y, elem_y, sig + nu, err);
    free(sig);
    /* after initialisation: the first time event (from the event iteration at t0 in cs_fmi_inst_create) and the
     * indicators */
    f->ev.next_defined = inst->next_defined;
    f->ev.next_time = inst->next_time;
    if (!rc) rc = cs_fmi_me_indicators(inst, f->ev.z, nz, 0.0, err);
    if (rc) {
        cs_model_destroy(m);
        return rc;
    }
    *out = m;
    return CS_OK;
}

cs_fmi_inst *cs_fmu_model_inst(const cs_model *m) { return ((fmu_model *)m->content)->inst; }
int cs_fmu_model_nz(const cs_model *m) { return ((fmu_model *)m->content)->nz; }
cs_fmu_events *cs_fmu_model_event_state(cs_model *m) { return &((fmu_model *)m->content)->ev; }

int cs_fmu_model_states(cs_model *m, double *x, cs_err *err) {
    fmu_model *f = m->content;
    return cs_fmi_me_get_states(f->inst, x, f->nx, 0.0, err);
}

int cs_fmu_model_indicators(cs_model *m, double t, const double *x, const double *u, double *z, cs_err *err) {
    fmu_model *f = m->content;
    CS_TRY(put(f, t, x, u, err));
    return cs_fmi_me_indicators(f->inst, z, f->nz, t, err);
}

int cs_fmu_model_crossed(const cs_model *m, const double *z) {
    const fmu_model *f = m->content;
    for (int k = 0; k < f->nz; k++)
        if ((z[k] > 0) != (f->ev.z[k] > 0)) return k;
    return -1;
}

int cs_fmu_model_set_discrete(cs_model *m, const int *idx, int nd, cs_err *err) {
    fmu_model *f = m->content;
    if (nd <= 0) return CS_OK;
    if (nd > f->nu) return cs_fail(err, CS_ERR_ARG, "fmu: %d discrete inputs of %d", nd, f->nu);
    const int nc = f->nu - nd;
    f->d_idx = calloc((size_t)nd, sizeof(int));
    f->ud_set = calloc((size_t)nd, sizeof(double));
    int *c_idx = calloc((size_t)nc + 1, sizeof(int)), *tc = calloc((size_t)nc + 1, sizeof(int));
    int *td = calloc((size_t)nd, sizeof(int)), *ec = calloc((size_t)nc + 1, sizeof(int)), *ed = calloc((size_t)nd, sizeof(int));
    unsigned *vc = calloc((size_t)nc + 1, sizeof(unsigned)), *vd = calloc((size_t)nd, sizeof(unsigned));
    int rc = CS_OK, kd = 0, kc = 0;
    if (!f->d_idx || !f->ud_set || !c_idx || !tc || !td || !vc || !vd || !ec || !ed) rc = cs_fail(err, CS_ERR_NOMEM, "out of memory");
    for (int j = 0; !rc && j < f->nu; j++) {
        int discrete = 0;
        for (int k = 0; k < nd && !rc; k++) {
            if (idx[k] < 0 || idx[k] >= f->nu) rc = cs_fail(err, CS_ERR_ARG, "fmu: discrete input %d out of range", idx[k]);
            discrete |= idx[k] == j;
        }
        const int e = f->elem_u ? f->elem_u[j] : 0;   /* an array variable's elements share their variability */
        if (discrete && kd < nd) { f->d_idx[kd] = j; vd[kd] = f->vr_u[j]; ed[kd] = e; td[kd++] = f->type_u[j]; }
        else if (!discrete && kc < nc) { c_idx[kc] = j; vc[kc] = f->vr_u[j]; ec[kc] = e; tc[kc++] = f->type_u[j]; }
        else rc = cs_fail(err, CS_ERR_ARG, "fmu: repeated discrete input indices");
    }
    if (!rc) rc = cs_fmi_io_init(&f->io_c, kc, vc, tc, ec, c_idx, err);
    if (!rc) rc = cs_fmi_io_init(&f->io_d, kd, vd, td, ed, f->d_idx, err);
    free(c_idx); free(tc); free(td); free(vc); free(vd); free(ec); free(ed);
    if (rc) return rc;
    f->nd = kd;
    f->inst->event_io = &f->io_d;
    return CS_OK;
}

void cs_fmu_model_forget_inputs(cs_model *m) { ((fmu_model *)m->content)->d_known = 0; }

/* Event mode at (t, x, u) with the discrete inputs of u: the event iteration, the next time event, new states
 * (*changed, xnew) and the indicators after the event. */
static int event_at(cs_model *m, double t, const double *x, const double *u, double *xnew, int *changed,
                    cs_err *err) {
    fmu_model *f = m->content;
    cs_fmi_inst *in = f->inst;
    in->event_u = u;
    int states_changed = 0;
    CS_TRY(cs_fmi_me_event(in, t, 0, &states_changed, err));
    if (f->nd) {
        for (int k = 0; k < f->nd; k++) f->ud_set[k] = u[f->d_idx[k]];
        f->d_known = 1;
    }
    f->ev.next_defined = in->next_defined;
    f->ev.next_time = in->next_time;
    if (states_changed && f->nx) {
        CS_TRY(cs_fmi_me_get_states(in, xnew, f->nx, t, err));
        *changed = 1;
    }
    /* the indicators after the event, at the (possibly re-initialised) states */
    if (f->nz) CS_TRY(cs_fmu_model_indicators(m, t, *changed ? xnew : x, u, f->ev.z, err));
    return CS_OK;
}

int cs_fmu_model_events(cs_model *m, double t, const double *x, const double *u, double *xnew, int *changed,
                        int *events, cs_err *err) {
    fmu_model *f = m->content;
    cs_fmi_inst *in = f->inst;
    *changed = 0;
    *events = 0;
    CS_TRY(put(f, t, x, u, err));
    int enter = 0;
    CS_TRY(cs_fmi_me_completed(in, t, &enter, err));
    int ev = enter || (f->ev.next_defined && t >= f->ev.next_time);
    if (f->nz) {
        CS_TRY(cs_fmi_me_indicators(in, f->zz, f->nz, t, err));
        if (!ev) ev = cs_fmu_model_crossed(m, f->zz) >= 0;
    }
    if (!ev) {
        if (f->nz) memcpy(f->ev.z, f->zz, sizeof(double) * (size_t)f->nz);
        return CS_OK;
    }
    *events = 1;
    return event_at(m, t, x, u, xnew, changed, err);
}

int cs_fmu_model_discrete_inputs(cs_model *m, double t, const double *x, const double *u, double *xnew,
                                 int *changed, int *events, cs_err *err) {
    fmu_model *f = m->content;
    *changed = 0;
    *events = 0;
    if (!f->nd) return CS_OK;
    int same = f->d_known;
    for (int k = 0; k < f->nd && same; k++) same = u[f->d_idx[k]] == f->ud_set[k];
    if (same) return CS_OK;
    CS_TRY(put(f, t, x, u, err));
    *events = 1;
    return event_at(m, t, x, u, xnew, changed, err);
}
