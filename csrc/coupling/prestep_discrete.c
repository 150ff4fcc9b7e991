/* Discrete version of the pre-step coupling (discrete IJs, given or identified; HOLD inputs; prestep.c states the
 * steps). */
#include "coupling/prestep_core.h"

#include <string.h>

#include "linalg/dense.h"
#include "sysid/jsvd.h"

/* The same pseudo-inverse in the per-step path of the discrete version (identified IJs change every step): the small
 * one-sided Jacobi SVD instead of LAPACK dgesvd, whose set-up dominates for these few-row matrices. */
static int unit_pinv_step(prestep *p, int i, const double *A, cs_err *err) {
    const int ni = p->yo[i + 1] - p->yo[i], mi = p->uo[i + 1] - p->uo[i];
    return cs_jsvd_pinv(ni, mi, A, p->Ap + p->pb[i], p->spec.rtol, &p->rank[i], p->work, err);
}

/* Steps 1-3 of the discrete version with the current global Sy, Su (= Su^-), Sd (= Su^+). Returns an error only
 * for a singular I - Su^+ L; *ok = 0 when the pseudo-inverses could not be formed (the step falls back). */
static int mbc_discrete(prestep *p, const double *uk, int modified, double *c0, int *ok, cs_err *err) {
    const int n = p->n, m = p->m;
    ps_state *s = &p->st;
    double *Mc = p->Mc, *A = p->M, *B = p->w1, *ek = p->v1, *tmp = p->v2;
    cs_ps_global_mats(p, Mc, A);
    /* right-hand sides: column 0 the EDE, column 1 the extrapolation */
    cs_network_apply(p->net, s->y, 1, ek);
    for (int a = 0; a < m; a++) ek[a] -= uk[a];
    const double *ep = s->eps_prev, *ekc = ek;
    if (p->spec.intermediate_correction) {
        /* (2.58-2.60): mean of eps(t) over [T^{k-1}, T^k] from int y dt (accept) and the input of that step */
        double *ly = p->w2, *epc = p->w2 + m, *ekk = p->w2 + 2 * m;
        const double Hp = s->scal[1];
        cs_network_apply(p->net, s->yint, 0, ly);
        for (int a = 0; a < m; a++) {
            const double mean = ly[a] / Hp + p->net->r[a] - (s->uc0[a] + 0.5 * s->uc1[a]);
            s->ecor[a] = mean - 0.5 * (s->eps_prev[a] + ek[a]);
            epc[a] = s->eps_prev[a] + s->ecor[a];
            ekk[a] = ek[a] + s->ecor[a];
        }
        ep = epc;
        ekc = ekk;
    }
    double *yt = p->yt, *yh = p->yh;
    for (int a = 0; a < n; a++) {
        double e = 0.0, x = 0.0;
        if (p->spec.use_ede) {
            for (int b = 0; b < n; b++) e += A[(size_t)a * n + b] * s->delta[b];
            for (int b = 0; b < m; b++)
                e += p->Su[(size_t)a * m + b] * ep[b] + p->Sd[(size_t)a * m + b] * ekc[b];
        }
        B[(size_t)a * 2] = e;
        (void)x;
    }
    if (p->spec.use_ede) {
        /* solve for delta first: the extrapolation starts from ytilde = y + delta */
        for (int a = 0; a < n; a++) tmp[a] = B[(size_t)a * 2];
        int rc = cs_solve(n, 1, Mc, tmp, p->work, p->ipiv, err);
        if (rc) { cs_err_prefix(err, "pre-step: I - Su^+ L is singular (algebraic loop): "); return rc; }
        memcpy(s->delta, tmp, sizeof(double) * n);
    } else {
        memset(s->delta, 0, sizeof(double) * n);
    }
    memcpy(s->eps_prev, ek, sizeof(double) * m);
    for (int a = 0; a < n; a++) yt[a] = s->y[a] + s->delta[a];
    for (int a = 0; a < n; a++) {
        double v = 0.0;
        for (int b = 0; b < n; b++) v += A[(size_t)a * n + b] * yt[b];
        for (int b = 0; b < m; b++) v += (p->Su[(size_t)a * m + b] + p->Sd[(size_t)a * m + b]) * p->net->r[b];
        yh[a] = v;
    }
    int rc = cs_solve(n, 1, Mc, yh, p->work, p->ipiv, err);
    if (rc) { cs_err_prefix(err, "pre-step: I - Su^+ L is singular (algebraic loop): "); return rc; }
    double *uh = p->v3;
    cs_network_apply(p->net, yh, 1, uh);
    *ok = cs_all_finite((size_t)n, yh);
    if (modified || !*ok) {
        memcpy(c0, uh, sizeof(double) * m);
        return CS_OK;
    }
    double *rhs = p->tmp, *x = rhs + n, *scr = x + m, *Ai = scr + n;
    for (int i = 0; i < p->nsub; i++) {
        const int y0 = p->yo[i], ni = p->yo[i + 1] - y0, a0 = p->uo[i], mi = p->uo[i + 1] - a0;
        for (int a = 0; a < ni; a++) {
            double v = yh[y0 + a];
            for (int b = 0; b < ni; b++) v -= p->Sy[(size_t)(y0 + a) * n + y0 + b] * s->y[y0 + b];
            for (int b = 0; b < mi; b++) {
                v -= p->Su[(size_t)(y0 + a) * m + a0 + b] * uk[a0 + b];
                Ai[(size_t)a * mi + b] = p->Sd[(size_t)(y0 + a) * m + a0 + b];
            }
            rhs[a] = v;
        }
        if (p->spec.ij_source != CS_PRESTEP_IJ_GIVEN || !p->given_pinv_ready) {
            cs_err e2 = {0};
            if (unit_pinv_step(p, i, Ai, &e2)) { *ok = 0; memcpy(c0, uh, sizeof(double) * m); return CS_OK; }
        }
        cs_ps_solve_step3(p, i, Ai, rhs, uh + a0, x, scr);
        memcpy(c0 + a0, x, sizeof(double) * mi);
    }
    if (p->spec.ij_source == CS_PRESTEP_IJ_GIVEN) p->given_pinv_ready = 1;
    *ok = cs_all_finite((size_t)m, c0);
    if (!*ok) memcpy(c0, uh, sizeof(double) * m);
    return CS_OK;
}

int cs_ps_discrete_predict(prestep *p, const double *uk, long k, int ij_ok, int phase, double *c0, double *c1, int *ok,
                           cs_err *err) {
    memset(c1, 0, sizeof(double) * p->m);
    if (ij_ok && k >= 1) CS_TRY(mbc_discrete(p, uk, phase == CS_PHASE_MOD, c0, ok, err));
    else if (!ij_ok) memset(p->st.delta, 0, sizeof(double) * p->n);
    if (k == 0) *ok = 0;        /* no u^k, y^{k-1} yet: the first step is signal-based */
    return CS_OK;
}
