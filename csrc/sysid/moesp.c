#include "sysid/moesp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interrupt.h"
#include "linalg/dense.h"
#include "linalg/lapack.h"
#include "sysid/jsvd.h"

/* Relative rank tolerances of the least-squares steps (rcond of the minimum-norm solutions, as in dgelsd). */
#define MOESP_RCOND_U 1e-10   /* L11: input persistently exciting of order r */
#define MOESP_RCOND_LS 1e-12  /* shift equation for PhiA and the [D; PhiB] problem */
#define MOESP_DOWNDATE_MIN 1e-6  /* smallest alpha^2 of a downdate (below: re-factor from the samples) */

struct cs_moesp {
    int nu, ny, r, wmax, P, p, q, nmax, cap;
    int method;     /* CS_MOESP_PLAIN or CS_MOESP_PO */
    int span;       /* samples per Hankel column: r (plain) or 2 r (PO: r past + r future) */
    int off_f;      /* first row of the output block Y (plain) / Y_f (PO) in the stacked data matrix */
    int mz;         /* columns of the block whose SVD gives Gamma_r: q (L22, plain) or p + q (L32, PO) */
    /* fit workspace */
    double *H;      /* wmax x P column-major: [U; Y]^T (plain) or [U_f; U_p; Y_p; Y_f]^T (PO) */
    double *tau;    /* P */
    double *L;      /* P x P row-major, L = R^T */
    double *L22;    /* mz x q column-major: L22^T (plain) or L32^T (PO), destroyed by the Jacobi SVD */
    double *Us;     /* q x q column-major left singular vectors */
    double *sv;     /* q */
    double *Gam;    /* q x nmax row-major: Gamma_r */
    double *Gl, *Gu;/* (r-1) ny x nmax column-major: Gamma without last / first block row */
    double *T;      /* (q - n) x p row-major: U_n^T L21 */
    double *L11t;   /* p x p column-major: L11^T */
    double *Mt;     /* p x q column-major: T^T, overwritten by M^T = (U_n^T L21 L11^-1)^T */
    double *K;      /* (r q) x (ny + nmax) column-major, stacked [L_i, N_i] */
    double *rhs;    /* (r q) x nu column-major */
    double *work;   /* LAPACK workspace (dgeqrf of the re-factorization) */
    int lwork;
    double *jw;     /* workspace of the small Jacobi SVD least-squares solves (cs_jsvd_lstsq) */
    /* outputs */
    double *A, *B, *C, *D;
    /* sliding window: ring buffer of the last cap = wmax + r - 1 samples, and a linear copy for the fit */
    double *ru, *ry, *lu, *ly;
    int head, count;
    /* recursive window (up- and down-date of the triangular factor): R (P x P row-major, upper triangular) with
     * R^T R = H^T H over the ncols Hankel columns held; dirty: R must be re-factored from the samples at the next
     * fit (a downdate that lost positive definiteness); since: pushes since the last re-factorization */
    double *Rr, *hrow, *dw;
    int ncols, dirty, refresh;
    long since, n_refactor, n_downdate_fail;
};

static int imax(int a, int b) { return a > b ? a : b; }
static int imin(int a, int b) { return a < b ? a : b; }

void cs_moesp_destroy(cs_moesp *m) {
    if (!m) return;
    free(m->H); free(m->tau); free(m->L); free(m->L22); free(m->Us); free(m->sv); free(m->Gam); free(m->Gl);
    free(m->Gu); free(m->T); free(m->L11t); free(m->Mt); free(m->K); free(m->rhs); free(m->work);
    free(m->jw); free(m->A); free(m->B); free(m->C); free(m->D); free(m->ru); free(m->ry); free(m->lu);
    free(m->ly); free(m->Rr); free(m->hrow); free(m->dw);
    free(m);
}

void cs_moesp_dims(const cs_moesp *m, int *nu, int *ny, int *r) { *nu = m->nu; *ny = m->ny; *r = m->r; }
int cs_moesp_max_order(const cs_moesp *m) { return m->nmax; }
int cs_moesp_min_samples(const cs_moesp *m) { return m->P + m->span - 1; }

