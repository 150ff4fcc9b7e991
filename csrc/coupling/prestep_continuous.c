/* Continuous version of the pre-step coupling (exact continuous IJs, RAMP inputs; prestep.c states the steps). */
#include "coupling/prestep_core.h"

#include <math.h>
#include <string.h>

#include "linalg/dense.h"
#include "linalg/expm.h"
#include "linalg/pinv.h"

static void matvec_acc(int r, int c, const double *A, const double *x, double *y) { cs_matvec(r, c, A, x, y, 1); }

size_t cs_prestep_phi_work_size(int ni, int mi) {
    size_t a = (size_t)ni * 2 * mi, g = 2 * (size_t)ni * 2 * mi, e = 4 * (size_t)ni * ni;
    size_t w1 = cs_poly_propagator_work_size(ni, 2 * mi, 1), w2 = cs_expm_work_size(ni);
    return a + (g > e ? g : e) + (w1 > w2 ? w1 : w2) + 1;
}

/* phi matrices (2.44-2.47) over H: exact (phi functions) or trapezoidal rule with `steps` intervals. */
int cs_prestep_phi(int ni, int mi, const double *Sy, const double *Su, const double *Sd, double H, int steps,
                   double *phA, double *phB, double *phCD, double *work, int *ipiv, cs_err *err) {
    double *B = work, *Gam = B + (size_t)ni * 2 * mi;
    size_t g = 2 * (size_t)ni * 2 * mi, e = 4 * (size_t)ni * ni;
    double *w = Gam + (g > e ? g : e);
    for (int a = 0; a < ni; a++)
        for (int b = 0; b < mi; b++) {
            B[(size_t)a * 2 * mi + b] = Su[(size_t)a * mi + b];
            B[(size_t)a * 2 * mi + mi + b] = Sd[(size_t)a * mi + b];
        }
    if (steps <= 0) {
        CS_TRY(cs_poly_propagator(ni, 2 * mi, 1, Sy, B, H, phA, Gam, w, ipiv, err));
        const double *G0 = Gam, *G1 = Gam + (size_t)ni * 2 * mi;
        for (int a = 0; a < ni; a++)
            for (int b = 0; b < mi; b++) {
                phB[(size_t)a * mi + b] = G0[(size_t)a * 2 * mi + b];
                /* phiC = int e^{Sy(H - tau)} tau dtau Su = H Gam1[Su];  phiD = int e^{Sy(H - tau)} dtau Sd = Gam0[Sd] */
                phCD[(size_t)a * mi + b] = H * G1[(size_t)a * 2 * mi + b] + G0[(size_t)a * 2 * mi + mi + b];
            }
        return CS_OK;
    }
    /* trapezoidal rule on tau_j = j h, h = H/q: e^{Sy (H - tau_j)} = E^{q - j}, E = e^{Sy h}; phiA = E^q */
    const int q = steps;
    double h = H / q, *E = Gam, *P = E + (size_t)ni * ni, *T2 = P + (size_t)ni * ni, *X = T2 + (size_t)ni * ni;
    for (int a = 0; a < ni * ni; a++) X[a] = Sy[a] * h;
    CS_TRY(cs_expm(ni, X, E, w, ipiv, err));
    cs_eye(ni, P);
    memset(phB, 0, sizeof(double) * (size_t)ni * mi);
    memset(phCD, 0, sizeof(double) * (size_t)ni * mi);
    for (int j = q; j >= 0; j--) {
        double wt = (j == 0 || j == q) ? 0.5 * h : h, tau = j * h;
        for (int a = 0; a < ni; a++)
            for (int b = 0; b < mi; b++) {
                double su = 0.0, sd = 0.0;
                for (int c = 0; c < ni; c++) {
                    su += P[(size_t)a * ni + c] * B[(size_t)c * 2 * mi + b];
                    sd += P[(size_t)a * ni + c] * B[(size_t)c * 2 * mi + mi + b];
                }
                phB[(size_t)a * mi + b] += wt * su;
                phCD[(size_t)a * mi + b] += wt * (tau * su + sd);
            }
        if (j > 0) {
            cs_matmul(ni, ni, ni, 1.0, P, E, 0.0, T2);
            memcpy(P, T2, sizeof(double) * (size_t)ni * ni);
        }
    }
    memcpy(phA, P, sizeof(double) * (size_t)ni * ni);
    return CS_OK;
}

