/* Smoothing of the switch between the old and the new input (moshagen §2.2.5; moshagen.md §2.5): a coupling wrapper
 * around a signal-based coupling. On the macro step [T_{j-1}, T_j] unit i sees the convex combination
 *     ū(t) = (1 − s(τ)) Ext^{j−1}(t) + s(τ) Ext^j(t),   τ = (t − T_{j−1}) / (T_j − T_{j−1}),
 * with Ext^j the inner coupling's input polynomial of this step, Ext^{j−1} the one of the previous accepted step
 * continued (re-expanded) onto this step, and s the quintic smoothstep s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ [ours, moshagen.md
 * §2.5: s' = s'' = 0 at both ends, so ū is C² across exchange times]. The first step has no previous input and is
 * not smoothed. Where the blended polynomial has degree ≤ CS_MAXDEG (a ZOH inner coupling: degree 5) the input stays
 * on the polynomial fast path; otherwise (degree up to 10) it is an evaluation-path input (csrc/input/input.h),
 * which Exact() integrators refuse: use RK4/Euler substeps or CVODE. */
#ifndef COSIM_SMOOTH_COUPLING_H
#define COSIM_SMOOTH_COUPLING_H

#include "coupling/coupling.h"
#include "network/network.h"

/* inner: owned by the result (destroyed with it, also on failure). net: not owned. */
int cs_smooth_coupling_create(cs_coupling *inner, const cs_network *net, cs_coupling **out, cs_err *err);

/* The quintic switch s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ and its derivative. */
static inline double cs_smoothstep5(double tau) { return tau * tau * tau * (10.0 + tau * (-15.0 + 6.0 * tau)); }
static inline double cs_smoothstep5_dt(double tau) {
    double u = tau * (1.0 - tau);
    return 30.0 * u * u;
}

#endif
