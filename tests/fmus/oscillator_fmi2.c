/* Test fixture: FMI 2.0 FMU (co-simulation and model exchange in one binary) of one oscillator half
 * (oscillator.h). Compiled against the FMI 2.0 standard headers that FMPy ships (fmpy/c-code). Functions the
 * fixture does not implement are exported as stubs by tests/fmus/build.py; the standard pieces are fmi2_common.h's. */
#include "fmi2_common.h"
#include "oscillator.h"

typedef struct comp {
    fmi2_base base;
    osc o;
    fmi2Type type;
    int fmu_mode;            /* ME: 0 init/event, 1 continuous time */
} comp;

static fmi2Status fail(comp *c, double t) {
    FMI2_LOG(c, c->o.fail_fatal ? fmi2Fatal : fmi2Error, "logStatusError", "spring broke at t = %g", t);
    return c->o.fail_fatal ? fmi2Fatal : fmi2Error;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                              const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean logging) {
    comp *c = fmi2_new_instance(sizeof *c, name, guid, 1, cb, logging, "wrong GUID");
    if (!c) return NULL;
    osc_defaults(&c->o);
    c->type = type;
    FMI2_LOG(c, fmi2OK, "logEvents", "instantiated %s (mass %d)", c->base.name, MASS);
    return c;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

FMI2_SETUP_EXPERIMENT_SETS_TIME(comp, o.t)
FMI2_NOTHING_TO_DO(fmi2EnterInitializationMode)

fmi2Status fmi2ExitInitializationMode(fmi2Component cc) {
    osc_start(&((comp *)cc)->o);
    return fmi2OK;
}

FMI2_NOTHING_TO_DO(fmi2Terminate)
fmi2Status fmi2Reset(fmi2Component c) { osc_defaults(&((comp *)c)->o); return fmi2OK; }

fmi2Status fmi2GetReal(fmi2Component cc, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    comp *c = cc;
    if (c->type == fmi2ModelExchange) osc_update(&c->o);
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= NR) {
            FMI2_LOG(c, fmi2Error, "logStatusError", "unknown value reference %u", vr[k]);
            return fmi2Error;
        }
        v[k] = c->o.r[vr[k]];
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component cc, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    comp *c = cc;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= NR) {
            FMI2_LOG(c, fmi2Error, "logStatusError", "unknown value reference %u", vr[k]);
            return fmi2Error;
        }
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
            if (v[k] < 1) {
                FMI2_LOG(c, fmi2Error, "logStatusError", "n_steps must be >= 1, got %d", v[k]);
                return fmi2Error;
            }
            c->o.n_steps = v[k];
        } else if (vr[k] == VR_FATAL) c->o.fail_fatal = v[k];
        else { FMI2_LOG(c, fmi2Error, "logStatusError", "unknown value reference %u", vr[k]); return fmi2Error; }
    }
    return fmi2OK;
}

FMI2_GET_NONE(Boolean)
FMI2_SET_NONE(Boolean)
FMI2_GET_NONE(String)
FMI2_SET_NONE(String)
FMI2_FMU_STATE_AS_COPY(comp, osc, o)

fmi2Status fmi2GetDirectionalDerivative(fmi2Component cc, const fmi2ValueReference unk[], size_t nunk,
                                        const fmi2ValueReference kn[], size_t nkn, const fmi2Real seed[],
                                        fmi2Real out[]) {
    osc_directional(&((comp *)cc)->o, unk, nunk, kn, nkn, seed, out);
    return fmi2OK;
}

/* ---- co-simulation ---- */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component cc, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer order[], const fmi2Real v[]) {
    comp *c = cc;
    for (size_t k = 0; k < n; k++) {
        if (order[k] != 1 || (vr[k] != IN0 && vr[k] != IN1)) {
            FMI2_LOG(c, fmi2Error, "logStatusError",
                     "input derivative of order %d for vr %u not supported", order[k], vr[k]);
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

FMI2_SYNCHRONOUS_DO_STEP

/* ---- model exchange ---- */
fmi2Status fmi2EnterEventMode(fmi2Component c) { ((comp *)c)->fmu_mode = 0; return fmi2OK; }

fmi2Status fmi2NewDiscreteStates(fmi2Component cc, fmi2EventInfo *ei) {
    comp *c = cc;
    int kicked;
    memset(ei, 0, sizeof *ei);
    ei->nextEventTimeDefined = osc_event_update(&c->o, &kicked, &ei->nextEventTime);
    ei->valuesOfContinuousStatesChanged = kicked;
    if (kicked) FMI2_LOG(c, fmi2OK, "logEvents", "kick at t = %g", c->o.t);
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { ((comp *)c)->fmu_mode = 1; return fmi2OK; }

FMI2_NO_STEP_EVENTS

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) {
    osc_set_time(&((comp *)c)->o, t);
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n) {
    osc_set_states(&((comp *)c)->o, x);
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component cc, fmi2Real d[], size_t n) {
    comp *c = cc;
    if (osc_failed(&c->o, c->o.t)) return fail(c, c->o.t);
    osc_rhs(&c->o, c->o.t, c->o.r, d);
    return fmi2OK;
}

FMI2_NO_EVENT_INDICATORS

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
    osc_get_states(&((comp *)c)->o, x);
    return fmi2OK;
}

FMI2_UNIT_NOMINALS
