/* Small-matrix eigenvalues: balancing, Householder Hessenberg reduction, Francis double-shift QR (see eig_small.h).
 *
 * Only eigenvalues are wanted, so no transformation is accumulated and the QR sweeps update only the active
 * diagonal window [l..hi] (the couplings to the rest of the matrix do not influence its eigenvalues). */
#include "linalg/eig_small.h"

#include "linalg/balance.h"

#include <float.h>
#include <math.h>

/* Sums of squares inside [2^-960, 2^960] are formed directly; outside, the norm is recomputed with scaling so
 * that neither overflow nor gradual underflow spoils it. */
#define SSQ_LO 0x1p-960
#define SSQ_HI 0x1p960

int cs_eig_small_work_size(int n) { return n * n + 2 * n; }

/* fmax/fmin are library calls at -O2 (NaN semantics); inputs here are finite */
static inline double dmax(double a, double b) { return a > b ? a : b; }
static inline double dmin(double a, double b) { return a < b ? a : b; }

/* Eigenvalues of the real 2x2 matrix [a b; c d]: (r1, i1), (r2, i2); a complex pair has r1 = r2 and i1 = -i2 > 0.
 *
 * With p = (a - d)/2 the eigenvalues are d + p +- sqrt(p^2 + bc). The discriminant is formed divided by
 * scale = max(|p|, |b|, |c|), and bc as max(|b|,|c|) * (signed min), so neither p^2 nor bc is ever formed: no
 * overflow for entries up to ~1e300 and no underflow of bc when b = 1e150, c = 1e-150.
 * Real pair: the offset r = p + sign(p) sqrt(.) adds two numbers of equal sign (no cancellation), gives
 * lambda1 = d + r, and lambda2 = d - bc/r from (lambda1 - d)(lambda2 - d) = -bc (no cancellation either).
 * Complex pair: real part (a + d)/2, imaginary part sqrt(-(p^2 + bc)). Rotating the block to standard form
 * (equal diagonal) first, as LAPACK's dlanv2 does, is not more accurate for the eigenvalues: the rotated
 * off-diagonal product is again p^2 + bc, formed with a subtraction that cancels more when |b| >> |c|. */
static void eig2x2(double a, double b, double c, double d, double *r1, double *i1, double *r2, double *i2) {
    *i1 = *i2 = 0.0;
    if (b == 0.0 || c == 0.0) { /* triangular */
        *r1 = a;
        *r2 = d;
        return;
    }
    const double p = 0.5 * a - 0.5 * d;
    const double bcmax = dmax(fabs(b), fabs(c));
    const double bcmin = ((b < 0.0) != (c < 0.0)) ? -dmin(fabs(b), fabs(c)) : dmin(fabs(b), fabs(c));
    const double scale = dmax(fabs(p), bcmax);
    const double z = (p / scale) * p + (bcmax / scale) * bcmin; /* (p^2 + bc) / scale */
    if (z >= 0.0) {
        /* r != 0: p = 0 implies scale = bcmax and z = bcmin != 0 */
        const double r = p + copysign(sqrt(scale) * sqrt(z), p);
        *r1 = d + r;
        *r2 = d - (bcmax / r) * bcmin;
    } else {
        *r1 = *r2 = 0.5 * a + 0.5 * d;
        *i1 = sqrt(scale) * sqrt(-z);
        *i2 = -*i1;
    }
}

/* Permutation step of balancing (isolating eigenvalues): an index whose row or column has no non-zero entry off
 * the diagonal within the active indices carries the eigenvalue h_ii, exactly; a symmetric permutation would move
 * it to the bottom (row) or top (column) of a block triangular form. Such indices are removed until none is left
 * (LAPACK's dgebal does the same with row and column exchanges). Triangular matrices, and triangular up to a
 * permutation, thus get their diagonal as eigenvalues exactly, also when it has multiple (defective) values
 * that QR would smear out to ~eps^(1/k). The removed eigenvalues go to wr/wi[m..n-1]; H is compacted in place to
 * the active m x m submatrix (row-major, stride m). Returns m. Costs O(n) for a dense matrix. */
