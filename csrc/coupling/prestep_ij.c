/* The identified-Jacobian sources of the pre-step coupling (spec sections 6-7) as one ops table each: the given IJs
 * (exact, nothing to identify), MIMO RLS (with a Gilbert realization for n_a or n_b > 1) and a recursive MOESP
 * window per unit. */
#include "coupling/prestep_core.h"

#include <math.h>
#include <string.h>

#include "linalg/dense.h"
#include "sysid/ij.h"
#include "sysid/qa.h"

/* Places one unit's identified discrete IJs (Sy_i, Su_i^-, Su_i^+) into the global block-diagonal surrogate and
 * returns its one-step prediction ybar_i = Sy_i y_i^{k-1} + Su_i^- u_i^{k-1} + Su_i^+ u_i^k (for eps_SI, §7), shared
 * by the RLS and the MOESP identification. */
static const double *place_block(prestep *p, const ps_state *s, int y0, int a0, int ni, int mi, const double *Syi,
                                 const double *Smi, const double *Spi, const double *uk) {
    const int n = p->n, m = p->m;
    double *yb = p->v3;
    for (int a = 0; a < ni; a++) {
        double v = 0.0;
        for (int b = 0; b < ni; b++) {
            p->Sy[(size_t)(y0 + a) * n + y0 + b] = Syi[(size_t)a * ni + b];
            v += Syi[(size_t)a * ni + b] * s->yprev[y0 + b];
        }
        for (int b = 0; b < mi; b++) {
            p->Su[(size_t)(y0 + a) * m + a0 + b] = Smi[(size_t)a * mi + b];
            p->Sd[(size_t)(y0 + a) * m + a0 + b] = Spi[(size_t)a * mi + b];
            v += Spi[(size_t)a * mi + b] * uk[a0 + b] + Smi[(size_t)a * mi + b] * s->uend_prev[a0 + b];
        }
        yb[a] = v;
    }
    return yb;
}

/* RLS update with (u^k, y^k) and the IJs Sy = diag(a), Su^- = 0, Su^+ = B (spec 6.4) into the global matrices;
 * eps_SI,global from the a-posteriori one-step predictions (2.92, 2.93). Returns 0 when the identification is
 * usable, 1 when it failed (non-finite parameters or a failed covariance update). */
static int rls_identify(prestep *p, const double *uk, long k, double *eps_glob) {
    ps_state *s = &p->st;
    const int n = p->n, m = p->m;
    int failed = 0;
    double e2 = 0.0;
    memset(p->Sy, 0, sizeof(double) * (size_t)n * n);
    memset(p->Su, 0, sizeof(double) * (size_t)n * m);
    memset(p->Sd, 0, sizeof(double) * (size_t)n * m);
    for (int i = 0; i < p->nsub; i++) {
        const int y0 = p->yo[i], ni = p->yo[i + 1] - y0, a0 = p->uo[i], mi = p->uo[i + 1] - a0;
        cs_err e2rr = {0};
        if (cs_rls_update(p->rls[i], uk + a0, s->y + y0, NULL, &e2rr)) failed = 1;
        const int na = p->spec.rls_na, nb = p->spec.rls_nb;
        cs_rls_get_params(p->rls[i], p->rls_a, p->rls_b);
        if (!cs_all_finite((size_t)ni * na, p->rls_a) || !cs_all_finite((size_t)ni * mi * nb, p->rls_b)) failed = 1;
        if (failed) break;
        if (p->gil) {
            /* n_a or n_b > 1: Gilbert realization -> thesis-form IJs Sy = C PhiA C^+, Su^- = 0, Su^+ = C PhiB (D = 0,
             * spec 6.4); eps_SI from the IJ prediction Sy y^{k-1} + Su^+ u^k */
            cs_gilbert_result g;
            cs_err ge = {0};
            double *Syi = p->gij, *Smi = Syi + (size_t)ni * ni, *Spi = Smi + (size_t)ni * mi;
            if (cs_gilbert_realize(p->gil[i], p->rls_a, p->rls_b, 1e-10, 1e-6, &g, &ge)) { failed = 1; break; }
            if (g.nx == 0) {
                memset(Syi, 0, sizeof(double) * ((size_t)ni * ni + 2 * (size_t)ni * mi));
            } else if (cs_ij_discrete(CS_IJ_THESIS, g.nx, mi, ni, g.A, g.B, g.C, g.D, g.C, g.D, p->spec.rtol, Syi, Smi,
                                      Spi, p->ijw, &ge)) {
                failed = 1;
                break;
            }
            if (!cs_all_finite((size_t)ni * ni + 2 * (size_t)ni * mi, Syi)) { failed = 1; break; }
            const double *yb = place_block(p, s, y0, a0, ni, mi, Syi, Smi, Spi, uk);
            double e = cs_eps_si_update(ni, s->y + y0, yb, s->ymin + y0, s->ymax + y0, 1e-12);
            e2 += e * e;
            continue;
        }
        double ybar[64], *yb = ni <= 64 ? ybar : p->v3;
        for (int a = 0; a < ni; a++) {
            p->Sy[(size_t)(y0 + a) * n + y0 + a] = p->rls_a[a];
            double v = p->rls_a[a] * s->yprev[y0 + a];
            for (int b = 0; b < mi; b++) {
                p->Sd[(size_t)(y0 + a) * m + a0 + b] = p->rls_b[(size_t)a * mi + b];
                v += p->rls_b[(size_t)a * mi + b] * uk[a0 + b];
            }
            yb[a] = v;
        }
        double e = cs_eps_si_update(ni, s->y + y0, yb, s->ymin + y0, s->ymax + y0, 1e-12);
        e2 += e * e;
    }
    *eps_glob = failed ? NAN : sqrt(e2);
    return failed;
}

