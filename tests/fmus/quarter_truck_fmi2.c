/* Test fixture: FMI 2.0 co-simulation FMUs of the quarter-truck halves of cosim.models.quarter_truck()
 * (cosim/models/quarter_truck.py), one source compiled per part with -DPART=1 (chassis), 2 (wheel), 3 (ground).
 *
 * Every part is a 2-state LTI system  x' = A x + B u,  y = C x + D u  (coordinates from static equilibrium):
 *   chassis: x = (d = z_w - z_c, v_c), u = v (wheel velocity),           y = F = k_c d + d_c (v - v_c)
 *   wheel:   x = (d_t = z_g - z_w, v_w), u = (F, v_g),                     y = v = v_w
 *   ground:  x = (p, q), no input, p' = w q, q' = -w p (w = 2 pi f),        y = v_g = A w q
 * doStep holds u over [T, T+H] (zero-order hold) and advances x exactly: x <- Phi x + Gamma B u with
 * Phi = e^{A H} (closed form for 2x2 matrices) and Gamma = A^{-1} (Phi - I) (A is invertible for every part).
 * This is the same discrete map as cosim's Exact() integrator on the LTI units, so cosim.FMU on these FMUs reproduces
 * the built-in model to rounding. Value references: 0, 1 states; 2, 3 inputs; 4 output; 10.. parameters.
 * Compiled against the FMI 2.0 standard headers that FMPy ships (fmpy/c-code); functions of the standard that are not
 * defined here are exported as stubs by tests/fmus/build_quarter_truck.py. */
#include <math.h>

#ifndef PART
#define PART 1
#endif
#ifndef GUID
#define GUID "{00000000-0000-0000-0000-000000000000}"
#endif

#include "fmi2_common.h"

enum { X0 = 0, X1 = 1, U0 = 2, U1 = 3, Y = 4, P0 = 10, P1 = 11, P2 = 12, NR = 13 };

typedef struct state {
    double r[NR];
    double t;
    double h_cached, phi[4], gam[4]; /* Phi and Gamma for the step h_cached (row-major 2x2) */
} state;

typedef struct comp {
    fmi2_base base;
    state s;
} comp;

static void defaults(state *s) {
    memset(s, 0, sizeof *s);
    s->h_cached = -1.0;
#if PART == 1
    s->r[P0] = 400.0; s->r[P1] = 15000.0; s->r[P2] = 1000.0;     /* m_c, k_c, d_c */
#elif PART == 2
    s->r[P0] = 40.0; s->r[P1] = 150000.0;                        /* m_w, k_w */
#else
    s->r[P0] = 0.05; s->r[P1] = 2.0; s->r[X1] = 1.0;             /* amplitude, frequency; q(0) = 1 */
#endif
}

/* A (2x2 row-major), B (2x2: columns = inputs), C (1x2), D (1x2) of the part from its parameters */
static void matrices(const state *s, double A[4], double B[4], double C[2], double D[2]) {
    memset(B, 0, 4 * sizeof(double));
    memset(D, 0, 2 * sizeof(double));
#if PART == 1
    double m = s->r[P0], k = s->r[P1], d = s->r[P2];
    A[0] = 0.0; A[1] = -1.0; A[2] = k / m; A[3] = -d / m;
    B[0] = 1.0; B[2] = d / m;
    C[0] = k; C[1] = -d;
    D[0] = d;
#elif PART == 2
    double m = s->r[P0], k = s->r[P1];
    A[0] = 0.0; A[1] = -1.0; A[2] = k / m; A[3] = 0.0;
    B[1] = 1.0; B[2] = -1.0 / m;
    C[0] = 0.0; C[1] = 1.0;
#else
    double w = 2.0 * 3.14159265358979323846 * s->r[P1];
    A[0] = 0.0; A[1] = w; A[2] = -w; A[3] = 0.0;
    C[0] = 0.0; C[1] = s->r[P0] * w;
#endif
}

static double output(const state *s) {
    double A[4], B[4], C[2], D[2];
    matrices(s, A, B, C, D);
    return C[0] * s->r[X0] + C[1] * s->r[X1] + D[0] * s->r[U0] + D[1] * s->r[U1];
}

