/* Test fixture: one half of the two-mass oscillator (kraft2021 §2, force/displacement decomposition), shared by
 * the FMI 2.0 (oscillator_fmi2.c, co-simulation and model exchange) and FMI 3.0 (oscillator_fmi3.c, co-simulation)
 * FMUs that tests/fmus/build.py compiles at test time (FMI 3.0: co-simulation with intermediate update, and model
 * exchange). Compiled with -DMASS=1 or -DMASS=2.
 *
 *   Mass1 (MASS=1): x' = v, m v' = F - c x - d v;                      input F; outputs x, v
 *   Mass2 (MASS=2): x' = v, m v' = -c x - d v - Fk, Fk = ck (x - x_in) + dk (v - v_in);
 *                   inputs x_in, v_in; output F = Fk (feed-through)
 *
 * Value references (Float64 / Real):
 *   0 x, 1 v, 2 der(x), 3 der(v), 4 m, 5 c, 6 d, 7 ck, 8 dk, 9 fail_time, 10 in0, 11 in1, 12 F (Mass2's output),
 *   13 t_kick, 14 kick
 * Integer: 20 n_steps (RK4 steps per doStep, co-simulation), 21 fail_fatal (failures return Fatal, not Error)
 *
 * Failure injection: a doStep that reaches fail_time (> 0) or a derivative evaluation after fail_time logs
 * "spring broke at t = ..." and returns Error (Fatal with fail_fatal = 1).
 * Time event: at t_kick (> 0) the velocity jumps by `kick` (co-simulation: inside doStep; model exchange: a time
 * event announced by nextEventTime). */
#ifndef OSCILLATOR_H
#define OSCILLATOR_H

#include <math.h>
#include <string.h>

#ifndef MASS
#define MASS 1
#endif

#define NR 15
enum { X, V, DX, DV, PM, PC, PD, PCK, PDK, FAIL, IN0, IN1, FOUT, TKICK, KICK };
enum { VR_NSTEPS = 20, VR_FATAL = 21 };

typedef struct osc {
    double r[NR];
    int n_steps, fail_fatal;
    double t;
    double du[2];            /* input derivatives (co-simulation, canInterpolateInputs) */
    double t_u;              /* time at which the inputs were set */
    int kicked;
    /* FMI 3 co-simulation intermediate update: called at every RK4 stage time (the importer may set the inputs) */
    void (*hook)(void *ctx, double t);
    void *hook_ctx;
} osc;

static void osc_defaults(osc *o) {
    memset(o, 0, sizeof *o);
#if MASS == 1
    o->r[X] = 0.1; o->r[PM] = 10.0; o->r[PC] = 1e6; o->r[PD] = 1.0;
#else
    o->r[PM] = 10.0; o->r[PC] = 1e7; o->r[PD] = 2.0;
#endif
    o->r[PCK] = 1e5; o->r[PDK] = 1e3;
    o->n_steps = 10;
}

/* inputs at time t: the values set at t_u continued with the set derivatives */
static void osc_inputs(const osc *o, double t, double *u) {
    u[0] = o->r[IN0] + o->du[0] * (t - o->t_u);
    u[1] = o->r[IN1] + o->du[1] * (t - o->t_u);
}

static void osc_rhs(const osc *o, double t, const double *x, double *xd) {
    double u[2];
    osc_inputs(o, t, u);
    const double m = o->r[PM], c = o->r[PC], d = o->r[PD];
    xd[0] = x[1];
#if MASS == 1
    xd[1] = (u[0] - c * x[0] - d * x[1]) / m;
#else
    double fk = o->r[PCK] * (x[0] - u[0]) + o->r[PDK] * (x[1] - u[1]);
    xd[1] = (-c * x[0] - d * x[1] - fk) / m;
#endif
}

/* der(x), der(v) and the output F from the current state */
static void osc_update(osc *o) {
    double xd[2];
    osc_rhs(o, o->t, o->r, xd);
    o->r[DX] = xd[0];
    o->r[DV] = xd[1];
#if MASS == 2
    double u[2];
    osc_inputs(o, o->t, u);
    o->r[FOUT] = o->r[PCK] * (o->r[X] - u[0]) + o->r[PDK] * (o->r[V] - u[1]);
#endif
}

static void osc_at(osc *o, double t) {
    if (o->hook) o->hook(o->hook_ctx, t);
}

