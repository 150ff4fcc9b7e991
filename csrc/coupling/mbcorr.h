/* MBCorr, the model-based corrector of explicit co-simulation (Haid, Stettinger, Watzenig, Benedikt et al., Multibody
 * Syst. Dyn. 2022; Genser 2020's third baseline) -- a RECONSTRUCTION (spec mbcorr.md §2): the paper's own
 * equations could not be read, every formula below is the spec's inferred reference formulation.
 *
 * A wrapper of the signal-based coupling Lagrange(p), p = 0, 1, 2 (the predictor). At every communication point T^k
 * the extrapolated input ubar(s) = L P_p(s) + r, s = (t - T^k)/H, gets an additive correction
 *     u(s) = ubar(s) + Delta^k w(s),   Delta^k = (L Yhat^k + r) - int_0^1 ubar ds,   int_0^1 w ds = 1,
 * so that the integral of every input over the step equals H (L Yhat^k + r) (the integral condition (IC)), with
 * Yhat^k the mean over the step of a surrogate of the ideally coupled system started from the measured y^k:
 *   continuous (B1)  (I - Sd L) yhat' = (Sy + Su L) yhat + Su r:  Yhat = phi_1(M H) y^k + H phi_2(M H) g
 *                    (exact continuous IJs, the pre-step's Step-2 model);
 *   discrete (B2)    (I - Su^+ L) yhat^{k+1} = Sy y^k + Su^- u^k + Su^+ r,  Yhat = (y^k + yhat^{k+1}) / 2
 *                    (exact discrete IJs, or IJs identified online by RLS or MOESP: the pre-step's sources,
 *                    coupling/prestep_ij.c, fed with u^k = the mean of the input applied over the last step).
 * Shapes w(s): constant (w = 1) or end (w = (p_k + 1) s^{p_k}, keeps u(T^k) = L y^k + r). During learning, while an
 * identification is not ready or failed, or when Yhat is not finite, Delta = 0 (plain Lagrange(p), counted); in the
 * tanh switch phase Delta is scaled by fac(T^k). No unit states, no rollback, Jacobi only. */
#ifndef COSIM_MBCORR_H
#define COSIM_MBCORR_H

#include "kind.h"
#include "coupling/approx.h"
#include "coupling/coupling.h"
#include "coupling/prestep.h"
#include "network/network.h"

enum { CS_MBCORR_CONSTANT = 0, CS_MBCORR_END = 1 };
/* Log phase codes. */
enum { CS_MBCORR_LEARNING = 0, CS_MBCORR_CORRECTED = 1, CS_MBCORR_FALLBACK = 2 };

typedef struct cs_mbcorr_spec {
    cs_prestep_spec ij;   /* the surrogate: variant (CS_PRESTEP_CONTINUOUS = B1, CS_PRESTEP_DISCRETE = B2), ij_source,
                           * the given IJs or the identifier settings, learning/switch times, rtol, log_capacity */
    int shape;            /* CS_MBCORR_CONSTANT or CS_MBCORR_END */
} cs_mbcorr_spec;

/* base: the predictor Lagrange(p) (p <= 2). H: the constant macro step. */
int cs_mbcorr_coupling_create(const cs_network *net, const cs_approx_spec *base, const cs_mbcorr_spec *spec, double H,
                              cs_coupling **out, cs_err *err);

/* The kind (master/registry.c). */
extern const cs_kind cs_coupling_mbcorr_kind;

#endif
