#include "linalg/dense.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "linalg/eig_small.h"
#include "linalg/lapack.h"

/* C = A B for small square matrices with the size known at compile time: the compiler unrolls and vectorizes these,
 * which makes the many 4x4..8x8 products of the exponential's Pade evaluation and squaring about 3x cheaper than
 * the generic loop below. A, B and C must not overlap. */
#define CS_SQUARE_MATMUL(N)                                                                                     \
    static void matmul##N(const double *restrict A, const double *restrict B, double *restrict C) {          \
        for (int i = 0; i < N; i++) {                                                                          \
            double c[N] = {0};                                                                                 \
            for (int p = 0; p < N; p++) {                                                                      \
                const double a = A[i * N + p];                                                                 \
                for (int j = 0; j < N; j++) c[j] += a * B[p * N + j];                                          \
            }                                                                                                  \
            for (int j = 0; j < N; j++) C[i * N + j] = c[j];                                                   \
        }                                                                                                      \
    }
CS_SQUARE_MATMUL(2)
CS_SQUARE_MATMUL(3)
CS_SQUARE_MATMUL(4)
CS_SQUARE_MATMUL(5)
CS_SQUARE_MATMUL(6)
CS_SQUARE_MATMUL(7)
CS_SQUARE_MATMUL(8)

void cs_matmul(int m, int n, int k, double alpha, const double *A, const double *B, double beta, double *C) {
    if (m == 0 || n == 0) return;
    if (m == n && n == k && alpha == 1.0 && beta == 0.0 && n >= 2 && n <= 8) {
        switch (n) {
        case 2: matmul2(A, B, C); return;
        case 3: matmul3(A, B, C); return;
        case 4: matmul4(A, B, C); return;
        case 5: matmul5(A, B, C); return;
        case 6: matmul6(A, B, C); return;
        case 7: matmul7(A, B, C); return;
        default: matmul8(A, B, C); return;
        }
    }
    if ((long)m * n * k >= 4096) {
        /* Row-major C = A B is column-major C^T = B^T A^T. */
        const char t = 'N';
        int kk = k > 0 ? k : 1;
        dgemm_(&t, &t, &n, &m, &k, &alpha, B, &n, A, &kk, &beta, C, &n);
        return;
    }
    for (int i = 0; i < m; i++) {
        double *ci = C + (size_t)i * n;
        if (beta == 0.0) memset(ci, 0, sizeof(double) * n);
        else if (beta != 1.0) for (int j = 0; j < n; j++) ci[j] *= beta;
        for (int p = 0; p < k; p++) {
            double a = alpha * A[(size_t)i * k + p];
            if (a == 0.0) continue;
            const double *bp = B + (size_t)p * n;
            for (int j = 0; j < n; j++) ci[j] += a * bp[j];
        }
    }
}

/* Small products (the LTI units of a chain: n of 1..4) in a plain loop: the vectorised loop's set-up costs more than
 * the product itself there. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
static void matvec_small(int m, int n, const double *restrict A, const double *restrict x, double *restrict y,
                         int accumulate) {
    for (int i = 0; i < m; i++) {
        double s = accumulate ? y[i] : 0.0;
        for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
        y[i] = s;
    }
}

void cs_matvec(int m, int n, const double *A, const double *x, double *y, int accumulate) {
    if (n <= 4 && m <= 4) { matvec_small(m, n, A, x, y, accumulate); return; }
    for (int i = 0; i < m; i++) {
        double s = accumulate ? y[i] : 0.0;
        const double *ai = A + (size_t)i * n;
        for (int j = 0; j < n; j++) s += ai[j] * x[j];
        y[i] = s;
    }
}

void cs_transpose(int m, int n, const double *A, double *At) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) At[(size_t)j * m + i] = A[(size_t)i * n + j];
}

void cs_eye(int n, double *A) {
    memset(A, 0, sizeof(double) * n * n);
    for (int i = 0; i < n; i++) A[(size_t)i * n + i] = 1.0;
}

double cs_norm1(int n, const double *A) {
    double best = 0.0;
    for (int j = 0; j < n; j++) {
        double s = 0.0;
        for (int i = 0; i < n; i++) s += fabs(A[(size_t)i * n + j]);
        if (s > best || isnan(s)) best = s;
    }
    return best;
}

double cs_norminf_vec(int n, const double *x) {
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        double a = fabs(x[i]);
        if (a > m || isnan(a)) m = a;
    }
    return m;
}

int cs_all_finite(size_t n, const double *a) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(a[i])) return 0;
    return 1;
}

/* |v| as the bits of a double with the sign cleared: for non-negative doubles the integer order is the numeric
 * order, and every NaN lies above +inf, so one integer maximum finds max |v| and propagates NaN. */