int cs_moesp_create(int nu, int ny, int r, int wmax, int method, cs_moesp **out, cs_err *err) {
    *out = NULL;
    if (nu < 1 || ny < 1) return cs_fail(err, CS_ERR_ARG, "MOESP needs nu >= 1 and ny >= 1 (got %d, %d)", nu, ny);
    if (r < 2) return cs_fail(err, CS_ERR_ARG, "block_rows: must be >= 2, got %d", r);
    if (method != CS_MOESP_PLAIN && method != CS_MOESP_PO)
        return cs_fail(err, CS_ERR_ARG, "method: unknown MOESP variant %d", method);
    const int po = method == CS_MOESP_PO;
    int P = (po ? 2 : 1) * r * (nu + ny);
    if (wmax < P)
        return cs_fail(err, CS_ERR_ARG, "window: needs at least %sr (nu + ny) = %d Hankel columns, got %d",
                       po ? "2 " : "", P, wmax);
    cs_moesp *m = calloc(1, sizeof *m);
    if (!m) return cs_fail(err, CS_ERR_NOMEM, "MOESP: out of memory");
    m->nu = nu; m->ny = ny; m->r = r; m->wmax = wmax; m->P = P; m->p = r * nu; m->q = r * ny;
    m->method = method;
    m->span = po ? 2 * r : r;
    m->off_f = po ? 2 * m->p + m->q : m->p;
    m->mz = po ? m->p + m->q : m->q;
    m->nmax = imin((r - 1) * ny, r * ny - 1);
    m->cap = wmax + m->span - 1;
    int p = m->p, q = m->q, nmax = m->nmax, cap = m->cap, mz = m->mz;
    size_t sz = sizeof(double);
    m->H = malloc(sz * (size_t)wmax * P);
    m->tau = malloc(sz * P);
    m->L = malloc(sz * (size_t)P * P);
    m->L22 = malloc(sz * (size_t)q * mz);
    m->Us = malloc(sz * (size_t)q * q);
    m->sv = malloc(sz * q);
    m->Gam = malloc(sz * (size_t)q * nmax);
    m->Gl = malloc(sz * (size_t)(r - 1) * ny * nmax);
    m->Gu = malloc(sz * (size_t)(r - 1) * ny * nmax);
    m->T = malloc(sz * (size_t)q * p);
    m->L11t = malloc(sz * (size_t)p * p);
    m->Mt = malloc(sz * (size_t)p * q);
    m->K = malloc(sz * (size_t)r * q * (ny + nmax));
    m->rhs = malloc(sz * (size_t)r * q * nu);
    m->A = malloc(sz * (size_t)(nmax * nmax + 1));
    m->B = malloc(sz * (size_t)(nmax * nu + 1));
    m->C = malloc(sz * (size_t)(ny * nmax + 1));
    m->D = malloc(sz * (size_t)ny * nu);
    m->ru = malloc(sz * (size_t)cap * nu);
    m->ry = malloc(sz * (size_t)cap * ny);
    m->lu = malloc(sz * (size_t)cap * nu);
    m->ly = malloc(sz * (size_t)cap * ny);
    m->Rr = calloc((size_t)P * P, sz);
    m->hrow = malloc(sz * (size_t)P);
    m->dw = malloc(sz * (size_t)2 * P);
    m->refresh = wmax;
    /* LAPACK workspace (dgeqrf), queried once here; the small solves of steps 3-5 use cs_jsvd (no LAPACK). */
    int lwork = 1, info = 0, lw = -1;
    double wq = 0.0, dummy = 0.0;
    dgeqrf_(&wmax, &P, &dummy, &wmax, &dummy, &wq, &lw, &info);
    lwork = imax(lwork, (int)wq + 1);
    m->lwork = lwork;
    m->work = malloc(sz * lwork);
    size_t ljw = cs_jsvd_lstsq_work(nmax, nmax);
    if (cs_jsvd_lstsq_work(p, q) > ljw) ljw = cs_jsvd_lstsq_work(p, q);
    if (cs_jsvd_lstsq_work(ny + nmax, nu) > ljw) ljw = cs_jsvd_lstsq_work(ny + nmax, nu);
    m->jw = malloc(sz * ljw);
    if (!m->H || !m->tau || !m->L || !m->L22 || !m->Us || !m->sv || !m->Gam || !m->Gl || !m->Gu || !m->T ||
        !m->L11t || !m->Mt || !m->K || !m->rhs || !m->A || !m->B || !m->C || !m->D || !m->ru || !m->ry ||
        !m->lu || !m->ly || !m->work || !m->jw || !m->Rr || !m->hrow || !m->dw) {
        cs_moesp_destroy(m);
        return cs_fail(err, CS_ERR_NOMEM, "MOESP: out of memory (window %d, block rows %d)", wmax, r);
    }
    *out = m;
    return CS_OK;
}

