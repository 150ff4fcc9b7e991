/* Test fixture: FMI 2.0 model-exchange FMU of a bouncing ball with a state event (tests/fmus/build.py).
 *
 *   h' = v, v' = -g;   event indicator z = h;   at h = 0 falling: v <- -e v
 *
 * Value references (Real): 0 h, 1 v, 2 der(h), 3 der(v), 4 g, 5 e. From h(0) = h0, v(0) = 0 the first impact is
 * at t1 = sqrt(2 h0 / g), the next ones 2 e^k v1 / g later (v1 = g t1). After an impact h is set to the smallest
 * positive double, so the indicator is positive again while the ball rises. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

typedef struct ball {
    double r[6];
    double t;
    fmi2CallbackFunctions cb;
    char name[64];
} ball;

enum { H, V, DH, DV, G, E };

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                              const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean logging) {
    if (!cb || !guid || strcmp(guid, GUID) != 0 || type != fmi2ModelExchange) return NULL;
    ball *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->r[H] = 1.0; b->r[G] = 9.81; b->r[E] = 0.7;
    b->cb = *cb;
    strncpy(b->name, name ? name : "", sizeof b->name - 1);
    return b;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }
fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cats[]) { return fmi2OK; }
fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_defined, fmi2Real tol, fmi2Real t0,
                               fmi2Boolean stop_defined, fmi2Real stop) {
    ((ball *)c)->t = t0;
    return fmi2OK;
}
fmi2Status fmi2EnterInitializationMode(fmi2Component c) { return fmi2OK; }
fmi2Status fmi2ExitInitializationMode(fmi2Component c) { return fmi2OK; }
fmi2Status fmi2Terminate(fmi2Component c) { return fmi2OK; }
fmi2Status fmi2Reset(fmi2Component c) { return fmi2OK; }

static void derivatives(ball *b) {
    b->r[DH] = b->r[V];
    b->r[DV] = -b->r[G];
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    ball *b = c;
    derivatives(b);
    for (size_t k = 0; k < n; k++) {
        if (vr[k] > E) return fmi2Error;
        v[k] = b->r[vr[k]];
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    ball *b = c;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] > E) return fmi2Error;
        b->r[vr[k]] = v[k];
    }
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]) {
    return n ? fmi2Error : fmi2OK;
}
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]) {
    return n ? fmi2Error : fmi2OK;
}

fmi2Status fmi2EnterEventMode(fmi2Component c) { return fmi2OK; }

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *ei) {
    ball *b = c;
    memset(ei, 0, sizeof *ei);
    if (b->r[H] <= 0 && b->r[V] < 0) {
        b->r[H] = DBL_MIN;
        b->r[V] = -b->r[E] * b->r[V];
        ei->valuesOfContinuousStatesChanged = fmi2True;
    }
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { return fmi2OK; }
fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean no_set_prior, fmi2Boolean *enter,
                                       fmi2Boolean *terminate) {
    *enter = fmi2False;
    *terminate = fmi2False;
    return fmi2OK;
}
fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) { ((ball *)c)->t = t; return fmi2OK; }
fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n) {
    ((ball *)c)->r[H] = x[0];
    ((ball *)c)->r[V] = x[1];
    return fmi2OK;
}
fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real d[], size_t n) {
    ball *b = c;
    derivatives(b);
    d[0] = b->r[DH];
    d[1] = b->r[DV];
    return fmi2OK;
}
fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t n) {
    z[0] = ((ball *)c)->r[H];
    return fmi2OK;
}
fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    x[0] = ((ball *)c)->r[H];
    x[1] = ((ball *)c)->r[V];
    return fmi2OK;
}
fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    for (size_t k = 0; k < n; k++) x[k] = 1.0;
    return fmi2OK;
}
