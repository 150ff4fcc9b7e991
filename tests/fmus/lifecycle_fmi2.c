/* Test fixture: an FMI 2.0 FMU (co-simulation and model exchange) that checks the master's call sequence and can
 * ask to terminate (tests/fmus/build.py build_lifecycle).
 *
 *   x' = 1 + u_d (x(0) = 0), output y = x;  parameters t_term (Real, vr 2; > 0: ask to terminate at t_term) and
 *   fail_init (Integer, vr 3; 1: fmi2ExitInitializationMode returns fmi2Error); input u_d (Real, vr 5) of
 *   discrete variability: model exchange may set it in event mode only (§3.2.3). Non-Real signals: output steps
 *   (Integer, vr 6: doSteps or completed integrator steps so far), output late (Boolean, vr 7: t >= 0.5), input hold
 *   (Boolean, vr 9, discrete: while true x' = 0) and String parameter label (vr 8) whose length is output
 *   label_length (Integer, vr 10).
 *
 * Co-simulation: a doStep that would pass t_term stops there and returns fmi2Discard with fmi2Terminated true
 * (fmi2GetRealStatus(fmi2LastSuccessfulTime) = t_term). Model exchange: t_term is a time event whose event update
 * sets terminateSimulation.
 *
 * Every call is checked against the FMI 2.0 state machine (§2.1.5, §3.2.3, §4.2.4); an illegal call is logged with
 * status fmi2Error and category "illegal" ("illegal call fmi2Terminate in state initialization"). Instances alive
 * at the same time in this process are counted: a second one is refused (logged, category "illegal"), as an FMU
 * with canBeInstantiatedOnlyOncePerProcess may do. */
#include <stdio.h>

#include "fmi2_common.h"

enum { S_INSTANTIATED, S_INIT, S_RUNNING, S_STEP_FAILED, S_TERMINATED, S_ERROR };
static const char *const state_names[] = {"instantiated", "initialization", "running", "stepFailed", "terminated",
                                          "error"};

typedef struct inst {
    fmi2_base base;
    double x, t, t_term, u_d;
    int fail_init, state, me, terminate_requested, event_mode, steps, hold;
    char label[64];
} inst;

#ifndef ONCE
#define ONCE 0   /* -DONCE=1: refuse a second live instance (canBeInstantiatedOnlyOncePerProcess) */
#endif
static int alive;   /* instances of this binary alive now */

static void msg(inst *c, fmi2Status s, const char *cat, const char *text) {
    if (c->base.cb.logger) c->base.cb.logger(c->base.cb.componentEnvironment, c->base.name, s, cat, "%s", text);
}

/* 0 when `fn` is legal in the instance's state (mask of allowed states), else logged */
static int illegal(inst *c, const char *fn, unsigned allowed) {
    if (allowed & (1u << c->state)) return 0;
    char text[160];
    snprintf(text, sizeof text, "illegal call %s in state %s", fn, state_names[c->state]);
    msg(c, fmi2Error, "illegal", text);
    return 1;
}
#define ANY_BUT_ERR ((1u << S_INSTANTIATED) | (1u << S_INIT) | (1u << S_RUNNING) | (1u << S_STEP_FAILED) | \
                     (1u << S_TERMINATED))
#define RUN (1u << S_RUNNING)

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                              const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean logging) {
    if (!cb || !fmi2_guid_is_ours(guid)) return NULL;
    if (ONCE && alive > 0) {
        if (cb->logger) cb->logger(cb->componentEnvironment, name, fmi2Error, "illegal",
                                   "a second instance in this process (canBeInstantiatedOnlyOncePerProcess)");
        return NULL;
    }
    inst *c = fmi2_new_instance(sizeof *c, name, guid, 1, cb, logging, NULL);
    if (!c) return NULL;
    alive++;
    c->me = type == fmi2ModelExchange;
    return c;
}

void fmi2FreeInstance(fmi2Component c) {
    if (!c) return;
    alive--;
    free(c);
}

