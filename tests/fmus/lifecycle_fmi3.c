/* Test fixture: the FMI 3.0 twin of lifecycle_fmi2.c (co-simulation and model exchange; tests/fmus/build.py
 * build_lifecycle): x' = 1, y = x; t_term (Float64, vr 2) asks to terminate (co-simulation: fmi3DoStep returns
 * terminateSimulation with lastSuccessfulTime = t_term; model exchange: a time event whose update terminates);
 * fail_init (Int32, vr 3) makes fmi3ExitInitializationMode return fmi3Error. Calls outside the FMI 3.0 state
 * machine (§2.3.1) are logged with status fmi3Error and category "illegal"; a second live instance is refused. */
#include <stdio.h>

#include "fmi3_common.h"

enum { S_INSTANTIATED, S_INIT, S_RUNNING, S_TERMINATED, S_ERROR };
static const char *const state_names[] = {"instantiated", "initialization", "running", "terminated", "error"};

typedef struct inst {
    fmi3_base base;
    double x, t, t_term;
    int fail_init, state, me;
} inst;

#ifndef ONCE
#define ONCE 0   /* -DONCE=1: refuse a second live instance (canBeInstantiatedOnlyOncePerProcess) */
#endif
static int alive;

static void msg(inst *c, fmi3Status s, const char *cat, const char *text) {
    if (c->base.log) c->base.log(c->base.env, s, cat, text);
}

static int illegal(inst *c, const char *fn, unsigned allowed) {
    if (allowed & (1u << c->state)) return 0;
    char text[160];
    snprintf(text, sizeof text, "illegal call %s in state %s", fn, state_names[c->state]);
    msg(c, fmi3Error, "illegal", text);
    return 1;
}
#define ANY_BUT_ERR ((1u << S_INSTANTIATED) | (1u << S_INIT) | (1u << S_RUNNING) | (1u << S_TERMINATED))
#define RUN (1u << S_RUNNING)

static fmi3Instance create(const fmi3_instantiation *a) {
    if (!fmi3_token_is_ours(a->token)) return NULL;
    if (ONCE && alive > 0) {
        if (a->log) a->log(a->env, fmi3Error, "illegal",
                           "a second instance in this process (canBeInstantiatedOnlyOncePerProcess)");
        return NULL;
    }
    inst *c = fmi3_new_instance(sizeof *c, a, NULL);
    if (!c) return NULL;
    alive++;
    c->me = a->me;
    return c;
}
FMI3_INSTANTIATE_MODEL_EXCHANGE(create)
FMI3_INSTANTIATE_CO_SIMULATION(create)

void fmi3FreeInstance(fmi3Instance c) {
    if (!c) return;
    alive--;
    free(c);
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance cc, fmi3Boolean tol_defined, fmi3Float64 tol, fmi3Float64 t0,
                                       fmi3Boolean stop_defined, fmi3Float64 stop) {
    inst *c = cc;
    if (illegal(c, "fmi3EnterInitializationMode", 1u << S_INSTANTIATED)) return fmi3Error;
    c->state = S_INIT;
    c->t = c->x = t0;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance cc) {
    inst *c = cc;
    if (illegal(c, "fmi3ExitInitializationMode", 1u << S_INIT)) return fmi3Error;
    if (c->fail_init) {
        c->state = S_ERROR;
        msg(c, fmi3Error, "logStatusError", "initialization failed (fail_init = 1)");
        return fmi3Error;
    }
    c->state = S_RUNNING;
    return fmi3OK;
}

FMI3_NOTHING_TO_DO(fmi3EnterStepMode)
fmi3Status fmi3EnterEventMode(fmi3Instance c) { return illegal(c, "fmi3EnterEventMode", RUN) ? fmi3Error : fmi3OK; }
fmi3Status fmi3Terminate(fmi3Instance cc) {
    inst *c = cc;
    if (illegal(c, "fmi3Terminate", RUN)) return fmi3Error;
    c->state = S_TERMINATED;
    return fmi3OK;
}
fmi3Status fmi3Reset(fmi3Instance cc) {
    ((inst *)cc)->state = S_INSTANTIATED;
    return fmi3OK;
}

