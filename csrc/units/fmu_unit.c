/* FMU units (units/fmu_unit.h).
 *
 * Co-simulation FMU (FMI 2.0 / 3.0): do_step sets the inputs u(T_N) (and, where the FMU interpolates inputs, the
 * derivatives d^m u/dt^m (T_N) of the coupling polynomial, FMI 2 fmi2SetRealInputDerivatives), calls doStep and
 * leaves the outputs to get_outputs (fmiGetReal after setting the inputs of the macro point for feed-through).
 * Rollback by fmiGet/SetFMUstate where canGetAndSetFMUstate; where the FMU cannot, a rollback the scheme asks
 * for (rejected steps, dense output) fails at the next do_step with a message that says so. Output derivatives
 * (Hermite) where maxOutputDerivativeOrder >= 1; dy/du by directional derivatives where provided (else the
 * generic difference quotients of cs_unit_output_jacobian).
 *
 * FMI 3 co-simulation: inputs declared intermediateUpdate are set to the coupling polynomial whenever the FMU's
 * intermediate update callback asks for inputs during doStep (cs_intermediate).
 *
 * Model-exchange FMU (FMI 2.0 / 3.0): a cs_model (models/fmu_model.c) integrated by the model unit; this wrapper
 * adds the FMU's events: time events split the step at the event time, state events (sign changes of the event
 * indicators) are located by root finding (me_locate); both run the FMU's event iteration and restart the
 * integrator with the FMU's new states. */
#include "units/fmu_unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/fmu_model.h"
#include "units/model_unit.h"

/* ---------------------------------------------------------------------------------------------------------------- */
/* co-simulation */

typedef struct fmu_cs {
    cs_unit_ops ops;          /* per unit: optional ops present only where the FMU offers them */
    cs_fmi_inst *inst;
    unsigned *vr_u, *vr_y;
    cs_fmi_io uio, yio;       /* typed inputs and outputs */
    int max_in, max_out, can_state;
    unsigned zero_set;          /* bit m: the FMU holds zero input derivatives of order m, set by us (ZOH steps need
                                 * not set them again); cleared when the FMU's state is restored */
    double *ubuf, *col, *one; /* nu, ny, 1 */
    cs_unit_stats stats;
    int pending;              /* error code of a failed rollback, reported by the next do_step */
    char pending_msg[CS_ERRMSG_LEN];
    /* FMI 3 intermediate update: the inputs declared intermediateUpdate="true" (indices into u, their value
     * references) set to the coupling polynomial at the FMU's intermediate times during doStep */
    int niu;
    int *iu;
    unsigned *vr_iu;
    double *iubuf;
    const cs_input *cur;      /* the input function of the running doStep (NULL outside) */
} fmu_cs;

typedef struct fmu_snap {
    fmu_cs *owner;
    void *state;              /* FMU state (NULL until saved) */
    cs_unit_stats stats;
    int saved;
} fmu_snap;

static fmu_cs *CS(const cs_unit *u) { return u->content; }

/* fmi/fmi.c calls this from the FMU's intermediateUpdate callback (inside fmi3DoStep) */
static int cs_intermediate(void *ctx, double t, cs_err *err) {
    cs_unit *u = ctx;
    fmu_cs *f = CS(u);
    if (!f->cur || !f->niu) return CS_OK;
    cs_input_eval(f->cur, t, f->ubuf);
    for (int j = 0; j < f->niu; j++) f->iubuf[j] = f->ubuf[f->iu[j]];
    return cs_fmi_set_real(f->inst, f->vr_iu, f->niu, f->iubuf, t, err);
}

