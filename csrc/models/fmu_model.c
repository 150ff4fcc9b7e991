/* Model-exchange FMU as a cs_model (models/fmu_model.h). */
#include "models/fmu_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fmu_model {
    cs_model *m;             /* back pointer: messages go to m->msg */
    cs_fmi_inst *inst;
    int nx, nz, nu, ny;
    unsigned *vr_u, *vr_y;
    double *zz;              /* nz scratch */
    cs_fmu_events ev;
} fmu_model;

static void fm_destroy(void *ctx) {
    fmu_model *f = ctx;
    if (!f) return;
    cs_fmi_inst_destroy(f->inst);
    free(f->vr_u); free(f->vr_y); free(f->zz); free(f->ev.z);
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
    return cs_fmi_set_real(in, f->vr_u, f->nu, u, t, e);
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
    if (put(f, t, x, u, &e) || cs_fmi_get_real(f->inst, f->vr_y, f->ny, y, t, &e)) return fail(f, &e);
    return CS_OK;
}

static unsigned *copy_vr(const unsigned *v, int n) {
    unsigned *o = malloc(sizeof(unsigned) * (size_t)(n + 1));
    if (o && n) memcpy(o, v, sizeof(unsigned) * (size_t)n);
    return o;
}

static const cs_model_ops FMU_MODEL_OPS = {CS_MODEL_FMU, fm_rhs, fm_output, NULL, NULL, NULL, fm_destroy};

int cs_fmu_model_create(cs_fmi_inst *inst, int nx, int nz, int nu, int ny, const unsigned *vr_u, const unsigned *vr_y,
                        int feedthrough, const char *name, cs_model **out, cs_err *err) {
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
    f->vr_y = copy_vr(vr_y, ny);
    f->zz = calloc((size_t)nz + 1, sizeof(double));
    f->ev.z = calloc((size_t)nz + 1, sizeof(double));
    if (!f->vr_u || !f->vr_y || !f->zz || !f->ev.z) {
        cs_model_destroy(m);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    /* after initialisation: the first time event (from the event iteration at t0 in cs_fmi_inst_create) and the
     * indicators */
    f->ev.next_defined = inst->next_defined;
    f->ev.next_time = inst->next_time;
    int rc = cs_fmi_me_indicators(inst, f->ev.z, nz, 0.0, err);
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
    int states_changed = 0;
    CS_TRY(cs_fmi_me_event(in, t, 0, &states_changed, err));
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