/* Minimum-norm least squares min ||A X - B|| (A mm x nn column-major, B ldb x nrhs column-major, overwritten by X
 * in its first nn rows), the solution dgelsd gives, by the small one-sided Jacobi SVD (the matrices here have a few
 * rows and columns: LAPACK's set-up would dominate); returns the numerical rank in *rank. */
static int lstsq(cs_moesp *m, int mm, int nn, int nrhs, double *A, double *B, int ldb, double rcond, int *rank,
                 cs_err *err) {
    int lda = imax(1, mm);
    if (!cs_all_finite((size_t)lda * nn, A) || !cs_all_finite((size_t)ldb * nrhs, B))
        return cs_fail(err, CS_ERR_LINALG, "MOESP: non-finite intermediate matrix (data too large? scale u and y)");
    if (cs_jsvd_lstsq(mm, nn, nrhs, A, lda, B, ldb, rcond, rank, m->jw, err)) {
        cs_err_prefix(err, "MOESP: least-squares solve failed: ");
        return CS_ERR_LINALG;
    }
    return CS_OK;
}

/* 1. Transposed block Hankel matrices, column-major W x P, Hankel column j = 0..W-1 in row j:
 *    plain: [U; Y]^T, column i nu + a holds u_{j+i}[a], column p + i ny + b holds y_{j+i}[b];
 *    PO:    [U_f; U_p; Y_p; Y_f]^T (Z_p = [U_p; Y_p]), U_f / Y_f start at sample j + r, U_p / Y_p at j. */
static void build_hankel(cs_moesp *m, int W, const double *u, const double *y) {
    const int nu = m->nu, ny = m->ny, r = m->r, p = m->p, off_f = m->off_f, po = m->method == CS_MOESP_PO;
    double *H = m->H;
    const int sf = po ? r : 0;               /* first sample of the future block rows */
    const int uf = 0, yf = off_f;            /* first columns of U_f and Y_f */
    for (int i = 0; i < r; i++) {
        for (int a = 0; a < nu; a++) {
            double *col = H + (size_t)(uf + i * nu + a) * W;
            for (int j = 0; j < W; j++) col[j] = u[(size_t)(j + sf + i) * nu + a];
        }
        for (int b = 0; b < ny; b++) {
            double *col = H + (size_t)(yf + i * ny + b) * W;
            for (int j = 0; j < W; j++) col[j] = y[(size_t)(j + sf + i) * ny + b];
        }
        if (!po) continue;
        for (int a = 0; a < nu; a++) {      /* U_p */
            double *col = H + (size_t)(p + i * nu + a) * W;
            for (int j = 0; j < W; j++) col[j] = u[(size_t)(j + i) * nu + a];
        }
        for (int b = 0; b < ny; b++) {      /* Y_p */
            double *col = H + (size_t)(2 * p + i * ny + b) * W;
            for (int j = 0; j < W; j++) col[j] = y[(size_t)(j + i) * ny + b];
        }
    }
}

/* 2. QR of the transpose: [U; Y]^T = Q R, so [U; Y] = R^T Q^T = L Q^T with L lower triangular
 *    (PO: [U_f; Z_p; Y_f] = L Q^T with blocks L11 (p x p), L21, L22, L31, L32 (q x (p + q)), L33).
 *    With keep_R, R is also stored as the factor of the recursive window. */
static int qr_to_L(cs_moesp *m, int W, int keep_R, cs_err *err) {
    const int P = m->P;
    double *H = m->H;
    int info = 0, Wi = W, Pi = P;
    dgeqrf_(&Wi, &Pi, H, &Wi, m->tau, m->work, &m->lwork, &info);
    if (info != 0) return cs_fail(err, CS_ERR_LINALG, "MOESP: QR failed (dgeqrf info = %d)", info);
    double *L = m->L;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) L[(size_t)i * P + j] = (j <= i) ? H[(size_t)i * W + j] : 0.0;  /* L = R^T */
    if (keep_R)
        for (int i = 0; i < P; i++)
            for (int j = 0; j < P; j++) m->Rr[(size_t)j * P + i] = L[(size_t)i * P + j];
    return CS_OK;
}

