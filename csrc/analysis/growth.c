/* The relative divergence criterion (analysis/growth.h). Window maxima with cs_absmax_segments: NaN and inf
 * propagate, so a non-finite value anywhere is a divergence. */
#include "analysis/growth.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/dense.h"

/* First index with t[i] > v (right = 1) or t[i] >= v (right = 0): numpy.searchsorted on increasing t. */
static long search(const double *t, long n, double v, int right) {
    long lo = 0, hi = n;
    while (lo < hi) {
        const long mid = lo + (hi - lo) / 2;
        if (right ? t[mid] <= v : t[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* max of two window maxima as NumPy's maximum does it: NaN wins */
static double nanmax2(double a, double b) { return isnan(a) || isnan(b) ? NAN : (a > b ? a : b); }

static inline uint64_t abs_bits(double v) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b & 0x7fffffffffffffffULL;
}

static inline uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Column maxima of |V| over the rows [lo, hi) into out (m). Rows stored together (C order): a pass per two
 * columns, which then share their cache lines, two rows at a time (independent chains); a last single column and
 * other layouts column by column (cs_absmax_segments). The maxima are taken on the bits (a NaN's bits lie above
 * inf's: NaN propagates). */
static void window_max(const double *V, long n, long rs, long cs, int m, long lo, long hi, double *out) {
    int j = 0;
    if (labs(cs) <= labs(rs))
        for (; j + 2 <= m; j += 2) {
            const double *pa = V + j * cs, *pb = pa + cs;
            uint64_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
            long r = lo;
            for (; r + 2 <= hi; r += 2) {
                a0 = umax(a0, abs_bits(pa[r * rs]));
                b0 = umax(b0, abs_bits(pb[r * rs]));
                a1 = umax(a1, abs_bits(pa[(r + 1) * rs]));
                b1 = umax(b1, abs_bits(pb[(r + 1) * rs]));
            }
            if (r < hi) {
                a0 = umax(a0, abs_bits(pa[r * rs]));
                b0 = umax(b0, abs_bits(pb[r * rs]));
            }
            a0 = umax(a0, a1);
            b0 = umax(b0, b1);
            memcpy(&out[j], &a0, sizeof(double));
            memcpy(&out[j + 1], &b0, sizeof(double));
        }
    if (j < m) {
        long b[2] = {lo, hi};
        cs_absmax_segments(n, m - j, V + j * cs, rs, cs, b, 1, out + j);
    }
}

int cs_growth_worst(const double *t, long n, const double *V, long rs, long cs, int m, const cs_growth_rule *rule,
                    double *work, cs_growth_verdict *out) {
    *out = (cs_growth_verdict){.column = -1};
    if (n < 2 || m < 1) return 0;
    const double span = t[n - 1] - t[0], w = rule->window * span * (1 + 1e-12);
    const long k = search(t, n, t[0] + w, 1);                  /* t[:k]: the early window */
    if (k < rule->min_points || k >= n) return 0;
    /* the last window and the one before it (still growing?); too few points: judge by the factor alone */
    const long j1 = search(t, n, t[n - 1] - w, 0), j0 = search(t, n, t[n - 1] - 2 * w, 0);
    const int late = j1 >= k && n - j1 >= rule->min_points && j1 - j0 >= rule->min_points;
    /* one pass over the records: the segments between the sorted window bounds, combined per window */
    double *a0 = work, *peak = work + m, *prev = work + 2 * m, *last = work + 3 * m, *seg = work + 4 * m;
    long b[5] = {0, k, n, n, n};
    int nb = 3;
    if (late) { /* j1 >= k: the bounds are 0 <= k, j0 <= j1 < n; j0 may lie before k */
        if (j0 < k) { b[1] = j0; b[2] = k; } else { b[2] = j0; }
        b[3] = j1; b[4] = n; nb = 5;
    }
    for (int j = 0; j < m; j++) a0[j] = peak[j] = prev[j] = last[j] = -INFINITY;
    for (int g = 0; g + 1 < nb; g++) {
        const long lo = b[g], hi = b[g + 1];
        if (hi <= lo) continue;
        window_max(V, n, rs, cs, m, lo, hi, seg);
        for (int j = 0; j < m; j++) {
            if (hi <= k) a0[j] = nanmax2(a0[j], seg[j]); else peak[j] = nanmax2(peak[j], seg[j]);
            if (late && lo >= j0 && hi <= j1) prev[j] = nanmax2(prev[j], seg[j]);
            if (late && lo >= j1) last[j] = nanmax2(last[j], seg[j]);
        }
    }
    double f0 = 0.0; /* the largest finite early amplitude of the group */
    for (int j = 0; j < m; j++)
        if (isfinite(a0[j]) && a0[j] > f0) f0 = a0[j];
    double best = -INFINITY;
    int jbest = 0;
    for (int j = 0; j < m; j++) {
        const double ref = nanmax2(a0[j], rule->floor * f0), pk = peak[j];
        const int ok = isfinite(pk) && isfinite(ref);
        double factor = ok ? pk / (ref > 0 ? ref : 1.0) : INFINITY;
        if (ok && ref <= rule->rest * pk) factor = -INFINITY;    /* at rest in the early window: not judged */
        if (ok && late && last[j] <= rule->growing * prev[j]) factor = -INFINITY; /* levelled off at the end */
        if (factor > best) { best = factor; jbest = j; }
        a0[j] = ref;
    }
    if (!(best > rule->limit)) return 1;
    const double ref = a0[jbest];
    const double *col = V + jbest * cs;
    long r = 0;
    for (; r < n; r++) {
        const double v = col[r * rs];
        if (!isfinite(v) || (r >= k && isfinite(ref) && !(fabs(v) <= rule->limit * ref))) break;
    }
    *out = (cs_growth_verdict){.column = jbest, .factor = best, .t_bad = t[r < n ? r : 0], .ref = ref,
                               .peak = peak[jbest]};
    return 1;
}
