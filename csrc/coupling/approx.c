#include "coupling/approx.h"

#include "linalg/lapack.h"

#include <math.h>
#include <string.h>

int cs_approx_check(const cs_approx_spec *spec, cs_err *err) {
    if (spec->kind < CS_APPROX_LAGRANGE || spec->kind > CS_APPROX_ACC_REL)
        return cs_fail(err, CS_ERR_ARG, "approximation: unknown kind %d", spec->kind);
    int kmax = spec->kind == CS_APPROX_EXTRIPOL_C0 || spec->kind == CS_APPROX_EXTRIPOL_C1 ? CS_MAXHIST - 2 : CS_MAXDEG;
    if (cs_approx_is_acc(spec->kind)) kmax = CS_MAXDEG - 2;
    if (kmax > CS_MAXDEG) kmax = CS_MAXDEG;
    if (spec->k < 0 || spec->k > kmax)
        return cs_fail(err, CS_ERR_ARG, "approximation: degree k must be in 0..%d, got %d", kmax, spec->k);
    if (spec->kind == CS_APPROX_LSQ && (spec->nsp < spec->k + 1 || spec->nsp > CS_MAXHIST))
        return cs_fail(err, CS_ERR_ARG, "approximation: least-squares points must be in %d..%d for degree %d, got %d",
                       spec->k + 1, CS_MAXHIST, spec->k, spec->nsp);
    if (spec->kind == CS_APPROX_ACC_REL) {
        if (spec->k2 < 0 || spec->k2 > CS_MAXHIST - 1 || spec->k2 > CS_MAXDEG)
            return cs_fail(err, CS_ERR_ARG, "approximation: degree k_lambda must be in 0..%d, got %d", CS_MAXHIST - 1,
                           spec->k2);
        if (!(spec->omega >= 0.0 && spec->omega <= 1.0))
            return cs_fail(err, CS_ERR_ARG, "approximation: relaxation omega must be in [0, 1], got %g", spec->omega);
    }
    return CS_OK;
}

int cs_approx_points_needed(const cs_approx_spec *spec) {
    switch (spec->kind) {
    case CS_APPROX_EXTRIPOL_C0:
    case CS_APPROX_EXTRIPOL_C1: return spec->k + 2;
    case CS_APPROX_HERMITE: return (spec->k + 2) / 2;
    case CS_APPROX_LSQ: return spec->nsp;
    case CS_APPROX_ACC_REL: return (spec->k > spec->k2 ? spec->k : spec->k2) + 1;
    default: return spec->k + 1;
    }
}

/* Newton-form interpolation on (possibly doubled, i.e. Hermite) nodes z[0..n-1] in the s variable, converted to
 * monomial coefficients. The data are given as the weight rows of the unit vectors: instead of values we carry,
 * for every divided difference, its weight vector over the CS_APPROX_NV data entries, so the result is the weight
 * matrix directly. idx[i] is the data slot of node i; a repeated node (z[i] == z[i-1], consecutive) takes its
 * first divided difference from the derivative slot idx[i] + CS_MAXHIST scaled by H (d/ds = H d/dt). A node with
 * idx[i] < 0 takes its value from the weight row `row` instead (the least-squares prediction). */
static void newton_weights_row(int n, const double *z, const int *idx, const double *row, double H,
                               double *W /* (n) x NV, zeroed */) {
    double dd[CS_MAXDEG + 1][CS_APPROX_NV]; /* current column of the divided-difference table, as weights */
    double coef[CS_MAXDEG + 1][CS_APPROX_NV];
    double q[CS_MAXDEG + 2];              /* monomial coefficients of prod_{j<i} (s - z_j) */
    memset(dd, 0, sizeof dd);
    for (int i = 0; i < n; i++) {
        if (idx[i] >= 0) dd[i][idx[i]] = 1.0;
        else memcpy(dd[i], row, sizeof dd[i]);
    }
    memcpy(coef[0], dd[0], sizeof dd[0]);
    for (int level = 1; level < n; level++) {
        for (int i = n - 1; i >= level; i--) {
            double den = z[i] - z[i - level];
            if (level == 1 && den == 0.0) {
                memset(dd[i], 0, sizeof dd[i]);
                dd[i][idx[i] + CS_MAXHIST] = H;
            } else {
                for (int j = 0; j < CS_APPROX_NV; j++) dd[i][j] = (dd[i][j] - dd[i - 1][j]) / den;
            }
        }
        memcpy(coef[level], dd[level], sizeof dd[level]);
    }
    /* p(s) = sum_i coef_i prod_{j<i} (s - z_j). */
    memset(q, 0, sizeof q);
    q[0] = 1.0;
    for (int i = 0; i < n; i++) {
        for (int m = 0; m <= i; m++)
            for (int j = 0; j < CS_APPROX_NV; j++) W[m * CS_APPROX_NV + j] += q[m] * coef[i][j];
        /* q <- q * (s - z_i) */
        for (int m = i + 1; m >= 1; m--) q[m] = q[m - 1] - z[i] * q[m];
        q[0] = -z[i] * q[0];
    }
}