static int fit_from_L(cs_moesp *m, int W, int order, double threshold, cs_moesp_result *res, cs_err *err);

int cs_moesp_fit(cs_moesp *m, int N, const double *u, const double *y, int order, double threshold,
                 cs_moesp_result *res, cs_err *err) {
    const int nu = m->nu, ny = m->ny, r = m->r, P = m->P, span = m->span, po = m->method == CS_MOESP_PO;
    const int W = N - span + 1;
    if (W < P)
        return cs_fail(err, CS_ERR_ARG, "too few samples: %s with %d block rows, %d inputs and %d outputs needs "
                       "at least %d samples, got %d", po ? "PO-MOESP" : "MOESP", r, nu, ny, P + span - 1, N);
    if (W > m->wmax)
        return cs_fail(err, CS_ERR_ARG, "too many samples for this workspace (%d > %d)", N, m->wmax + span - 1);
    if (order > m->nmax)
        return cs_fail(err, CS_ERR_ARG, "order: %d exceeds the largest identifiable order min((r-1) ny, r ny - 1) = %d "
                       "for r = %d block rows; increase block_rows", order, m->nmax, r);
    build_hankel(m, W, u, y);
    CS_TRY(qr_to_L(m, W, 0, err));
    if (cs_interrupted()) return cs_interrupt_fail(err, -1.0);   /* Ctrl-C between the LQ factor and the SVD */
    return fit_from_L(m, W, order, threshold, res, err);
}