static int isolate(int n, double *H, double *wr, double *wi) {
    int m = n;
    for (int changed = 1; changed && m > 1;) {
        changed = 0;
        for (int a = 0; a < m; a++) {
            int zr = 1, zc = 1;
            for (int b = 0; b < m && (zr || zc); b++) {
                if (b == a) continue;
                if (H[(size_t)a * m + b] != 0.0) zr = 0;
                if (H[(size_t)b * m + a] != 0.0) zc = 0;
            }
            if (!zr && !zc) continue;
            wr[m - 1] = H[(size_t)a * m + a];
            wi[m - 1] = 0.0;
            size_t k = 0; /* remove row and column a; forward copy is safe: destination <= source */
            for (int i = 0; i < m; i++) {
                if (i == a) continue;
                for (int j = 0; j < m; j++)
                    if (j != a) H[k++] = H[(size_t)i * m + j];
            }
            m--;
            changed = 1;
            break;
        }
    }
    return m;
}

/* 2-norm of (x_0 .. x_{len-1}) (stride 1) given its sum of squares ssq; rescaled when ssq is out of range. */
static double norm_from_ssq(const double *x, int len, double ssq) {
    if (ssq > SSQ_LO && ssq < SSQ_HI) return sqrt(ssq);
    double s = 0.0, q = 0.0;
    for (int i = 0; i < len; i++) s = dmax(s, fabs(x[i]));
    if (s == 0.0) return 0.0;
    for (int i = 0; i < len; i++) {
        const double t = x[i] / s;
        q += t * t;
    }
    return s * sqrt(q);
}

/* Householder reduction to upper Hessenberg form (Golub & Van Loan, Alg. 7.4.2), H <- P H P column by column.
 * For column k the reflector P = I - tau u u^T maps x = H[k+1.., k] to (beta, 0, .., 0), beta = -sign(x_0) ||x||,
 * with u = (x - beta e_1) / (x_0 - beta) (so u_0 = 1; x_0 - beta has no cancellation) and tau = (beta - x_0) / beta.
 * Columns whose part below the subdiagonal is already zero are skipped, which keeps exact zeros (e.g. companion
 * structure) exact. u, w: n doubles of scratch each (u, and u^T H in w[k+1..]). */
static inline __attribute__((always_inline)) void hessenberg(int n, double *H, double *u, double *w) {
    for (int k = 0; k + 2 < n; k++) {
        const int m = n - k - 1; /* length of x */
        double tmax = 0.0, ssq = 0.0;
        for (int i = 1; i < m; i++) {
            const double v = H[(size_t)(k + 1 + i) * n + k];
            u[i] = v;
            ssq += v * v;
            tmax = dmax(tmax, fabs(v));
        }
        if (tmax == 0.0) continue;
        const double x0 = H[(size_t)(k + 1) * n + k];
        u[0] = x0;
        ssq += x0 * x0;
        const double nrm = norm_from_ssq(u, m, ssq), beta = -copysign(nrm, x0), v0 = x0 - beta;
        const double tau = -v0 / beta; /* in [1, 2] */
        if (fabs(v0) > 0x1p-1000) { /* reciprocal safe */
            const double rv = 1.0 / v0;
            for (int i = 1; i < m; i++) u[i] *= rv;
        } else {
            for (int i = 1; i < m; i++) u[i] /= v0;
        }
        u[0] = 1.0;
        H[(size_t)(k + 1) * n + k] = beta;
        for (int i = 1; i < m; i++) H[(size_t)(k + 1 + i) * n + k] = 0.0;
        /* P from the left on rows k+1.., columns k+1..: w = u^T H, H -= tau u w */
        for (int j = k + 1; j < n; j++) w[j] = 0.0;
        for (int i = 0; i < m; i++) {
            const double *row = H + (size_t)(k + 1 + i) * n;
            const double ui = u[i];
            for (int j = k + 1; j < n; j++) w[j] += ui * row[j];
        }
        for (int i = 0; i < m; i++) {
            double *row = H + (size_t)(k + 1 + i) * n;
            const double f = tau * u[i];
            for (int j = k + 1; j < n; j++) row[j] -= f * w[j];
        }
        /* P from the right on all rows, columns k+1..: H -= tau (H u) u^T */
        for (int r = 0; r < n; r++) {
            double *row = H + (size_t)r * n + k + 1;
            double q = 0.0;
            for (int i = 0; i < m; i++) q += row[i] * u[i];
            q *= tau;
            for (int i = 0; i < m; i++) row[i] -= q * u[i];
        }
    }
}

