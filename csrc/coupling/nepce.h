/* NEPCE, the nearly energy-preserving coupling element (genser2020.md section 9 [EXT]; Benedikt et al.), as a
 * wrapper around a signal-based coupling (DESIGN.md section 2: "balance correction and NEPCE (wrappers of a
 * signal-based coupling)"). Deferred correction: the integral of the extrapolation error of the last step,
 *     E_k = int_{T^{k-1}}^{T^k} (y_c(t) - u(t)) dt,      y_c = L y + r the coupled output,
 * is fed back over the next step, u(t) = base approximation + K E_k / H, optionally through the first-order filter
 * c <- c + H/(tau + H) (K E_k / H - c). The integral of y_c uses the micro-step trace of each unit where the unit
 * reports one (units/unit.h set_trace/trace) and the trapezoidal rule on the macro-point values otherwise. */
#ifndef COSIM_NEPCE_H
#define COSIM_NEPCE_H

#include "kind.h"
#include "coupling/approx.h"
#include "coupling/coupling.h"
#include "network/network.h"
#include "unit_access.h"

typedef struct cs_nepce_spec {
    double K;       /* gain of the correction (default 1) */
    double tau;     /* time constant of the first-order filter [s]; 0: no filter */
} cs_nepce_spec;

/* units: nsub units of the network (not owned; may be NULL: macro-point integrals only). */
int cs_nepce_coupling_create(const cs_network *net, const cs_unit_access *units, const cs_approx_spec *base,
                             const cs_nepce_spec *spec, cs_coupling **out, cs_err *err);
/* Counters: steps whose output integral came from unit traces, and from the macro-point trapezoidal rule. */
int cs_nepce_counts(const cs_coupling *c, long *traced, long *fallback, cs_err *err);

/* The kind (master/registry.c). */
extern const cs_kind cs_coupling_nepce_kind;

#endif
