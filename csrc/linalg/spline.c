#include "linalg/spline.h"

/* Slopes s[0..n-1] of the not-a-knot cubic spline through (t_k, y_k); work: 3n doubles. */
void cs_spline_slopes(long n, const double *t, const double *y, double *s, double *work) {
    if (n <= 1) { if (n == 1) s[0] = 0.0; return; }
    if (n == 2) { s[0] = s[1] = (y[1] - y[0]) / (t[1] - t[0]); return; }
    if (n == 3) {
        double d0 = (y[1] - y[0]) / (t[1] - t[0]), d1 = (y[2] - y[1]) / (t[2] - t[1]), c = (d1 - d0) / (t[2] - t[0]);
        s[0] = d0 + c * (t[0] - t[1]);
        s[1] = d0 + c * (t[1] - t[0]);
        s[2] = d0 + c * (2 * t[2] - t[0] - t[1]);
        return;
    }
    double *cp = work, *dp = work + n;
    /* row 0 */
    double dx0 = t[1] - t[0], dx1 = t[2] - t[1], dl0 = (y[1] - y[0]) / dx0, dl1 = (y[2] - y[1]) / dx1, d = t[2] - t[0];
    double b = dx1, c = d, r = ((dx0 + 2 * d) * dx1 * dl0 + dx0 * dx0 * dl1) / d;
    cp[0] = c / b;
    dp[0] = r / b;
    for (long i = 1; i < n - 1; i++) {
        double hm = t[i] - t[i - 1], hp = t[i + 1] - t[i];
        double dm = (y[i] - y[i - 1]) / hm, dpl = (y[i + 1] - y[i]) / hp;
        double a = hp;
        b = 2 * (hm + hp);
        c = hm;
        r = 3 * (hp * dm + hm * dpl);
        double den = b - a * cp[i - 1];
        cp[i] = c / den;
        dp[i] = (r - a * dp[i - 1]) / den;
    }
    long m = n - 1;
    double hm = t[m] - t[m - 1], hmm = t[m - 1] - t[m - 2];
    double dm = (y[m] - y[m - 1]) / hm, dmm = (y[m - 1] - y[m - 2]) / hmm;
    d = t[m] - t[m - 2];
    double a = d;
    b = hm;
    r = (hm * hm * dmm + (2 * d + hm) * hmm * dm) / d;
    dp[m] = (r - a * dp[m - 1]) / (b - a * cp[m - 1]);
    s[m] = dp[m];
    for (long i = m - 1; i >= 0; i--) s[i] = dp[i] - cp[i] * s[i + 1];
}

/* Value and derivative of the Hermite cubic through (t, y, s) at tt; hint: last interval. */
void cs_spline_eval(long n, const double *t, const double *y, const double *s, double tt, long *hint,
                        double *val, double *der) {
    if (n == 1) { *val = y[0]; *der = 0.0; return; }
    long k = *hint;
    if (!(k >= 0 && k < n - 1 && t[k] <= tt && tt <= t[k + 1])) {
        if (tt <= t[0]) k = 0;
        else if (tt >= t[n - 1]) k = n - 2;
        else {
            long lo = 0, hi = n - 1;
            while (hi - lo > 1) { long mid = (lo + hi) / 2; if (t[mid] <= tt) lo = mid; else hi = mid; }
            k = lo;
        }
        *hint = k;
    }
    double h = t[k + 1] - t[k], x = (tt - t[k]) / h, x2 = x * x, x3 = x2 * x;
    double y0 = y[k], y1 = y[k + 1], s0 = s[k], s1 = s[k + 1];
    *val = (2 * x3 - 3 * x2 + 1) * y0 + (x3 - 2 * x2 + x) * h * s0 + (-2 * x3 + 3 * x2) * y1 + (x3 - x2) * h * s1;
    *der = (6 * x2 - 6 * x) / h * y0 + (3 * x2 - 4 * x + 1) * s0 + (-6 * x2 + 6 * x) / h * y1 + (3 * x2 - 2 * x) * s1;
}