/* Reset the identifiers after a failure: covariance to P0 I, non-finite parameters to 0. */
static void rls_recover(prestep *p) {
    for (int i = 0; i < p->nsub; i++) {
        const int ni = p->yo[i + 1] - p->yo[i], mi = p->uo[i + 1] - p->uo[i];
        const size_t sa = (size_t)ni * p->spec.rls_na, sb = (size_t)ni * mi * p->spec.rls_nb;
        cs_rls_get_params(p->rls[i], p->rls_a, p->rls_b);
        if (!cs_all_finite(sa, p->rls_a) || !cs_all_finite(sb, p->rls_b)) {
            memset(p->rls_a, 0, sizeof(double) * sa);
            memset(p->rls_b, 0, sizeof(double) * sb);
            cs_rls_set_params(p->rls[i], p->rls_a, p->rls_b);
        }
        cs_rls_reset(p->rls[i], p->spec.rls_P0);
    }
}

/* the first sample fills the identifiers' history (y^0; u^0 = L y^0 + r is never regressed on) */
static void rls_initial_sample(prestep *p, const double *u0) {
    double e;
    (void)rls_identify(p, u0, 0, &e);
}

static void rls_log_params(const prestep *p, double *par) {
    for (int i = 0; i < p->nsub; i++) {
        const int ni = p->yo[i + 1] - p->yo[i], mi = p->uo[i + 1] - p->uo[i];
        cs_rls_get_params(p->rls[i], par, par + (size_t)ni * p->spec.rls_na);
        par += (size_t)ni * p->spec.rls_na + (size_t)ni * mi * p->spec.rls_nb;
    }
}

/* MOESP-window identification (spec 6.1, 2.2 [EXT]): push (u^k, y^k) once per step k >= 1, fit every window
 * (recursive factor: O(P^3) per fit, no allocation), IJs by the standard-form conversion into the global matrices,
 * eps_SI,global from the a-posteriori one-step predictions Sy y^{k-1} + Su^- u^{k-1} + Su^+ u^k. Returns 0 when the
 * IJs are usable, 1 when a fit failed or gave non-finite IJs, 2 while a window holds too few samples for a fit
 * (the IJs are then zero). */
static int identify_moesp(prestep *p, const double *uk, long k, double *eps_glob) {
    ps_state *s = &p->st;
    const int n = p->n, m = p->m;
    if (k >= 1 && k > p->moesp_k) {
        for (int i = 0; i < p->nsub; i++) cs_moesp_push(p->moesp[i], uk + p->uo[i], s->y + p->yo[i]);
        p->moesp_k = k;
    }
    memset(p->Sy, 0, sizeof(double) * (size_t)n * n);
    memset(p->Su, 0, sizeof(double) * (size_t)n * m);
    memset(p->Sd, 0, sizeof(double) * (size_t)n * m);
    memset(p->mpar, 0, sizeof(double) * (size_t)p->nparams);
    double e2 = 0.0, *par = p->mpar;
    int status = 0;
    for (int i = 0; i < p->nsub; i++) {
        const int y0 = p->yo[i], ni = p->yo[i + 1] - y0, a0 = p->uo[i], mi = p->uo[i + 1] - a0;
        double *Syi = par + 1, *Smi = Syi + (size_t)ni * ni, *Spi = Smi + (size_t)ni * mi;
        par = Spi + (size_t)ni * mi;
        cs_moesp *w = p->moesp[i];
        if (cs_moesp_count(w) < cs_moesp_min_samples(w)) { status = status ? status : 2; continue; }
        cs_moesp_result res;
        cs_err e = {0};
        if (cs_moesp_fit_window(w, p->mcfg[i], p->spec.moesp_threshold, &res, &e)) return 1;
        Syi[-1] = res.n;
        if (res.n == 0) {
            memcpy(Spi, res.D, sizeof(double) * (size_t)ni * mi);
        } else if (cs_ij_discrete(CS_IJ_STANDARD, res.n, mi, ni, res.A, res.B, res.C, res.D, NULL, NULL,
                                  p->spec.rtol, Syi, Smi, Spi, p->ijw, &e)) {
            return 1;
        }
        if (!cs_all_finite((size_t)ni * ni, Syi) || !cs_all_finite(2 * (size_t)ni * mi, Smi)) return 1;
        const double *yb = place_block(p, s, y0, a0, ni, mi, Syi, Smi, Spi, uk);
        double ei = cs_eps_si_update(ni, s->y + y0, yb, s->ymin + y0, s->ymax + y0, 1e-12);
        e2 += ei * ei;
    }
    *eps_glob = status ? NAN : sqrt(e2);
    return status;
}

static void moesp_log_params(const prestep *p, double *par) {
    memcpy(par, p->mpar, sizeof(double) * (size_t)p->nparams);
}

static const cs_ps_ij_ops GIVEN = {0};
static const cs_ps_ij_ops RLS = {.identify = rls_identify, .recover = rls_recover,
                                 .initial_sample = rls_initial_sample, .log_params = rls_log_params};
static const cs_ps_ij_ops MOESP = {.identify = identify_moesp, .log_params = moesp_log_params};

const cs_ps_ij_ops *cs_ps_ij_source(int ij_source) {
    switch (ij_source) {
    case CS_PRESTEP_IJ_GIVEN: return &GIVEN;
    case CS_PRESTEP_IJ_RLS: return &RLS;
    case CS_PRESTEP_IJ_MOESP: return &MOESP;
    default: return NULL;
    }
}
