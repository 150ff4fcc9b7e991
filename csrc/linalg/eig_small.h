/* Eigenvalues of small dense real matrices (n up to a few dozen) in plain C.
 *
 * The stability maps need one spectral radius per grid point of a 4x4..12x12 matrix. At that size the LAPACK
 * building blocks (dgebal, dgehd2, dlahqr) spend more time in call overhead (lsame_, dlamch_, BLAS-1/2 calls)
 * than in arithmetic, so this file implements the same textbook algorithm with plain loops:
 *   1. balancing: isolation of eigenvalues of rows/columns with no off-diagonal entry, then Parlett-Reinsch
 *      diagonal scaling by powers of 2 (exact: only exponents change);
 *   2. Householder reduction to upper Hessenberg form;
 *   3. Francis implicit double-shift QR with deflation (Golub & Van Loan, Matrix Computations, ch. 7);
 *   4. eigenvalues of the final 1x1 / 2x2 diagonal blocks.
 * Row-major, no allocation, workspace from the caller. cs_eigvals (dense.h) uses it up to n = 32. */
#ifndef COSIM_EIG_SMALL_H
#define COSIM_EIG_SMALL_H

#include "common.h"

/* Status of cs_eigvals_small when the QR iteration hit its iteration cap. Deliberately not one of the CS_ERR_*
 * codes: err is left untouched and the caller decides (cs_eigvals falls back to LAPACK). */
#define CS_EIG_NOCONV 100

/* Doubles of workspace cs_eigvals_small needs (n*n + 2n; cs_eig_work_size(n) is larger). */
int cs_eig_small_work_size(int n);

/* Eigenvalues (wr + i wi) of the n x n row-major matrix A (not modified). Complex pairs are stored consecutively,
 * positive imaginary part first. maxit caps the QR sweeps spent on one deflation (0: default 30 * max(n, 10)).
 * Returns CS_OK; CS_ERR_LINALG (err set) for non-finite entries; CS_EIG_NOCONV (err untouched) when the cap was
 * reached, in which case wr/wi are unspecified. */
int cs_eigvals_small(int n, const double *A, double *wr, double *wi, double *work, int maxit, cs_err *err);

#endif