static void newton_weights(int n, const double *z, const int *idx, double H, double *W) {
    newton_weights_row(n, z, idx, NULL, H, W);
}

/* Weight row of the least-squares prediction: the degree-k polynomial fitted to the samples at sv[0..n-1] in the
 * ordinary least-squares sense (kraft2021 §2.4.1; unweighted, in the centred and scaled variable for conditioning,
 * spec [UNSPECIFIED]), evaluated at s = 1. The row is e(1)^T V^+ with V the Vandermonde matrix of the samples,
 * computed by LAPACK's dgels with the identity as right-hand side. */
static int lsq_prediction_row(int n, int k, const double *sv, double *row, cs_err *err) {
    enum { LWORK = 64 * (CS_MAXHIST + CS_MAXDEG + 2) };
    double V[CS_MAXHIST * (CS_MAXDEG + 1)], B[CS_MAXHIST * CS_MAXHIST], work[LWORK];
    double mid = 0.5 * (sv[0] + sv[n - 1]), half = 0.5 * (sv[0] - sv[n - 1]);
    if (!(half > 0.0)) half = 1.0;
    for (int i = 0; i < n; i++) {
        double z = (sv[i] - mid) / half, p = 1.0;
        for (int m = 0; m <= k; m++) { V[m * n + i] = p; p *= z; }
        for (int j = 0; j < n; j++) B[j * n + i] = i == j ? 1.0 : 0.0;
    }
    int m_ = n, n_ = k + 1, nrhs = n, lda = n, ldb = n, lwork = LWORK, info = 0;
    dgels_("N", &m_, &n_, &nrhs, V, &lda, B, &ldb, work, &lwork, &info);
    if (info != 0) return cs_fail(err, CS_ERR_LINALG, "approximation: least-squares fit failed (dgels info %d)", info);
    /* B's first k+1 rows hold V^+ (column j: the coefficients fitted to unit sample j). */
    double z1 = (1.0 - mid) / half;
    memset(row, 0, sizeof(double) * CS_APPROX_NV);
    for (int j = 0; j < n; j++) {
        double p = 1.0, v = 0.0;
        for (int m = 0; m <= k; m++) { v += p * B[j * n + m]; p *= z1; }
        row[j] = v;
    }
    return CS_OK;
}

/* Weights of the degree-k Lagrange polynomial through samples first..first+k (s-values sv), evaluated as value and
 * s-derivative at s = s0: returned as two weight rows. */
static void lagrange_point(int k, const double *sv, int first, double s0, double *val, double *der) {
    double W[(CS_MAXDEG + 1) * CS_APPROX_NV];
    int idx[CS_MAXDEG + 1] = {0};
    double z[CS_MAXDEG + 1] = {0};
    for (int i = 0; i <= k; i++) { z[i] = sv[first + i]; idx[i] = first + i; }
    memset(W, 0, sizeof W);
    newton_weights(k + 1, z, idx, 1.0, W);
    memset(val, 0, sizeof(double) * CS_APPROX_NV);
    memset(der, 0, sizeof(double) * CS_APPROX_NV);
    double p = 1.0;
    for (int m = 0; m <= k; m++) {
        for (int j = 0; j < CS_APPROX_NV; j++) {
            val[j] += p * W[m * CS_APPROX_NV + j];
            if (m + 1 <= k) der[j] += (m + 1) * p * W[(m + 1) * CS_APPROX_NV + j];
        }
        p *= s0;
    }
}

/* ACC on the s-values sv of navail samples: the degree-κ_a Lagrange polynomial P of the derivative samples (slots
 * CS_MAXHIST + j) integrated once, c_{m+1} = H a_m / (m + 1) (d/ds = H d/dt). Extrapolation: from the value at T_N,
 * c_0 = y_N. Interpolation (Gauss-Seidel: sample 0 is the source's T_{N+1}, so P passes through its derivative
 * there): back from the source's exchanged value at T_{N+1}, p(s) = y_{N+1} - H ∫_s^1 P, c_0 = y_{N+1} - Σ c_{m+1}. */