static int cs_do_step(cs_unit *u, double T, double H, const cs_input *in, int restart, cs_err *err) {
    fmu_cs *f = CS(u);
    if (f->pending) return cs_fail(err, f->pending, "%s", f->pending_msg);
    if (u->nu) {
        cs_input_eval(in, T, f->ubuf);
        CS_TRY(cs_fmi_io_set(f->inst, &f->uio, f->ubuf, T, err));
        if (f->max_in >= 1) {
            /* d^m u/dt^m at s = 0 of u = sum c_m s^m, s = (t - T)/H: m! c_m / H^m; the general path gives u' only */
            int top = in->eval ? 1 : (in->deg < f->max_in ? in->deg : f->max_in);
            double fact = 1.0;
            for (int m = 1; m <= f->max_in; m++) {
                const unsigned bit = m < 32 ? 1u << m : 0u;
                if (m > top) {
                    if (f->zero_set & bit) continue;   /* zeros set before and not overwritten since */
                    memset(f->ubuf, 0, sizeof(double) * (size_t)u->nu);
                } else {
                    fact *= m / in->H;   /* every m so far was <= top: fact = m! / H^m */
                    if (in->eval) cs_input_eval_dt(in, T, f->ubuf);
                    else
                        for (int j = 0; j < u->nu; j++) f->ubuf[j] = fact * in->c[(size_t)m * u->nu + j];
                }
                /* zeros past the polynomial's degree: the FMU keeps no stale derivative of an earlier step */
                f->zero_set &= ~bit;
                CS_TRY(cs_fmi_set_input_derivatives(f->inst, f->vr_u, u->nu, m, f->ubuf, T, err));
                if (m > top) f->zero_set |= bit;
            }
        }
    }
    f->cur = in;
    int rc = cs_fmi_do_step(f->inst, T, H, err);
    f->cur = NULL;
    if (rc) { f->stats.failures++; return rc; }
    f->stats.steps++;
    return CS_OK;
}

static int cs_get_outputs(cs_unit *u, double t, const double *uin, double *y, cs_err *err) {
    fmu_cs *f = CS(u);
    if (u->feedthrough && u->nu) CS_TRY(cs_fmi_io_set(f->inst, &f->uio, uin, t, err));
    f->stats.output_calls++;
    return cs_fmi_io_get(f->inst, &f->yio, y, t, err);
}

static int cs_output_jacobian(cs_unit *u, double t, const double *uin, double *G, cs_err *err) {
    fmu_cs *f = CS(u);
    if (u->nu) CS_TRY(cs_fmi_set_real(f->inst, f->vr_u, u->nu, uin, t, err));
    for (int j = 0; j < u->nu; j++) {
        CS_TRY(cs_fmi_directional(f->inst, f->vr_y, u->ny, &f->vr_u[j], 1, f->one, f->col, t, err));
        for (int i = 0; i < u->ny; i++) G[(size_t)i * u->nu + j] = f->col[i];
    }
    f->stats.jac_evals++;
    return CS_OK;
}

static int cs_output_rates(cs_unit *u, double t, const double *uin, const double *udot, double *ydot, cs_err *err) {
    fmu_cs *f = CS(u);
    if (u->feedthrough && u->nu) CS_TRY(cs_fmi_set_real(f->inst, f->vr_u, u->nu, uin, t, err));
    return cs_fmi_get_output_derivatives(f->inst, f->vr_y, u->ny, 1, ydot, t, err);
}

static void *cs_snapshot_create(cs_unit *u) {
    fmu_snap *s = calloc(1, sizeof *s);
    if (s) s->owner = CS(u);
    return s;
}

static void set_pending(fmu_cs *f, const cs_err *e) {
    if (f->pending) return;
    f->pending = e->code ? e->code : CS_ERR_SOLVER;
    snprintf(f->pending_msg, sizeof f->pending_msg, "%s", e->msg);
}

static void cs_save(cs_unit *u, void *snap) {
    fmu_cs *f = CS(u);
    fmu_snap *s = snap;
    s->stats = f->stats;
    s->saved = 1;
    if (!f->can_state) return;
    cs_err e = {0};
    if (cs_fmi_get_state(f->inst, &s->state, &e)) set_pending(f, &e);
}

