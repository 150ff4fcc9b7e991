/* Diagonal balancing of a small dense matrix by powers of two (Parlett & Reinsch 1969).
 *
 * B = D^-1 A D with D = diag(d) chosen so that the off-diagonal norms of row i and column i are about equal. The
 * scaling is exact (powers of two), B has the eigenvalues of A, and f(A) = D f(B) D^-1 for any matrix function f.
 * The stability problems mix entries like c/m H ~ 1e5 with H ~ 1e-4 in one matrix: balancing shrinks their norm
 * by orders of magnitude, which saves squarings in the exponential and keeps eigenvalues accurate. */
#ifndef COSIM_BALANCE_H
#define COSIM_BALANCE_H

/* Balance the row-major n x n matrix A in place (A <- D^-1 A D); d and dinv receive the n factors d_i and 1/d_i
 * (powers of two). */
void cs_balance(int n, double *A, double *d, double *dinv);

#endif