fmi2Status fmi2SetupExperiment(fmi2Component c_, fmi2Boolean tol_defined, fmi2Real tol, fmi2Real t0,
                               fmi2Boolean stop_defined, fmi2Real stop) {
    inst *c = c_;
    if (illegal(c, "fmi2SetupExperiment", 1u << S_INSTANTIATED)) return fmi2Error;
    c->t = t0;
    c->x = t0;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c_) {
    inst *c = c_;
    if (illegal(c, "fmi2EnterInitializationMode", 1u << S_INSTANTIATED)) return fmi2Error;
    c->state = S_INIT;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c_) {
    inst *c = c_;
    if (illegal(c, "fmi2ExitInitializationMode", 1u << S_INIT)) return fmi2Error;
    if (c->fail_init) {
        c->state = S_ERROR;
        msg(c, fmi2Error, "logStatusError", "initialization failed (fail_init = 1)");
        return fmi2Error;
    }
    c->state = S_RUNNING;
    c->event_mode = c->me;   /* model exchange: event mode after initialisation */
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c_) {
    inst *c = c_;
    if (illegal(c, "fmi2Terminate", RUN | (1u << S_STEP_FAILED))) return fmi2Error;
    c->state = S_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c_) {
    inst *c = c_;
    c->state = S_INSTANTIATED;
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c_, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    inst *c = c_;
    if (illegal(c, "fmi2GetReal", ANY_BUT_ERR)) return fmi2Error;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == 0 || vr[k] == 1) v[k] = c->x;
        else if (vr[k] == 4) v[k] = 1.0 + c->u_d;
        else if (vr[k] == 5) v[k] = c->u_d;
        else if (vr[k] == 2) v[k] = c->t_term;
        else return fmi2Error;
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c_, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    inst *c = c_;
    if (illegal(c, "fmi2SetReal", (1u << S_INSTANTIATED) | (1u << S_INIT) | RUN)) return fmi2Error;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == 2) c->t_term = v[k];
        else if (vr[k] == 0 && c->state != S_RUNNING) c->x = v[k];
        else if (vr[k] == 5) {
            if (c->me && c->state == S_RUNNING && !c->event_mode) {
                msg(c, fmi2Error, "illegal", "illegal call fmi2SetReal of the discrete input u_d in "
                    "continuous-time mode");
                return fmi2Error;
            }
            c->u_d = v[k];
        } else return fmi2Error;
    }
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component c_, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]) {
    inst *c = c_;
    if (illegal(c, "fmi2SetInteger", (1u << S_INSTANTIATED) | (1u << S_INIT))) return fmi2Error;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] != 3) return fmi2Error;
        c->fail_init = v[k];
    }
    return fmi2OK;
}

fmi2Status fmi2SetBoolean(fmi2Component c_, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]) {
    inst *c = c_;
    if (illegal(c, "fmi2SetBoolean", (1u << S_INSTANTIATED) | (1u << S_INIT) | RUN)) return fmi2Error;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] != 9) return fmi2Error;
        if (c->me && c->state == S_RUNNING && !c->event_mode) {
            msg(c, fmi2Error, "illegal", "illegal call fmi2SetBoolean of the discrete input hold in "
                "continuous-time mode");
            return fmi2Error;
        }
        c->hold = v[k] != 0;
    }
    return fmi2OK;
}

fmi2Status fmi2SetString(fmi2Component c_, const fmi2ValueReference vr[], size_t n, const fmi2String v[]) {
    inst *c = c_;
    if (illegal(c, "fmi2SetString", (1u << S_INSTANTIATED) | (1u << S_INIT))) return fmi2Error;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] != 8 || !v[k]) return fmi2Error;
        strncpy(c->label, v[k], sizeof c->label - 1);
    }
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component c_, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {
    inst *c = c_;
    if (illegal(c, "fmi2GetInteger", ANY_BUT_ERR)) return fmi2Error;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == 6) v[k] = c->steps;
        else if (vr[k] == 10) v[k] = (fmi2Integer)strlen(c->label);
        else if (vr[k] == 3) v[k] = c->fail_init;
        else return fmi2Error;
    }
    return fmi2OK;
}

fmi2Status fmi2GetBoolean(fmi2Component c_, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]) {
    inst *c = c_;
    if (illegal(c, "fmi2GetBoolean", ANY_BUT_ERR)) return fmi2Error;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == 7) v[k] = c->t >= 0.5 - 1e-12;
        else if (vr[k] == 9) v[k] = c->hold;
        else return fmi2Error;
    }
    return fmi2OK;
}

