/* Test fixture: FMI 2.0 model-exchange FMU of a bouncing ball with a state event (tests/fmus/build.py).
 *
 *   h' = v, v' = -g;   event indicator z = h;   at h = 0 falling: v <- -e v
 *
 * Value references (Real): 0 h, 1 v, 2 der(h), 3 der(v), 4 g, 5 e. From h(0) = h0, v(0) = 0 the first impact is
 * at t1 = sqrt(2 h0 / g), the next ones 2 e^k v1 / g later (v1 = g t1). After an impact h is set to the smallest
 * positive double, so the indicator is positive again while the ball rises. */
#include <float.h>

#include "fmi2_common.h"

typedef struct ball {
    fmi2_base base;
    double r[6];
    double t;
} ball;

enum { H, V, DH, DV, G, E };

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                              const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean logging) {
    ball *b = fmi2_new_instance(sizeof *b, name, guid, type == fmi2ModelExchange, cb, logging, NULL);
    if (!b) return NULL;
    b->r[H] = 1.0; b->r[G] = 9.81; b->r[E] = 0.7;
    return b;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }
FMI2_SETUP_EXPERIMENT_SETS_TIME(ball, t)
FMI2_NOTHING_TO_DO(fmi2EnterInitializationMode)
FMI2_NOTHING_TO_DO(fmi2ExitInitializationMode)
FMI2_NOTHING_TO_DO(fmi2Terminate)
FMI2_NOTHING_TO_DO(fmi2Reset)

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

FMI2_SET_NONE(Integer)
FMI2_SET_NONE(Boolean)

FMI2_NOTHING_TO_DO(fmi2EnterEventMode)

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

FMI2_NOTHING_TO_DO(fmi2EnterContinuousTimeMode)
FMI2_NO_STEP_EVENTS
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
FMI2_UNIT_NOMINALS
