/* Small dense SVD by one-sided Jacobi rotations (Hestenes 1958; Demmel & Veselic 1992) for the per-step MOESP fit.
 *
 * The matrices of MOESP steps 3-5 (L22 / L32, the shift equation Gamma_l PhiA = Gamma_u, the [D; PhiB] system) and
 * of the IJ conversion (C^+) have a handful of rows and columns. For them the set-up of reference LAPACK's dgesvd /
 * dgelsd (bidiagonalisation, divide and conquer, workspace queries, ilaenv calls) costs far more than the
 * arithmetic; one-sided Jacobi works on the matrix itself (no Gram matrix: singular values to high relative
 * accuracy), needs no workspace beyond V and no allocation.
 *
 * All routines take column-major arrays, never allocate and never call into Python. */
#ifndef COSIM_SYSID_JSVD_H
#define COSIM_SYSID_JSVD_H

#include "common.h"

/* A (m x n, column-major, leading dimension lda) -> A V: orthogonal columns (A V)_i = sigma_i u_i, sorted so that
 * sv[0] >= sv[1] >= ... >= sv[n-1] >= 0 (sv[i] = sigma_i = ||(A V)_i||), V (n x n column-major, ld n) orthogonal,
 * A_in = (A V) V^T. Returns CS_OK, or CS_ERR_LINALG (message in err) for non-finite entries or no convergence. */
/* Applied to A^T (the rows of A as columns) it gives A's left singular vectors: A^T V = W S, so A = V S W^T, and V
 * is a full orthonormal basis (its columns beyond rank A complete it): MOESP step 3 uses it so. */
int cs_jsvd(int m, int n, double *A, int lda, double *V, double *sv, cs_err *err);

/* Minimum-norm least squares min ||A X - B||_F (the solution of LAPACK dgelsd): A m x n column-major (lda,
 * destroyed), B ldb x nrhs column-major whose first n rows receive X (ldb >= max(m, n)); singular values
 * sigma_i <= rcond * sigma_1 count as zero, *rank the others. work: n * n + n + n * nrhs doubles. */
size_t cs_jsvd_lstsq_work(int n, int nrhs);
int cs_jsvd_lstsq(int m, int n, int nrhs, double *A, int lda, double *B, int ldb, double rcond, int *rank,
                  double *work, cs_err *err);

/* Pseudo-inverse Ap (n x m, row-major) of A (m x n, row-major), sigma_i <= rtol sigma_1 dropped (cs_pinv's rule).
 * work: cs_jsvd_pinv_work(m, n) doubles. */
size_t cs_jsvd_pinv_work(int m, int n);
int cs_jsvd_pinv(int m, int n, const double *A, double *Ap, double rtol, int *rank, double *work, cs_err *err);

#endif