/* phi matrices of unit i over H into phA, phB, phCD. */
static int unit_phi(prestep *p, int i, double H, cs_err *err) {
    const int n = p->n, m = p->m, y0 = p->yo[i], ni = p->yo[i + 1] - y0, u0 = p->uo[i], mi = p->uo[i + 1] - u0;
    double *Syi = p->tmp, *Sui = Syi + (size_t)ni * ni, *Sdi = Sui + (size_t)ni * mi;
    for (int a = 0; a < ni; a++) {
        for (int b = 0; b < ni; b++) Syi[(size_t)a * ni + b] = p->Sy[(size_t)(y0 + a) * n + y0 + b];
        for (int b = 0; b < mi; b++) {
            Sui[(size_t)a * mi + b] = p->Su[(size_t)(y0 + a) * m + u0 + b];
            Sdi[(size_t)a * mi + b] = p->Sd[(size_t)(y0 + a) * m + u0 + b];
        }
    }
    return cs_prestep_phi(ni, mi, Syi, Sui, Sdi, H, p->spec.dsm_steps, p->phA + p->pa[i], p->phB + p->pb[i],
                          p->phCD + p->pb[i], p->work, p->ipiv, err);
}

/* Pseudo-inverse of unit i's Step-3 matrix A_i (phCD for the continuous version, Su^+_i for the discrete one). */
static int unit_pinv(prestep *p, int i, const double *A, cs_err *err) {
    const int ni = p->yo[i + 1] - p->yo[i], mi = p->uo[i + 1] - p->uo[i];
    return cs_pinv(ni, mi, A, p->Ap + p->pb[i], p->spec.rtol, &p->rank[i], p->work, err);
}

int cs_ps_prepare_continuous(prestep *p, double H, cs_err *err) {
    const int n = p->n, m = p->m;
    cs_ps_global_mats(p, p->Mc, p->M);
    /* M = Mc^-1 A,  [cvec, N] = Mc^-1 [Su r, Su, Sd] */
    double *R = p->w1;                 /* n x (n + 1 + 2m) */
    const int nr = n + 1 + 2 * m;
    double *ru = p->v1;
    for (int a = 0; a < n; a++) {
        double s = 0.0;
        for (int b = 0; b < m; b++) s += p->Su[(size_t)a * m + b] * p->net->r[b];
        ru[a] = s;
    }
    for (int a = 0; a < n; a++) {
        double *row = R + (size_t)a * nr;
        memcpy(row, p->M + (size_t)a * n, sizeof(double) * n);
        row[n] = ru[a];
        memcpy(row + n + 1, p->Su + (size_t)a * m, sizeof(double) * m);
        memcpy(row + n + 1 + m, p->Sd + (size_t)a * m, sizeof(double) * m);
    }
    int rc = cs_solve(n, nr, p->Mc, R, p->work, p->ipiv, err);
    if (rc) { cs_err_prefix(err, "pre-step: I - dS/du' L is singular (algebraic loop): "); return rc; }
    for (int a = 0; a < n; a++) {
        const double *row = R + (size_t)a * nr;
        memcpy(p->M + (size_t)a * n, row, sizeof(double) * n);
        p->cvec[a] = row[n];
        memcpy(p->N + (size_t)a * 2 * m, row + n + 1, sizeof(double) * 2 * m);
    }
    CS_TRY(cs_poly_propagator(n, 2 * m, 1, p->M, p->N, H, p->Phi1, p->Gam1, p->work, p->ipiv, err));
    CS_TRY(cs_poly_propagator(n, 1, 0, p->M, p->cvec, H, p->Phi2, p->Gam2, p->work, p->ipiv, err));
    for (int i = 0; i < p->nsub; i++) {
        CS_TRY(unit_phi(p, i, H, err));
        CS_TRY(unit_pinv(p, i, p->phCD + p->pb[i], err));
    }
    p->Hc = H;
    return CS_OK;
}

/* Step 1 (continuous): delta over the last step [T^{k-1}, T^k] of length Hp. */
static void ede_continuous(prestep *p, double Hp) {
    const int n = p->n, m = p->m;
    ps_state *s = &p->st;
    double *ea = p->v1, *eb = p->v2, *wa = p->w2, *wb = wa + 2 * m, *d = p->v3;
    cs_network_apply(p->net, s->yprev, 1, ea);
    cs_network_apply(p->net, s->y, 1, eb);
    for (int a = 0; a < m; a++) {
        ea[a] -= s->uc0[a];
        eb[a] -= s->uc0[a] + s->uc1[a];
        double ed = (eb[a] - ea[a]) / Hp;
        wa[a] = ea[a]; wa[m + a] = ed;
        wb[a] = eb[a]; wb[m + a] = ed;
    }
    if (p->spec.ede_exact) {
        /* delta(T^k) = Phi delta + Gam0 w_a + Gam1 (w_b - w_a) */
        cs_matvec(n, n, p->Phi1, s->delta, d, 0);
        matvec_acc(n, 2 * m, p->Gam1, wa, d);
        for (int a = 0; a < 2 * m; a++) wb[a] -= wa[a];
        matvec_acc(n, 2 * m, p->Gam1 + (size_t)n * 2 * m, wb, d);
        memcpy(s->delta, d, sizeof(double) * n);
        return;
    }
    const int q = p->spec.ede_steps > 0 ? p->spec.ede_steps : 1;
    const double h = Hp / q;
    double *w = p->tmp;
    for (int j = 0; j < q; j++) {
        double f = (double)j / q;
        for (int a = 0; a < 2 * m; a++) w[a] = wa[a] + f * (wb[a] - wa[a]);
        cs_matvec(n, n, p->M, s->delta, d, 0);
        matvec_acc(n, 2 * m, p->N, w, d);
        for (int a = 0; a < n; a++) s->delta[a] += h * d[a];
    }
}

