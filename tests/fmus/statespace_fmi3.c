/* Test fixture: an FMI 3.0 state-space model with array variables (co-simulation and model exchange; tests/fmus/
 * build.py build_statespace):
 *
 *   x' = A x + B u,  y = C x + D u,  x(t0) = x0
 *
 * with the structural parameters m (inputs, vr 1), n (states, vr 2), r (outputs, vr 3) sizing the Float64 arrays
 * A[n][n] (vr 4), B[n][m] (5), C[r][n] (6), D[r][m] (7), x0[n] (8), the input u[m] (9), the output y[r] (10), the
 * states x[n] (11) and their derivatives (12); row-major, at most 8 x 8. Co-simulation integrates with 20 RK4
 * steps per doStep, u held. The Binary parameter blob (vr 20, maxSize 16) gives the Int32 output blob_sum (21) =
 * 1000 x its length + the sum of its bytes. The FMU state can be got and set (a copy of the instance). */
#include <stdint.h>

#include "fmi3_common.h"

#define NMAX 8
#define BLOB_MAX 16

typedef struct inst {
    fmi3_base base;
    uint64_t m, n, r;
    double A[NMAX * NMAX], B[NMAX * NMAX], C[NMAX * NMAX], D[NMAX * NMAX], x0[NMAX], u[NMAX], x[NMAX];
    double t;
    uint8_t blob[BLOB_MAX];
    size_t blob_size;
} inst;

static fmi3Instance create(const fmi3_instantiation *a) {
    inst *c = fmi3_new_instance(sizeof *c, a, NULL);
    if (!c) return NULL;
    static const double A[9] = {-1, 2, 0, -2, -1, 0, 0, 0, -3}, B[6] = {1, 0, 0, 1, 1, 1},
                        C[6] = {1, 0, 0, 0, 1, 1}, D[4] = {0.5, 0, 0, 0}, x0[3] = {1, 0, -1};
    c->m = 2; c->n = 3; c->r = 2;
    memcpy(c->A, A, sizeof A); memcpy(c->B, B, sizeof B); memcpy(c->C, C, sizeof C); memcpy(c->D, D, sizeof D);
    memcpy(c->x0, x0, sizeof x0);
    c->u[0] = 1.0; c->u[1] = -0.5;
    c->blob[0] = 0x0a; c->blob[1] = 0x0b; c->blob[2] = 0x0c;
    c->blob_size = 3;
    return c;
}
FMI3_INSTANTIATE_CO_SIMULATION(create)
FMI3_INSTANTIATE_MODEL_EXCHANGE(create)
void fmi3FreeInstance(fmi3Instance c) { free(c); }

fmi3Status fmi3EnterInitializationMode(fmi3Instance cc, fmi3Boolean a, fmi3Float64 b, fmi3Float64 t0, fmi3Boolean d,
                                       fmi3Float64 e) {
    inst *c = cc;
    c->t = t0;
    memcpy(c->x, c->x0, sizeof c->x);
    return fmi3OK;
}
fmi3Status fmi3ExitInitializationMode(fmi3Instance cc) {
    inst *c = cc;
    memcpy(c->x, c->x0, sizeof c->x);   /* x0 as set during initialisation */
    return fmi3OK;
}
FMI3_NOTHING_TO_DO(fmi3EnterStepMode)
FMI3_NOTHING_TO_DO(fmi3Terminate)
FMI3_NOTHING_TO_DO(fmi3Reset)

/* the array (or scalar) behind a Float64 value reference and its number of values; NULL if none */
static double *f64(inst *c, fmi3ValueReference vr, size_t *len) {
    switch (vr) {
    case 0: *len = 1; return &c->t;
    case 4: *len = c->n * c->n; return c->A;
    case 5: *len = c->n * c->m; return c->B;
    case 6: *len = c->r * c->n; return c->C;
    case 7: *len = c->r * c->m; return c->D;
    case 8: *len = c->n; return c->x0;
    case 9: *len = c->m; return c->u;
    case 11: *len = c->n; return c->x;
    default: return NULL;
    }
}

static void derivatives(const inst *c, const double *x, double *dx) {
    for (uint64_t i = 0; i < c->n; i++) {
        double s = 0.0;
        for (uint64_t j = 0; j < c->n; j++) s += c->A[i * c->n + j] * x[j];
        for (uint64_t j = 0; j < c->m; j++) s += c->B[i * c->m + j] * c->u[j];
        dx[i] = s;
    }
}

static void outputs(const inst *c, double *y) {
    for (uint64_t i = 0; i < c->r; i++) {
        double s = 0.0;
        for (uint64_t j = 0; j < c->n; j++) s += c->C[i * c->n + j] * c->x[j];
        for (uint64_t j = 0; j < c->m; j++) s += c->D[i * c->m + j] * c->u[j];
        y[i] = s;
    }
}

fmi3Status fmi3GetFloat64(fmi3Instance cc, const fmi3ValueReference vr[], size_t nvr, fmi3Float64 v[], size_t nv) {
    inst *c = cc;
    size_t at = 0;
    for (size_t q = 0; q < nvr; q++) {
        size_t len = 0;
        double tmp[NMAX], *src = f64(c, vr[q], &len);
        if (vr[q] == 10) { outputs(c, tmp); src = tmp; len = c->r; }
        else if (vr[q] == 12) { derivatives(c, c->x, tmp); src = tmp; len = c->n; }
        if (!src || at + len > nv) return fmi3Error;
        memcpy(v + at, src, sizeof(double) * len);
        at += len;
    }
    return at == nv ? fmi3OK : fmi3Error;
}

