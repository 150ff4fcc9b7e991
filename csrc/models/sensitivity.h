/* Forward-sensitivity model (kraft2021 App. A, eqs. A.2/A.8, for any model): for x' = f(t, x, u), y = g(t, x, u)
 * and an input u(t) on the window [T, T+H] whose end value u_end enters as u(t) = p(t) + (u_end - p(T+H)) ℓ(s),
 * s = (t - T)/H (ℓ: the Lagrange basis polynomial of the end node), the model
 *     [x; Z_1..Z_nu]' = [f(t, x, u); f_x Z_a + σ_a ℓ(s) f_u e_a]
 * with nu extra state blocks Z_a = σ_a ∂x/∂u_end,a (Z_a(T) = 0). Integrated by a unit's own integrator, x(T+H)
 * and S = Z / σ give the interface Jacobian dy(T+H)/du_end = g_x S + g_u of a nonlinear unit (the variational
 * equations of the window map, as CVODES' forward sensitivities integrate them). f_x Z_a + σ_a ℓ f_u e_a is one
 * directional difference of f per column (no model Jacobian needed): central for adaptive integrators, whose error
 * test must not see the difference noise, else one-sided; implicit integrators get the Newton matrix blockdiag(f_x). The scales σ_a keep the Z columns at
 * the size of the state, so that an adaptive integrator's error test (rtol |z| + atol) controls them relatively,
 * as CVODES' scaled sensitivity tolerances do.
 * The window (T, H, ℓ, σ) is set before each integration: the model is private to the unit that owns it. */
#ifndef COSIM_SENSITIVITY_MODEL_H
#define COSIM_SENSITIVITY_MODEL_H

#include "models/model.h"

/* inner: not owned, must outlive the result. The model has nx (1 + nu) states, the inner inputs and outputs.
 * central: central differences (2 calls of f per column and evaluation), else one-sided (1 call). */
int cs_sensitivity_model_create(cs_model *inner, int central, cs_model **out, cs_err *err);

/* The window of the next integration (before it, every time): ell has deg + 1 coefficients and is read, not copied,
 * during the integration; sigma: nu scales (copied). */
void cs_sensitivity_model_window(cs_model *sens, double T, double H, const double *ell, int deg, const double *sigma);

#endif
