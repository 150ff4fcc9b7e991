/* Quadrature-augmented model (moshagen §2.6, spec §6.1 "per-output step integrals from an augmented quadrature
 * state integrated by the same solver"): for a model x' = f(t, x, u), y = g(t, x, u) the model
 *     [x; q]' = [f(t, x, u); g(t, x, u)],   y = g(t, x, u)
 * with ny extra states q = ∫ y dt. Integrated by the unit's own integrator, q(T_{N+1}) - q(T_N) is the sender's
 * exact (to the integrator's accuracy) integral Q^N = ∫_{T_N}^{T_{N+1}} y dt that the balance correction needs.
 * An LTI inner model gives an LTI augmented model ([[A, 0], [C, 0]], [B; D], [C, 0], D), so the Exact integrator
 * integrates q exactly too. */
#ifndef COSIM_QUADRATURE_MODEL_H
#define COSIM_QUADRATURE_MODEL_H

#include "models/model.h"

/* inner: not owned, must outlive the result. */
int cs_quadrature_model_create(cs_model *inner, cs_model **out, cs_err *err);

#endif
