#include "linalg/balance.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 2^k for |k| <= 1022 (used only for the balancing factors, exact powers of 2) */
static double pow2(int k) {
    const uint64_t bits = (uint64_t)(k + 1023) << 52;
    double f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* floor(log2(v)) for a positive normal double (subnormals give -1023: only used as a first guess) */
static int exponent_of(double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return (int)((bits >> 52) & 0x7ff) - 1023;
}

/* Finds D = diag(d), d_i powers of 2, and replaces H by D^-1 H D (a similarity: eigenvalues unchanged; exact, since
 * only exponents change). Index by index, d_i is chosen so that the off-diagonal 1-norms of column i and row i,
 *     c_i = d_i sum_j |h_ji| / d_j   and   r_i = (1/d_i) sum_j |h_ij| d_j   (j != i),
 * become comparable (c_i in [r_i/2, 2 r_i) up to the power-of-2 grid), and the new d_i is taken only if it lowers
 * c_i + r_i by at least 5 %, which makes the iteration terminate. It stops when a full round of n indices brings
 * no change. QR's backward error is ~eps ||H||: for matrices with entries spanning 1e-9..1e9 balancing lowers
 * ||H|| by orders of magnitude, and with it the error of the small eigenvalues.
 * While iterating only d changes (the sums are formed with it); the matrix is scaled once at the end instead of a
 * row and a column per accepted step. d, dinv: n doubles each (d and 1/d). */
#define DEXP_MAX 960
void cs_balance(int n, double *H, double *d, double *dinv) {
    for (int i = 0; i < n; i++) d[i] = dinv[i] = 1.0;
    int changed = 0;
    /* the step cap is a safety net only */
    for (int step = 0, quiet = 0, i = 0; quiet < n && step < 100 * n; step++, i = i + 1 < n ? i + 1 : 0) {
        double C = 0.0, R = 0.0; /* c_i = d_i C, r_i = R / d_i */
        const double *hr = H + (size_t)i * n, *hc = H + i;
        for (int j = i + 1; j < n; j++) { C += fabs(hc[(size_t)j * n]) * dinv[j]; R += fabs(hr[j]) * d[j]; }
        for (int j = 0; j < i; j++) { C += fabs(hc[(size_t)j * n]) * dinv[j]; R += fabs(hr[j]) * d[j]; }
        quiet++;
        if (!(C > 0.0 && R > 0.0 && C < DBL_MAX && R < DBL_MAX)) continue;
        /* new d_i = 2^m with d_i^2 C in [R/2, 2R): m = floor(log2(R/C) / 2) from the exponents (no division),
         * then at most one step up. |m| <= DEXP_MAX (as LAPACK's dgebal, which keeps its factors within about
         * 2^+-970) keeps d_i and 1/d_i normal numbers. */
        int m = (exponent_of(R) - exponent_of(C)) >> 1; /* arithmetic shift: floor */
        m = m > DEXP_MAX - 1 ? DEXP_MAX - 1 : m < -DEXP_MAX ? -DEXP_MAX : m;
        m += (C * pow2(m)) * pow2(m) < 0.5 * R; /* no branch: this one is unpredictable */
        const double dn = pow2(m), dninv = pow2(-m);
        if (dn * C + R * dninv >= 0.95 * (d[i] * C + R * dinv[i])) continue;
        d[i] = dn;
        dinv[i] = dninv;
        quiet = 0;
        changed = 1;
    }
    if (!changed) return;
    for (int i = 0; i < n; i++) {
        double *row = H + (size_t)i * n;
        const int mi = exponent_of(d[i]);
        for (int j = 0; j < n; j++) {
            /* h_ij d_j / d_i: multiplying by powers of 2 is exact (unless the result is subnormal); a factor
             * beyond the double range is applied in two halves */
            const int e = exponent_of(d[j]) - mi;
            if (e >= -1000 && e <= 1000) row[j] *= pow2(e);
            else row[j] = row[j] * pow2(e / 2) * pow2(e - e / 2);
        }
    }
}

