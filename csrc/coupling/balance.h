/* Balance correction (moshagen §2.2.6-2.2.7, §4 eqs. 77-79; moshagen.md §2.6 "precise algorithm"): a coupling
 * wrapper around any signal-based coupling. For every corrected input a (a connection y_j -> u_a, or a sum
 * u_a = sum g_k y_{j_k} + r_a) and macro interval k = [T_{k-1}, T_k]:
 *   1. the senders' exact step integrals Q_j^k = ∫ y_j dt come from their quadrature states (unit.h step_integral),
 *      so the amount delivered is Q_a^k = sum g_k Q_{j_k}^k + r_a H_k;
 *   2. the receiver's raw balance error is e^k = Q_a^k - ∫ U_a^k dt with U_a^k the *uncorrected* hold function
 *      (eq. 78; analytic for the polynomial inputs); variant "literal" measures against the corrected input instead
 *      (eq. 11 read literally: only every other error is compensated, the order gain is lost);
 *   3. on the next M = spread intervals (1..4) the receiver applies u_a = U_a + sum_pending e^m g_m(t), each kernel
 *      with unit integral: constant 1/(M H) or the smooth bump 30 σ²(1-σ)²/(M H), σ = (t - T_m)/(M H) [ours,
 *      moshagen.md §2.6]. On a non-uniform grid σ runs over the M interval *indices* (σ = (l + s)/M on the l-th
 *      interval, s its scaled time) and the bump is divided by that interval's length: every kernel still integrates
 *      to exactly 1 and equals the spec's kernel on a uniform grid.
 * Telescoping invariant: the cumulative imbalance ∫_{T_0}^{T_k} (L y + r - u_a) dt equals e^k (M = 1) plus the parts
 * of pending corrections not yet delivered. It is tracked for every connected input (corrected or not) and read by
 * cs_balance_cumulative. */
#ifndef COSIM_BALANCE_COUPLING_H
#define COSIM_BALANCE_COUPLING_H

#include "kind.h"
#include "coupling/coupling.h"
#include "network/network.h"
#include "unit_access.h"

enum { CS_BALANCE_CONSTANT = 0, CS_BALANCE_SMOOTH = 1 };
enum { CS_BALANCE_TELESCOPING = 0, CS_BALANCE_LITERAL = 1 };
#define CS_BALANCE_MAX_SPREAD 4

typedef struct cs_balance_spec {
    int kernel;     /* CS_BALANCE_* */
    int spread;     /* M: intervals a correction is spread over, 1..CS_BALANCE_MAX_SPREAD */
    int variant;    /* CS_BALANCE_TELESCOPING (eq. 78, default) or CS_BALANCE_LITERAL (eq. 11) */
} cs_balance_spec;

/* inner: the wrapped coupling, owned by the result (destroyed with it, also on failure). net, units: not owned.
 * corrected: net->nu flags (NULL: every connected input); the source units of every connected input must have the
 * step_integral op. */
int cs_balance_coupling_create(cs_coupling *inner, const cs_network *net, const cs_unit_access *units,
                               const unsigned char *corrected, const cs_balance_spec *spec, cs_coupling **out,
                               cs_err *err);

/* Cumulative imbalance ∫_{T_0}^{T} (L y + r - u)_a dt per input a (net->nu values; 0 for unconnected inputs), at
 * the last accepted macro point. The pointer stays valid for the coupling's life. */
const double *cs_balance_cumulative(const cs_coupling *c);

/* Coefficients c[0..4] of the kernel shape on the l-th of M intervals, in the interval's scaled time s in [0, 1]:
 * the correction there is e * sum_m c[m] s^m / H_interval, and ∫_0^1 sum_m c[m] s^m ds is the share delivered in that
 * interval (the shares of l = 0..M-1 sum to 1). Returns the degree. */
int cs_balance_kernel(int kernel, int M, int l, double c[5]);

/* The parameters of cs_balance_spec (master/registry.c). */
extern const cs_kind cs_balance_kind;

#endif
