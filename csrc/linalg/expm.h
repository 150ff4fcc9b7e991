/* Matrix exponential (balancing, then Pade 3..13 with scaling and squaring, Higham 2005) and the exact
 * propagator with polynomial input (phi functions) used by the exact LTI integrator, the stability analysis and the
 * discretization in sysid. Row-major; caller-provided workspace. */
#ifndef COSIM_EXPM_H
#define COSIM_EXPM_H

#include "common.h"

/* doubles of workspace cs_expm needs for an n x n matrix (plus n ints for `ipiv`). */
size_t cs_expm_work_size(int n);
/* E = exp(A). A and E may not alias. */
int cs_expm(int n, const double *A, double *E, double *work, int *ipiv, cs_err *err);

/* Exact propagator of x' = A x + B u(t) over one step of length H with a polynomial input
 *     u(T + tau) = sum_{m=0..deg} c_m (tau/H)^m,
 * i.e. x(T+H) = Phi x(T) + sum_m Gam[m] c_m, with Phi = exp(A H) and
 *     Gam[m] = int_0^H exp(A (H - tau)) B (tau/H)^m dtau          (nx x nu each, stored one after another).
 * Computed as Phi = phi_0(A H), Gam[m] = H m! phi_{m+1}(A H) B from the phi functions of the n_x x n_x matrix A H
 * (the same blocks Van Loan's exponential of the (n_x + n_u (deg+1)) augmented matrix would give, much cheaper).
 * deg <= 10. work: cs_poly_propagator_work_size(nx, nu, deg) doubles; ipiv is not used (kept for callers). */
size_t cs_poly_propagator_work_size(int nx, int nu, int deg);
int cs_poly_propagator(int nx, int nu, int deg, const double *A, const double *B, double H, double *Phi, double *Gam,
                       double *work, int *ipiv, cs_err *err);

#endif
