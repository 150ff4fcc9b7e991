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
    CS_TRY(cs_fmi_check(in, in->lib->f2.setTime(in->c, t), "SetTime", t, e));
    if (f->nx) CS_TRY(cs_fmi_check(in, in->lib->f2.setContinuousStates(in->c, x, (size_t)f->nx), "SetContinuousStates", t, e));
    return cs_fmi_set_real(in, f->vr_u, f->nu, u, t, e);
}

static int fm_rhs(void *ctx, double t, const double *x, const double *u, double *xdot) {
    fmu_model *f = ctx;
    cs_err e = {0};
    if (put(f, t, x, u, &e)) return fail(f, &e);
    if (f->nx && cs_fmi_check(f->inst, f->inst->lib->f2.getDerivatives(f->inst->c, xdot, (size_t)f->nx),
                              "GetDerivatives", t, &e))
        return fail(f, &e);
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

cs_model *cs_fmu_model_new(cs_fmi_inst *inst, int nx, int nz, int nu, int ny, const unsigned *vr_u,
                           const unsigned *vr_y, int feedthrough, const char *name, cs_err *err) {
    if (inst->lib->version != 2 || inst->kind != CS_FMI_ME) {
        cs_fmi_inst_destroy(inst);
        cs_fail(err, CS_ERR_ARG, "fmu: model exchange needs an FMI 2.0 model-exchange instance");
        return NULL;
    }
    cs_model *m = cs_model_new(nx, nu, ny, name);
    fmu_model *f = calloc(1, sizeof *f);
    if (!m || !f) {
        free(m); free(f);
        cs_fmi_inst_destroy(inst);
        cs_fail(err, CS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    f->m = m;
    f->inst = inst;
    f->nx = nx; f->nz = nz; f->nu = nu; f->ny = ny;
    m->ctx = f;
    m->destroy_ctx = fm_destroy;
    m->rhs = fm_rhs;
    m->output = fm_output;
    m->feedthrough = feedthrough;
    f->vr_u = copy_vr(vr_u, nu);
    f->vr_y = copy_vr(vr_y, ny);
    f->zz = calloc((size_t)nz + 1, sizeof(double));
    f->ev.z = calloc((size_t)nz + 1, sizeof(double));
    if (!f->vr_u || !f->vr_y || !f->zz || !f->ev.z) {
        cs_model_free(m);
        cs_fail(err, CS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    /* after initialisation: the first time event (from the event iteration at t0 in cs_fmi_inst_create) and the
     * indicators */
    f->ev.next_defined = inst->next_defined;
    f->ev.next_time = inst->next_time;
    if (nz && cs_fmi_check(inst, inst->lib->f2.getEventIndicators(inst->c, f->ev.z, (size_t)nz),
                           "GetEventIndicators", 0.0, err)) {
        cs_model_free(m);
        return NULL;
    }
    return m;
}

cs_fmi_inst *cs_fmu_model_inst(const cs_model *m) { return ((fmu_model *)m->ctx)->inst; }
int cs_fmu_model_nz(const cs_model *m) { return ((fmu_model *)m->ctx)->nz; }
cs_fmu_events *cs_fmu_model_event_state(cs_model *m) { return &((fmu_model *)m->ctx)->ev; }

int cs_fmu_model_states(cs_model *m, double *x, cs_err *err) {
    fmu_model *f = m->ctx;
    if (!f->nx) return CS_OK;
    return cs_fmi_check(f->inst, f->inst->lib->f2.getContinuousStates(f->inst->c, x, (size_t)f->nx),
                        "GetContinuousStates", 0.0, err);
}

int cs_fmu_model_events(cs_model *m, double t, const double *x, const double *u, double *xnew, int *changed,
                        int *events, cs_err *err) {
    fmu_model *f = m->ctx;
    cs_fmi_inst *in = f->inst;
    const cs_fmi2_fns *fn = &in->lib->f2;
    *changed = 0;
    *events = 0;
    CS_TRY(put(f, t, x, u, err));
    fmi2Boolean enter = 0, terminate = 0;
    CS_TRY(cs_fmi_check(in, fn->completedIntegratorStep(in->c, 1, &enter, &terminate), "CompletedIntegratorStep", t,
                        err));
    if (terminate)
        return cs_fail(err, CS_ERR_SOLVER, "FMU %s: the FMU asked to terminate at t = %.10g%s%s", in->name, t,
                       in->last[0] ? ": " : "", in->last);
    int ev = enter || (f->ev.next_defined && t >= f->ev.next_time);
    if (f->nz) {
        CS_TRY(cs_fmi_check(in, fn->getEventIndicators(in->c, f->zz, (size_t)f->nz), "GetEventIndicators", t, err));
        for (int k = 0; k < f->nz && !ev; k++) ev = (f->zz[k] > 0) != (f->ev.z[k] > 0);
    }
    if (!ev) {
        if (f->nz) memcpy(f->ev.z, f->zz, sizeof(double) * (size_t)f->nz);
        return CS_OK;
    }
    *events = 1;
    CS_TRY(cs_fmi_check(in, fn->enterEventMode(in->c), "EnterEventMode", t, err));
    fmi2EventInfo ei = {0};
    ei.newDiscreteStatesNeeded = 1;
    int states_changed = 0;
    for (int k = 0; ei.newDiscreteStatesNeeded; k++) {
        if (k >= 1000) return cs_fail(err, CS_ERR_SOLVER, "FMU %s: event iteration did not converge at t = %.10g",
                                      in->name, t);
        CS_TRY(cs_fmi_check(in, fn->newDiscreteStates(in->c, &ei), "NewDiscreteStates", t, err));
        if (ei.terminateSimulation)
            return cs_fail(err, CS_ERR_SOLVER, "FMU %s: the FMU asked to terminate at t = %.10g%s%s", in->name, t,
                           in->last[0] ? ": " : "", in->last);
        states_changed |= ei.valuesOfContinuousStatesChanged;
    }
    CS_TRY(cs_fmi_check(in, fn->enterContinuousTimeMode(in->c), "EnterContinuousTimeMode", t, err));
    f->ev.next_defined = ei.nextEventTimeDefined;
    f->ev.next_time = ei.nextEventTime;
    if (states_changed && f->nx) {
        CS_TRY(cs_fmi_check(in, fn->getContinuousStates(in->c, xnew, (size_t)f->nx), "GetContinuousStates", t, err));
        *changed = 1;
    }
    if (f->nz) CS_TRY(cs_fmi_check(in, fn->getEventIndicators(in->c, f->ev.z, (size_t)f->nz), "GetEventIndicators", t, err));
    return CS_OK;
}