static void acc_weights(int k, int navail, const double *sv, double H, int interpolate, cs_approx_weights *w) {
    double L[(CS_MAXDEG + 1) * CS_APPROX_NV];
    int idx[CS_MAXDEG + 1] = {0};
    if (k > navail - 1) k = navail - 1;
    if (k < 0) k = 0;
    for (int i = 0; i <= k; i++) idx[i] = i;
    memset(L, 0, sizeof L);
    newton_weights(k + 1, sv, idx, H, L);          /* on the value slots 0..k: moved to the derivative slots */
    memset(w, 0, sizeof *w);
    w->W[0] = 1.0;
    for (int m = 0; m <= k; m++)
        for (int j = 0; j <= k; j++) {
            const double a = H * L[m * CS_APPROX_NV + j] / (m + 1);
            w->W[(m + 1) * CS_APPROX_NV + CS_MAXHIST + j] = a;
            if (interpolate) w->W[CS_MAXHIST + j] -= a;
        }
    w->deg = k + 1;
    w->npts = k + 1;
    w->uses_deriv = 1;
}

/* ACC_REL: ũ = (1 - ω) p_acc(1) + ω P_κλ(1) as a weight row, P_κλ the classic extrapolant through T_N, ...,
 * T_{N-κλ}, then the degree-κ_λ polynomial through the κ_λ newest samples up to T_N and (1, ũ). Interpolating
 * (Gauss-Seidel), p_acc ends at the source's exchanged value (acc_weights), so p_acc(1) is that sample (slot 0). */
static void acc_rel_weights(const cs_approx_spec *spec, int interpolate, int navail, const double *sv, double H,
                            cs_approx_weights *w) {
    cs_approx_weights acc;
    double row[CS_APPROX_NV], ext[CS_APPROX_NV], der[CS_APPROX_NV], z[CS_MAXDEG + 1];
    int idx[CS_MAXDEG + 1];
    const int base = interpolate ? 1 : 0;
    int k2 = spec->k2 < navail - 1 - base ? spec->k2 : navail - 1 - base;
    acc_weights(spec->k, navail, sv, H, 0, &acc);
    lagrange_point(k2, sv, base, 1.0, ext, der);
    for (int j = 0; j < CS_APPROX_NV; j++) {
        double end = interpolate ? (j == 0 ? 1.0 : 0.0) : 0.0;
        for (int m = 0; m <= acc.deg && !interpolate; m++) end += acc.W[m * CS_APPROX_NV + j];
        row[j] = (1.0 - spec->omega) * end + spec->omega * ext[j];
    }
    z[0] = 1.0;
    idx[0] = -1;
    for (int i = 1; i <= k2; i++) { z[i] = sv[i - 1 + base]; idx[i] = i - 1 + base; }
    memset(w, 0, sizeof *w);
    newton_weights_row(k2 + 1, z, idx, row, H, w->W);
    w->deg = k2;
    w->npts = interpolate ? k2 + 2 : (acc.npts > k2 + 1 ? acc.npts : k2 + 1);
    w->uses_deriv = !interpolate;
}

int cs_approx_acc_parts(const cs_approx_spec *spec, int navail, const double *T, double TN, double H, int deg,
                        cs_approx_weights *wacc, double *ell, cs_err *err) {
    if (spec->kind != CS_APPROX_ACC_REL) return cs_fail(err, CS_ERR_ARG, "approximation: not ACC_REL");
    if (navail < 1 || !(H > 0.0) || deg < 0 || deg > navail - 1 || deg > CS_MAXDEG)
        return cs_fail(err, CS_ERR_ARG, "approximation: bad ACC_REL parts request");
    if (navail > CS_MAXHIST) navail = CS_MAXHIST;
    double sv[CS_MAXHIST];
    for (int i = 0; i < navail; i++) sv[i] = (T[i] - TN) / H;
    acc_weights(spec->k, navail, sv, H, 0, wacc);
    for (int m = 0; m <= CS_MAXDEG; m++) ell[m] = 0.0;
    cs_lagrange_end_basis(deg, sv, ell);
    return CS_OK;
}