/* Steps 3-5 from the LQ factor m->L of W Hankel columns. */
static int fit_from_L(cs_moesp *m, int W, int order, double threshold, cs_moesp_result *res, cs_err *err) {
    const int nu = m->nu, ny = m->ny, r = m->r, P = m->P, p = m->p, q = m->q;
    const int off_f = m->off_f, mz = m->mz, po = m->method == CS_MOESP_PO;
    double *L = m->L;
    /* A non-finite factor (overflowing data) stops here, before the SVD. */
    if (!cs_all_finite((size_t)P * P, L))
        return cs_fail(err, CS_ERR_LINALG, "MOESP: the LQ factor overflowed (data too large? scale u and y)");
    /* 3. SVD of L22 = L[p:, p:] (q x q, plain) or of L32 = L[off_f:, p:off_f] (q x (p + q), PO): the rows of the
     *    output block, the columns after U_f. Full U (q x q): U_s spans Gamma_r, U_n its orthogonal complement.
     *    One-sided Jacobi on the transpose (its columns are the rows of L22, contiguous in L): L22^T U = W S. */
    for (int i = 0; i < q; i++) memcpy(m->L22 + (size_t)i * mz, L + (size_t)(off_f + i) * P + p, sizeof(double) * mz);
    if (cs_jsvd(mz, q, m->L22, mz, m->Us, m->sv, err)) {
        cs_err_prefix(err, po ? "MOESP: SVD of L32 failed: " : "MOESP: SVD of L22 failed: ");
        return CS_ERR_LINALG;
    }
    int n = order;
    if (n < 0) {
        n = 0;
        if (m->sv[0] > 0.0)
            while (n < m->nmax && m->sv[n] > threshold * m->sv[0]) n++;
    }
    const double *Us = m->Us;   /* Us[(col) q + row] */
    /* 4. Gamma_r = U_s S_s^(1/2) (row-major q x n); C = first block row; PhiA from Gl PhiA = Gu (2.84). */
    for (int i = 0; i < q; i++)
        for (int k = 0; k < n; k++) m->Gam[(size_t)i * n + k] = Us[(size_t)k * q + i] * sqrt(m->sv[k]);
    memcpy(m->C, m->Gam, sizeof(double) * (size_t)ny * n);
    int rank = 0;
    if (n > 0) {
        int mr = (r - 1) * ny;
        for (int i = 0; i < mr; i++)
            for (int k = 0; k < n; k++) {
                m->Gl[(size_t)k * mr + i] = m->Gam[(size_t)i * n + k];
                m->Gu[(size_t)k * mr + i] = m->Gam[(size_t)(i + ny) * n + k];
            }
        CS_TRY(lstsq(m, mr, n, n, m->Gl, m->Gu, mr, MOESP_RCOND_LS, &rank, err));
        for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++) m->A[(size_t)i * n + k] = m->Gu[(size_t)k * mr + i];
    }
    /* 5. T = U_n^T L21 ((q - n) x p; PO: U_n^T L31), then M = T L11^-1 from L11^T M^T = T^T (least squares:
     *    rank-safe). L21 (plain) / L31 (PO) are the output rows off_f.. in the U_f columns 0..p-1. */
    const int nn = q - n;
    for (int a = 0; a < nn; a++)
        for (int c = 0; c < p; c++) {
            double s = 0.0;
            for (int i = 0; i < q; i++) s += Us[(size_t)(n + a) * q + i] * L[(size_t)(off_f + i) * P + c];
            m->T[(size_t)a * p + c] = s;
        }
    for (int i = 0; i < p; i++)
        for (int j = 0; j < p; j++) m->L11t[(size_t)j * p + i] = L[(size_t)j * P + i];  /* (L11^T)(i,j) = L11(j,i) */
    for (int a = 0; a < nn; a++)
        for (int c = 0; c < p; c++) m->Mt[(size_t)a * p + c] = m->T[(size_t)a * p + c];  /* column a of T^T */
    int rank_u = 0;
    /* L11 is lower triangular: a well-conditioned diagonal (the input persistently exciting) allows the direct
     * solve M L11 = T by substitution; otherwise the rank-revealing least squares */
    double dmin = INFINITY, dmax = 0.0;
    for (int c = 0; c < p; c++) {
        const double d = fabs(L[(size_t)c * P + c]);
        if (d < dmin) dmin = d;
        if (d > dmax) dmax = d;
    }
    if (dmax > 0.0 && dmin > 1e3 * MOESP_RCOND_U * dmax) {
        for (int a = 0; a < nn; a++) {
            double *Ma = m->Mt + (size_t)a * p;
            for (int c = p - 1; c >= 0; c--) {
                double v = Ma[c];
                for (int i = c + 1; i < p; i++) v -= Ma[i] * L[(size_t)i * P + c];
                Ma[c] = v / L[(size_t)c * P + c];
            }
        }
        rank_u = p;
    } else {
        CS_TRY(lstsq(m, p, p, nn, m->L11t, m->Mt, p, MOESP_RCOND_U, &rank_u, err));
    }
    /* M(a, c) = Mt[a p + c]. Stack, for block i = 0..r-1 (rows i nn .. i nn + nn - 1):
     *   M_i = Lc_i D + (sum_{j > i} Lc_j Gamma_{j-i-1}) PhiB,  Lc_i = U_n^T[:, i ny : (i+1) ny]. */
    const int mk = r * nn, nk = ny + n;
    double *K = m->K, *R = m->rhs;
    for (int i = 0; i < r; i++)
        for (int a = 0; a < nn; a++) {
            int row = i * nn + a;
            for (int b = 0; b < ny; b++) K[(size_t)b * mk + row] = Us[(size_t)(n + a) * q + i * ny + b];
            for (int k = 0; k < n; k++) {
                double s = 0.0;
                for (int j = i + 1; j < r; j++)
                    for (int b = 0; b < ny; b++)
                        s += Us[(size_t)(n + a) * q + j * ny + b] * m->Gam[(size_t)((j - i - 1) * ny + b) * n + k];
                K[(size_t)(ny + k) * mk + row] = s;
            }
            for (int c = 0; c < nu; c++) R[(size_t)c * mk + row] = m->Mt[(size_t)a * p + i * nu + c];
        }
    int rank_bd = 0;
    CS_TRY(lstsq(m, mk, nk, nu, K, R, mk, MOESP_RCOND_LS, &rank_bd, err));
    for (int c = 0; c < nu; c++) {
        for (int b = 0; b < ny; b++) m->D[(size_t)b * nu + c] = R[(size_t)c * mk + b];
        for (int k = 0; k < n; k++) m->B[(size_t)k * nu + c] = R[(size_t)c * mk + ny + k];
    }
    res->n = n; res->nu = nu; res->ny = ny;
    res->A = m->A; res->B = m->B; res->C = m->C; res->D = m->D;
    res->sv = m->sv; res->nsv = q;
    res->rank_u = rank_u; res->rank_bd = rank_bd;
    res->reliable = (rank_u == p && rank_bd == nk && (n == 0 || rank == n));
    res->ncols = W;
    int finite = 1;
    for (int i = 0; i < n * n; i++) finite &= isfinite(m->A[i]) != 0;
    for (int i = 0; i < n * nu; i++) finite &= isfinite(m->B[i]) != 0;
    for (int i = 0; i < ny * n; i++) finite &= isfinite(m->C[i]) != 0;
    for (int i = 0; i < ny * nu; i++) finite &= isfinite(m->D[i]) != 0;
    if (!finite) return cs_fail(err, CS_ERR_LINALG, "MOESP: identified model is not finite (data too large?)");
    return CS_OK;
}