/* Phi = e^{A h} = e^{sig h} (c I + S (A - sig I)), sig = tr A / 2, (A - sig I)^2 = delta I; Gamma = A^{-1}(Phi - I) */
static int discretise(state *s, const double A[4], double h) {
    double sig = 0.5 * (A[0] + A[3]), det = A[0] * A[3] - A[1] * A[2], delta = sig * sig - det, c, S;
    if (det == 0.0) return -1;
    if (delta > 0) {
        double q = sqrt(delta);
        c = cosh(q * h);
        S = sinh(q * h) / q;
    } else if (delta < 0) {
        double q = sqrt(-delta);
        c = cos(q * h);
        S = sin(q * h) / q;
    } else {
        c = 1.0;
        S = h;
    }
    double e = exp(sig * h);
    s->phi[0] = e * (c + S * (A[0] - sig));
    s->phi[1] = e * S * A[1];
    s->phi[2] = e * S * A[2];
    s->phi[3] = e * (c + S * (A[3] - sig));
    double inv[4] = {A[3] / det, -A[1] / det, -A[2] / det, A[0] / det};
    double pm[4] = {s->phi[0] - 1.0, s->phi[1], s->phi[2], s->phi[3] - 1.0};
    s->gam[0] = inv[0] * pm[0] + inv[1] * pm[2];
    s->gam[1] = inv[0] * pm[1] + inv[1] * pm[3];
    s->gam[2] = inv[2] * pm[0] + inv[3] * pm[2];
    s->gam[3] = inv[2] * pm[1] + inv[3] * pm[3];
    s->h_cached = h;
    return 0;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                              const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean logging) {
    comp *c = fmi2_new_instance(sizeof *c, name, guid, type == fmi2CoSimulation, cb, logging,
                                "wrong GUID or interface type (co-simulation only)");
    if (c) defaults(&c->s);
    return c;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

FMI2_SETUP_EXPERIMENT_SETS_TIME(comp, s.t)
FMI2_NOTHING_TO_DO(fmi2EnterInitializationMode)
FMI2_NOTHING_TO_DO(fmi2ExitInitializationMode)
FMI2_NOTHING_TO_DO(fmi2Terminate)
fmi2Status fmi2Reset(fmi2Component c) { defaults(&((comp *)c)->s); return fmi2OK; }

static int known(fmi2ValueReference vr) {
#if PART == 1
    return vr == X0 || vr == X1 || vr == U0 || vr == Y || vr == P0 || vr == P1 || vr == P2;
#elif PART == 2
    return vr == X0 || vr == X1 || vr == U0 || vr == U1 || vr == Y || vr == P0 || vr == P1;
#else
    return vr == X0 || vr == X1 || vr == Y || vr == P0 || vr == P1;
#endif
}

fmi2Status fmi2GetReal(fmi2Component cc, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    comp *c = cc;
    for (size_t k = 0; k < n; k++) {
        if (!known(vr[k])) {
            FMI2_LOG(c, fmi2Error, "logStatusError", "unknown value reference %u", vr[k]);
            return fmi2Error;
        }
        v[k] = vr[k] == Y ? output(&c->s) : c->s.r[vr[k]];
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component cc, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    comp *c = cc;
    for (size_t k = 0; k < n; k++) {
        if (!known(vr[k]) || vr[k] == Y) {
            FMI2_LOG(c, fmi2Error, "logStatusError", "value reference %u cannot be set", vr[k]);
            return fmi2Error;
        }
        if (vr[k] >= P0 && !(v[k] > 0.0 || (PART == 3 && vr[k] == P0))) {
            FMI2_LOG(c, fmi2Error, "logStatusError", "parameter %u must be positive, got %g", vr[k], v[k]);
            return fmi2Error;
        }
        c->s.r[vr[k]] = v[k];
        if (vr[k] >= P0) c->s.h_cached = -1.0;
    }
    return fmi2OK;
}

FMI2_GET_NONE(Integer)
FMI2_SET_NONE(Integer)
FMI2_GET_NONE(Boolean)
FMI2_SET_NONE(Boolean)
FMI2_GET_NONE(String)
FMI2_SET_NONE(String)
FMI2_FMU_STATE_AS_COPY(comp, state, s)

fmi2Status fmi2DoStep(fmi2Component cc, fmi2Real T, fmi2Real H, fmi2Boolean no_set_prior) {
    comp *c = cc;
    state *s = &c->s;
    double A[4], B[4], C[2], D[2];
    if (!(H > 0.0)) {
        FMI2_LOG(c, fmi2Error, "logStatusError", "step size must be positive, got %g", H);
        return fmi2Error;
    }
    matrices(s, A, B, C, D);
    if (H != s->h_cached && discretise(s, A, H) != 0) {
        FMI2_LOG(c, fmi2Error, "logStatusError", "singular system matrix");
        return fmi2Error;
    }
    double bu0 = B[0] * s->r[U0] + B[1] * s->r[U1], bu1 = B[2] * s->r[U0] + B[3] * s->r[U1];
    double x0 = s->r[X0], x1 = s->r[X1];
    s->r[X0] = s->phi[0] * x0 + s->phi[1] * x1 + s->gam[0] * bu0 + s->gam[1] * bu1;
    s->r[X1] = s->phi[2] * x0 + s->phi[3] * x1 + s->gam[2] * bu0 + s->gam[3] * bu1;
    s->t = T + H;
    return fmi2OK;
}

FMI2_SYNCHRONOUS_DO_STEP