int cs_approx_acc_positions(const cs_approx_spec *spec, int interpolate, const int *integral_of, int j0, int j1,
                            const double *hv, double *c, int dv, double H, const cs_approx_weights *wacc,
                            const double *ell) {
    enum { NC = CS_MAXDEG + 1, NV = CS_APPROX_NV };
    for (int j = j0; j < j1; j++) {
        const int p = integral_of[j];
        if (p < 0) continue;
        double *cx = c + (size_t)j * NC;
        if (spec->kind == CS_APPROX_ACC) {
            const double *cv = c + (size_t)p * NC;
            double rest = 0.0;
            for (int m = 0; m <= dv; m++) { cx[m + 1] = H * cv[m] / (m + 1); rest += cx[m + 1]; }
            cx[0] = interpolate ? hv[(size_t)j * NV] - rest : hv[(size_t)j * NV];  /* ends at / starts from x */
            continue;
        }
        if (interpolate) continue;   /* accRel: both ACC end values are the exchanged x_{N+1}: no shift */
        double cv[NC], cown[NC];
        cs_approx_coefs(wacc, hv + (size_t)p * NV, cv);
        cs_approx_coefs(wacc, hv + (size_t)j * NV, cown);
        double integrated = hv[(size_t)j * NV], own = 0.0;
        for (int m = 0; m <= wacc->deg; m++) { integrated += H * cv[m] / (m + 1); own += cown[m]; }
        const double shift = (1.0 - spec->omega) * (integrated - own);
        for (int m = 0; m <= dv; m++) cx[m] += shift * ell[m];
    }
    return spec->kind == CS_APPROX_ACC ? dv + 1 : dv;
}

