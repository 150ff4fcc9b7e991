/* Test fixture: FMI 3.0 FMU of one oscillator half (oscillator.h): co-simulation (with the intermediate update
 * callback at every RK4 stage, where the importer may set the inputs declared intermediateUpdate) and model
 * exchange (time event: the kick). Compiled against the FMI 3.0
 * standard headers that FMPy ships (fmpy/c-code). Functions the fixture does not implement are exported as
 * stubs by tests/fmus/build.py; the standard pieces are fmi3_common.h's. */
#include <stdio.h>

#include "fmi3_common.h"
#include "oscillator.h"

typedef struct inst {
    fmi3_base base;
    osc o;
    fmi3IntermediateUpdateCallback upd;
    int me;                  /* model exchange instance */
} inst;

static void say(inst *c, fmi3Status s, const char *cat, const char *fmt, double v) {
    if (!c->base.log || (!c->base.logging && s == fmi3OK)) return;
    char buf[200];
    snprintf(buf, sizeof buf, fmt, v);
    c->base.log(c->base.env, s, cat, buf);
}

static fmi3Status fail(inst *c, double t) {
    fmi3Status s = c->o.fail_fatal ? fmi3Fatal : fmi3Error;
    say(c, s, "logStatusError", "spring broke at t = %g", t);
    return s;
}

static void at_stage(void *ctx, double t) {
    inst *c = ctx;
    fmi3Boolean early = fmi3False;
    fmi3Float64 t_early = t;
    c->upd(c->base.env, t, fmi3True, fmi3False, fmi3False, fmi3False, &early, &t_early);
}

static fmi3Instance create(const fmi3_instantiation *a) {
    inst *c = fmi3_new_instance(sizeof *c, a, "wrong instantiation token");
    if (!c) return NULL;
    osc_defaults(&c->o);
    c->me = a->me;
    c->upd = a->upd;
    if (a->upd) {
        c->o.hook = at_stage;
        c->o.hook_ctx = c;
    }
    say(c, fmi3OK, "logEvents", a->me ? "instantiated for model exchange (mass %g)" : "instantiated (mass %g)", MASS);
    return c;
}
FMI3_INSTANTIATE_MODEL_EXCHANGE(create)
FMI3_INSTANTIATE_CO_SIMULATION(create)

void fmi3FreeInstance(fmi3Instance c) { free(c); }

fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean tol_defined, fmi3Float64 tol, fmi3Float64 t0,
                                       fmi3Boolean stop_defined, fmi3Float64 stop) {
    ((inst *)c)->o.t = t0;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance cc) {
    osc_start(&((inst *)cc)->o);
    return fmi3OK;
}

FMI3_NOTHING_TO_DO(fmi3EnterStepMode)
FMI3_NOTHING_TO_DO(fmi3EnterEventMode)
FMI3_NOTHING_TO_DO(fmi3Terminate)
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
            if (v[k] < 1) {
                say(c, fmi3Error, "logStatusError", "n_steps must be >= 1, got %g", v[k]);
                return fmi3Error;
            }
            c->o.n_steps = v[k];
        } else if (vr[k] == VR_FATAL) c->o.fail_fatal = v[k];
        else return fmi3Error;
    }
    return fmi3OK;
}

FMI3_FMU_STATE_AS_COPY(osc, &((inst *)c)->o)

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance cc, const fmi3ValueReference unk[], size_t nunk,
                                        const fmi3ValueReference kn[], size_t nkn, const fmi3Float64 seed[],
                                        size_t nseed, fmi3Float64 out[], size_t nout) {
    osc_directional(&((inst *)cc)->o, unk, nunk, kn, nkn, seed, out);
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
    fmi3_step_flags_clear(event, terminate, early);
    *last = T + H;
    if (osc_failed(&c->o, T + H)) return fail(c, T + H);
    osc_do_step(&c->o, T, H);
    return fmi3OK;
}

/* ---- model exchange ---- */
fmi3Status fmi3UpdateDiscreteStates(fmi3Instance cc, fmi3Boolean *need_update, fmi3Boolean *terminate,
                                    fmi3Boolean *nominals_changed, fmi3Boolean *values_changed,
                                    fmi3Boolean *next_defined, fmi3Float64 *next_time) {
    inst *c = cc;
    int kicked;
    fmi3_update_flags_clear(need_update, terminate, nominals_changed, values_changed, next_defined, next_time);
    *next_defined = osc_event_update(&c->o, &kicked, next_time);
    *values_changed = kicked;
    if (kicked) say(c, fmi3OK, "logEvents", "kick at t = %g", c->o.t);
    return fmi3OK;
}

FMI3_NOTHING_TO_DO(fmi3EnterContinuousTimeMode)

FMI3_NO_STEP_EVENTS

fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 t) {
    osc_set_time(&((inst *)c)->o, t);
    return fmi3OK;
}

fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t n) {
    osc_set_states(&((inst *)c)->o, x);
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance cc, fmi3Float64 d[], size_t n) {
    inst *c = cc;
    if (osc_failed(&c->o, c->o.t)) return fail(c, c->o.t);
    osc_rhs(&c->o, c->o.t, c->o.r, d);
    return fmi3OK;
}

FMI3_NO_EVENT_INDICATORS

fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
    osc_get_states(&((inst *)c)->o, x);
    return fmi3OK;
}

FMI3_UNIT_NOMINALS

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) { *n = 2; return fmi3OK; }
