#include "linalg/pinv.h"

#include <math.h>
#include <string.h>

#include "linalg/dense.h"
#include "linalg/lapack.h"

static int imin(int a, int b) { return a < b ? a : b; }

static int pinv_lwork(int m, int n) {
    int lw = -1, info = 0, k = imin(m, n);
    double wq = 0.0, dummy = 0.0;
    const char js = 'S';
    dgesvd_(&js, &js, &m, &n, &dummy, &m, &dummy, &dummy, &m, &dummy, &k, &wq, &lw, &info);
    return (int)wq + 1;
}

size_t cs_pinv_work_size(int m, int n) {
    if (m <= 0 || n <= 0) return 1;
    size_t k = (size_t)imin(m, n);
    return (size_t)m * n + (size_t)m * k + k * n + k + (size_t)pinv_lwork(m, n);
}

int cs_pinv(int m, int n, const double *A, double *Ap, double rtol, int *rank, double *work, cs_err *err) {
    if (rank) *rank = 0;
    if (m <= 0 || n <= 0) return CS_OK;
    const int k = imin(m, n);
    double *Ac = work, *U = Ac + (size_t)m * n, *VT = U + (size_t)m * k, *s = VT + (size_t)k * n, *w = s + k;
    int lwork = pinv_lwork(m, n), info = 0;
    if (!cs_all_finite((size_t)m * n, A))
        return cs_fail(err, CS_ERR_LINALG, "pseudo-inverse of a matrix with non-finite entries");
    cs_transpose(m, n, A, Ac);   /* column-major copy */
    const char js = 'S';
    dgesvd_(&js, &js, &m, &n, Ac, &m, s, U, &m, VT, &k, w, &lwork, &info);
    if (info != 0) return cs_fail(err, CS_ERR_LINALG, "pseudo-inverse: SVD failed (dgesvd info = %d)", info);
    /* Ap = V S^+ U^T: Ap[i][j] = sum_c VT(c, i) U(j, c) / s_c */
    int r = 0;
    while (r < k && s[r] > rtol * s[0] && s[r] > 0.0) r++;
    memset(Ap, 0, sizeof(double) * (size_t)n * m);
    for (int c = 0; c < r; c++) {
        double is = 1.0 / s[c];
        for (int i = 0; i < n; i++) {
            double v = VT[(size_t)i * k + c] * is;
            for (int j = 0; j < m; j++) Ap[(size_t)i * m + j] += v * U[(size_t)c * m + j];
        }
    }
    if (rank) *rank = r;
    return CS_OK;
}