/* ---- co-simulation ---- */
fmi2Status fmi2DoStep(fmi2Component c_, fmi2Real t, fmi2Real h, fmi2Boolean no_prior) {
    inst *c = c_;
    if (illegal(c, "fmi2DoStep", RUN)) return fmi2Error;
    if (c->t_term > 0 && t + h > c->t_term * (1 + 1e-12)) {
        c->x += (c->t_term - t) * (1.0 + c->u_d);
        c->t = c->t_term;
        c->terminate_requested = 1;
        c->state = S_STEP_FAILED;
        msg(c, fmi2Discard, "logStatusDiscard", "end of the simulation requested (t_term reached)");
        return fmi2Discard;
    }
    if (!c->hold) c->x += h * (1.0 + c->u_d);
    c->t = t + h;
    c->steps++;
    return fmi2OK;
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c_, const fmi2StatusKind s, fmi2Boolean *value) {
    inst *c = c_;
    if (s != fmi2Terminated) return fmi2Discard;
    *value = c->terminate_requested;
    return fmi2OK;
}

fmi2Status fmi2GetRealStatus(fmi2Component c_, const fmi2StatusKind s, fmi2Real *value) {
    inst *c = c_;
    if (s != fmi2LastSuccessfulTime) return fmi2Discard;
    *value = c->t;
    return fmi2OK;
}

/* ---- model exchange ---- */
fmi2Status fmi2EnterEventMode(fmi2Component c_) {
    if (illegal(c_, "fmi2EnterEventMode", RUN)) return fmi2Error;
    ((inst *)c_)->event_mode = 1;
    return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c_, fmi2EventInfo *ei) {
    inst *c = c_;
    if (illegal(c, "fmi2NewDiscreteStates", RUN)) return fmi2Error;
    memset(ei, 0, sizeof *ei);
    if (c->t_term > 0 && c->t >= c->t_term * (1 - 1e-12)) {
        ei->terminateSimulation = fmi2True;
    } else if (c->t_term > 0) {
        ei->nextEventTimeDefined = fmi2True;
        ei->nextEventTime = c->t_term;
    }
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c_) {
    if (illegal(c_, "fmi2EnterContinuousTimeMode", RUN)) return fmi2Error;
    ((inst *)c_)->event_mode = 0;
    return fmi2OK;
}
fmi2Status fmi2CompletedIntegratorStep(fmi2Component c_, fmi2Boolean no_set_prior, fmi2Boolean *enter,
                                       fmi2Boolean *terminate) {
    ((inst *)c_)->steps++;
    *enter = fmi2False;
    *terminate = fmi2False;
    return illegal(c_, "fmi2CompletedIntegratorStep", RUN) ? fmi2Error : fmi2OK;
}
fmi2Status fmi2SetTime(fmi2Component c_, fmi2Real t) {
    inst *c = c_;
    if (illegal(c, "fmi2SetTime", RUN)) return fmi2Error;
    c->t = t;
    return fmi2OK;
}
fmi2Status fmi2SetContinuousStates(fmi2Component c_, const fmi2Real x[], size_t n) {
    inst *c = c_;
    if (illegal(c, "fmi2SetContinuousStates", RUN)) return fmi2Error;
    c->x = x[0];
    return fmi2OK;
}
fmi2Status fmi2GetDerivatives(fmi2Component c_, fmi2Real d[], size_t n) {
    if (illegal(c_, "fmi2GetDerivatives", ANY_BUT_ERR)) return fmi2Error;
    d[0] = ((inst *)c_)->hold ? 0.0 : 1.0 + ((inst *)c_)->u_d;
    return fmi2OK;
}
FMI2_NO_EVENT_INDICATORS
fmi2Status fmi2GetContinuousStates(fmi2Component c_, fmi2Real x[], size_t n) {
    if (illegal(c_, "fmi2GetContinuousStates", ANY_BUT_ERR)) return fmi2Error;
    x[0] = ((inst *)c_)->x;
    return fmi2OK;
}
FMI2_UNIT_NOMINALS