static inline uint64_t abs_bits(const double *v) {
    uint64_t b;
    memcpy(&b, v, sizeof b);
    return b & 0x7fffffffffffffffULL;
}

void cs_absmax_segments(long n, int m, const double *V, long rs, long cs, const long *b, int nseg, double *out) {
    for (int g = 0; g < nseg; g++) {
        double *o = out + (size_t)g * m;
        const long r0 = b[g] < 0 ? 0 : b[g], r1 = b[g + 1] > n ? n : b[g + 1];
        for (int j = 0; j < m; j++) {
            const double *p = V + j * cs;
            uint64_t m0 = 0, m1 = 0, m2 = 0, m3 = 0; /* four independent chains */
            long r = r0;
            for (; r + 4 <= r1; r += 4) {
                const uint64_t a0 = abs_bits(p + r * rs), a1 = abs_bits(p + (r + 1) * rs);
                const uint64_t a2 = abs_bits(p + (r + 2) * rs), a3 = abs_bits(p + (r + 3) * rs);
                m0 = a0 > m0 ? a0 : m0;
                m1 = a1 > m1 ? a1 : m1;
                m2 = a2 > m2 ? a2 : m2;
                m3 = a3 > m3 ? a3 : m3;
            }
            for (; r < r1; r++) {
                const uint64_t a = abs_bits(p + r * rs);
                m0 = a > m0 ? a : m0;
            }
            m0 = m1 > m0 ? m1 : m0;
            m2 = m3 > m2 ? m3 : m2;
            m0 = m2 > m0 ? m2 : m0;
            double mx;
            memcpy(&mx, &m0, sizeof mx);
            o[j] = r1 > r0 ? mx : -INFINITY;
        }
    }
}

/* Gaussian elimination with partial pivoting on row-major A (n x n, copied to work) and B (n x nrhs, in place).
 * For the tiny systems of the exponential's Pade solve (n <= 16) LAPACK's dgesv spends most of its time in block-size
 * queries; this is the same algorithm (dgetf2's unblocked LU) without them. */
static inline __attribute__((always_inline)) int small_solve(int n, int nrhs, const double *A, double *B,
                                                              double *work, cs_err *err) {
    double *LU = work;
    memcpy(LU, A, sizeof(double) * (size_t)n * n);
    for (int k = 0; k < n; k++) {
        int piv = k;
        double best = fabs(LU[(size_t)k * n + k]);
        for (int i = k + 1; i < n; i++) {
            double v = fabs(LU[(size_t)i * n + k]);
            if (v > best) { best = v; piv = i; }
        }
        if (best == 0.0 || !isfinite(best))
            return cs_fail(err, CS_ERR_LINALG, "singular matrix in linear solve (pivot %d is zero)", k + 1);
        if (piv != k) {
            for (int j = 0; j < n; j++) {
                double t = LU[(size_t)k * n + j]; LU[(size_t)k * n + j] = LU[(size_t)piv * n + j]; LU[(size_t)piv * n + j] = t;
            }
            for (int j = 0; j < nrhs; j++) {
                double t = B[(size_t)k * nrhs + j]; B[(size_t)k * nrhs + j] = B[(size_t)piv * nrhs + j]; B[(size_t)piv * nrhs + j] = t;
            }
        }
        const double inv = 1.0 / LU[(size_t)k * n + k];
        for (int i = k + 1; i < n; i++) {
            const double f = LU[(size_t)i * n + k] * inv;
            if (f == 0.0) continue;
            for (int j = k + 1; j < n; j++) LU[(size_t)i * n + j] -= f * LU[(size_t)k * n + j];
            for (int j = 0; j < nrhs; j++) B[(size_t)i * nrhs + j] -= f * B[(size_t)k * nrhs + j];
        }
    }
    for (int k = n - 1; k >= 0; k--) { /* back substitution */
        const double inv = 1.0 / LU[(size_t)k * n + k];
        for (int j = 0; j < nrhs; j++) {
            double v = B[(size_t)k * nrhs + j];
            for (int q = k + 1; q < n; q++) v -= LU[(size_t)k * n + q] * B[(size_t)q * nrhs + j];
            B[(size_t)k * nrhs + j] = v * inv;
        }
    }
    return CS_OK;
}