static void osc_rk4(osc *o, double t, double h) {
    double *x = o->r, k1[2], k2[2], k3[2], k4[2], y[2];
    osc_at(o, t);
    osc_rhs(o, t, x, k1);
    for (int i = 0; i < 2; i++) y[i] = x[i] + 0.5 * h * k1[i];
    osc_at(o, t + 0.5 * h);
    osc_rhs(o, t + 0.5 * h, y, k2);
    for (int i = 0; i < 2; i++) y[i] = x[i] + 0.5 * h * k2[i];
    osc_rhs(o, t + 0.5 * h, y, k3);
    for (int i = 0; i < 2; i++) y[i] = x[i] + h * k3[i];
    osc_at(o, t + h);
    osc_rhs(o, t + h, y, k4);
    for (int i = 0; i < 2; i++) x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}

/* one communication step of the co-simulation FMU: n_steps RK4 steps, split at t_kick */
static void osc_do_step(osc *o, double T, double H) {
    double end = T + H;
    if (o->r[TKICK] > 0 && !o->kicked && o->r[TKICK] <= end) {
        double tk = o->r[TKICK];
        if (tk > T) {
            int n = o->n_steps;
            for (int k = 0; k < n; k++) osc_rk4(o, T + k * (tk - T) / n, (tk - T) / n);
        }
        o->r[V] += o->r[KICK];
        o->kicked = 1;
        T = tk;
    }
    if (end > T) {
        int n = o->n_steps;
        double h = (end - T) / n;
        for (int k = 0; k < n; k++) osc_rk4(o, T + k * h, h);
    }
    o->t = end;
    osc_update(o);
}

/* d(unknown)/d(known) for unknowns der(x), der(v), x, v, F and knowns x, v, in0, in1 */
static double osc_partial(const osc *o, unsigned unk, unsigned kn) {
    const double m = o->r[PM];
    if (unk == X) return kn == X;
    if (unk == V) return kn == V;
    if (unk == DX) return kn == V;
#if MASS == 1
    if (unk == DV) return kn == X ? -o->r[PC] / m : kn == V ? -o->r[PD] / m : kn == IN0 ? 1.0 / m : 0.0;
#else
    const double ck = o->r[PCK], dk = o->r[PDK];
    if (unk == DV)
        return kn == X ? -(o->r[PC] + ck) / m : kn == V ? -(o->r[PD] + dk) / m : kn == IN0 ? ck / m
             : kn == IN1 ? dk / m : 0.0;
    if (unk == FOUT) return kn == X ? ck : kn == V ? dk : kn == IN0 ? -ck : kn == IN1 ? -dk : 0.0;
#endif
    return 0.0;
}

/* first time derivative of an output (co-simulation output derivatives) */
static double osc_output_rate(const osc *o, unsigned vr) {
    if (vr == X) return o->r[V];
    if (vr == V) return o->r[DV];
#if MASS == 2
    if (vr == FOUT) return o->r[PCK] * (o->r[V] - o->du[0]) + o->r[PDK] * (o->r[DV] - o->du[1]);
#endif
    return 0.0;
}

static int osc_failed(const osc *o, double t) { return o->r[FAIL] > 0 && t >= o->r[FAIL]; }

/* end of initialisation: the inputs hold from the start time on */
static void osc_start(osc *o) {
    o->t_u = o->t;
    osc_update(o);
}

/* model exchange: time, states (x, v) */
static void osc_set_time(osc *o, double t) {
    o->t = t;
    o->t_u = t;
}
static void osc_set_states(osc *o, const double *x) {
    o->r[X] = x[0];
    o->r[V] = x[1];
}
static void osc_get_states(const osc *o, double *x) {
    x[0] = o->r[X];
    x[1] = o->r[V];
}

/* model exchange event update at o->t: the kick if its time has come (then *kicked = 1: the velocity jumped);
 * returns 1 with *next the time of the kick while it is still to come, else 0 */
static int osc_event_update(osc *o, int *kicked, double *next) {
    *kicked = o->r[TKICK] > 0 && !o->kicked && o->t >= o->r[TKICK];
    if (*kicked) {
        o->r[V] += o->r[KICK];
        o->kicked = 1;
    }
    if (o->r[TKICK] > 0 && !o->kicked) {
        *next = o->r[TKICK];
        return 1;
    }
    return 0;
}

/* out = d(unknowns)/d(knowns) seed (value references of both FMI versions are unsigned int) */
static void osc_directional(const osc *o, const unsigned *unk, size_t nunk, const unsigned *kn, size_t nkn,
                            const double *seed, double *out) {
    for (size_t i = 0; i < nunk; i++) {
        out[i] = 0.0;
        for (size_t j = 0; j < nkn; j++) out[i] += osc_partial(o, unk[i], kn[j]) * seed[j];
    }
}

#endif