/* Francis implicit double-shift QR on the upper Hessenberg H (Golub & Van Loan, Alg. 7.5.1-7.5.2, with the
 * deflation and shift safeguards of the Wilkinson-Reinsch Handbook / EISPACK hqr).
 *
 * The active window is rows/columns [l..hi]. Each pass:
 *  - deflation: the largest k in (0, hi] with a negligible subdiagonal, |h[k,k-1]| <= eps (|h[k-1,k-1]| + |h[k,k]|)
 *    (or below a tiny absolute threshold), is set to zero and starts the window (l = k; l = 0 if there is none).
 *    A 1x1 or 2x2 window at the bottom gives its eigenvalues and is removed (hi -= 1 or 2);
 *  - shifts: the pair s1, s2 of eigenvalues of the trailing 2x2 block, used through their sum s and product t
 *    (real either way); when both are real, the one closer to h[hi,hi] twice. After every 10th sweep without
 *    deflation an "ad hoc" shift built from the size of the last (every 20th: the first) two subdiagonals breaks
 *    cycles (e.g. permutation matrices, on which the standard shifts stay 0 and nothing moves);
 *  - start row m: the first column of (H - s1)(H - s2) = H^2 - s H + t restricted to the window has three
 *    non-zeros (x, y, z) at rows m..m+2. Starting at m > l instead of l is allowed when h[m,m-1] is so small that
 *    the fill-in the first reflector would create next to it is negligible (two consecutive small subdiagonals);
 *  - bulge chase: 3x3 Householder reflectors (2x2 for the last row) restore the Hessenberg form.
 * Only the direction of (x, y, z) matters: when the trailing 2x2 block is far from 1 in size (beyond 2^+-300),
 * the shift polynomial is evaluated on H / sc (sc = size of that block) to keep its products from overflowing or
 * underflowing.
 * Returns CS_EIG_NOCONV when maxit sweeps pass without a deflation at the bottom. */
