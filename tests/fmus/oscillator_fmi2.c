/* Test fixture: FMI 2.0 FMU (co-simulation and model exchange in one binary) of one oscillator half
 * (oscillator.h). Compiled against the FMI 2.0 standard headers that FMPy ships (fmpy/c-code). Functions the
 * fixture does not implement are exported as stubs by tests/fmus/build.py. */
#include <stdlib.h>

#include "fmi2Functions.h"
#include "oscillator.h"

typedef struct comp {
    osc o;
    fmi2Type type;
    fmi2CallbackFunctions cb;
    int logging;
    char name[64];
    int fmu_mode;            /* ME: 0 init/event, 1 continuous time */
} comp;

#define LOG(c, status, cat, ...)                                                                                \
    do {                                                                                                        \
        if ((c)->cb.logger && ((c)->logging || (status) != fmi2OK))                                            \
            (c)->cb.logger((c)->cb.componentEnvironment, (c)->name, status, cat, __VA_ARGS__);                  \
    } while (0)

static fmi2Status fail(comp *c, double t) {
    LOG(c, c->o.fail_fatal ? fmi2Fatal : fmi2Error, "logStatusError", "spring broke at t = %g", t);
    return c->o.fail_fatal ? fmi2Fatal : fmi2Error;
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                              const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean logging) {
    if (!cb || !guid || strcmp(guid, GUID) != 0) {
        if (cb && cb->logger) cb->logger(cb->componentEnvironment, name, fmi2Error, "logStatusError", "wrong GUID");
        return NULL;
    }
    comp *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    osc_defaults(&c->o);
    c->type = type;
    c->cb = *cb;
    c->logging = logging;
    strncpy(c->name, name ? name : "", sizeof c->name - 1);
    LOG(c, fmi2OK, "logEvents", "instantiated %s (mass %d)", c->name, MASS);
    return c;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cats[]) {
    ((comp *)c)->logging = on;
    return fmi2OK;
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_defined, fmi2Real tol, fmi2Real t0,
                               fmi2Boolean stop_defined, fmi2Real stop) {
    ((comp *)c)->o.t = t0;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) { return fmi2OK; }

fmi2Status fmi2ExitInitializationMode(fmi2Component cc) {
    comp *c = cc;
    c->o.t_u = c->o.t;
    osc_update(&c->o);
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) { return fmi2OK; }
fmi2Status fmi2Reset(fmi2Component c) { osc_defaults(&((comp *)c)->o); return fmi2OK; }

fmi2Status fmi2GetReal(fmi2Component cc, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    comp *c = cc;
    if (c->type == fmi2ModelExchange) osc_update(&c->o);
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= NR) { LOG(c, fmi2Error, "logStatusError", "unknown value reference %u", vr[k]); return fmi2Error; }
        v[k] = c->o.r[vr[k]];
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component cc, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    comp *c = cc;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= NR) { LOG(c, fmi2Error, "logStatusError", "unknown value reference %u", vr[k]); return fmi2Error; }
        c->o.r[vr[k]] = v[k];
        if (vr[k] == IN0 || vr[k] == IN1) c->o.t_u = c->o.t;
    }
    osc_update(&c->o);
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component cc, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {
    comp *c = cc;
    for (size_t k = 0; k < n; k++) v[k] = vr[k] == VR_NSTEPS ? c->o.n_steps : c->o.fail_fatal;
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component cc, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]) {
    comp *c = cc;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == VR_NSTEPS) {
            if (v[k] < 1) { LOG(c, fmi2Error, "logStatusError", "n_steps must be >= 1, got %d", v[k]); return fmi2Error; }
            c->o.n_steps = v[k];
        } else if (vr[k] == VR_FATAL) c->o.fail_fatal = v[k];
        else { LOG(c, fmi2Error, "logStatusError", "unknown value reference %u", vr[k]); return fmi2Error; }
    }
    return fmi2OK;
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]) {
    return n ? fmi2Error : fmi2OK;
}
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]) {
    return n ? fmi2Error : fmi2OK;
}
fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]) {
    return n ? fmi2Error : fmi2OK;
}
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]) {
    return n ? fmi2Error : fmi2OK;
}