int cs_approx_weights_compute(const cs_approx_spec *spec, int interpolate, int navail, const double *T, double TN,
                              double H, cs_approx_weights *w, cs_err *err) {
    CS_TRY(cs_approx_check(spec, err));
    if (navail < 1) return cs_fail(err, CS_ERR_ARG, "approximation: no history samples");
    if (!(H > 0.0)) return cs_fail(err, CS_ERR_ARG, "approximation: step size H must be positive");
    if (navail > CS_MAXHIST) navail = CS_MAXHIST;
    double sv[CS_MAXHIST];
    for (int i = 0; i < navail; i++) sv[i] = (T[i] - TN) / H;
    memset(w, 0, sizeof *w);
    int k = spec->k, kind = spec->kind;
    if (interpolate && (kind == CS_APPROX_EXTRIPOL_C0 || kind == CS_APPROX_EXTRIPOL_C1)) kind = CS_APPROX_LAGRANGE;

    if (interpolate && kind == CS_APPROX_LSQ) kind = CS_APPROX_LAGRANGE;
    if (interpolate && cs_approx_is_acc(kind) && navail < 2)
        return cs_fail(err, CS_ERR_ARG, "approximation: interpolated acc/accRel need the sample at T_N");
    if (kind == CS_APPROX_ACC) { acc_weights(k, navail, sv, H, interpolate, w); return CS_OK; }
    if (kind == CS_APPROX_ACC_REL) { acc_rel_weights(spec, interpolate, navail, sv, H, w); return CS_OK; }

    if (kind == CS_APPROX_LSQ) {
        /* Interpolate the k newest samples and the predicted point at s = 1 (kraft2021 eq. 2.24). */
        int n = spec->nsp < navail ? spec->nsp : navail;
        if (k > n - 1) k = n - 1;
        double row[CS_APPROX_NV], z[CS_MAXDEG + 1];
        int idx[CS_MAXDEG + 1];
        CS_TRY(lsq_prediction_row(n, k, sv, row, err));
        z[0] = 1.0;
        idx[0] = -1;
        for (int i = 1; i <= k; i++) { z[i] = sv[i - 1]; idx[i] = i - 1; }
        newton_weights_row(k + 1, z, idx, row, H, w->W);
        w->deg = k;
        w->npts = n;
        return CS_OK;
    }
    if (kind == CS_APPROX_LAGRANGE) {
        if (k > navail - 1) k = navail - 1;
        int idx[CS_MAXDEG + 1];
        for (int i = 0; i <= k; i++) idx[i] = i;
        newton_weights(k + 1, sv, idx, H, w->W);
        w->deg = k;
        w->npts = k + 1;
        return CS_OK;
    }
    if (kind == CS_APPROX_HERMITE) {
        /* Nodes: newest sample with value and derivative, then older ones; degree k uses k+1 conditions. */
        int maxk = 2 * navail - 1;
        if (k > maxk) k = maxk;
        double z[CS_MAXDEG + 1];
        int idx[CS_MAXDEG + 1];
        for (int i = 0; i <= k; i++) { z[i] = sv[i / 2]; idx[i] = i / 2; }
        newton_weights(k + 1, z, idx, H, w->W);
        w->deg = k;
        w->npts = (k + 2) / 2;
        w->uses_deriv = k >= 1;
        return CS_OK;
    }
    /* EXTRIPOL: current window samples 0..kc, previous window samples 1..kp+1 (busch2016 eq. 12). Phi_N and Phi'_N
     * come from the polynomial the previous window actually used, so the input stays C0 (C1) across T_N also during
     * start-up, when both windows have a reduced degree: kc = min(k, navail-1), kp = min(k, navail-2); at N = 0 the
     * previous "window" is the constant y(T_0). */
    int kc = k < navail - 1 ? k : navail - 1;
    int kp = k < navail - 2 ? k : navail - 2;
    double vN[CS_APPROX_NV], dN[CS_APPROX_NV], v1[CS_APPROX_NV], d1[CS_APPROX_NV];
    lagrange_point(kc, sv, 0, 1.0, v1, d1); /* Phi_{N+1}, Phi'_{N+1} (s-derivatives) */
    if (kp >= 0) {
        lagrange_point(kp, sv, 1, 0.0, vN, dN); /* Phi_N, Phi'_N from the previous window */
        w->npts = kp + 2 > kc + 1 ? kp + 2 : kc + 1;
    } else {
        memset(vN, 0, sizeof vN);
        memset(dN, 0, sizeof dN);
        vN[0] = 1.0;
        w->npts = 1;
    }
    double *c = w->W;
    const int NV = CS_APPROX_NV;
    if (kind == CS_APPROX_EXTRIPOL_C0) {
        /* p(s) = Phi_N (1 - s) + Phi_{N+1} s */
        for (int j = 0; j < NV; j++) { c[j] = vN[j]; c[NV + j] = v1[j] - vN[j]; }
        w->deg = 1;
    } else {
        /* cubic Hermite on [0,1]: h00 = 1 - 3s^2 + 2s^3, h10 = s - 2s^2 + s^3, h01 = 3s^2 - 2s^3, h11 = s^3 - s^2 */
        for (int j = 0; j < NV; j++) {
            c[j] = vN[j];
            c[NV + j] = dN[j];
            c[2 * NV + j] = -3.0 * vN[j] - 2.0 * dN[j] + 3.0 * v1[j] - d1[j];
            c[3 * NV + j] = 2.0 * vN[j] + dN[j] - 2.0 * v1[j] + d1[j];
        }
        w->deg = 3;
    }
    return CS_OK;
}

int cs_approx_uniform_weights(const cs_approx_spec *spec, int interpolate, int navail, double H, cs_approx_weights *w,
                              cs_err *err) {
    double T[CS_MAXHIST];
    if (navail > CS_MAXHIST) navail = CS_MAXHIST;
    for (int q = 0; q < CS_MAXHIST; q++) T[q] = ((interpolate ? 1.0 : 0.0) - (double)q) * H;
    return cs_approx_weights_compute(spec, interpolate, navail, T, 0.0, H, w, err);
}

/* b(s) = prod_{p != q} (s - s_p) / (s_q - s_p), multiplied out factor by factor. */
static void basis_poly(int nn, const double *s, int q, double *b) {
    memset(b, 0, sizeof(double) * nn);
    b[0] = 1.0;
    int deg = 0;
    for (int p = 0; p < nn; p++) {
        if (p == q) continue;
        double den = s[q] - s[p];
        for (int m = deg + 1; m >= 1; m--) b[m] = (b[m - 1] - s[p] * b[m]) / den;
        b[0] = -s[p] * b[0] / den;
        deg++;
    }
}

void cs_lagrange_basis(int nn, const double *s, double *B) {
    for (int q = 0; q < nn; q++) basis_poly(nn, s, q, B + (size_t)q * nn);
}

void cs_lagrange_end_basis(int deg, const double *z, double *ell) {
    double s[CS_MAXDEG + 2];
    s[0] = 1.0;
    for (int i = 0; i < deg; i++) s[i + 1] = z[i];
    basis_poly(deg + 1, s, 0, ell);
}
