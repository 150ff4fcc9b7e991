#include "sysid/jsvd.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "linalg/dense.h"

#define JSVD_MAX_SWEEPS 80

int cs_jsvd(int m, int n, double *A, int lda, double *V, double *sv, cs_err *err) {
    if (n <= 0) return CS_OK;
    for (int j = 0; j < n; j++)
        if (!cs_all_finite((size_t)m, A + (size_t)j * lda))
            return cs_fail(err, CS_ERR_LINALG, "SVD of a matrix with non-finite entries");
    for (int j = 0; j < n; j++) {
        memset(V + (size_t)j * n, 0, sizeof(double) * n);
        V[(size_t)j * n + j] = 1.0;
    }
    /* scale by a power of two (exact) so that the squared column norms neither overflow nor underflow: the largest
     * entry then lies in [1, 2) */
    double amax = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            const double a = fabs(A[(size_t)j * lda + i]);
            if (a > amax) amax = a;
        }
    if (amax == 0.0) {
        for (int j = 0; j < n; j++) sv[j] = 0.0;
        return CS_OK;
    }
    const int e = ilogb(amax);
    const double down = e ? ldexp(1.0, -e) : 1.0, up = e ? ldexp(1.0, e) : 1.0;
    if (e != 0)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) A[(size_t)j * lda + i] *= down;
    /* column norms squared, kept up to date by the rotations and recomputed every sweep (no drift) */
    const double tol = (double)(m > 1 ? m : 1) * DBL_EPSILON;
    const double tiny = DBL_MIN / DBL_EPSILON;
    int converged = 0;
    for (int sweep = 0; sweep < JSVD_MAX_SWEEPS && !converged; sweep++) {
        converged = 1;
        for (int j = 0; j < n; j++) {
            const double *a = A + (size_t)j * lda;
            double s = 0.0;
            for (int i = 0; i < m; i++) s += a[i] * a[i];
            sv[j] = s;
        }
        for (int j = 0; j < n - 1; j++)
            for (int k = j + 1; k < n; k++) {
                double *aj = A + (size_t)j * lda, *ak = A + (size_t)k * lda;
                const double alpha = sv[j], beta = sv[k];
                /* the largest entry is in [1, 2): a column whose squared norm is below tiny (~2e-292) is zero to
                 * working precision; rotating it could cycle on sub-normal rounding */
                if (alpha < tiny || beta < tiny) continue;
                double gamma = 0.0;
                for (int i = 0; i < m; i++) gamma += aj[i] * ak[i];
                if (!(fabs(gamma) > tol * sqrt(alpha) * sqrt(beta))) continue;
                converged = 0;
                /* rotation that zeroes the (j, k) entry of the 2 x 2 Gram block [alpha gamma; gamma beta] */
                const double zeta = (beta - alpha) / (2.0 * gamma);
                const double t = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                const double c = 1.0 / sqrt(1.0 + t * t), sn = c * t;
                for (int i = 0; i < m; i++) {
                    const double x = aj[i], y = ak[i];
                    aj[i] = c * x - sn * y;
                    ak[i] = sn * x + c * y;
                }
                double *vj = V + (size_t)j * n, *vk = V + (size_t)k * n;
                for (int i = 0; i < n; i++) {
                    const double x = vj[i], y = vk[i];
                    vj[i] = c * x - sn * y;
                    vk[i] = sn * x + c * y;
                }
                sv[j] = alpha - t * gamma;
                sv[k] = beta + t * gamma;
            }
    }
    if (!converged) return cs_fail(err, CS_ERR_LINALG, "Jacobi SVD did not converge in %d sweeps", JSVD_MAX_SWEEPS);
    for (int j = 0; j < n; j++) {
        double *a = A + (size_t)j * lda;
        double s = 0.0;
        for (int i = 0; i < m; i++) s += a[i] * a[i];
        sv[j] = sqrt(s) * up;
        if (e != 0)
            for (int i = 0; i < m; i++) a[i] *= up;
    }
    /* sort descending (selection sort: n is small), permuting the columns of A V and V alike */
    for (int j = 0; j < n - 1; j++) {
        int b = j;
        for (int k = j + 1; k < n; k++)
            if (sv[k] > sv[b]) b = k;
        if (b == j) continue;
        double t = sv[j]; sv[j] = sv[b]; sv[b] = t;
        double *aj = A + (size_t)j * lda, *ab = A + (size_t)b * lda;
        for (int i = 0; i < m; i++) { t = aj[i]; aj[i] = ab[i]; ab[i] = t; }
        double *vj = V + (size_t)j * n, *vb = V + (size_t)b * n;
        for (int i = 0; i < n; i++) { t = vj[i]; vj[i] = vb[i]; vb[i] = t; }
    }
    return CS_OK;
}