/* Step 2 (continuous): yhat(T^k + H) from ytilde. */
static void extrapolate_continuous(prestep *p, const double *yt, double *yh, double H) {
    const int n = p->n;
    if (p->spec.extrap_exact) {
        cs_matvec(n, n, p->Phi2, yt, yh, 0);
        for (int a = 0; a < n; a++) yh[a] += p->Gam2[a];
        return;
    }
    const int q = p->spec.extrap_steps > 0 ? p->spec.extrap_steps : 1;
    const double h = H / q;
    double *d = p->v3;
    memcpy(yh, yt, sizeof(double) * n);
    for (int j = 0; j < q; j++) {
        cs_matvec(n, n, p->M, yh, d, 0);
        for (int a = 0; a < n; a++) yh[a] += h * (d[a] + p->cvec[a]);
    }
}

/* The pre-step input of the continuous version: coefficients c0, c1 (global, m) in s = (t - T)/H. */
static void mbc_continuous(prestep *p, const double *yh, const double *yt, double H, int modified, double *c0,
                           double *c1) {
    const int m = p->m;
    ps_state *s = &p->st;
    double *u0 = p->v1, *uh = p->v2, *rhs = p->tmp, *tgt = p->tmp + p->n, *x = tgt + m, *scr = x + m;
    cs_network_apply(p->net, s->y, 1, u0);
    cs_network_apply(p->net, yh, 1, uh);
    if (modified) {
        /* u = L yhat + r: hold L yhat(T^{k+1}) + r, or ramp from L ytilde + r (spec 4.4 [AMB]) */
        double *ut = p->v3;
        cs_network_apply(p->net, yt, 1, ut);
        for (int a = 0; a < m; a++) {
            if (p->spec.hold) { c0[a] = uh[a]; c1[a] = 0.0; }
            else { c0[a] = ut[a]; c1[a] = uh[a] - ut[a]; }
        }
        return;
    }
    for (int i = 0; i < p->nsub; i++) {
        const int y0 = p->yo[i], ni = p->yo[i + 1] - y0, a0 = p->uo[i], mi = p->uo[i + 1] - a0;
        const double *phA = p->phA + p->pa[i], *phB = p->phB + p->pb[i];
        for (int a = 0; a < ni; a++) {
            double v = yh[y0 + a];
            for (int b = 0; b < ni; b++) v -= phA[(size_t)a * ni + b] * s->y[y0 + b];
            for (int b = 0; b < mi; b++) v -= phB[(size_t)a * mi + b] * u0[a0 + b];
            rhs[a] = v;
        }
        for (int b = 0; b < mi; b++) tgt[b] = (uh[a0 + b] - u0[a0 + b]) / H;
        cs_ps_solve_step3(p, i, p->phCD + p->pb[i], rhs, tgt, x, scr);
        for (int b = 0; b < mi; b++) {
            if (p->spec.hold) { c0[a0 + b] = u0[a0 + b] + 0.5 * x[b] * H; c1[a0 + b] = 0.0; } /* energy-equivalent */
            else { c0[a0 + b] = u0[a0 + b]; c1[a0 + b] = x[b] * H; }
        }
    }
}

int cs_ps_continuous_predict(prestep *p, double H, double Hnom, double Hp, long k, int phase, double *c0, double *c1,
                             int *ok, cs_err *err) {
    ps_state *s = &p->st;
    const int n = p->n, m = p->m;
    /* matrices for the nominal step (H itself varies in its last bits on a uniform grid); a shortened or irregular
     * step recomputes them */
    const double Hm = Hnom > 0.0 ? Hnom : H;
    if (fabs(Hm - p->Hc) > 1e-12 * Hm) CS_TRY(cs_ps_prepare_continuous(p, Hm, err));
    if (p->spec.use_ede && k >= 1) ede_continuous(p, Hp);
    else if (!p->spec.use_ede) memset(s->delta, 0, sizeof(double) * n);
    for (int a = 0; a < n; a++) p->yt[a] = s->y[a] + s->delta[a];
    extrapolate_continuous(p, p->yt, p->yh, H);
    if (phase == CS_PHASE_MBC || phase == CS_PHASE_MOD)
        mbc_continuous(p, p->yh, p->yt, H, phase == CS_PHASE_MOD, c0, c1);
    *ok = cs_all_finite((size_t)m, c0) && cs_all_finite((size_t)m, c1);
    return CS_OK;
}
