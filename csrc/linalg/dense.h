/* Small dense linear algebra on row-major matrices (the layout used throughout csrc/).
 *
 * Functions that need scratch space take it from the caller (`work`), so they can run inside per-step and
 * per-grid-point loops without allocating. */
#ifndef COSIM_DENSE_H
#define COSIM_DENSE_H

#include "common.h"

/* C = alpha * A(m x k) * B(k x n) + beta * C (row-major, contiguous). */
void cs_matmul(int m, int n, int k, double alpha, const double *A, const double *B, double beta, double *C);
/* y = A(m x n) x (+ y if accumulate). */
void cs_matvec(int m, int n, const double *A, const double *x, double *y, int accumulate);
void cs_transpose(int m, int n, const double *A, double *At);
void cs_eye(int n, double *A);
double cs_norm1(int n, const double *A);      /* max column sum of an n x n matrix */
double cs_norminf_vec(int n, const double *x);
/* 1 if all n entries are finite. Check before LAPACK's SVD/QR drivers: reference LAPACK stops the whole process
 * (XERBLA) when a NaN reaches its internal scaling, so NaN/Inf must never be passed to them. */
int cs_all_finite(size_t n, const double *a);
/* Column maxima of |V| over consecutive row segments [b[s], b[s+1]) of an n x m matrix with element strides rs (rows)
 * and cs (columns): out (nseg x m). A NaN in a segment's column gives NaN there, an empty segment -inf. One pass over
 * the rows (NumPy's axis-0 reduction of a long narrow array is many times slower); the divergence criterion of
 * cosim.metrics reads its windows with it. */
void cs_absmax_segments(long n, int m, const double *V, long rs, long cs, const long *b, int nseg, double *out);

/* Solve A X = B for X (A n x n, B n x nrhs, row-major), overwriting B with X.
 * work: n*n + n*nrhs doubles; ipiv: n ints. Returns CS_ERR_LINALG if A is singular. */
int cs_solve(int n, int nrhs, const double *A, double *B, double *work, int *ipiv, cs_err *err);

/* Eigenvalues of a general n x n matrix (row-major, not modified). work: cs_eig_work_size(n) doubles.
 * n <= CS_EIG_SMALL_MAXN: plain-C balanced Hessenberg QR (linalg/eig_small.h), LAPACK if that does not converge;
 * larger n: LAPACK. The plain-C kernel measured faster than the LAPACK path at every size tried (2.2-2.6x for
 * n = 4..12, about 2x at 32, 1.5x at 64); 32 keeps it to sizes the tests cover and well below n = 75, where LAPACK
 * itself leaves this algorithm (dlahqr) for multishift QR. Build with -DCS_EIG_SMALL_MAXN=0 to time the LAPACK
 * path. */
#ifndef CS_EIG_SMALL_MAXN
#define CS_EIG_SMALL_MAXN 32
#endif
int cs_eig_work_size(int n);
int cs_eigvals(int n, const double *A, double *wr, double *wi, double *work, cs_err *err);
/* The LAPACK path alone (dgebal/dgehd2/dlahqr below n = 16, dgeev above); same contract as cs_eigvals. */
int cs_eigvals_lapack(int n, const double *A, double *wr, double *wi, double *work, cs_err *err);
/* Spectral radius max abs(lambda_i). work: 2n + cs_eig_work_size(n) doubles. */
int cs_spectral_radius(int n, const double *A, double *rho, double *work, cs_err *err);

#endif