int cs_solve(int n, int nrhs, const double *A, double *B, double *work, int *ipiv, cs_err *err) {
    if (n == 0) return CS_OK;
    if (n <= 16) {
        /* constant sizes for the exponential's Pade solve (n = nrhs <= 8) let the compiler unroll the loops */
        if (nrhs == n) switch (n) {
            case 2: return small_solve(2, 2, A, B, work, err);
            case 3: return small_solve(3, 3, A, B, work, err);
            case 4: return small_solve(4, 4, A, B, work, err);
            case 5: return small_solve(5, 5, A, B, work, err);
            case 6: return small_solve(6, 6, A, B, work, err);
            case 7: return small_solve(7, 7, A, B, work, err);
            case 8: return small_solve(8, 8, A, B, work, err);
            default: break;
            }
        return small_solve(n, nrhs, A, B, work, err);
    }
    double *Ac = work, *Bc = work + (size_t)n * n;
    cs_transpose(n, n, A, Ac);       /* column-major copy of A */
    cs_transpose(n, nrhs, B, Bc);    /* column-major copy of B */
    int info = 0;
    dgesv_(&n, &nrhs, Ac, &n, ipiv, Bc, &n, &info);
    if (info != 0)
        return cs_fail(err, CS_ERR_LINALG, info > 0 ? "singular matrix in linear solve (pivot %d is zero)"
                                                    : "dgesv: invalid argument %d", info > 0 ? info : -info);
    cs_transpose(nrhs, n, Bc, B);
    return CS_OK;
}

int cs_eig_work_size(int n) { return n * n + 6 * n + 16; }

/* LAPACK path (any n). dgeev's path for n < 75 is dgebal + dgehrd (unblocked dgehd2 at this size) + dhseqr
 * (dlahqr at this size); below 16 those building blocks are called directly to skip the driver's
 * ilaenv/lsame queries. */
int cs_eigvals_lapack(int n, const double *A, double *wr, double *wi, double *work, cs_err *err) {
    if (n == 0) return CS_OK;
    double *Ac = work, *w = work + (size_t)n * n;
    int info = 0;
    cs_transpose(n, n, A, Ac);
    for (int i = 0; i < n * n; i++)
        if (!isfinite(Ac[i])) return cs_fail(err, CS_ERR_LINALG, "eigenvalues of a matrix with non-finite entries");
    if (n < 16) {
        int ilo = 1, ihi = n, one = 1, no = 0;
        double *scale = w, *tau = w + n, *hw = w + 2 * n; /* 3n <= 6n + 16 doubles of workspace */
        const char job = 'B';
        dgebal_(&job, &n, Ac, &n, &ilo, &ihi, scale, &info);
        if (info == 0) dgehd2_(&n, &ilo, &ihi, Ac, &n, tau, hw, &info);
        if (info != 0) return cs_fail(err, CS_ERR_LINALG, "eigenvalues: balancing/Hessenberg failed (info = %d)", info);
        for (int i = 0; i < n; i++) /* eigenvalues isolated by the balancing sit on the diagonal */
            if (i < ilo - 1 || i >= ihi) { wr[i] = Ac[(size_t)i * n + i]; wi[i] = 0.0; }
        dlahqr_(&no, &no, &n, &ilo, &ihi, Ac, &n, wr, wi, &one, &n, hw, &one, &info);
        if (info != 0) return cs_fail(err, CS_ERR_LINALG, "eigenvalues: QR iteration did not converge (info = %d)", info);
        return CS_OK;
    }
    int lwork = 6 * n + 16, one = 1;
    const char nv = 'N';
    dgeev_(&nv, &nv, &n, Ac, &n, wr, wi, NULL, &one, NULL, &one, w, &lwork, &info);
    if (info != 0) return cs_fail(err, CS_ERR_LINALG, "dgeev failed (info = %d)", info);
    return CS_OK;
}

/* Small matrices go to the plain-C kernel of eig_small.c (no LAPACK/BLAS call overhead); in the rare case that
 * its QR iteration hits the iteration cap, LAPACK (its own shifts and cap) gets the matrix. */
int cs_eigvals(int n, const double *A, double *wr, double *wi, double *work, cs_err *err) {
    if (n <= CS_EIG_SMALL_MAXN) {
        const int rc = cs_eigvals_small(n, A, wr, wi, work, 0, err);
        if (rc != CS_EIG_NOCONV) return rc;
    }
    return cs_eigvals_lapack(n, A, wr, wi, work, err);
}

int cs_spectral_radius(int n, const double *A, double *rho, double *work, cs_err *err) {
    double *wr = work, *wi = work + n;
    CS_TRY(cs_eigvals(n, A, wr, wi, work + 2 * n, err));
    double r = 0.0;
    for (int i = 0; i < n; i++) r = fmax(r, wi[i] == 0.0 ? fabs(wr[i]) : hypot(wr[i], wi[i]));
    *rho = r;
    return CS_OK;
}