/* Hankel row (one column of [U; Y], as a row of H) whose first sample is the ring position `first`. */
static void hankel_row(const cs_moesp *m, int first, double *row) {
    const int nu = m->nu, ny = m->ny, r = m->r, p = m->p, off_f = m->off_f, cap = m->cap;
    const int po = m->method == CS_MOESP_PO, sf = po ? r : 0;
    for (int i = 0; i < r; i++) {
        const int sfut = (first + sf + i) % cap, spast = (first + i) % cap;
        for (int a = 0; a < nu; a++) row[i * nu + a] = m->ru[(size_t)sfut * nu + a];
        for (int b = 0; b < ny; b++) row[off_f + i * ny + b] = m->ry[(size_t)sfut * ny + b];
        if (!po) continue;
        for (int a = 0; a < nu; a++) row[p + i * nu + a] = m->ru[(size_t)spast * nu + a];
        for (int b = 0; b < ny; b++) row[2 * p + i * ny + b] = m->ry[(size_t)spast * ny + b];
    }
}

/* Update: R^T R + x x^T by P Givens rotations (x destroyed). */
static void r_update(int P, double *R, double *x) {
    for (int k = 0; k < P; k++) {
        const double xk = x[k];
        if (xk == 0.0) continue;
        double *Rk = R + (size_t)k * P;
        const double rr = hypot(Rk[k], xk), c = Rk[k] / rr, sn = xk / rr;
        Rk[k] = rr;
        for (int j = k + 1; j < P; j++) {
            const double t = Rk[j];
            Rk[j] = c * t + sn * x[j];
            x[j] = c * x[j] - sn * t;
        }
    }
}

/* Downdate: R^T R - x x^T (the algorithm of LINPACK dchdd, Saunders): solve R^T a = x, alpha = sqrt(1 - |a|^2),
 * rotations (c_i, s_i) that reduce [a; alpha] to [0; 1], applied to [R; 0]. Returns 1 (R untouched) if R is
 * singular or the result would not be positive definite. w: 2 P doubles. */
static int r_downdate(int P, double *R, const double *x, double *w) {
    double *a = w, *cs = w + P;     /* cs: c_i then s_i interleaved would need 2P; keep c in cs, s in a */
    double nrm2 = 0.0;
    for (int i = 0; i < P; i++) {   /* forward substitution with R^T (lower triangular) */
        double v = x[i];
        for (int k = 0; k < i; k++) v -= R[(size_t)k * P + i] * a[k];
        const double d = R[(size_t)i * P + i];
        if (!(fabs(d) > 0.0)) return 1;
        a[i] = v / d;
        nrm2 += a[i] * a[i];
    }
    /* alpha^2 = 1 - |a|^2 is the share of the leaving row that the others do not carry; the downdate's rounding
     * error grows like eps / alpha^2, so a nearly unique row (the data losing rank) is left to a re-factorization */
    if (!(nrm2 < 1.0 - MOESP_DOWNDATE_MIN) || !isfinite(nrm2)) return 1;
    double alpha = sqrt(1.0 - nrm2);
    for (int i = P - 1; i >= 0; i--) {
        const double scale = alpha + fabs(a[i]), aa = alpha / scale, bb = a[i] / scale, nn = sqrt(aa * aa + bb * bb);
        cs[i] = aa / nn;
        a[i] = bb / nn;             /* s_i */
        alpha = scale * nn;
    }
    for (int j = 0; j < P; j++) {
        double xx = 0.0;
        for (int i = j; i >= 0; i--) {
            double *rij = R + (size_t)i * P + j;
            const double t = cs[i] * xx + a[i] * *rij;
            *rij = cs[i] * *rij - a[i] * xx;
            xx = t;
        }
    }
    return 0;
}