static void cs_restore(cs_unit *u, const void *snap) {
    fmu_cs *f = CS(u);
    const fmu_snap *s = snap;
    f->zero_set = 0;            /* the restored FMU state may hold other input derivatives */
    cs_err e = {0};
    if (!f->can_state) {
        cs_fail(&e, CS_ERR_SOLVER, "FMU %s: this run needs a rollback of the FMU (a rejected step or dense output), "
                "but the FMU cannot get and set its state (canGetAndSetFMUstate is false)", u->name);
        set_pending(f, &e);
        return;
    }
    if (!s->saved || cs_fmi_set_state(f->inst, s->state, &e)) {
        if (!s->saved) cs_fail(&e, CS_ERR_SOLVER, "FMU %s: rollback to a state never saved", u->name);
        set_pending(f, &e);
        return;
    }
    f->stats = s->stats;
}

static void cs_snapshot_destroy(void *snap) {
    fmu_snap *s = snap;
    if (!s) return;
    if (s->state) cs_fmi_free_state(s->owner->inst, &s->state);
    free(s);
}

static int cs_set_state(cs_unit *u, double t, const double *x, cs_err *err) { return CS_OK; }

static void cs_stats(const cs_unit *u, cs_unit_stats *s) { *s = CS(u)->stats; }

static void cs_destroy(cs_unit *u) {
    fmu_cs *f = u->content;
    if (!f) return;
    cs_fmi_inst_destroy(f->inst);
    free(f->vr_u); free(f->vr_y); free(f->ubuf); free(f->col); free(f->one);
    cs_fmi_io_free(&f->uio); cs_fmi_io_free(&f->yio);
    free(f->iu); free(f->vr_iu); free(f->iubuf);
    free(f);
    u->content = NULL;
}

static unsigned *copy_vr(const unsigned *v, int n) {
    unsigned *o = malloc(sizeof(unsigned) * (size_t)(n + 1));
    if (o && n) memcpy(o, v, sizeof(unsigned) * (size_t)n);
    return o;
}