fmi3Status fmi3SetFloat64(fmi3Instance cc, const fmi3ValueReference vr[], size_t nvr, const fmi3Float64 v[],
                          size_t nv) {
    inst *c = cc;
    size_t at = 0;
    for (size_t q = 0; q < nvr; q++) {
        size_t len = 0;
        double *dst = f64(c, vr[q], &len);
        if (!dst || vr[q] == 0 || vr[q] == 11 || at + len > nv) return fmi3Error;
        memcpy(dst, v + at, sizeof(double) * len);
        at += len;
    }
    return at == nv ? fmi3OK : fmi3Error;
}

fmi3Status fmi3GetUInt64(fmi3Instance cc, const fmi3ValueReference vr[], size_t nvr, fmi3UInt64 v[], size_t nv) {
    inst *c = cc;
    if (nvr != nv) return fmi3Error;
    for (size_t q = 0; q < nvr; q++) {
        if (vr[q] == 1) v[q] = c->m;
        else if (vr[q] == 2) v[q] = c->n;
        else if (vr[q] == 3) v[q] = c->r;
        else return fmi3Error;
    }
    return fmi3OK;
}

fmi3Status fmi3GetInt32(fmi3Instance cc, const fmi3ValueReference vr[], size_t nvr, fmi3Int32 v[], size_t nv) {
    inst *c = cc;
    if (nvr != nv) return fmi3Error;
    for (size_t q = 0; q < nvr; q++) {
        if (vr[q] != 21) return fmi3Error;
        int s = 1000 * (int)c->blob_size;
        for (size_t k = 0; k < c->blob_size; k++) s += c->blob[k];
        v[q] = s;
    }
    return fmi3OK;
}

fmi3Status fmi3SetBinary(fmi3Instance cc, const fmi3ValueReference vr[], size_t nvr, const size_t sizes[],
                         const fmi3Binary v[], size_t nv) {
    inst *c = cc;
    for (size_t q = 0; q < nvr; q++) {
        if (vr[q] != 20 || sizes[q] > BLOB_MAX) return fmi3Error;
        memcpy(c->blob, v[q], sizes[q]);
        c->blob_size = sizes[q];
    }
    return fmi3OK;
}

fmi3Status fmi3GetBinary(fmi3Instance cc, const fmi3ValueReference vr[], size_t nvr, size_t sizes[],
                         fmi3Binary v[], size_t nv) {
    inst *c = cc;
    for (size_t q = 0; q < nvr; q++) {
        if (vr[q] != 20) return fmi3Error;
        sizes[q] = c->blob_size;
        v[q] = c->blob;
    }
    return fmi3OK;
}

fmi3Status fmi3DoStep(fmi3Instance cc, fmi3Float64 T, fmi3Float64 H, fmi3Boolean no_set_prior, fmi3Boolean *event,
                      fmi3Boolean *terminate, fmi3Boolean *early, fmi3Float64 *last) {
    inst *c = cc;
    fmi3_step_flags_clear(event, terminate, early);
    const int steps = 20;
    const double h = H / steps;
    double k1[NMAX], k2[NMAX], k3[NMAX], k4[NMAX], tmp[NMAX];
    for (int s = 0; s < steps; s++) {
        derivatives(c, c->x, k1);
        for (uint64_t i = 0; i < c->n; i++) tmp[i] = c->x[i] + 0.5 * h * k1[i];
        derivatives(c, tmp, k2);
        for (uint64_t i = 0; i < c->n; i++) tmp[i] = c->x[i] + 0.5 * h * k2[i];
        derivatives(c, tmp, k3);
        for (uint64_t i = 0; i < c->n; i++) tmp[i] = c->x[i] + h * k3[i];
        derivatives(c, tmp, k4);
        for (uint64_t i = 0; i < c->n; i++) c->x[i] += h / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    }
    c->t = T + H;
    *last = c->t;
    return fmi3OK;
}

/* model exchange */
FMI3_NOTHING_TO_DO(fmi3EnterEventMode)
fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean *need_update, fmi3Boolean *terminate,
                                    fmi3Boolean *nominals_changed, fmi3Boolean *values_changed,
                                    fmi3Boolean *next_defined, fmi3Float64 *next_time) {
    fmi3_update_flags_clear(need_update, terminate, nominals_changed, values_changed, next_defined, next_time);
    return fmi3OK;
}
FMI3_NOTHING_TO_DO(fmi3EnterContinuousTimeMode)
FMI3_NO_STEP_EVENTS
fmi3Status fmi3SetTime(fmi3Instance cc, fmi3Float64 t) {
    ((inst *)cc)->t = t;
    return fmi3OK;
}
fmi3Status fmi3SetContinuousStates(fmi3Instance cc, const fmi3Float64 x[], size_t n) {
    inst *c = cc;
    if (n != c->n) return fmi3Error;
    memcpy(c->x, x, sizeof(double) * n);
    return fmi3OK;
}
fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance cc, fmi3Float64 d[], size_t n) {
    inst *c = cc;
    if (n != c->n) return fmi3Error;
    derivatives(c, c->x, d);
    return fmi3OK;
}
fmi3Status fmi3GetContinuousStates(fmi3Instance cc, fmi3Float64 x[], size_t n) {
    inst *c = cc;
    if (n != c->n) return fmi3Error;
    memcpy(x, c->x, sizeof(double) * n);
    return fmi3OK;
}
FMI3_NO_EVENT_INDICATORS
FMI3_UNIT_NOMINALS
fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) {
    *n = (size_t)((inst *)c)->n;
    return fmi3OK;
}

/* the FMU state: a copy of the instance */
FMI3_FMU_STATE_AS_COPY(inst, c)