fmi3Status fmi3GetFloat64(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, fmi3Float64 v[], size_t nv) {
    inst *c = cc;
    if (illegal(c, "fmi3GetFloat64", ANY_BUT_ERR)) return fmi3Error;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == 0 || vr[k] == 1) v[k] = c->x;
        else if (vr[k] == 4) v[k] = 1.0;
        else if (vr[k] == 2) v[k] = c->t_term;
        else if (vr[k] == 30) v[k] = c->t;
        else return fmi3Error;
    }
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, const fmi3Float64 v[],
                          size_t nv) {
    inst *c = cc;
    if (illegal(c, "fmi3SetFloat64", (1u << S_INSTANTIATED) | (1u << S_INIT) | RUN)) return fmi3Error;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == 2) c->t_term = v[k];
        else return fmi3Error;
    }
    return fmi3OK;
}

fmi3Status fmi3SetInt32(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, const fmi3Int32 v[], size_t nv) {
    inst *c = cc;
    if (illegal(c, "fmi3SetInt32", (1u << S_INSTANTIATED) | (1u << S_INIT))) return fmi3Error;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] != 3) return fmi3Error;
        c->fail_init = v[k];
    }
    return fmi3OK;
}

fmi3Status fmi3SetBoolean(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const fmi3Boolean v[], size_t nv) {
    return n ? fmi3Error : fmi3OK;
}

fmi3Status fmi3DoStep(fmi3Instance cc, fmi3Float64 T, fmi3Float64 H, fmi3Boolean no_set_prior, fmi3Boolean *event,
                      fmi3Boolean *terminate, fmi3Boolean *early, fmi3Float64 *last) {
    inst *c = cc;
    fmi3_step_flags_clear(event, terminate, early);
    if (illegal(c, "fmi3DoStep", RUN)) return fmi3Error;
    if (c->t_term > 0 && T + H > c->t_term * (1 + 1e-12)) {
        c->t = c->x = c->t_term;
        *terminate = fmi3True;
        *last = c->t_term;
        msg(c, fmi3OK, "logEvents", "end of the simulation requested (t_term reached)");
        return fmi3OK;
    }
    c->t = c->x = T + H;
    *last = c->t;
    return fmi3OK;
}

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance cc, fmi3Boolean *need_update, fmi3Boolean *terminate,
                                    fmi3Boolean *nominals_changed, fmi3Boolean *values_changed,
                                    fmi3Boolean *next_defined, fmi3Float64 *next_time) {
    inst *c = cc;
    fmi3_update_flags_clear(need_update, terminate, nominals_changed, values_changed, next_defined, next_time);
    if (illegal(c, "fmi3UpdateDiscreteStates", RUN)) return fmi3Error;
    if (c->t_term > 0 && c->t >= c->t_term * (1 - 1e-12)) *terminate = fmi3True;
    else if (c->t_term > 0) {
        *next_defined = fmi3True;
        *next_time = c->t_term;
    }
    return fmi3OK;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) {
    return illegal(c, "fmi3EnterContinuousTimeMode", RUN) ? fmi3Error : fmi3OK;
}
fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean no_set_prior, fmi3Boolean *enter,
                                       fmi3Boolean *terminate) {
    *enter = *terminate = fmi3False;
    return illegal(c, "fmi3CompletedIntegratorStep", RUN) ? fmi3Error : fmi3OK;
}
fmi3Status fmi3SetTime(fmi3Instance cc, fmi3Float64 t) {
    inst *c = cc;
    if (illegal(c, "fmi3SetTime", RUN)) return fmi3Error;
    c->t = t;
    return fmi3OK;
}
fmi3Status fmi3SetContinuousStates(fmi3Instance cc, const fmi3Float64 x[], size_t n) {
    inst *c = cc;
    if (illegal(c, "fmi3SetContinuousStates", RUN)) return fmi3Error;
    c->x = x[0];
    return fmi3OK;
}
fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 d[], size_t n) {
    if (illegal(c, "fmi3GetContinuousStateDerivatives", ANY_BUT_ERR)) return fmi3Error;
    d[0] = 1.0;
    return fmi3OK;
}
fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
    if (illegal(c, "fmi3GetContinuousStates", ANY_BUT_ERR)) return fmi3Error;
    x[0] = ((inst *)c)->x;
    return fmi3OK;
}
FMI3_UNIT_NOMINALS
FMI3_NO_EVENT_INDICATORS
fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) { *n = 1; return fmi3OK; }