static cs_unit *cs_unit_new_cs(const cs_fmu_spec *s, cs_err *err) {
    cs_unit *u = cs_unit_new_empty(NULL, 0, s->nu, s->ny, s->name, err);
    if (!u) return NULL;
    u->kind = CS_UNIT_FMU_CS;
    fmu_cs *f = calloc(1, sizeof *f);
    if (!f) { free(u); cs_fail(err, CS_ERR_NOMEM, "out of memory"); return NULL; }
    f->ops = (cs_unit_ops){.do_step = cs_do_step, .get_outputs = cs_get_outputs,
                           .snapshot_create = cs_snapshot_create, .save_state = cs_save, .restore_state = cs_restore,
                           .snapshot_destroy = cs_snapshot_destroy, .set_state = cs_set_state,
                           .get_stats = cs_stats, .destroy = cs_destroy};
    u->ops = &f->ops;
    u->content = f;
    u->feedthrough = s->feedthrough;
    u->ignores_restart = 1;   /* the FMU integrates with its own solver */
    f->vr_u = copy_vr(s->vr_u, s->nu);
    f->vr_y = copy_vr(s->vr_y, s->ny);
    f->ubuf = calloc((size_t)s->nu + 1, sizeof(double));
    f->col = calloc((size_t)s->ny + 1, sizeof(double));
    f->one = calloc(1, sizeof(double));
    f->niu = s->lib->version == 3 ? s->niu : 0;
    f->iu = calloc((size_t)f->niu + 1, sizeof(int));
    f->vr_iu = calloc((size_t)f->niu + 1, sizeof(unsigned));
    f->iubuf = calloc((size_t)f->niu + 1, sizeof(double));
    if (!f->vr_u || !f->vr_y || !f->ubuf || !f->col || !f->one || !f->iu || !f->vr_iu || !f->iubuf) {
        cs_unit_destroy(u);
        cs_fail(err, CS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    f->one[0] = 1.0;
    {
        int *sig = malloc(sizeof(int) * (size_t)(s->nu + s->ny + 1));
        int rc = sig ? CS_OK : cs_fail(err, CS_ERR_NOMEM, "out of memory");
        for (int k = 0; sig && k < s->nu + s->ny; k++) sig[k] = k < s->nu ? k : k - s->nu;
        if (!rc) rc = cs_fmi_io_init(&f->uio, s->nu, s->vr_u, s->type_u, s->elem_u, sig, err);
        if (!rc) rc = cs_fmi_io_init(&f->yio, s->ny, s->vr_y, s->type_y, s->elem_y, sig + s->nu, err);
        free(sig);
        if (rc) { cs_unit_destroy(u); return NULL; }
    }
    /* derivatives of any order exist for Float64 signals only */
    const int all_real = cs_fmi_io_all_real(&f->uio) && cs_fmi_io_all_real(&f->yio);
    if (!all_real) f->niu = 0;
    for (int j = 0; j < f->niu; j++) {
        if (s->iu[j] < 0 || s->iu[j] >= s->nu) {
            cs_unit_destroy(u);
            cs_fail(err, CS_ERR_ARG, "FMU %s: intermediate-update input index %d out of range", s->name, s->iu[j]);
            return NULL;
        }
        f->iu[j] = s->iu[j];
        f->vr_iu[j] = s->vr_u[s->iu[j]];
    }
    f->max_in = all_real && s->lib->version == 2 && s->lib->f2.setRealInputDerivatives ? s->max_input_order : 0;
    if (f->max_in > CS_MAXDEG) f->max_in = CS_MAXDEG;
    f->max_out = all_real ? s->max_output_order : 0;
    if (s->can_state && !((s->lib->version == 2 && s->lib->f2.getFMUstate && s->lib->f2.setFMUstate &&
                           s->lib->f2.freeFMUstate) ||
                          (s->lib->version == 3 && s->lib->f3.getFMUState && s->lib->f3.setFMUState &&
                           s->lib->f3.freeFMUState))) {
        cs_unit_destroy(u);
        cs_fail(err, CS_ERR_ARG, "FMU %s: canGetAndSetFMUstate is declared, but the binary lacks the state functions",
                s->name);
        return NULL;
    }
    f->can_state = s->can_state;
    if (all_real && s->directional && ((s->lib->version == 2 && s->lib->f2.getDirectionalDerivative) ||
                           (s->lib->version == 3 && s->lib->f3.getDirectionalDerivative)))
        f->ops.output_jacobian = cs_output_jacobian;
    if (f->max_out >= 1 && ((s->lib->version == 2 && s->lib->f2.getRealOutputDerivatives) ||
                            (s->lib->version == 3 && s->lib->f3.getOutputDerivatives)))
        f->ops.output_rates = cs_output_rates;
    if (cs_fmi_inst_create(s->lib, CS_FMI_CS, s->name, s->token, s->resources, s->logging_on, &s->starts, s->t0,
                           s->tol, &f->inst, err)) {
        cs_unit_destroy(u);
        return NULL;
    }
    if (f->niu) {
        f->inst->intermediate = cs_intermediate;
        f->inst->intermediate_ctx = u;
    }
    return u;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* model exchange: the model unit plus events */

typedef struct fmu_me {
    cs_unit_ops ops;
    cs_model *model;          /* owned */
    cs_unit *inner;           /* model unit, owned */
    double *ubuf, *xnew;      /* nu, nx */
    int nz;
    double *zz, *zlo, *zhi;   /* nz: event indicators at trial, left and right points of the root finding */
    void *loc;                /* snapshot of the inner unit at the start of a step (root finding restarts there) */
    long events, locate_steps;
    int max_events;           /* per macro step (Zeno guard) */
    int nd;                   /* discrete inputs */
    int after_event;          /* the last step ended with an event: the next one restarts the integrator */
    int can_state;
    int pending;
    char pending_msg[CS_ERRMSG_LEN];
} fmu_me;

typedef struct me_snap {
    fmu_me *owner;
    void *inner;
    void *state;              /* FMU state where the FMU can give it (discrete states of FMUs with events) */
    cs_fmu_events ev;
    long events;
} me_snap;

static fmu_me *ME(const cs_unit *u) { return u->content; }

static int me_events_at(cs_unit *u, double t, const cs_input *in, cs_err *err) {
    fmu_me *f = ME(u);
    cs_input_eval(in, t, f->ubuf);
    int changed = 0, events = 0;
    const double *x = cs_unit_states(f->inner);
    CS_TRY(cs_fmu_model_events(f->model, t, x, f->ubuf, f->xnew, &changed, &events, err));
    f->events += events;
    f->after_event = events > 0;
    if (changed) CS_TRY(cs_unit_set_state(f->inner, t, f->xnew, err));
    return CS_OK;
}

static int me_indicators(fmu_me *f, double t, const cs_input *in, double *z, cs_err *err) {
    cs_input_eval(in, t, f->ubuf);
    return cs_fmu_model_indicators(f->model, t, cs_unit_states(f->inner), f->ubuf, z, err);
}

/* A state event in (t, *stop]: the inner unit has integrated from t to *stop. If an event indicator z_k changed sign,
 * the zero crossing of z_k(tau) along the integrator's own solution (a step from t to tau with the same integrator)
 * is bracketed [lo, hi] and narrowed by the Illinois variant of regula falsi (bisection every fourth iteration)
 * until hi - lo <= 1e-13 max(1, |hi|); the inner unit is left at hi, just past the crossing, and *stop = hi. */
static int me_locate(fmu_me *f, double t, double *stop, const cs_input *in, cs_err *err) {
    double hi = *stop;
    CS_TRY(me_indicators(f, hi, in, f->zhi, err));
    int k = cs_fmu_model_crossed(f->model, f->zhi);
    if (k < 0) return CS_OK;
    memcpy(f->zlo, cs_fmu_model_event_state(f->model)->z, sizeof(double) * (size_t)f->nz);
    double lo = t, glo = f->zlo[k], ghi = f->zhi[k];
    const double tol = 1e-13 * (fabs(hi) > 1.0 ? fabs(hi) : 1.0);
    int at_hi = 1, last = 0;
    for (int it = 0; it < 200 && hi - lo > tol; it++) {
        double w = hi - lo, tm = 0.5 * (lo + hi);
        if (it % 4 != 3 && ghi != glo) {
            tm = hi - ghi * w / (ghi - glo);
            if (!(tm > lo + 1e-6 * w)) tm = lo + 1e-6 * w;
            if (!(tm < hi - 1e-6 * w)) tm = hi - 1e-6 * w;
        }
        cs_unit_restore_state(f->inner, f->loc);
        CS_TRY(cs_unit_do_step(f->inner, t, tm - t, in, CS_RESTART, err));
        CS_TRY(me_indicators(f, tm, in, f->zz, err));
        f->locate_steps++;
        int kk = cs_fmu_model_crossed(f->model, f->zz);
        if (kk >= 0) {
            hi = tm;
            memcpy(f->zhi, f->zz, sizeof(double) * (size_t)f->nz);
            if (kk != k) { k = kk; glo = f->zlo[k]; last = 0; }
            ghi = f->zhi[k];
            if (last == 1) glo *= 0.5; /* Illinois: the same end moved twice */
            last = 1;
            at_hi = 1;
        } else {
            lo = tm;
            memcpy(f->zlo, f->zz, sizeof(double) * (size_t)f->nz);
            glo = f->zlo[k];
            if (last == -1) ghi *= 0.5;
            last = -1;
            at_hi = 0;
        }
    }
    if (!at_hi) {
        cs_unit_restore_state(f->inner, f->loc);
        CS_TRY(cs_unit_do_step(f->inner, t, hi - t, in, CS_RESTART, err));
    }
    *stop = hi;
    return CS_OK;
}

static int me_do_step(cs_unit *u, double T, double H, const cs_input *in, int restart, cs_err *err) {
    fmu_me *f = ME(u);
    if (f->pending) return cs_fail(err, f->pending, "%s", f->pending_msg);
    cs_fmu_events *ev = cs_fmu_model_event_state(f->model);
    double t = T, end = T + H, before = T;
    if (f->nd) { /* discrete inputs change at macro points only: an event there where they changed */
        cs_input_eval(in, T, f->ubuf);
        int changed = 0, events = 0;
        CS_TRY(cs_fmu_model_discrete_inputs(f->model, T, cs_unit_states(f->inner), f->ubuf, f->xnew, &changed,
                                            &events, err));
        f->events += events;
        if (events) restart = CS_RESTART;
        if (changed) CS_TRY(cs_unit_set_state(f->inner, T, f->xnew, err));
    }
    /* events that accumulate (a Zeno model: the bouncing ball at rest) would split the step forever */
    for (int n = 0; t < end; n++) {
        if (n > f->max_events)
            return cs_fail(err, CS_ERR_SOLVER, "FMU %s: more than %d events in the macro step [%.10g, %.10g], the "
                           "last at t = %.15g, %.3g after the one before: the events accumulate (a Zeno model?); "
                           "cosim.FMU(..., max_events_per_step=) raises the limit", u->name, f->max_events, T, end,
                           t, t - before);
        before = t;
        /* without inputs nothing jumps at T: the integrator keeps its history unless an event ended the last step
         * (a rollback or new states restart it through the stepper's reset) */
        if (n == 0 && u->nu == 0 && !f->after_event) restart = CS_CONTINUE;
        double stop = end;
        if (ev->next_defined && ev->next_time > t && ev->next_time < end) stop = ev->next_time;
        if (f->nz) cs_unit_save_state(f->inner, f->loc);
        CS_TRY(cs_unit_do_step(f->inner, t, stop - t, in, restart, err));
        if (f->nz) CS_TRY(me_locate(f, t, &stop, in, err));
        restart = CS_RESTART;
        CS_TRY(me_events_at(u, stop, in, err));
        t = stop;
    }
    return CS_OK;
}

static int me_get_outputs(cs_unit *u, double t, const double *uin, double *y, cs_err *err) {
    return cs_unit_get_outputs(ME(u)->inner, t, uin, y, err);
}
static int me_output_jacobian(cs_unit *u, double t, const double *uin, double *G, cs_err *err) {
    return cs_unit_output_jacobian(ME(u)->inner, t, uin, G, NULL, err); /* a model unit has the op: no work */
}
static int me_output_rates(cs_unit *u, double t, const double *uin, const double *udot, double *ydot, cs_err *err) {
    return cs_unit_output_rates(ME(u)->inner, t, uin, udot, ydot, err);
}
static const double *me_states(const cs_unit *u) { return cs_unit_states(ME(u)->inner); }

static void *me_snapshot_create(cs_unit *u) {
    fmu_me *f = ME(u);
    me_snap *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->owner = f;
    s->ev.z = calloc((size_t)cs_fmu_model_nz(f->model) + 1, sizeof(double));
    s->inner = cs_unit_snapshot_create(f->inner);
    if (!s->ev.z || !s->inner) {
        if (s->inner) cs_unit_snapshot_destroy(f->inner, s->inner);
        free(s->ev.z);
        free(s);
        return NULL;
    }
    return s;
}

static void me_save(cs_unit *u, void *snap) {
    fmu_me *f = ME(u);
    me_snap *s = snap;
    cs_unit_save_state(f->inner, s->inner);
    cs_fmu_events *ev = cs_fmu_model_event_state(f->model);
    s->ev.next_defined = ev->next_defined;
    s->ev.next_time = ev->next_time;
    memcpy(s->ev.z, ev->z, sizeof(double) * (size_t)cs_fmu_model_nz(f->model));
    s->events = f->events;
    if (f->can_state) {
        cs_err e = {0};
        if (cs_fmi_get_state(cs_fmu_model_inst(f->model), &s->state, &e) && !f->pending) {
            f->pending = e.code;
            snprintf(f->pending_msg, sizeof f->pending_msg, "%s", e.msg);
        }
    }
}

static void me_restore(cs_unit *u, const void *snap) {
    fmu_me *f = ME(u);
    const me_snap *s = snap;
    cs_unit_restore_state(f->inner, s->inner);
    cs_fmu_model_forget_inputs(f->model);
    cs_fmu_events *ev = cs_fmu_model_event_state(f->model);
    ev->next_defined = s->ev.next_defined;
    ev->next_time = s->ev.next_time;
    memcpy(ev->z, s->ev.z, sizeof(double) * (size_t)cs_fmu_model_nz(f->model));
    f->events = s->events;
    if (f->can_state && s->state) {
        cs_err e = {0};
        if (cs_fmi_set_state(cs_fmu_model_inst(f->model), s->state, &e) && !f->pending) {
            f->pending = e.code;
            snprintf(f->pending_msg, sizeof f->pending_msg, "%s", e.msg);
        }
    }
}

static void me_snapshot_destroy(void *snap) {
    me_snap *s = snap;
    if (!s) return;
    fmu_me *f = s->owner;
    if (s->state) cs_fmi_free_state(cs_fmu_model_inst(f->model), &s->state);
    cs_unit_snapshot_destroy(f->inner, s->inner);
    free(s->ev.z);
    free(s);
}

static int me_set_state(cs_unit *u, double t, const double *x, cs_err *err) {
    return cs_unit_set_state(ME(u)->inner, t, x, err);
}

static void me_stats(const cs_unit *u, cs_unit_stats *s) {
    cs_unit_get_stats(ME(u)->inner, s);
}

static void me_destroy(cs_unit *u) {
    fmu_me *f = u->content;
    if (!f) return;
    if (f->loc) cs_unit_snapshot_destroy(f->inner, f->loc);
    cs_unit_destroy(f->inner);
    cs_model_destroy(f->model);
    free(f->ubuf); free(f->xnew); free(f->zz); free(f->zlo); free(f->zhi);
    free(f);
    u->content = NULL;
}

static cs_unit *cs_unit_new_me(const cs_fmu_spec *s, const cs_solver_opts *solver, cs_err *err) {
    cs_unit *u = cs_unit_new_empty(NULL, s->nx, s->nu, s->ny, s->name, err);
    if (!u) return NULL;
    u->kind = CS_UNIT_FMU_ME;
    fmu_me *f = calloc(1, sizeof *f);
    if (!f) { free(u); cs_fail(err, CS_ERR_NOMEM, "out of memory"); return NULL; }
    f->ops = (cs_unit_ops){.do_step = me_do_step, .get_outputs = me_get_outputs,
                           .snapshot_create = me_snapshot_create, .save_state = me_save, .restore_state = me_restore,
                           .snapshot_destroy = me_snapshot_destroy, .set_state = me_set_state,
                           .output_jacobian = me_output_jacobian, .output_rates = me_output_rates,
                           .states = me_states, .get_stats = me_stats, .destroy = me_destroy};
    u->ops = &f->ops;
    u->content = f;
    u->feedthrough = s->feedthrough;
    f->can_state = s->can_state && (s->lib->version == 2 ? s->lib->f2.getFMUstate && s->lib->f2.setFMUstate &&
                                                           s->lib->f2.freeFMUstate
                                                         : s->lib->f3.getFMUState && s->lib->f3.setFMUState &&
                                                           s->lib->f3.freeFMUState);
    f->nz = s->nz;
    f->max_events = s->max_events > 0 ? s->max_events : 1000;
    f->zz = calloc((size_t)s->nz + 1, sizeof(double));
    f->zlo = calloc((size_t)s->nz + 1, sizeof(double));
    f->zhi = calloc((size_t)s->nz + 1, sizeof(double));
    f->ubuf = calloc((size_t)s->nu + 1, sizeof(double));
    f->xnew = calloc((size_t)s->nx + 1, sizeof(double));
    if (!f->ubuf || !f->xnew || !f->zz || !f->zlo || !f->zhi) { cs_unit_destroy(u); cs_fail(err, CS_ERR_NOMEM, "out of memory"); return NULL; }
    cs_fmi_inst *inst;
    if (cs_fmi_inst_create(s->lib, CS_FMI_ME, s->name, s->token, s->resources, s->logging_on, &s->starts, s->t0,
                           s->tol, &inst, err)) {
        cs_unit_destroy(u);
        return NULL;
    }
    if (cs_fmu_model_create(inst, s->nx, s->nz, s->nu, s->ny, s->vr_u, s->vr_y, s->type_u, s->type_y, s->elem_u,
                            s->elem_y, s->feedthrough, s->name, &f->model, err) ||
        cs_fmu_model_set_discrete(f->model, s->di, s->nd, err)) { cs_unit_destroy(u); return NULL; }
    f->nd = s->nd;
    if (cs_model_unit_create(f->model, solver, &f->inner, err)) { cs_unit_destroy(u); return NULL; }
    if (f->nz && !(f->loc = cs_unit_snapshot_create(f->inner))) {
        cs_unit_destroy(u);
        cs_fail(err, CS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return u;
}

int cs_fmu_unit_create(const cs_fmu_spec *s, const cs_solver_opts *solver, cs_unit **out, cs_err *err) {
    if (!s->lib) return cs_fail(err, CS_ERR_ARG, "fmu: no binary loaded");
    cs_unit *u = s->kind == CS_FMI_ME ? cs_unit_new_me(s, solver, err) : cs_unit_new_cs(s, err);
    if (!u) return err->code ? err->code : CS_ERR_NOMEM;
    *out = u;
    return CS_OK;
}

int cs_fmu_unit_initial_states(cs_unit *u, double *x, cs_err *err) {
    if (u->kind != CS_UNIT_FMU_ME) return CS_OK;
    return cs_fmu_model_states(ME(u)->model, x, err);
}

int cs_fmu_model_create_from_spec(const cs_fmu_spec *s, cs_model **out, cs_err *err) {
    if (!s->lib) return cs_fail(err, CS_ERR_ARG, "fmu: no binary loaded");
    if (s->kind != CS_FMI_ME) {
        cs_fail(err, CS_ERR_ARG, "monolithic: FMU %s is a co-simulation FMU (a black box without states to integrate "
                "together); the monolithic reference needs model-exchange FMUs (cosim.FMU(..., kind='me'))", s->name);
        return CS_ERR_ARG;
    }
    if (s->nd > 0) {
        cs_fail(err, CS_ERR_ARG, "monolithic: FMU %s has %d input(s) of discrete variability, which only event mode "
                "may set; the monolithic reference integrates without events (use cosim.simulate)", s->name, s->nd);
        return CS_ERR_ARG;
    }
    if (s->nz > 0) {
        cs_fail(err, CS_ERR_ARG, "monolithic: FMU %s has %d event indicator(s); the monolithic reference integrates "
                "without event handling (use cosim.simulate, which locates its state events)", s->name, s->nz);
        return CS_ERR_ARG;
    }
    cs_fmi_inst *inst;
    if (cs_fmi_inst_create(s->lib, CS_FMI_ME, s->name, s->token, s->resources, s->logging_on, &s->starts, s->t0,
                           s->tol, &inst, err))
        return err->code;
    if (inst->next_defined) {
        cs_fail(err, CS_ERR_ARG, "monolithic: FMU %s has a time event at t = %.10g; the monolithic reference "
                "integrates without event handling (use cosim.simulate)", s->name, inst->next_time);
        cs_fmi_inst_destroy(inst);
        return CS_ERR_ARG;
    }
    return cs_fmu_model_create(inst, s->nx, s->nz, s->nu, s->ny, s->vr_u, s->vr_y, s->type_u, s->type_y, s->elem_u,
                               s->elem_y, s->feedthrough, s->name, out, err);
}
