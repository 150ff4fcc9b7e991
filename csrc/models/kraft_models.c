/* Built-in models of kraft2021 §3 / §18.5 (two-mass oscillator M2, M3 in force/force decomposition):
 *
 * "kraft_mass": one body with its wall element (2.9) and the optional contact (2.12):
 *   x' = v,  m v' = -F_w(x, v) + sign λ + A_C exp(B_C x),
 *   F_w = c x + d v + C sgn(x)|x|^e_x + D sgn(v)|v|^e_v,  y = (x, v).
 *   params: m, c, d, C, D, e_x, e_v, sign, A_C, B_C [, ΔF_H, Ω_H, φ_H: + ΔF_H sin(Ω_H t + φ_H) on the body,
 *   kraft2021 §18.8]. Overflow guard (kraft2021.md §3.1 remark, thesis silent):
 *   above B_C x = 60 (x = 6 µm for B_C = 1e7/m, twice the deepest penetration of M3) exp is continued linearly
 *   (C1), so an integrator's trial states far inside the wall give large but finite forces.
 * "kraft_element": the cut coupling element (2.19) as a unit without states:
 *   u = (x1, v1, x2, v2),  y = λ = c Δx + d Δv + C sgn(Δx)|Δx|^e_x + D sgn(Δv)|Δv|^e_v,  Δx = x2 - x1, Δv = v2 - v1.
 *   params: c, d, C, D, e_x, e_v. Feed-through: the consistent update gives λ_{N+1} = φ(y_{N+1}) (eq. 2.26). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/builtin.h"

typedef struct kmass { double m, c, d, C, D, ex, ev, sign, AC, BC, FH, OmH, phiH; } kmass;
typedef struct kelem { double c, d, C, D, ex, ev; } kelem;

static double spow(double v, double e) { return v == 0.0 ? 0.0 : copysign(pow(fabs(v), e), v); }

static double element_law(double c, double d, double C, double D, double ex, double ev, double dx, double dv) {
    double f = c * dx + d * dv;
    if (C != 0.0) f += C * spow(dx, ex);
    if (D != 0.0) f += D * spow(dv, ev);
    return f;
}

static int mass_rhs(void *ctx, double t, const double *x, const double *u, double *xdot) {
    const kmass *p = ctx;
    double f = -element_law(p->c, p->d, p->C, p->D, p->ex, p->ev, x[0], x[1]) + p->sign * u[0];
    if (p->AC != 0.0) {
        double z = p->BC * x[0];
        f += p->AC * (z <= 60.0 ? exp(z) : exp(60.0) * (1.0 + (z - 60.0)));
    }
    if (p->FH != 0.0) f += p->FH * sin(p->OmH * t + p->phiH);   /* harmonic force (kraft2021 §18.8) */
    xdot[0] = x[1];
    xdot[1] = f / p->m;
    return 0;
}

static int mass_output(void *ctx, double t, const double *x, const double *u, double *y) {
    y[0] = x[0];
    y[1] = x[1];
    return 0;
}

static int elem_rhs(void *ctx, double t, const double *x, const double *u, double *xdot) { return 0; }

static int elem_output(void *ctx, double t, const double *x, const double *u, double *y) {
    const kelem *p = ctx;
    y[0] = element_law(p->c, p->d, p->C, p->D, p->ex, p->ev, u[2] - u[0], u[3] - u[1]);
    return 0;
}

static const cs_model_ops MASS_OPS = {CS_MODEL_GENERIC, mass_rhs, mass_output, NULL, NULL, NULL, free};
static const cs_model_ops ELEM_OPS = {CS_MODEL_GENERIC, elem_rhs, elem_output, NULL, NULL, NULL, free};

static int mass_create(int nparams, const double *params, const char *name, cs_model **out, cs_err *err) {
    if (nparams != 10 && nparams != 13)
        return cs_fail(err, CS_ERR_ARG, "%s: expected 10 or 13 parameters", "kraft_mass");
    if (!(params[0] > 0.0)) return cs_fail(err, CS_ERR_ARG, "%s: mass must be positive", "kraft_mass");
    return cs_builtin_params_model(&MASS_OPS, 2, 1, 2, 0, sizeof(kmass), nparams, params, name, out, err);
}

static int elem_create(int nparams, const double *params, const char *name, cs_model **out, cs_err *err) {
    if (nparams != 6) return cs_fail(err, CS_ERR_ARG, "%s: expected 6 parameters", "kraft_element");
    return cs_builtin_params_model(&ELEM_OPS, 0, 4, 1, 1, sizeof(kelem), nparams, params, name, out, err);
}

const cs_builtin_model cs_model_kraft_mass = {"kraft_mass", mass_create};
const cs_builtin_model cs_model_kraft_element = {"kraft_element", elem_create};
