/* Built-in nonlinear halves of the dual-mass oscillator of genser2020 §10.2-10.3 (the linear halves are LTI). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/builtin.h"

/* "dmo_force_impulse": force-driven mass m1 with wall spring c1 / damper d1 (genser eq. 3.8):
 *   x1' = v1,  m1 v1' = -c1 x1 - d1 v1 + F + F_ex(t),  y = (x1, v1),
 *   F_ex(t) = amplitude sin(10 t) on [k period, k period + width), 0 otherwise.
 * genser applies the impulse during the single explicit-Euler step of length 1e-5 s starting at t = 0.05 k
 * (genser2020.md §10.3 [AMB]); a window of that width reproduces it for any integrator that resolves it.
 * params: m1, c1, d1, amplitude, period, width. */
typedef struct impulse_ctx { double m1, c1, d1, amp, period, width; } impulse_ctx;

static double impulse_force(const impulse_ctx *p, double t) {
    double k = floor(t / p->period + 1e-7);
    double ph = t - k * p->period;
    return (ph >= -1e-12 && ph < p->width - 1e-12) ? p->amp * sin(10.0 * t) : 0.0;
}

static int impulse_rhs(void *c, double t, const double *x, const double *u, double *xdot) {
    const impulse_ctx *p = c;
    xdot[0] = x[1];
    xdot[1] = (-p->c1 * x[0] - p->d1 * x[1] + u[0] + impulse_force(p, t)) / p->m1;
    return 0;
}

static int impulse_output(void *c, double t, const double *x, const double *u, double *y) {
    y[0] = x[0];
    y[1] = x[1];
    return 0;
}

/* "dmo_base_nonlinear": base-point excited mass m2 with progressive coupling (genser eq. 3.6-3.7):
 *   ck = clip(c |x2 - x1|^(n_c - 1), ck_min, ck_max),  dk = clip(d |v2 - v1|^(n_d - 1), dk_min, dk_max),
 *   F = ck (x2 - x1) + dk (v2 - v1),  m2 v2' = -c2 x2 - d2 v2 - F,  y = F  (feed-through: F depends on u).
 * params: m2, c2, d2, c, ck_max, ck_min, n_c, d, dk_max, dk_min, n_d. */
typedef struct nl_ctx { double m2, c2, d2, c, ck_max, ck_min, n_c, d, dk_max, dk_min, n_d; } nl_ctx;

static double clip(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

static double coupling_force(const nl_ctx *p, const double *x, const double *u) {
    double dx = x[0] - u[0], dv = x[1] - u[1];
    double ck = clip(p->c * pow(fabs(dx), p->n_c - 1.0), p->ck_min, p->ck_max);
    double dk = clip(p->d * pow(fabs(dv), p->n_d - 1.0), p->dk_min, p->dk_max);
    return ck * dx + dk * dv;
}

static int nl_rhs(void *c, double t, const double *x, const double *u, double *xdot) {
    const nl_ctx *p = c;
    xdot[0] = x[1];
    xdot[1] = (-p->c2 * x[0] - p->d2 * x[1] - coupling_force(p, x, u)) / p->m2;
    return 0;
}

static int nl_output(void *c, double t, const double *x, const double *u, double *y) {
    y[0] = coupling_force(c, x, u);
    return 0;
}

static const cs_model_ops IMPULSE_OPS = {CS_MODEL_GENERIC, impulse_rhs, impulse_output, NULL, NULL, NULL, free};
static const cs_model_ops NL_OPS = {CS_MODEL_GENERIC, nl_rhs, nl_output, NULL, NULL, NULL, free};

static int impulse_create(int nparams, const double *params, const char *name, cs_model **out, cs_err *err) {
    if (nparams != 6) return cs_fail(err, CS_ERR_ARG, "%s: expected 6 parameters", "dmo_force_impulse");
    return cs_builtin_params_model(&IMPULSE_OPS, 2, 1, 2, 0, sizeof(impulse_ctx), nparams, params, name, out, err);
}

static int nl_create(int nparams, const double *params, const char *name, cs_model **out, cs_err *err) {
    if (nparams != 11) return cs_fail(err, CS_ERR_ARG, "%s: expected 11 parameters", "dmo_base_nonlinear");
    return cs_builtin_params_model(&NL_OPS, 2, 2, 1, 1, sizeof(nl_ctx), nparams, params, name, out, err);
}

const cs_builtin_model cs_model_dmo_force_impulse = {"dmo_force_impulse", impulse_create};
const cs_builtin_model cs_model_dmo_base_nonlinear = {"dmo_base_nonlinear", nl_create};
