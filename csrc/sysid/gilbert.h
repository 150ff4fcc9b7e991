/* Gilbert realization of the transfer-function matrix of a MIMO RLS model (Genser 2020, eq. 2.88-2.91; spec
 * genser2020.md section 6.3, errata E8 and E9).
 *
 * Row i of H(z) has the common denominator of output i (RLS sign convention, eq. 2.86):
 *     H_ij(z) = (b_ij1 z^-1 + .. + b_ij,nb z^-nb) / (1 - a_i1 z^-1 - .. - a_i,na z^-na)
 * Steps: poles of every row (companion-matrix eigenvalues, dgeev; poles at z = 0 when nb > na), residues
 * R_p = lim (z - z_p) H(z) of every distinct pole (near-equal poles of different outputs are merged), rank
 * factorization R_p = C_p B_p by SVD (dgesvd, zgesvd for complex poles), assembly
 *     PhiA = blkdiag(z_p I_{n_p}),  PhiB = [B_1; ..],  C = [C_1 ..],  D = 0,   nx = sum rank(R_p).
 * C_p holds the orthonormal left singular vectors (largest entry of each column positive) and B_p = S V^T, so that
 * na = nb = 1 with distinct a_i and nonzero rows of b gives PhiA = diag(a), PhiB = [b_ij], C = I.
 * Complex-conjugate pairs become real blocks [Re z I, -Im z I; Im z I, Re z I].
 * Gilbert's method needs simple poles: if a row has a repeated pole, the realization falls back to one observable
 * canonical form per output (correct but not necessarily minimal; `minimal` is then 0).
 *
 * A cs_gilbert object owns all workspace, so repeated realizations (one per communication step) do not allocate. */
#ifndef COSIM_SYSID_GILBERT_H
#define COSIM_SYSID_GILBERT_H

#include "common.h"

typedef struct cs_gilbert cs_gilbert;

typedef struct cs_gilbert_result {
    int nx, ny, nu;
    double *A, *B, *C, *D;   /* nx x nx, nx x nu, ny x nx, ny x nu; row-major, owned by the cs_gilbert object */
    int minimal;             /* 1: Gilbert realization (minimal); 0: observable-form fallback (repeated poles) */
    int npoles;              /* number of distinct poles used (a conjugate pair counts twice) */
} cs_gilbert_result;

int cs_gilbert_create(int ny, int nu, int na, int nb, cs_gilbert **out, cs_err *err);
void cs_gilbert_destroy(cs_gilbert *g);
int cs_gilbert_max_states(const cs_gilbert *g);   /* ny max(na, nb) */

/* a: ny x na, b: ny x nu x nb (row-major). rank_tol: relative singular-value threshold for rank(R_p), relative to
 * the largest residue singular value; pole_tol: relative distance below which poles count as equal. */
int cs_gilbert_realize(cs_gilbert *g, const double *a, const double *b, double rank_tol, double pole_tol,
                       cs_gilbert_result *res, cs_err *err);

#endif
