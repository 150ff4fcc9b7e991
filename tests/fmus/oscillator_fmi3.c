/* Test fixture: FMI 3.0 FMU of one oscillator half (oscillator.h): co-simulation (with the intermediate update
 * callback at every RK4 stage, where the importer may set the inputs declared intermediateUpdate) and model
 * exchange (time event: the kick). Compiled against the FMI 3.0
 * standard headers that FMPy ships (fmpy/c-code). Functions the fixture does not implement are exported as
 * stubs by tests/fmus/build.py. */
#include <stdio.h>
#include <stdlib.h>

#include "fmi3Functions.h"
#include "oscillator.h"

typedef struct inst {
    osc o;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
    fmi3IntermediateUpdateCallback upd;
    int me;                  /* model exchange instance */
    int logging;
    char name[64];
} inst;

static void say(inst *c, fmi3Status s, const char *cat, const char *fmt, double v) {
    if (!c->log || (!c->logging && s == fmi3OK)) return;
    char buf[200];
    snprintf(buf, sizeof buf, fmt, v);
    c->log(c->env, s, cat, buf);
}

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n, const fmi3String cats[]) {
    ((inst *)c)->logging = on;
    return fmi3OK;
}

static void at_stage(void *ctx, double t) {
    inst *c = ctx;
    fmi3Boolean early = fmi3False;
    fmi3Float64 t_early = t;
    c->upd(c->env, t, fmi3True, fmi3False, fmi3False, fmi3False, &early, &t_early);
}

static inst *make(fmi3String name, fmi3String token, fmi3Boolean logging, fmi3InstanceEnvironment env,
                  fmi3LogMessageCallback log) {
    if (!token || strcmp(token, GUID) != 0) {
        if (log) log(env, fmi3Error, "logStatusError", "wrong instantiation token");
        return NULL;
    }
    inst *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    osc_defaults(&c->o);
    c->env = env;
    c->log = log;
    c->logging = logging;
    strncpy(c->name, name ? name : "", sizeof c->name - 1);
    return c;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String resources,
                                          fmi3Boolean visible, fmi3Boolean logging, fmi3InstanceEnvironment env,
                                          fmi3LogMessageCallback log) {
    inst *c = make(name, token, logging, env, log);
    if (!c) return NULL;
    c->me = 1;
    say(c, fmi3OK, "logEvents", "instantiated for model exchange (mass %g)", MASS);
    return c;
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String resources,
                                         fmi3Boolean visible, fmi3Boolean logging, fmi3Boolean event_mode,
                                         fmi3Boolean early_return, const fmi3ValueReference req[], size_t nreq,
                                         fmi3InstanceEnvironment env, fmi3LogMessageCallback log,
                                         fmi3IntermediateUpdateCallback upd) {
    inst *c = make(name, token, logging, env, log);
    if (!c) return NULL;
    c->upd = upd;
    if (upd) {
        c->o.hook = at_stage;
        c->o.hook_ctx = c;
    }
    say(c, fmi3OK, "logEvents", "instantiated (mass %g)", MASS);
    return c;
}

void fmi3FreeInstance(fmi3Instance c) { free(c); }

fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean tol_defined, fmi3Float64 tol, fmi3Float64 t0,
                                       fmi3Boolean stop_defined, fmi3Float64 stop) {
    ((inst *)c)->o.t = t0;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance cc) {
    inst *c = cc;
    c->o.t_u = c->o.t;
    osc_update(&c->o);
    return fmi3OK;
}

fmi3Status fmi3EnterStepMode(fmi3Instance c) { return fmi3OK; }
fmi3Status fmi3EnterEventMode(fmi3Instance c) { return fmi3OK; }
fmi3Status fmi3Terminate(fmi3Instance c) { return fmi3OK; }
fmi3Status fmi3Reset(fmi3Instance cc) {
    inst *c = cc;
    void (*hook)(void *, double) = c->o.hook;
    osc_defaults(&c->o);
    c->o.hook = hook;
    c->o.hook_ctx = c;
    return fmi3OK;
}

fmi3Status fmi3GetFloat64(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, fmi3Float64 v[], size_t nv) {
    inst *c = cc;
    if (c->me) osc_update(&c->o);
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == 30) { v[k] = c->o.t; continue; } /* time */
        if (vr[k] >= NR) { say(c, fmi3Error, "logStatusError", "unknown value reference %g", vr[k]); return fmi3Error; }
        v[k] = c->o.r[vr[k]];
    }
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, const fmi3Float64 v[],
                          size_t nv) {
    inst *c = cc;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= NR) { say(c, fmi3Error, "logStatusError", "unknown value reference %g", vr[k]); return fmi3Error; }
        c->o.r[vr[k]] = v[k];
        if (vr[k] == IN0 || vr[k] == IN1) c->o.t_u = c->o.t;
    }
    osc_update(&c->o);
    return fmi3OK;
}

fmi3Status fmi3GetInt32(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, fmi3Int32 v[], size_t nv) {
    inst *c = cc;
    for (size_t k = 0; k < n; k++) v[k] = vr[k] == VR_NSTEPS ? c->o.n_steps : c->o.fail_fatal;
    return fmi3OK;
}

