/* Pure functions of Kraft's controller (control/kraft.h). */
#include "control/kraft.h"

#include <math.h>

int cs_kraft_error_constants(int kappa, const double *a, double *cpos, double *cvel, cs_err *err) {
    if (kappa < 0 || kappa > CS_KRAFT_KMAX)
        return cs_fail(err, CS_ERR_ARG, "kappa: must be in 0..%d, got %d", CS_KRAFT_KMAX, kappa);
    if (kappa == 0) { *cpos = 0.5; *cvel = 1.0; return CS_OK; }
    /* e_k(b_2..b_κ), b_i = 1/a_i, by the usual recurrence over the factors (1 + b_i x) */
    double e[CS_KRAFT_KMAX + 1] = {1.0};
    int n = 0;
    for (int i = 0; i < kappa - 1; i++) {
        if (!(a[i] != 0.0) || !isfinite(a[i]))
            return cs_fail(err, CS_ERR_ARG, "a: step ratios must be finite and nonzero, got a_%d = %g", i + 2, a[i]);
        double b = 1.0 / a[i];
        n++;
        for (int k = n; k >= 1; k--) e[k] += b * e[k - 1];
    }
    double sp = 0.0, sv = 0.0;
    for (int k = 0; k <= kappa - 1; k++) {
        double sg = (k % 2) ? -e[k] : e[k];
        sp += sg / ((k + 2.0) * (k + 3.0));
        sv += sg / ((k + 1.0) * (k + 2.0));
    }
    *cpos = sp;
    *cvel = sv;
    return CS_OK;
}

double cs_kraft_divided_difference(int n, const double *T, const double *u) {
    double d[CS_KRAFT_KMAX + 4];
    if (n < 1) return 0.0;
    if (n > CS_KRAFT_KMAX + 4) n = CS_KRAFT_KMAX + 4;
    for (int i = 0; i < n; i++) d[i] = u[i];
    for (int level = 1; level < n; level++)
        for (int i = n - 1; i >= level; i--) d[i] = (d[i] - d[i - 1]) / (T[i] - T[i - level]);
    return d[n - 1];
}

double cs_kraft_newton_difference(int kappa, const double *T, const double *u, double t) {
    double p = cs_kraft_divided_difference(kappa + 2, T, u);
    for (int j = 0; j <= kappa; j++) p *= t - T[j];
    return p;
}

double cs_kraft_wrms(int n, const double *eps, const double *w) {
    if (n <= 0) return 0.0;
    double s = 0.0;
    for (int i = 0; i < n; i++) { double q = eps[i] * w[i]; s += q * q; }
    return sqrt(s / n);
}

int cs_kraft_select_order(int kappa, const double *sdn, int nsdn, int n_succ, int n_fail, int k_max, int strategy) {
    if (kappa > k_max) kappa = k_max;
    if (kappa < 0) kappa = 0;
    int kn = kappa;
    const int have_dec = nsdn > kappa + 1;     /* SDN(1..κ+1) known */
    const int have_inc = nsdn > kappa + 2;     /* SDN(κ+2) known */
    if (strategy == CS_ORDER_CONSERVATIVE) {
        /* Listing 3.1: keep the largest κ_new for which SDN(κ_new+1) < SDN(κ_new) < ... < SDN(1) */
        if (have_dec) {
            while (kn > 0) {
                int ok = 1;
                for (int j = kn + 1; j >= 2; j--)
                    if (!(sdn[j] < sdn[j - 1])) { ok = 0; break; }
                if (ok) break;
                kn--;
            }
        }
        if (kappa < k_max && n_succ > kappa && kn == kappa && have_inc && sdn[kn + 2] < sdn[kn + 1]) kn++;
        return kn;
    }
    /* Listing 3.2 (IDA-inspired) */
    if (have_dec) {
        if (kn == 1 && sdn[1] <= sdn[2] / 2.0) kn = 0;
        else if (kn > 1 && fmax(sdn[kn], sdn[kn - 1]) <= sdn[kn + 1]) kn = kn - 1;
    }
    if (n_fail > 3 && kn > 1) kn = 1;
    if (n_fail > 5) kn = 0;
    if (kappa < k_max && n_succ > kappa && kn == kappa && have_inc) {
        if (kn == 0 && sdn[2] < sdn[1] / 2.0) kn = 1;
        else if (kn > 0) {
            if (sdn[kn] <= fmin(sdn[kn + 1], sdn[kn + 2])) kn = kn - 1;
            else if (sdn[kn + 2] < sdn[kn + 1]) kn = kn + 1;
        }
    }
    return kn;
}

double cs_kraft_limit_step_ratio(double r, int n_fail, double r_min, double r_max, int dead_zone, int corrector_failed) {
    if (isnan(r)) r = 0.0;
    if (n_fail == 0 && !corrector_failed) {
        if (!dead_zone) r = fmin(r_max, fmax(r_min, r));
        else if (r >= r_max) r = r_max;
        else if (r < 1.0) r = fmin(0.9, fmax(r_min, r));
        else r = 1.0; /* dead zone 1 <= r < r_max */
    }
    if (n_fail == 1) r = fmin(0.9, fmax(0.25, 0.9 * r));
    if (n_fail > 1 || corrector_failed) r = 0.25;
    return r;
}

double cs_kraft_land_micro_step(double h, double remaining) {
    if (remaining < 1.1 * h) return remaining;
    if (remaining < 2.0 * h) return remaining / 2.0;
    return h;
}

double cs_kraft_nrmse(long nt, int nz, const double *Z, const double *Zref) {
    double total = 0.0;
    for (int j = 0; j < nz; j++) {
        double mean = 0.0, num = 0.0, den = 0.0;
        for (long i = 0; i < nt; i++) mean += Zref[i * nz + j];
        mean /= (double)(nt > 0 ? nt : 1);
        for (long i = 0; i < nt; i++) {
            double d = Zref[i * nz + j] - Z[i * nz + j], v = Zref[i * nz + j] - mean;
            num += d * d;
            den += v * v;
        }
        double q = num == 0.0 ? 0.0 : num / den;
        total += q;
    }
    return sqrt(total);
}
