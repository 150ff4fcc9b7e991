/* Acceleration of a fixed-point iteration x = F(x) on vectors (waveform relaxation, schemes/waveform.c):
 *   CS_ACCEL_NONE      constant relaxation x^{k+1} = x^k + ω (F(x^k) - x^k)
 *   CS_ACCEL_AITKEN    dynamic (Aitken) relaxation: ω_k = -ω_{k-1} r^{k-1}·(r^k - r^{k-1}) / |r^k - r^{k-1}|²,
 *                      ω_0 = ω at the start of every window
 *   CS_ACCEL_IQN_ILS   interface quasi-Newton with least squares (Degroote et al. 2009; preCICE's IQN-ILS):
 *                      V = [Δr], W = [ΔF] (newest first), α = argmin |V α + r^k|, x^{k+1} = F(x^k) + W α; columns of
 *                      the last `reuse` windows are kept; a QR filter drops columns with |R_ii| < filter |v_i|
 *                      (linear dependence); the first iteration without columns relaxes with ω.
 * Workspace grows with the vector length (doubling); nothing is allocated once it fits. */
#ifndef COSIM_ACCELERATION_H
#define COSIM_ACCELERATION_H

#include "common.h"

typedef struct cs_accel cs_accel;

int cs_accel_create(int kind, double omega, int max_iter, int reuse, double filter, cs_accel **out, cs_err *err);
void cs_accel_destroy(cs_accel *a);
/* A new window with vectors of length n (columns of other lengths are dropped). */
int cs_accel_begin_window(cs_accel *a, long n, cs_err *err);
/* x^{k+1} from x = x^k and fx = F(x^k) (length n of the window); xnew may not alias x or fx. */
int cs_accel_update(cs_accel *a, const double *x, const double *fx, double *xnew, cs_err *err);
/* The window converged: its columns stay for reuse (IQN-ILS). */
void cs_accel_end_window(cs_accel *a);
/* Columns currently kept (IQN-ILS), for tests and statistics. */
int cs_accel_columns(const cs_accel *a);

#endif
