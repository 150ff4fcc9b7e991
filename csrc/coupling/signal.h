/* Signal-based coupling (coupling/signal.c): ZOH, Lagrange, EXTRIPOL-C0/C1 and Hermite approximations of the
 * exchanged outputs, combined into the units' inputs through u = L y + r. */
#ifndef COSIM_SIGNAL_COUPLING_H
#define COSIM_SIGNAL_COUPLING_H

#include "kind.h"
#include "coupling/approx.h"
#include "coupling/coupling.h"
#include "network/network.h"

/* net: not owned, must outlive the coupling. rates_lagged (Hermite): output derivatives from the step's own inputs
 * at T_{N+1}- (moshagen eq. 90, "lagged") rather than from the consistent ones. */
int cs_signal_coupling_create(const cs_network *net, const cs_approx_spec *spec, int rates_lagged, cs_coupling **out,
                              cs_err *err);

/* Keep at least `depth` samples of history (<= CS_MAXHIST), e.g. for the comparative polynomials of degree κ_max+1
 * of Kraft's estimators; call before the first accept. The old name of cs_coupling_set_history_depth (which also
 * reaches a signal coupling through the couplings that wrap it). */
int cs_signal_coupling_set_depth(cs_coupling *c, int depth, cs_err *err);

/* acc/accRel: integral_of[j] >= 0 makes output j a position whose polynomial integrates that of the velocity output
 * integral_of[j] (kraft2021 App. C); n must be the number of outputs. Copied. */
int cs_signal_coupling_set_integrals(cs_coupling *c, const int *integral_of, int n, cs_err *err);

/* The kind (master/registry.c). */
extern const cs_kind cs_coupling_signal_kind;

#endif
