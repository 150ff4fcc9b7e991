/* MOESP subspace identification (Genser 2020, section 2.3.1, eq. 2.72-2.85; spec genser2020.md section 6.1).
 *
 * Identifies a standard-form discrete LTI model
 *     x_{j+1} = PhiA x_j + PhiB u_j,     y_j = C x_j + D u_j
 * from aligned samples (u_j, y_j), j = 0..N-1, with r block rows and W = N - r + 1 Hankel columns:
 *   1. block Hankel matrices U (r nu x W) and Y (r ny x W)              (2.73, 2.74)
 *   2. LQ of [U; Y] computed as the QR of its transpose (dgeqrf)         (2.77; order of (2.77), erratum E11)
 *   3. SVD of L22 (one-sided Jacobi, sysid/jsvd.h); order n fixed or sigma_i / sigma_1 > threshold (2.82)
 *   4. Gamma_r = U_s S_s^(1/2); C = first block row; PhiA by least squares from the shift structure (2.83, 2.84)
 *   5. PhiB and D by least squares from U_n^T Psi_r = U_n^T L21 L11^-1 (2.85, standard MOESP stacking)
 *
 * PO-MOESP (past-output MOESP, Verhaegen 1994; Verhaegen & Verdult, Filtering and System Identification, sec. 9.6):
 * the same model from r future and r past block rows, W = N - 2 r + 1 columns, instruments Z_p = [U_p; Y_p]:
 *   1'. LQ of [U_f; Z_p; Y_f] = [L11 0 0; L21 L22 0; L31 L32 L33] Q^T  (U_f, U_p: r nu rows, Y_p, Y_f: r ny rows)
 *   3'. SVD of L32 (r ny x r (nu + ny)): its column space is that of Gamma_r; the past-data instruments remove
 *       the output-noise term that plain MOESP keeps in L22 (consistent also for process noise / coloured noise)
 *   4'. as step 4;  5'. as step 5 with L21 -> L31 (U_n^T L31 L11^-1 = U_n^T Psi_r, the noise is uncorrelated
 *       with U_f).
 *
 * A cs_moesp object owns all workspace for windows of up to `wmax` Hankel columns, so repeated fits (the sliding
 * window form) do not allocate. The optional ring buffer (capacity wmax + r - 1 samples) gives the online form. */
#ifndef COSIM_SYSID_MOESP_H
#define COSIM_SYSID_MOESP_H

#include "common.h"

typedef struct cs_moesp cs_moesp;

/* Result of one fit. Pointers refer to buffers owned by the cs_moesp object (valid until the next fit). */
typedef struct cs_moesp_result {
    int n, nu, ny;        /* identified order and sizes */
    double *A;            /* n x n   (PhiA), row-major */
    double *B;            /* n x nu  (PhiB) */
    double *C;            /* ny x n */
    double *D;            /* ny x nu */
    double *sv;           /* r ny singular values of L22 (plain) or L32 (PO), descending */
    int nsv;
    int rank_u;           /* numerical rank of L11 (r nu when the input is persistently exciting of order r) */
    int rank_bd;          /* numerical rank of the stacked least-squares problem for [D; PhiB] (ny + n if full) */
    int reliable;         /* 0 if rank_u < r nu or rank_bd < ny + n: PhiB and D are not determined by the data */
    int ncols;            /* Hankel columns W used */
} cs_moesp_result;

/* Variants. */
enum { CS_MOESP_PLAIN = 0, CS_MOESP_PO = 1 };

/* nu >= 1, ny >= 1, r >= 2 block rows, wmax >= r (nu + ny) (CS_MOESP_PLAIN) or 2 r (nu + ny) (CS_MOESP_PO)
 * Hankel columns. */
int cs_moesp_create(int nu, int ny, int r, int wmax, int method, cs_moesp **out, cs_err *err);
void cs_moesp_destroy(cs_moesp *m);

/* Largest order the object can identify: min((r - 1) ny, r ny - 1). */
void cs_moesp_dims(const cs_moesp *m, int *nu, int *ny, int *r);
int cs_moesp_max_order(const cs_moesp *m);
/* Fewest samples a fit needs: r (nu + ny) + r - 1 (plain), 2 r (nu + ny) + 2 r - 1 (PO). */
int cs_moesp_min_samples(const cs_moesp *m);

/* Fit on N aligned samples, u: N x nu, y: N x ny (row-major). order >= 0 fixes n; order < 0 selects n as the number
 * of singular values with sigma_i > threshold * sigma_1 (capped at cs_moesp_max_order). The W = N - r + 1 (plain)
 * or N - 2 r + 1 (PO) Hankel columns must lie in [rows of the stacked data matrix, wmax]. */
int cs_moesp_fit(cs_moesp *m, int N, const double *u, const double *y, int order, double threshold,
                 cs_moesp_result *res, cs_err *err);

/* Sliding-window (online) form: append one sample; the buffer keeps the last wmax + r - 1 (PO: wmax + 2 r - 1)
 * samples. */
void cs_moesp_push(cs_moesp *m, const double *u, const double *y);
int cs_moesp_count(const cs_moesp *m);   /* samples currently in the window */
void cs_moesp_clear(cs_moesp *m);
/* Fit on the samples currently held (all of them: the window grows until full, then slides). The window keeps the
 * triangular factor R (R^T R = H^T H of its Hankel columns) up to date in cs_moesp_push: one Givens update when a
 * column enters, one LINPACK-style downdate when one leaves (O(P^2) each, P = rows of the stacked data matrix), so
 * the fit costs O(P^3) independent of W. It re-factors from the samples (QR, O(W P^2)) only after a failed downdate
 * or every `refresh` pushes (default wmax; 0: never), which bounds the rounding drift of the up/downdates. */
void cs_moesp_set_refresh(cs_moesp *m, int every);
void cs_moesp_stats(const cs_moesp *m, long *n_refactor, long *n_downdate_fail, long *since);
int cs_moesp_fit_window(cs_moesp *m, int order, double threshold, cs_moesp_result *res, cs_err *err);

#endif