static inline __attribute__((always_inline)) int francis(int n, double *H, double *wr, double *wi, int maxit) {
    const double eps = DBL_EPSILON, smlnum = DBL_MIN * ((double)n / DBL_EPSILON);
#define HH(i, j) H[(size_t)(i) * n + (j)]
    int hi = n - 1, its = 0;
    while (hi >= 0) {
        int l = hi;
        for (; l > 0; l--) {
            const double h = fabs(HH(l, l - 1));
            if (h <= smlnum) break;
            double tst = fabs(HH(l - 1, l - 1)) + fabs(HH(l, l));
            if (tst == 0.0) { /* zero diagonal: measure against the neighbouring subdiagonals instead */
                if (l >= 2) tst += fabs(HH(l - 1, l - 2));
                if (l + 1 <= hi) tst += fabs(HH(l + 1, l));
            }
            if (h <= eps * tst) break;
        }
        if (l > 0) HH(l, l - 1) = 0.0;
        if (l == hi) {
            wr[hi] = HH(hi, hi);
            wi[hi] = 0.0;
            hi -= 1;
            its = 0;
            continue;
        }
        if (l == hi - 1) {
            eig2x2(HH(l, l), HH(l, hi), HH(hi, l), HH(hi, hi), &wr[l], &wi[l], &wr[hi], &wi[hi]);
            hi -= 2;
            its = 0;
            continue;
        }
        if (its >= maxit) return CS_EIG_NOCONV;
        its++;

        /* shifts, as s = s1 + s2 and t = s1 s2 in units of sc */
        const double a = HH(hi - 1, hi - 1), b = HH(hi - 1, hi), c = HH(hi, hi - 1), d = HH(hi, hi);
        const double sc = fabs(a) + fabs(b) + fabs(c) + fabs(d);
        const double rs = (sc > 0x1p-300 && sc < 0x1p300) ? 1.0 : sc > 0.0 ? 1.0 / sc : 1.0;
        double s, t;
        if (its % 10 == 0) {
            /* ad hoc shift pair base + w (0.75 +- 0.6614 i), w = size of two subdiagonals (Handbook constants) */
            double w, base;
            if (its % 20 == 0) { w = fabs(HH(l + 1, l)) + fabs(HH(l + 2, l + 1)); base = HH(l, l); }
            else { w = fabs(c) + fabs(HH(hi - 1, hi - 2)); base = d; }
            w *= rs;
            const double re = base * rs + 0.75 * w;
            s = 2.0 * re;
            t = re * re + 0.4375 * w * w;
        } else {
            /* If the trailing block has real eigenvalues, use the one closer to h[hi,hi] twice (as LAPACK's
             * dlahqr does): fewer sweeps than the pair of two different real shifts. */
            const double as = a * rs, ds = d * rs, bc = (b * rs) * (c * rs), p = 0.5 * (as - ds);
            const double disc = p * p + bc;
            if (disc >= 0.0) {
                const double r = p + copysign(sqrt(disc), p); /* roots ds + r and ds - bc / r */
                const double sh = r == 0.0 ? ds : fabs(r) <= fabs(bc / r) ? ds + r : ds - bc / r;
                s = 2.0 * sh;
                t = sh * sh;
            } else {
                s = as + ds;
                t = as * ds - bc;
            }
        }

        int m;
        double x, y, z;
        for (m = hi - 2;; m--) {
            const double h00 = HH(m, m) * rs, h10 = HH(m + 1, m) * rs;
            const double h11 = HH(m + 1, m + 1) * rs;
            x = h00 * (h00 - s) + HH(m, m + 1) * rs * h10 + t;
            y = h10 * (h00 + h11 - s);
            z = h10 * (HH(m + 2, m + 1) * rs);
            if (m == l) break;
            if (fabs(HH(m, m - 1)) * (fabs(y) + fabs(z)) <=
                eps * fabs(x) * (fabs(HH(m - 1, m - 1)) + fabs(HH(m, m)) + fabs(HH(m + 1, m + 1))))
                break;
        }
        /* entries near the overflow threshold (|h| ~ 1e307) can overflow in the sweeps: give up at once rather
         * than iterate on NaN up to maxit (the caller falls back to LAPACK) */
        if (!(isfinite(x) && isfinite(y) && isfinite(z))) return CS_EIG_NOCONV;

        for (int k = m; k < hi; k++) {
            const int three = k + 2 <= hi; /* (x, y, z) = H[k..k+2, k-1] for k > m, from the previous step */
            /* Householder reflector P = I - u t^T with P (x, y, z)^T = (beta, 0, 0)^T, beta = -sign(x) ||(x,y,z)||,
             * u = (1, u1, u2) = (x - beta, y, z) / (x - beta) (x - beta adds two numbers of the same sign) and
             * t = tau u, tau = (beta - x) / beta. Applied as q = u^T h, h -= q t. */
            const double ssq = x * x + y * y + z * z;
            double beta, u1, u2, t1, t2, t3;
            if (ssq > SSQ_LO && ssq < SSQ_HI) { /* |x - beta| >= nrm > 2^-480: reciprocals are safe */
                const double nrm = sqrt(ssq);
                beta = x < 0.0 ? nrm : -nrm;
                const double v0 = x - beta;
                const double rv = 1.0 / v0;
                u1 = y * rv;
                u2 = z * rv;
                t1 = -v0 / beta;
                t2 = t1 * u1;
                t3 = t1 * u2;
            } else { /* tiny or huge entries */
                const double v3[3] = {x, y, z};
                const double nrm = norm_from_ssq(v3, 3, ssq);
                if (nrm == 0.0) continue; /* nothing to annihilate */
                beta = x < 0.0 ? nrm : -nrm;
                const double v0 = x - beta;
                u1 = y / v0;
                u2 = z / v0;
                t1 = -v0 / beta;
                t2 = t1 * u1;
                t3 = t1 * u2;
            }
            if (k > m) {
                HH(k, k - 1) = beta;
                HH(k + 1, k - 1) = 0.0;
                if (three) HH(k + 2, k - 1) = 0.0;
            } else if (m > l) {
                /* P acting on column m-1 = (h, 0, 0): h -> h (1 - tau) = h x / beta; the fill-in below is
                 * negligible by the choice of m and dropped */
                HH(m, m - 1) *= x / beta;
            }
            double *r0 = &HH(k, 0), *r1 = &HH(k + 1, 0);
            const int iend = k + 3 < hi ? k + 3 : hi;
            if (three) {
                double *r2 = &HH(k + 2, 0);
                for (int j = k; j <= hi; j++) { /* P from the left, window columns */
                    const double q = r0[j] + u1 * r1[j] + u2 * r2[j];
                    r0[j] -= q * t1;
                    r1[j] -= q * t2;
                    r2[j] -= q * t3;
                }
                /* P from the right, window rows reached by the bulge. Rows k+1..k+3 first: their column k is the
                 * next step's (x, y, z), kept in registers (this chain of steps is what limits the speed). */
                double q = r1[k] + u1 * r1[k + 1] + u2 * r1[k + 2];
                x = r1[k] -= q * t1;
                r1[k + 1] -= q * t2;
                r1[k + 2] -= q * t3;
                q = r2[k] + u1 * r2[k + 1] + u2 * r2[k + 2];
                y = r2[k] -= q * t1;
                r2[k + 1] -= q * t2;
                r2[k + 2] -= q * t3;
                z = 0.0;
                if (k + 3 <= hi) {
                    double *row = &HH(k + 3, k);
                    q = row[0] + u1 * row[1] + u2 * row[2];
                    z = row[0] -= q * t1;
                    row[1] -= q * t2;
                    row[2] -= q * t3;
                }
                for (int i = l; i <= k; i++) {
                    double *row = &HH(i, k);
                    q = row[0] + u1 * row[1] + u2 * row[2];
                    row[0] -= q * t1;
                    row[1] -= q * t2;
                    row[2] -= q * t3;
                }
            } else {
                for (int j = k; j <= hi; j++) { /* last step: 2x2 reflector on rows hi-1, hi */
                    const double q = r0[j] + u1 * r1[j];
                    r0[j] -= q * t1;
                    r1[j] -= q * t2;
                }
                for (int i = l; i <= iend; i++) {
                    double *row = &HH(i, k);
                    const double q = row[0] + u1 * row[1];
                    row[0] -= q * t1;
                    row[1] -= q * t2;
                }
            }
        }
    }
#undef HH
    /* overflow inside the sweeps (entries near 1e300) would surface here: let the caller fall back */
    for (int i = 0; i < n; i++)
        if (!isfinite(wr[i]) || !isfinite(wi[i])) return CS_EIG_NOCONV;
    return CS_OK;
}