size_t cs_jsvd_lstsq_work(int n, int nrhs) {
    return (size_t)n * n + (size_t)n + (size_t)n * (nrhs > 0 ? nrhs : 1);
}

int cs_jsvd_lstsq(int m, int n, int nrhs, double *A, int lda, double *B, int ldb, double rcond, int *rank,
                  double *work, cs_err *err) {
    *rank = 0;
    if (n <= 0 || nrhs <= 0) return CS_OK;
    double *V = work, *sv = V + (size_t)n * n, *Z = sv + n;
    for (int c = 0; c < nrhs; c++)
        if (!cs_all_finite((size_t)m, B + (size_t)c * ldb))
            return cs_fail(err, CS_ERR_LINALG, "least squares with a non-finite right-hand side");
    CS_TRY(cs_jsvd(m, n, A, lda, V, sv, err));
    /* A V = U S: X = V S^+ U^T B, with U^T B = (A V)^T B / sigma; Z (n x nrhs) = S^+ U^T B */
    int r = 0;
    const double cut = rcond > 0.0 ? rcond * sv[0] : 0.0;
    while (r < n && sv[r] > cut && sv[r] > 0.0) r++;
    for (int c = 0; c < nrhs; c++) {
        const double *b = B + (size_t)c * ldb;
        for (int j = 0; j < n; j++) {
            double z = 0.0;
            if (j < r) {   /* (u_j . b) / sigma_j with u_j = (A V)_j / sigma_j: no overflow for large A */
                const double *av = A + (size_t)j * lda;
                for (int i = 0; i < m; i++) z += (av[i] / sv[j]) * b[i];
                z /= sv[j];
            }
            Z[(size_t)c * n + j] = z;
        }
    }
    for (int c = 0; c < nrhs; c++) {
        double *x = B + (size_t)c * ldb;
        const double *z = Z + (size_t)c * n;
        for (int i = 0; i < n; i++) {
            double v = 0.0;
            for (int j = 0; j < r; j++) v += V[(size_t)j * n + i] * z[j];
            x[i] = v;
        }
    }
    *rank = r;
    return CS_OK;
}

size_t cs_jsvd_pinv_work(int m, int n) {
    const size_t k = (size_t)(m < n ? m : n), l = (size_t)(m > n ? m : n);
    return k * l + k * k + k + 1;
}

int cs_jsvd_pinv(int m, int n, const double *A, double *Ap, double rtol, int *rank, double *work, cs_err *err) {
    if (rank) *rank = 0;
    if (m <= 0 || n <= 0) return CS_OK;
    /* Jacobi on the orientation with fewer columns: k = min(m, n) columns of length l = max(m, n).
     *   n <= m: X = A (m x n), A V = U S,      A^+ = V S^+ U^T:  Ap[i][j] = sum_c V(i,c) X(j,c) / s_c^2
     *   n >  m: X = A^T (n x m), A^T V = U S,  A^+ = U S^+ V^T:  Ap[i][j] = sum_c X(i,c) V(j,c) / s_c^2 */
    const int tall = n <= m, k = tall ? n : m, l = tall ? m : n;
    double *X = work, *V = X + (size_t)k * l, *sv = V + (size_t)k * k;
    if (tall) {
        for (int c = 0; c < n; c++)
            for (int i = 0; i < m; i++) X[(size_t)c * m + i] = A[(size_t)i * n + c];
    } else {
        memcpy(X, A, sizeof(double) * (size_t)m * n);   /* row-major A is column-major A^T (n x m) */
    }
    if (!cs_all_finite((size_t)m * n, X))
        return cs_fail(err, CS_ERR_LINALG, "pseudo-inverse of a matrix with non-finite entries");
    CS_TRY(cs_jsvd(l, k, X, l, V, sv, err));
    int r = 0;
    while (r < k && sv[r] > rtol * sv[0] && sv[r] > 0.0) r++;
    memset(Ap, 0, sizeof(double) * (size_t)n * m);
    for (int c = 0; c < r; c++) {
        /* u_c = X_c / sigma_c (unit vector), then one more 1 / sigma_c: no overflow for large A */
        const double is = 1.0 / sv[c];
        double *xc = X + (size_t)c * l;
        const double *vc = V + (size_t)c * k;
        for (int i = 0; i < l; i++) xc[i] *= is;
        for (int i = 0; i < n; i++) {
            const double a = (tall ? vc[i] : xc[i]) * is;
            if (a == 0.0) continue;
            for (int j = 0; j < m; j++) Ap[(size_t)i * m + j] += a * (tall ? xc[j] : vc[j]);
        }
    }
    if (rank) *rank = r;
    return CS_OK;
}