void cs_moesp_push(cs_moesp *m, const double *u, const double *y) {
    const int P = m->P;
    if (m->count == m->cap) {
        /* the oldest sample (at head) leaves: its Hankel column leaves the factor */
        if (!m->dirty && m->ncols > 0) {
            hankel_row(m, m->head, m->hrow);
            if (r_downdate(P, m->Rr, m->hrow, m->dw)) { m->dirty = 1; m->n_downdate_fail++; }
        }
        m->ncols--;
    }
    memcpy(m->ru + (size_t)m->head * m->nu, u, sizeof(double) * m->nu);
    memcpy(m->ry + (size_t)m->head * m->ny, y, sizeof(double) * m->ny);
    m->head = (m->head + 1) % m->cap;
    if (m->count < m->cap) m->count++;
    if (m->count >= m->span) {
        /* the newest Hankel column (its last sample is the one just pushed) enters the factor */
        if (!m->dirty) {
            hankel_row(m, (m->head - m->span + m->cap) % m->cap, m->hrow);
            if (!cs_all_finite((size_t)P, m->hrow)) m->dirty = 1;
            else r_update(P, m->Rr, m->hrow);
        }
        m->ncols++;
    }
    m->since++;
}

int cs_moesp_count(const cs_moesp *m) { return m->count; }
void cs_moesp_clear(cs_moesp *m) {
    m->head = 0; m->count = 0; m->ncols = 0; m->dirty = 0; m->since = 0;
    memset(m->Rr, 0, sizeof(double) * (size_t)m->P * m->P);
}
void cs_moesp_set_refresh(cs_moesp *m, int every) { m->refresh = every < 0 ? 0 : every; }
void cs_moesp_stats(const cs_moesp *m, long *n_refactor, long *n_downdate_fail, long *since) {
    *n_refactor = m->n_refactor; *n_downdate_fail = m->n_downdate_fail; *since = m->since;
}

/* The window's factor is kept by up- and down-dates in cs_moesp_push; the fit re-factors from the samples only
 * when a downdate failed (or a sample was not finite) or every `refresh` pushes (bounds the rounding drift). */
int cs_moesp_fit_window(cs_moesp *m, int order, double threshold, cs_moesp_result *res, cs_err *err) {
    const int N = m->count, P = m->P, span = m->span, W = N - span + 1;
    if (W < P)
        return cs_fail(err, CS_ERR_ARG, "too few samples: %s with %d block rows, %d inputs and %d outputs needs "
                       "at least %d samples, got %d", m->method == CS_MOESP_PO ? "PO-MOESP" : "MOESP", m->r, m->nu,
                       m->ny, P + span - 1, N);
    if (order > m->nmax)
        return cs_fail(err, CS_ERR_ARG, "order: %d exceeds the largest identifiable order min((r-1) ny, r ny - 1) = %d "
                       "for r = %d block rows; increase block_rows", order, m->nmax, m->r);
    if (m->dirty || (m->refresh > 0 && m->since >= m->refresh)) {
        const int start = (m->head - N + m->cap) % m->cap;
        for (int j = 0; j < N; j++) {
            int s = (start + j) % m->cap;
            memcpy(m->lu + (size_t)j * m->nu, m->ru + (size_t)s * m->nu, sizeof(double) * m->nu);
            memcpy(m->ly + (size_t)j * m->ny, m->ry + (size_t)s * m->ny, sizeof(double) * m->ny);
        }
        if (!cs_all_finite((size_t)N * m->nu, m->lu) || !cs_all_finite((size_t)N * m->ny, m->ly))
            return cs_fail(err, CS_ERR_LINALG, "MOESP: the window holds non-finite samples");
        build_hankel(m, W, m->lu, m->ly);
        CS_TRY(qr_to_L(m, W, 1, err));
        m->dirty = 0;
        m->since = 0;
        m->n_refactor++;
    } else {
        double *L = m->L;
        for (int i = 0; i < P; i++)
            for (int j = 0; j < P; j++) L[(size_t)i * P + j] = (j <= i) ? m->Rr[(size_t)j * P + i] : 0.0;
    }
    return fit_from_L(m, W, order, threshold, res, err);
}