int cs_eigvals_small(int n, const double *A, double *wr, double *wi, double *work, int maxit, cs_err *err) {
    if (n <= 0) return CS_OK;
    double *H = work, *u = work + (size_t)n * n, *w = u + n;
    for (size_t i = 0; i < (size_t)n * n; i++) {
        if (!isfinite(A[i])) return cs_fail(err, CS_ERR_LINALG, "eigenvalues of a matrix with non-finite entries");
        H[i] = A[i];
    }
    if (maxit <= 0) maxit = 30 * (n > 10 ? n : 10);
    const int m = isolate(n, H, wr, wi);
    if (m == 1) { wr[0] = H[0]; wi[0] = 0.0; }
    if (m <= 1) return CS_OK;
    cs_balance(m, H, u, w); /* Parlett-Reinsch: QR's backward error ~eps ||H|| then respects the units */
    /* The sizes of the stability maps' reduced problems get their own copies of the reduction and the QR with n
     * known at compile time (constant strides and bounds): about 7 % fewer instructions at n = 5. */
    switch (m) {
    case 3: hessenberg(3, H, u, w); return francis(3, H, wr, wi, maxit);
    case 4: hessenberg(4, H, u, w); return francis(4, H, wr, wi, maxit);
    case 5: hessenberg(5, H, u, w); return francis(5, H, wr, wi, maxit);
    case 6: hessenberg(6, H, u, w); return francis(6, H, wr, wi, maxit);
    case 7: hessenberg(7, H, u, w); return francis(7, H, wr, wi, maxit);
    case 8: hessenberg(8, H, u, w); return francis(8, H, wr, wi, maxit);
    default: hessenberg(m, H, u, w); return francis(m, H, wr, wi, maxit);
    }
}
