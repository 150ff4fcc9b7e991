/* Local error of one macro step (busch2016 eq. 26):
 *     ε_{N+1}(H) = Ω̃_N X(T_N) + ... + Ω̃_{N-p} X(T_{N-p}) + g - X(T_{N+1}),
 * i.e. the recurrence (companion.h) applied to the *exact* history of the strongly coupled problem (busch2016 eq. 4),
 * compared with the exact state and output at T_{N+1}. The exact solution is z(t) = exp(A_mono t) z(0) (+ the
 * response to the constant offset r), with A_mono from y = (I - D L)^{-1}(C z + D r), u = L y + r. */
#ifndef COSIM_ANALYSIS_LOCAL_ERROR_H
#define COSIM_ANALYSIS_LOCAL_ERROR_H

#include "analysis/companion.h"

/* z0: stacked initial state at t = 0 (n_x). T_N = tN; the history reaches back to tN - (P-1) H (negative times are
 * fine: the exact linear solution is propagated backwards). For each of the nH step sizes writes
 * eps[ih * (n_x + n_y) + :] = (x, y)_{co-sim}(T_N + H) - (x, y)_{exact}(T_N + H) and, if exact != NULL, the exact
 * values. */
int cs_local_error(const cs_amp_plan *plan, const double *pack, const double *z0, double tN, long nH, const double *H,
                   double *eps, double *exact, cs_err *err);

#endif