fmi2Status fmi2GetFMUstate(fmi2Component cc, fmi2FMUstate *s) {
    comp *c = cc;
    if (!*s && !(*s = malloc(sizeof(osc)))) return fmi2Error;
    memcpy(*s, &c->o, sizeof(osc));
    return fmi2OK;
}
fmi2Status fmi2SetFMUstate(fmi2Component cc, fmi2FMUstate s) {
    memcpy(&((comp *)cc)->o, s, sizeof(osc));
    return fmi2OK;
}
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) {
    free(*s);
    *s = NULL;
    return fmi2OK;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component cc, const fmi2ValueReference unk[], size_t nunk,
                                        const fmi2ValueReference kn[], size_t nkn, const fmi2Real seed[],
                                        fmi2Real out[]) {
    comp *c = cc;
    for (size_t i = 0; i < nunk; i++) {
        out[i] = 0.0;
        for (size_t j = 0; j < nkn; j++) out[i] += osc_partial(&c->o, unk[i], kn[j]) * seed[j];
    }
    return fmi2OK;
}

/* ---- co-simulation ---- */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component cc, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer order[], const fmi2Real v[]) {
    comp *c = cc;
    for (size_t k = 0; k < n; k++) {
        if (order[k] != 1 || (vr[k] != IN0 && vr[k] != IN1)) {
            LOG(c, fmi2Error, "logStatusError", "input derivative of order %d for vr %u not supported", order[k], vr[k]);
            return fmi2Error;
        }
        c->o.du[vr[k] - IN0] = v[k];
    }
    return fmi2OK;
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component cc, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer order[], fmi2Real v[]) {
    comp *c = cc;
    for (size_t k = 0; k < n; k++) {
        if (order[k] != 1) return fmi2Error;
        v[k] = osc_output_rate(&c->o, vr[k]);
    }
    return fmi2OK;
}

fmi2Status fmi2DoStep(fmi2Component cc, fmi2Real T, fmi2Real H, fmi2Boolean no_set_prior) {
    comp *c = cc;
    if (osc_failed(&c->o, T + H)) return fail(c, T + H);
    osc_do_step(&c->o, T, H);
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c) { return fmi2Error; }
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v) { return fmi2Discard; }
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v) { return fmi2Discard; }
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v) { return fmi2Discard; }
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v) { return fmi2Discard; }
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v) { return fmi2Discard; }

/* ---- model exchange ---- */
fmi2Status fmi2EnterEventMode(fmi2Component c) { ((comp *)c)->fmu_mode = 0; return fmi2OK; }

fmi2Status fmi2NewDiscreteStates(fmi2Component cc, fmi2EventInfo *ei) {
    comp *c = cc;
    osc *o = &c->o;
    memset(ei, 0, sizeof *ei);
    if (o->r[TKICK] > 0 && !o->kicked && o->t >= o->r[TKICK]) {
        o->r[V] += o->r[KICK];
        o->kicked = 1;
        ei->valuesOfContinuousStatesChanged = fmi2True;
        LOG(c, fmi2OK, "logEvents", "kick at t = %g", o->t);
    }
    if (o->r[TKICK] > 0 && !o->kicked) {
        ei->nextEventTimeDefined = fmi2True;
        ei->nextEventTime = o->r[TKICK];
    }
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { ((comp *)c)->fmu_mode = 1; return fmi2OK; }

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean no_set_prior, fmi2Boolean *enter,
                                       fmi2Boolean *terminate) {
    *enter = fmi2False;
    *terminate = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) {
    ((comp *)c)->o.t = t;
    ((comp *)c)->o.t_u = t;
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n) {
    ((comp *)c)->o.r[X] = x[0];
    ((comp *)c)->o.r[V] = x[1];
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component cc, fmi2Real d[], size_t n) {
    comp *c = cc;
    if (osc_failed(&c->o, c->o.t)) return fail(c, c->o.t);
    osc_rhs(&c->o, c->o.t, c->o.r, d);
    return fmi2OK;
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t n) { return fmi2OK; }

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    x[0] = ((comp *)c)->o.r[X];
    x[1] = ((comp *)c)->o.r[V];
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    for (size_t k = 0; k < n; k++) x[k] = 1.0;
    return fmi2OK;
}