fmi3Status fmi3SetInt32(fmi3Instance cc, const fmi3ValueReference vr[], size_t n, const fmi3Int32 v[], size_t nv) {
    inst *c = cc;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == VR_NSTEPS) {
            if (v[k] < 1) { say(c, fmi3Error, "logStatusError", "n_steps must be >= 1, got %g", v[k]); return fmi3Error; }
            c->o.n_steps = v[k];
        } else if (vr[k] == VR_FATAL) c->o.fail_fatal = v[k];
        else return fmi3Error;
    }
    return fmi3OK;
}

fmi3Status fmi3GetFMUState(fmi3Instance cc, fmi3FMUState *s) {
    if (!*s && !(*s = malloc(sizeof(osc)))) return fmi3Error;
    memcpy(*s, &((inst *)cc)->o, sizeof(osc));
    return fmi3OK;
}
fmi3Status fmi3SetFMUState(fmi3Instance cc, fmi3FMUState s) {
    memcpy(&((inst *)cc)->o, s, sizeof(osc));
    return fmi3OK;
}
fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *s) {
    free(*s);
    *s = NULL;
    return fmi3OK;
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance cc, const fmi3ValueReference unk[], size_t nunk,
                                        const fmi3ValueReference kn[], size_t nkn, const fmi3Float64 seed[],
                                        size_t nseed, fmi3Float64 out[], size_t nout) {
    inst *c = cc;
    for (size_t i = 0; i < nunk; i++) {
        out[i] = 0.0;
        for (size_t j = 0; j < nkn; j++) out[i] += osc_partial(&c->o, unk[i], kn[j]) * seed[j];
    }
    return fmi3OK;
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance cc, const fmi3ValueReference vr[], size_t n,
                                    const fmi3Int32 order[], fmi3Float64 v[], size_t nv) {
    inst *c = cc;
    for (size_t k = 0; k < n; k++) {
        if (order[k] != 1) return fmi3Error;
        v[k] = osc_output_rate(&c->o, vr[k]);
    }
    return fmi3OK;
}

fmi3Status fmi3DoStep(fmi3Instance cc, fmi3Float64 T, fmi3Float64 H, fmi3Boolean no_set_prior,
                      fmi3Boolean *event, fmi3Boolean *terminate, fmi3Boolean *early, fmi3Float64 *last) {
    inst *c = cc;
    *event = fmi3False;
    *terminate = fmi3False;
    *early = fmi3False;
    *last = T + H;
    if (osc_failed(&c->o, T + H)) {
        fmi3Status s = c->o.fail_fatal ? fmi3Fatal : fmi3Error;
        say(c, s, "logStatusError", "spring broke at t = %g", T + H);
        return s;
    }
    osc_do_step(&c->o, T, H);
    return fmi3OK;
}

/* ---- model exchange ---- */
fmi3Status fmi3UpdateDiscreteStates(fmi3Instance cc, fmi3Boolean *need_update, fmi3Boolean *terminate,
                                    fmi3Boolean *nominals_changed, fmi3Boolean *values_changed,
                                    fmi3Boolean *next_defined, fmi3Float64 *next_time) {
    inst *c = cc;
    osc *o = &c->o;
    *need_update = fmi3False;
    *terminate = fmi3False;
    *nominals_changed = fmi3False;
    *values_changed = fmi3False;
    *next_defined = fmi3False;
    *next_time = 0.0;
    if (o->r[TKICK] > 0 && !o->kicked && o->t >= o->r[TKICK]) {
        o->r[V] += o->r[KICK];
        o->kicked = 1;
        *values_changed = fmi3True;
        say(c, fmi3OK, "logEvents", "kick at t = %g", o->t);
    }
    if (o->r[TKICK] > 0 && !o->kicked) {
        *next_defined = fmi3True;
        *next_time = o->r[TKICK];
    }
    return fmi3OK;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) { return fmi3OK; }

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean no_set_prior, fmi3Boolean *enter,
                                       fmi3Boolean *terminate) {
    *enter = fmi3False;
    *terminate = fmi3False;
    return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 t) {
    ((inst *)c)->o.t = t;
    ((inst *)c)->o.t_u = t;
    return fmi3OK;
}

fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t n) {
    ((inst *)c)->o.r[X] = x[0];
    ((inst *)c)->o.r[V] = x[1];
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance cc, fmi3Float64 d[], size_t n) {
    inst *c = cc;
    if (osc_failed(&c->o, c->o.t)) {
        fmi3Status s = c->o.fail_fatal ? fmi3Fatal : fmi3Error;
        say(c, s, "logStatusError", "spring broke at t = %g", c->o.t);
        return s;
    }
    osc_rhs(&c->o, c->o.t, c->o.r, d);
    return fmi3OK;
}

fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 z[], size_t n) { return fmi3OK; }

fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
    x[0] = ((inst *)c)->o.r[X];
    x[1] = ((inst *)c)->o.r[V];
    return fmi3OK;
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
    for (size_t k = 0; k < n; k++) x[k] = 1.0;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) { *n = 2; return fmi3OK; }
fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n) { *n = 0; return fmi3OK; }
