/* Matrix exponential (Pade 13 with scaling and squaring, Higham 2005) and the Van Loan block integrals
 * used by the exact LTI integrator and the stability analysis. Row-major; caller-provided workspace. */
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
 * Computed from one exponential of an augmented (Van Loan) matrix.
 * work: cs_poly_propagator_work_size(nx, nu, deg) doubles, ipiv: nx + nu*(deg+1) ints. */
size_t cs_poly_propagator_work_size(int nx, int nu, int deg);
int cs_poly_propagator(int nx, int nu, int deg, const double *A, const double *B, double H, double *Phi, double *Gam,
                       double *work, int *ipiv, cs_err *err);

#endif
