/* Model-based pre-step stabilization (Genser 2020) as a coupling: see coupling/prestep.h.
 *
 * Notation (spec genser2020.md section 5.1): n = ny (all outputs), m = nu (all inputs), u = L y + r,
 * Sy = blkdiag(Sy_i), Su = blkdiag(Su_i) (continuous dS/du, discrete Su^-), Sd = blkdiag(Sd_i) (continuous dS/du',
 * discrete Su^+). Global matrices: Mc = I - Sd L, Ã = Â = Sy + Su L.
 *
 * Continuous version (exact IJs), every matrix below depends only on H and is computed once per step size:
 *   Step 1  delta' = M delta + N [eps; eps'],  M = Mc^-1 (Sy + Su L),  N = Mc^-1 [Su, Sd]   (2.34)
 *           over the last step with eps linear between its macro-point values (the macro-point fallback of
 *           spec 3.1: y linearly interpolated, u the known ramp), solved exactly (phi functions) or by Euler.
 *   Step 2  yhat' = M yhat + Mc^-1 Su r  from yhat(T^k) = y^k + delta  (2.37, with the offset r of u = L y + r)
 *   Step 3  y_i(T^{k+1}) = phiA y_i^k + phiB u0 + (phiC + phiD) s  (2.48) = yhat_i  ->  s  (2.50, section 5.3)
 *           with u0 = L_i y^k + r_i (the input jumps to the coupled output) and the target slope
 *           s* = (L_i yhat + r_i - u0)/H of the minimum-extrapolation-error solution.
 * Discrete version (HOLD inputs), per step:
 *   Step 1  Mc delta^k = (Sy + Su^- L) delta^{k-1} + Su^- eps^{k-1} + Su^+ eps^k,  eps^k = L y^k + r - u^k   (2.57)
 *   Step 2  Mc yhat^{k+1} = (Sy + Su^- L) ytilde^k + (Su^- + Su^+) r                                         (2.63)
 *   Step 3  Su^+_i u = yhat_i - Sy_i y_i^k - Su^-_i u_i^k  ->  u = u* + (Su^+_i)^+ (rhs - Su^+_i u*),
 *           u* = L_i yhat + r_i                                                                  (2.64-2.71)
 * Intermediate-value correction (2.58-2.60, spec 4.1 with its [FIX]; discrete version, option
 * intermediate_correction): with eps(t) = L y(t) + r - u(t) over the last step [T^{k-1}, T^k] of length H_p,
 *           eps_cor = (1/H_p) int eps dt - (eps^{k-1} + eps^k)/2,   eps^{k-1} += eps_cor,  eps^k += eps_cor
 *           in Step 1 only (the stored eps^k stays the raw macro-point value, so every step corrects its own pair).
 *           int y dt: the trapezoidal rule on each unit's micro-step trace (the trapezoidal rule on the macro points
 *           for a unit without a trace); int u dt: exact for the input the units received (HOLD or RAMP). */
#include "coupling/prestep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/dense.h"
#include "linalg/expm.h"
#include "linalg/pinv.h"
#include "sysid/qa.h"
#include "sysid/gilbert.h"
#include "sysid/ij.h"
#include "sysid/moesp.h"
#include "sysid/jsvd.h"
#include "sysid/rls.h"

#define NC (CS_MAXDEG + 1)

/* mutable per-step state, one block (snapshots copy it whole) */
typedef struct ps_state {
    double *y, *yprev;        /* y^k, y^{k-1} (n) */
    double *uc0, *uc1;        /* input of the last accepted step: u(t) = uc0 + uc1 (t - T)/H (m) */
    double *uend_prev;        /* u^{k-1}: end value of the step before (m) */
    double *nc0, *nc1;        /* input built in this step's predict (m) */
    double *delta;            /* delta^k (n) */
    double *eps_prev;         /* eps^{k-1} (m, discrete EDE) */
    double *ymin, *ymax;      /* running ranges for eps_SI (n) */
    double *scal;             /* k, Hprev, nlog */
    double *yint, *ecor, *icnt; /* intermediate correction only: int y dt over the last step (n), eps_cor (m),
                                 * counts (traced steps, macro-point fallback steps) */
    size_t size;
} ps_state;

typedef struct prestep {
    const cs_network *net;
    cs_prestep_spec spec;
    int n, m, nsub;
    int *yo, *uo;             /* offsets (copies of net->yoff, uoff) */
    double *L;                /* m x n */
    double *Sy, *Su, *Sd;     /* global block-diagonal IJs (n x n, n x m, n x m) */
    double *G;                /* given IJs copied (for the block-diagonal assembly): per unit blocks */
    /* continuous matrices for step size Hc */
    double Hc;
    double *Mc, *M, *cvec, *N; /* n x n, n x n, n, n x 2m */
    double *Phi1, *Gam1;       /* EDE propagator: n x n, 2 blocks n x 2m */
    double *Phi2, *Gam2;       /* extrapolation: n x n, n */
    double *phA, *phB, *phCD, *Ap; /* per unit, offsets pa/pb */
    int *pa, *pb;              /* offsets of unit i's ni x ni and ni x mi blocks */
    int *rank;                 /* per unit rank of the Step-3 matrix */
    int given_pinv_ready;      /* discrete given IJs: pinv computed once */
    /* RLS */
    cs_rls **rls;
    double *rls_a, *rls_b;     /* scratch: params of one unit */
    double **rls_snap;         /* per unit state vectors for the snapshot in flight */
    int nparams;
    /* MOESP windows (one per unit), their IJs per unit [n, Sy, Su^-, Su^+] (nparams), conversion workspace, and
     * the last step index k whose sample (u^k, y^k) was pushed (outside the snapshot: a sample depends only on
     * accepted data, so a restored step is not pushed twice) */
    cs_gilbert **gil;          /* RLS with n_a or n_b > 1: one Gilbert realization per unit */
    double *gij;               /* per unit IJ scratch: Sy, Su^-, Su^+ (maxn^2 + 2 maxn maxm) */
    cs_moesp **moesp;
    int *mcfg;                 /* per unit: order */
    double *mpar, *ijw;
    long moesp_k;
    /* workspace */
    double *work, *tmp, *w1, *w2, *sb, *yt, *yh, *v1, *v2, *v3;
    size_t nwork;
    int *ipiv;
    ps_state st;
    double *stbuf;
    /* log */
    long logcap;
    unsigned char *lphase;
    double *leps, *lpar, *ldel, *lu;
    int *lrank;
    /* inputs */
    cs_input *in;
    double *incoef;
    double T, H;
    cs_unit **units;          /* for the traces of the intermediate-value correction (may be NULL) */
    double *lecor;            /* log of eps_cor (logcap x m), intermediate correction only */
} prestep;

typedef struct ps_snapshot {
    double *st;
    double *rls;   /* concatenated RLS states */
    size_t nst, nrls;
} ps_snapshot;

/* ---------------------------------------------------------------------------------------------- helpers */

static void matvec_acc(int r, int c, const double *A, const double *x, double *y) { cs_matvec(r, c, A, x, y, 1); }

/* Global block-diagonal matrices from per-unit blocks stored one unit after another. */
static void assemble(prestep *p, const double *Sy_b, const double *Su_b, const double *Sd_b) {
    const int n = p->n, m = p->m;
    memset(p->Sy, 0, sizeof(double) * (size_t)n * n);
    memset(p->Su, 0, sizeof(double) * (size_t)n * m);
    memset(p->Sd, 0, sizeof(double) * (size_t)n * m);
    size_t oy = 0, ou = 0;
    for (int i = 0; i < p->nsub; i++) {
        const int y0 = p->yo[i], ni = p->yo[i + 1] - y0, u0 = p->uo[i], mi = p->uo[i + 1] - u0;
        for (int a = 0; a < ni; a++) {
            for (int b = 0; b < ni; b++) p->Sy[(size_t)(y0 + a) * n + y0 + b] = Sy_b[oy + (size_t)a * ni + b];
            for (int b = 0; b < mi; b++) {
                p->Su[(size_t)(y0 + a) * m + u0 + b] = Su_b[ou + (size_t)a * mi + b];
                p->Sd[(size_t)(y0 + a) * m + u0 + b] = Sd_b[ou + (size_t)a * mi + b];
            }
        }
        oy += (size_t)ni * ni;
        ou += (size_t)ni * mi;
    }
}

/* Mc = I - Sd L and A = Sy + Su L (n x n each). */
static void global_mats(prestep *p, double *Mc, double *A) {
    const int n = p->n, m = p->m;
    cs_eye(n, Mc);
    cs_matmul(n, n, m, -1.0, p->Sd, p->L, 1.0, Mc);
    memcpy(A, p->Sy, sizeof(double) * (size_t)n * n);
    cs_matmul(n, n, m, 1.0, p->Su, p->L, 1.0, A);
}

/* ---------------------------------------------------------------------------------------------- continuous */

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

/* The same pseudo-inverse in the per-step path of the discrete version (identified IJs change every step): the small
 * one-sided Jacobi SVD instead of LAPACK dgesvd, whose set-up dominates for these few-row matrices. */
static int unit_pinv_step(prestep *p, int i, const double *A, cs_err *err) {
    const int ni = p->yo[i + 1] - p->yo[i], mi = p->uo[i + 1] - p->uo[i];
    return cs_jsvd_pinv(ni, mi, A, p->Ap + p->pb[i], p->spec.rtol, &p->rank[i], p->work, err);
}

static int prepare_continuous(prestep *p, double H, cs_err *err) {
    const int n = p->n, m = p->m;
    global_mats(p, p->Mc, p->M);
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

/* Step 3 for unit i: s = s* + A^+ (rhs - A s*). x: unknown (mi), rhs (ni), target (mi). */
static void solve_step3(const prestep *p, int i, const double *A, const double *rhs, const double *target, double *x,
                        double *scratch) {
    const int ni = p->yo[i + 1] - p->yo[i], mi = p->uo[i + 1] - p->uo[i];
    const double *Ap = p->Ap + p->pb[i];
    for (int a = 0; a < ni; a++) {
        double v = rhs[a];
        for (int b = 0; b < mi; b++) v -= A[(size_t)a * mi + b] * target[b];
        scratch[a] = v;
    }
    for (int b = 0; b < mi; b++) {
        double v = target[b];
        for (int a = 0; a < ni; a++) v += Ap[(size_t)b * ni + a] * scratch[a];
        x[b] = v;
    }
}

size_t cs_prestep_step3_work_size(int ni, int mi) { return cs_pinv_work_size(ni, mi) + (size_t)ni * mi + ni + 1; }

int cs_prestep_step3(int ni, int mi, const double *A, const double *rhs, const double *target, double rtol, double *x,
                     int *rank, double *work, cs_err *err) {
    double *Ap = work, *scr = Ap + (size_t)ni * mi, *w = scr + ni;
    CS_TRY(cs_pinv(ni, mi, A, Ap, rtol, rank, w, err));
    for (int a = 0; a < ni; a++) {
        double v = rhs[a];
        for (int b = 0; b < mi; b++) v -= A[(size_t)a * mi + b] * target[b];
        scr[a] = v;
    }
    for (int b = 0; b < mi; b++) {
        double v = target[b];
        for (int a = 0; a < ni; a++) v += Ap[(size_t)b * ni + a] * scr[a];
        x[b] = v;
    }
    return CS_OK;
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
        solve_step3(p, i, p->phCD + p->pb[i], rhs, tgt, x, scr);
        for (int b = 0; b < mi; b++) {
            if (p->spec.hold) { c0[a0 + b] = u0[a0 + b] + 0.5 * x[b] * H; c1[a0 + b] = 0.0; } /* energy-equivalent */
            else { c0[a0 + b] = u0[a0 + b]; c1[a0 + b] = x[b] * H; }
        }
    }
}

/* ---------------------------------------------------------------------------------------------- discrete */

/* RLS update with (u^k, y^k) and the IJs Sy = diag(a), Su^- = 0, Su^+ = B (spec 6.4) into the global matrices;
 * eps_SI,global from the a-posteriori one-step predictions (2.92, 2.93). Returns 0 when the identification is
 * usable, 1 when it failed (non-finite parameters or a failed covariance update). */
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

static int identify(prestep *p, const double *uk, double *eps_glob) {
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

/* Steps 1-3 of the discrete version with the current global Sy, Su (= Su^-), Sd (= Su^+). Returns an error only
 * for a singular I - Su^+ L; *ok = 0 when the pseudo-inverses could not be formed (the step falls back). */
static int mbc_discrete(prestep *p, const double *uk, int modified, double *c0, int *ok, cs_err *err) {
    const int n = p->n, m = p->m;
    ps_state *s = &p->st;
    double *Mc = p->Mc, *A = p->M, *B = p->w1, *ek = p->v1, *tmp = p->v2;
    global_mats(p, Mc, A);
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
        solve_step3(p, i, Ai, rhs, uh + a0, x, scr);
        memcpy(c0 + a0, x, sizeof(double) * mi);
    }
    if (p->spec.ij_source == CS_PRESTEP_IJ_GIVEN) p->given_pinv_ready = 1;
    *ok = cs_all_finite((size_t)m, c0);
    if (!*ok) memcpy(c0, uh, sizeof(double) * m);
    return CS_OK;
}

/* ---------------------------------------------------------------------------------------------- coupling ops */

static void log_step(prestep *p, int phase, double eps) {
    ps_state *s = &p->st;
    long k = (long)s->scal[2];
    if (k >= p->logcap) return;
    p->lphase[k] = (unsigned char)phase;
    p->leps[k] = eps;
    if (p->nparams && p->moesp) {
        memcpy(p->lpar + (size_t)k * p->nparams, p->mpar, sizeof(double) * (size_t)p->nparams);
    } else if (p->nparams) {
        double *par = p->lpar + (size_t)k * p->nparams;
        for (int i = 0; i < p->nsub; i++) {
            const int ni = p->yo[i + 1] - p->yo[i], mi = p->uo[i + 1] - p->uo[i];
            cs_rls_get_params(p->rls[i], par, par + (size_t)ni * p->spec.rls_na);
            par += (size_t)ni * p->spec.rls_na + (size_t)ni * mi * p->spec.rls_nb;
        }
    }
    memcpy(p->ldel + (size_t)k * p->n, s->delta, sizeof(double) * p->n);
    for (int a = 0; a < p->m; a++) p->lu[(size_t)k * p->m + a] = s->nc0[a] + s->nc1[a];
    memcpy(p->lrank + (size_t)k * p->nsub, p->rank, sizeof(int) * p->nsub);
    if (p->lecor) memcpy(p->lecor + (size_t)k * p->m, s->ecor, sizeof(double) * p->m);
    s->scal[2] = (double)(k + 1);
}

static void set_inputs(prestep *p, double T, double H) {
    ps_state *s = &p->st;
    for (int i = 0; i < p->nsub; i++) {
        cs_input *in = &p->in[i];
        const int a0 = p->uo[i], mi = in->nu;
        int deg = 0;
        for (int b = 0; b < mi; b++) {
            in->c[b] = s->nc0[a0 + b];
            in->c[mi + b] = s->nc1[a0 + b];
            if (s->nc1[a0 + b] != 0.0) deg = 1;
        }
        in->deg = deg;
        in->T = T;
        in->H = H;
    }
}

static int ps_predict(cs_coupling *c, double T, double H, double Hnom, cs_err *err) {
    prestep *p = c->content;
    ps_state *s = &p->st;
    const int n = p->n, m = p->m;
    const long k = (long)s->scal[0];
    const double Hp = s->scal[1] > 0.0 ? s->scal[1] : H;
    p->T = T; p->H = H;
    if (p->spec.intermediate_correction) memset(s->ecor, 0, sizeof(double) * m);
    /* signal-based candidate (ZOH, or FOH as a ramp through the last two macro points) */
    double *sb0 = p->sb, *sb1 = p->sb + m;
    cs_network_apply(p->net, s->y, 1, sb0);
    if (p->spec.sbc_foh && k >= 1) {
        cs_network_apply(p->net, s->yprev, 0, sb1);
        double *ly = p->v3;
        cs_network_apply(p->net, s->y, 0, ly);
        for (int a = 0; a < m; a++) sb1[a] = (ly[a] - sb1[a]) * (H / Hp);
    } else {
        memset(sb1, 0, sizeof(double) * m);
    }
    const double *uk = p->v1 + 0;   /* u^k: the end value of the last step's input (discrete) */
    double *ukbuf = p->yt + n;      /* m doubles after yt (allocated n + m) */
    for (int a = 0; a < m; a++) ukbuf[a] = s->uc0[a] + s->uc1[a];
    uk = ukbuf;
    int phase = CS_PHASE_MBC, ij_ok = 1;
    double eps = 0.0;
    const int identified = p->spec.ij_source != CS_PRESTEP_IJ_GIVEN;
    const int learning = T < p->spec.time_learning - 1e-12 * H;
    if (p->spec.ij_source == CS_PRESTEP_IJ_RLS) {
        if (identify(p, uk, &eps)) { ij_ok = 0; rls_recover(p); }
    } else if (identified) {
        /* a window still filling during the learning phase is no failure: its IJs are not used there */
        int st = identify_moesp(p, uk, k, &eps);
        if (st == 1 || (st == 2 && !learning)) ij_ok = 0;
    }
    double *c0 = s->nc0, *c1 = s->nc1;
    int ok = 1;
    if (!ij_ok) phase = CS_PHASE_FALLBACK;
    else if (learning) phase = CS_PHASE_LEARNING;
    else if (identified && eps >= p->spec.th_sbc) phase = CS_PHASE_SBC;
    else if (p->spec.modified || (identified && eps >= p->spec.th_mod)) phase = CS_PHASE_MOD;
    if (p->spec.variant == CS_PRESTEP_CONTINUOUS) {
        /* matrices for the nominal step (H itself varies in its last bits on a uniform grid); a shortened or
         * irregular step recomputes them */
        const double Hm = Hnom > 0.0 ? Hnom : H;
        if (fabs(Hm - p->Hc) > 1e-12 * Hm) CS_TRY(prepare_continuous(p, Hm, err));
        if (p->spec.use_ede && k >= 1) ede_continuous(p, Hp);
        else if (!p->spec.use_ede) memset(s->delta, 0, sizeof(double) * n);
        for (int a = 0; a < n; a++) p->yt[a] = s->y[a] + s->delta[a];
        extrapolate_continuous(p, p->yt, p->yh, H);
        if (phase == CS_PHASE_MBC || phase == CS_PHASE_MOD)
            mbc_continuous(p, p->yh, p->yt, H, phase == CS_PHASE_MOD, c0, c1);
        ok = cs_all_finite((size_t)m, c0) && cs_all_finite((size_t)m, c1);
    } else {
        memset(c1, 0, sizeof(double) * m);
        if (ij_ok && k >= 1) CS_TRY(mbc_discrete(p, uk, phase == CS_PHASE_MOD, c0, &ok, err));
        else if (!ij_ok) memset(s->delta, 0, sizeof(double) * n);
        if (k == 0) ok = 0;        /* no u^k, y^{k-1} yet: the first step is signal-based */
    }
    if (!ok && (phase == CS_PHASE_MBC || phase == CS_PHASE_MOD)) phase = k == 0 ? CS_PHASE_LEARNING : CS_PHASE_FALLBACK;
    if (phase != CS_PHASE_MBC && phase != CS_PHASE_MOD) {
        memcpy(c0, sb0, sizeof(double) * m);
        memcpy(c1, sb1, sizeof(double) * m);
    } else if (p->spec.time_switch > 0.0 && T < p->spec.time_learning + p->spec.time_switch) {
        /* tanh switch phase (section 8.4): u = fac_SBC u_SBC + fac_MBC u_MBC, at t = T^k */
        const double f = cs_switch_factor(T, p->spec.time_learning, p->spec.time_switch);
        for (int a = 0; a < m; a++) {
            c0[a] = (1.0 - f) * sb0[a] + f * c0[a];
            c1[a] = (1.0 - f) * sb1[a] + f * c1[a];
        }
    }
    set_inputs(p, T, H);
    log_step(p, phase, eps);
    return CS_OK;
}

static const cs_input *ps_input(cs_coupling *c, int i) { return &((prestep *)c->content)->in[i]; }

static int ps_continuity(const cs_coupling *c, int i) { return CS_INPUT_JUMPS; }

/* int y dt over the accepted step [T1 - H, T1] into yint (n): the trapezoidal rule on each unit's micro-step trace,
 * or on the macro-point values y^{k-1} (s->y, not yet updated) and y for a unit without a matching trace. */
static void output_integrals(prestep *p, double T1, const double *y) {
    ps_state *s = &p->st;
    const double H = p->H;
    int all = 1;
    for (int i = 0; i < p->nsub; i++) {
        const int j0 = p->yo[i], ny = p->yo[i + 1] - j0;
        if (cs_unit_trace_integral(p->units ? p->units[i] : NULL, T1, H, s->yint + j0)) continue;
        all = 0;
        for (int j = 0; j < ny; j++) s->yint[j0 + j] = 0.5 * H * (s->y[j0 + j] + y[j0 + j]);
    }
    s->icnt[all ? 0 : 1] += 1.0;
}

static int ps_accept(cs_coupling *c, double T1, const double *y, const double *ydot, cs_err *err) {
    prestep *p = c->content;
    ps_state *s = &p->st;
    const int n = p->n, m = p->m;
    if (s->scal[0] < 0.0) { /* initial outputs */
        memcpy(s->y, y, sizeof(double) * n);
        memcpy(s->yprev, y, sizeof(double) * n);
        cs_network_apply(p->net, y, 1, s->uc0);
        memset(s->uc1, 0, sizeof(double) * m);
        memcpy(s->uend_prev, s->uc0, sizeof(double) * m);
        s->scal[0] = 0.0;
        if (p->spec.ij_source == CS_PRESTEP_IJ_RLS) {
            /* the first sample fills the identifiers' history (y^0; u^0 = L y^0 + r is never regressed on) */
            double e;
            (void)identify(p, s->uc0, &e);
        }
        return CS_OK;
    }
    if (p->spec.intermediate_correction) output_integrals(p, T1, y);
    for (int a = 0; a < m; a++) s->uend_prev[a] = s->uc0[a] + s->uc1[a];
    memcpy(s->uc0, s->nc0, sizeof(double) * m);
    memcpy(s->uc1, s->nc1, sizeof(double) * m);
    memcpy(s->yprev, s->y, sizeof(double) * n);
    memcpy(s->y, y, sizeof(double) * n);
    s->scal[1] = p->H;
    s->scal[0] += 1.0;
    return CS_OK;
}

static void *ps_snapshot_create(cs_coupling *c) {
    prestep *p = c->content;
    ps_snapshot *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->nst = p->st.size;
    q->nrls = 0;
    for (int i = 0; p->rls && i < p->nsub; i++) q->nrls += (size_t)cs_rls_state_size(p->rls[i]);
    q->st = malloc(sizeof(double) * (q->nst + 1));
    q->rls = malloc(sizeof(double) * (q->nrls + 1));
    if (!q->st || !q->rls) { free(q->st); free(q->rls); free(q); return NULL; }
    return q;
}

static void ps_save(cs_coupling *c, void *snap) {
    prestep *p = c->content;
    ps_snapshot *q = snap;
    memcpy(q->st, p->stbuf, sizeof(double) * q->nst);
    double *r = q->rls;
    for (int i = 0; p->rls && i < p->nsub; i++) {
        cs_rls_get_state(p->rls[i], r);
        r += cs_rls_state_size(p->rls[i]);
    }
}

static void ps_restore(cs_coupling *c, const void *snap) {
    prestep *p = c->content;
    const ps_snapshot *q = snap;
    memcpy(p->stbuf, q->st, sizeof(double) * q->nst);
    const double *r = q->rls;
    for (int i = 0; p->rls && i < p->nsub; i++) {
        cs_err e = {0};
        (void)cs_rls_set_state(p->rls[i], r, &e);
        r += cs_rls_state_size(p->rls[i]);
    }
}

static void ps_snapshot_destroy(void *snap) {
    ps_snapshot *q = snap;
    if (!q) return;
    free(q->st); free(q->rls); free(q);
}

static void ps_destroy(cs_coupling *c) {
    prestep *p = c->content;
    if (!p) return;
    if (p->rls)
        for (int i = 0; i < p->nsub; i++) cs_rls_destroy(p->rls[i]);
    free(p->rls); free(p->rls_a); free(p->rls_b); free(p->rls_snap);
    if (p->moesp)
        for (int i = 0; i < p->nsub; i++) cs_moesp_destroy(p->moesp[i]);
    free(p->moesp); free(p->mcfg); free(p->mpar); free(p->ijw);
    if (p->gil)
        for (int i = 0; i < p->nsub; i++) cs_gilbert_destroy(p->gil[i]);
    free(p->gil); free(p->gij);
    free(p->yo); free(p->uo); free(p->L); free(p->Sy); free(p->Su); free(p->Sd); free(p->G);
    free(p->Mc); free(p->M); free(p->cvec); free(p->N); free(p->Phi1); free(p->Gam1); free(p->Phi2); free(p->Gam2);
    free(p->phA); free(p->phB); free(p->phCD); free(p->Ap); free(p->pa); free(p->pb); free(p->rank);
    free(p->work); free(p->tmp); free(p->w1); free(p->w2); free(p->sb); free(p->yt); free(p->yh); free(p->v1); free(p->v2);
    free(p->v3); free(p->ipiv); free(p->stbuf);
    free(p->lphase); free(p->leps); free(p->lpar); free(p->ldel); free(p->lu); free(p->lrank);
    free(p->in); free(p->incoef); free(p->lecor);
    free(p);
    c->content = NULL;
}

static const cs_coupling_ops PRESTEP_OPS = {
    .predict = ps_predict,
    .input = ps_input,
    .accept = ps_accept,
    .continuity = ps_continuity,
    .snapshot_create = ps_snapshot_create,
    .save = ps_save,
    .restore = ps_restore,
    .snapshot_destroy = ps_snapshot_destroy,
    .destroy = ps_destroy,
};

static size_t zmax(size_t a, size_t b) { return a > b ? a : b; }

int cs_prestep_coupling_create(const cs_network *net, cs_unit **units, const cs_prestep_spec *spec, double H,
                               cs_coupling **out, cs_err *err) {
    *out = NULL;
    if (spec->intermediate_correction && spec->variant != CS_PRESTEP_DISCRETE)
        return cs_fail(err, CS_ERR_ARG, "intermediate_correction: only the discrete version has it (2.58-2.60)");
    if (spec->variant != CS_PRESTEP_CONTINUOUS && spec->variant != CS_PRESTEP_DISCRETE)
        return cs_fail(err, CS_ERR_ARG, "variant: unknown pre-step variant code %d", spec->variant);
    if (spec->ij_source != CS_PRESTEP_IJ_GIVEN && spec->ij_source != CS_PRESTEP_IJ_RLS &&
        spec->ij_source != CS_PRESTEP_IJ_MOESP)
        return cs_fail(err, CS_ERR_ARG, "jacobians: unknown IJ source code %d", spec->ij_source);
    if (spec->ij_source == CS_PRESTEP_IJ_GIVEN && (!spec->Sy || !spec->Su || !spec->Sd))
        return cs_fail(err, CS_ERR_ARG, "jacobians: the interface Jacobians are missing");
    if (spec->ij_source == CS_PRESTEP_IJ_MOESP && !spec->moesp_cfg)
        return cs_fail(err, CS_ERR_ARG, "jacobians: the MOESP window settings are missing");
    if (spec->variant == CS_PRESTEP_CONTINUOUS && spec->ij_source != CS_PRESTEP_IJ_GIVEN)
        return cs_fail(err, CS_ERR_ARG, "variant: the continuous version needs given (exact) IJs");
    if (!(spec->time_learning >= 0.0) || !(spec->time_switch >= 0.0) || !(spec->th_mod <= spec->th_sbc))
        return cs_fail(err, CS_ERR_ARG, "timeLearning/timeSwitchphase/thresholds: invalid values");
    if (!(H > 0.0)) return cs_fail(err, CS_ERR_ARG, "H: must be positive");
    for (int i = 0; i < net->nsub; i++)
        if (net->uoff[i + 1] == net->uoff[i] || net->yoff[i + 1] == net->yoff[i])
            return cs_fail(err, CS_ERR_ARG, "pre-step: unit %d has no inputs or no outputs", i);
    cs_coupling *c = calloc(1, sizeof *c);
    prestep *p = calloc(1, sizeof *p);
    if (!c || !p) { free(c); free(p); return cs_fail(err, CS_ERR_NOMEM, "pre-step: out of memory"); }
    c->ops = &PRESTEP_OPS;
    c->content = p;
    p->net = net;
    p->units = units;
    p->spec = *spec;
    p->spec.intermediate_correction = spec->intermediate_correction ? 1 : 0;
    p->spec.Sy = p->spec.Su = p->spec.Sd = NULL;
    p->spec.rls_a0 = p->spec.rls_b0 = NULL;
    p->spec.moesp_cfg = NULL;
    const int n = net->ny, m = net->nu, ns = net->nsub;
    p->n = n; p->m = m; p->nsub = ns;
    const size_t nn = (size_t)n * n, nm = (size_t)n * m;
    int maxn = 1, maxm = 1;
    size_t sa = 0, sb = 0;
    p->yo = malloc(sizeof(int) * (ns + 1));
    p->uo = malloc(sizeof(int) * (ns + 1));
    p->pa = malloc(sizeof(int) * (ns + 1));
    p->pb = malloc(sizeof(int) * (ns + 1));
    p->rank = calloc((size_t)ns + 1, sizeof(int));
    if (!p->yo || !p->uo || !p->pa || !p->pb || !p->rank) goto nomem;
    for (int i = 0; i <= ns; i++) { p->yo[i] = net->yoff[i]; p->uo[i] = net->uoff[i]; }
    for (int i = 0; i < ns; i++) {
        int ni = p->yo[i + 1] - p->yo[i], mi = p->uo[i + 1] - p->uo[i];
        if (ni > maxn) maxn = ni;
        if (mi > maxm) maxm = mi;
        p->pa[i] = (int)sa; p->pb[i] = (int)sb;
        sa += (size_t)ni * ni; sb += (size_t)ni * mi;
    }
    p->pa[ns] = (int)sa; p->pb[ns] = (int)sb;
    p->L = calloc((size_t)m * n + 1, sizeof(double));
    p->Sy = calloc(nn + 1, sizeof(double)); p->Su = calloc(nm + 1, sizeof(double)); p->Sd = calloc(nm + 1, sizeof(double));
    p->Mc = calloc(nn + 1, sizeof(double)); p->M = calloc(nn + 1, sizeof(double)); p->cvec = calloc((size_t)n + 1, sizeof(double));
    p->N = calloc(2 * nm + 1, sizeof(double));
    p->Phi1 = calloc(nn + 1, sizeof(double)); p->Gam1 = calloc(4 * nm + 1, sizeof(double));
    p->Phi2 = calloc(nn + 1, sizeof(double)); p->Gam2 = calloc((size_t)n + 1, sizeof(double));
    p->phA = calloc(sa + 1, sizeof(double)); p->phB = calloc(sb + 1, sizeof(double));
    p->phCD = calloc(sb + 1, sizeof(double)); p->Ap = calloc(sb + 1, sizeof(double));
    size_t nw = cs_poly_propagator_work_size(n, 2 * m, 1);
    nw = zmax(nw, cs_prestep_phi_work_size(maxn, maxm));
    nw = zmax(nw, cs_pinv_work_size(maxn, maxm));
    nw = zmax(nw, cs_jsvd_pinv_work(maxn, maxm));
    nw = zmax(nw, nn + (size_t)n * (n + 1 + 2 * m));
    p->nwork = nw;
    p->work = calloc(nw + 1, sizeof(double));
    size_t ntmp = (size_t)maxn * maxn + (size_t)maxn * 2 * maxm + 2 * (size_t)maxn * 2 * maxm + 4 * (size_t)maxn * maxn;
    ntmp = zmax(ntmp, 3 * (size_t)n + 3 * (size_t)m + (size_t)maxn * maxm + 2 * (size_t)m);
    p->tmp = calloc(ntmp + 1, sizeof(double));
    p->w1 = calloc((size_t)n * (n + 1 + 2 * m) + 2 * (size_t)n + 1, sizeof(double));
    p->w2 = calloc(4 * (size_t)m + 1, sizeof(double));
    p->sb = calloc(2 * (size_t)m + 1, sizeof(double));
    p->yt = calloc((size_t)n + m + 1, sizeof(double)); p->yh = calloc((size_t)n + 1, sizeof(double));
    size_t nv = (size_t)(n > m ? n : m) + 1;
    p->v1 = calloc(nv, sizeof(double)); p->v2 = calloc(nv, sizeof(double)); p->v3 = calloc(nv, sizeof(double));
    p->ipiv = calloc((size_t)(n > 2 * maxn + 4 * maxm ? n : 2 * maxn + 4 * maxm) + 1, sizeof(int));
    if (!p->L || !p->Sy || !p->Su || !p->Sd || !p->Mc || !p->M || !p->cvec || !p->N || !p->Phi1 || !p->Gam1 ||
        !p->Phi2 || !p->Gam2 || !p->phA || !p->phB || !p->phCD || !p->Ap || !p->work || !p->tmp || !p->w1 || !p->w2 || !p->sb ||
        !p->yt || !p->yh || !p->v1 || !p->v2 || !p->v3 || !p->ipiv)
        goto nomem;
    for (int a = 0; a < m; a++)
        for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++) p->L[(size_t)a * n + net->col[k]] += net->gain[k];
    /* state block: y, yprev, delta, ymin, ymax (n each); uc0, uc1, uend_prev, nc0, nc1, eps_prev (m each); 3 */
    p->st.size = 5 * (size_t)n + 6 * (size_t)m + 3;
    if (p->spec.intermediate_correction) p->st.size += (size_t)n + m + 2;   /* yint, ecor, icnt */
    p->stbuf = calloc(p->st.size, sizeof(double));
    if (!p->stbuf) goto nomem;
    {
        double *b = p->stbuf;
        p->st.y = b; b += n; p->st.yprev = b; b += n; p->st.delta = b; b += n; p->st.ymin = b; b += n;
        p->st.ymax = b; b += n; p->st.uc0 = b; b += m; p->st.uc1 = b; b += m; p->st.uend_prev = b; b += m;
        p->st.nc0 = b; b += m; p->st.nc1 = b; b += m; p->st.eps_prev = b; b += m; p->st.scal = b;
        if (p->spec.intermediate_correction) {
            b += 3;
            p->st.yint = b; b += n; p->st.ecor = b; b += m; p->st.icnt = b;
        }
        for (int a = 0; a < n; a++) { p->st.ymin[a] = INFINITY; p->st.ymax[a] = -INFINITY; }
        p->st.scal[0] = -1.0;
    }
    if (spec->ij_source == CS_PRESTEP_IJ_GIVEN) {
        assemble(p, spec->Sy, spec->Su, spec->Sd);
        if (!cs_all_finite(nn, p->Sy) || !cs_all_finite(nm, p->Su) || !cs_all_finite(nm, p->Sd)) {
            cs_coupling_destroy(c);
            return cs_fail(err, CS_ERR_ARG, "jacobians: the interface Jacobians have non-finite entries");
        }
    } else if (spec->ij_source == CS_PRESTEP_IJ_MOESP) {
        p->moesp = calloc((size_t)ns, sizeof(cs_moesp *));
        p->mcfg = calloc((size_t)ns + 1, sizeof(int));
        if (!p->moesp || !p->mcfg) goto nomem;
        size_t nij = 1;
        for (int i = 0; i < ns; i++) {
            const int ni = p->yo[i + 1] - p->yo[i], mi = p->uo[i + 1] - p->uo[i];
            const double *cf = spec->moesp_cfg + 4 * (size_t)i;
            for (int q = 0; q < 4; q++)
                if (!(fabs(cf[q]) < 2147483647.0) || cf[q] != floor(cf[q])) {
                    cs_coupling_destroy(c);
                    return cs_fail(err, CS_ERR_ARG, "jacobians: MOESP settings of unit %d are not integers", i);
                }
            int rc = cs_moesp_create(mi, ni, (int)cf[1], (int)cf[0], (int)cf[3], &p->moesp[i], err);
            if (rc) { cs_err_prefix(err, "jacobians: "); cs_coupling_destroy(c); return rc; }
            cs_moesp_set_refresh(p->moesp[i], spec->moesp_refresh);
            p->mcfg[i] = (int)cf[2];
            if (p->mcfg[i] > cs_moesp_max_order(p->moesp[i])) {
                cs_coupling_destroy(c);
                return cs_fail(err, CS_ERR_ARG, "jacobians: order %d of unit %d exceeds the largest identifiable "
                               "order %d (increase block_rows)", p->mcfg[i], i, cs_moesp_max_order(p->moesp[i]));
            }
            nij = zmax(nij, cs_ij_work_size(cs_moesp_max_order(p->moesp[i]), mi, ni));
            p->nparams += 1 + ni * ni + 2 * ni * mi;
        }
        p->mpar = calloc((size_t)p->nparams + 1, sizeof(double));
        p->ijw = calloc(nij + 1, sizeof(double));
        if (!p->mpar || !p->ijw) goto nomem;
    } else {
        const int na = spec->rls_na, nb = spec->rls_nb;
        if (na < 0 || nb < 1 || na > 64 || nb > 64) {
            cs_coupling_destroy(c);
            return cs_fail(err, CS_ERR_ARG, "jacobians: RLS orders must be 0 <= n_a <= 64 and 1 <= n_b <= 64 in the "
                           "pre-step (got n_a = %d, n_b = %d)", na, nb);
        }
        p->rls = calloc((size_t)ns, sizeof(cs_rls *));
        p->rls_a = calloc((size_t)maxn * na + 1, sizeof(double));
        p->rls_b = calloc((size_t)maxn * maxm * nb + 1, sizeof(double));
        if (!p->rls || !p->rls_a || !p->rls_b) goto nomem;
        const int higher = na != 1 || nb != 1;
        if (higher) {
            p->gil = calloc((size_t)ns, sizeof(cs_gilbert *));
            p->gij = calloc((size_t)maxn * maxn + 2 * (size_t)maxn * maxm + 1, sizeof(double));
            if (!p->gil || !p->gij) goto nomem;
        }
        size_t oa = 0, ob = 0, nij = 1;
        for (int i = 0; i < ns; i++) {
            const int ni = p->yo[i + 1] - p->yo[i], mi = p->uo[i + 1] - p->uo[i];
            int rc = cs_rls_create(ni, mi, na, nb, spec->rls_lambda, spec->rls_P0, 0.0, &p->rls[i], err);
            if (rc) { cs_coupling_destroy(c); return rc; }
            if (spec->rls_a0 && spec->rls_b0) cs_rls_set_params(p->rls[i], spec->rls_a0 + oa, spec->rls_b0 + ob);
            oa += (size_t)ni * na; ob += (size_t)ni * mi * nb;
            p->nparams += ni * na + ni * mi * nb;
            if (higher) {
                rc = cs_gilbert_create(ni, mi, na, nb, &p->gil[i], err);
                if (rc) { cs_coupling_destroy(c); return rc; }
                nij = zmax(nij, cs_ij_work_size(cs_gilbert_max_states(p->gil[i]), mi, ni));
            }
        }
        if (higher) {
            p->ijw = calloc(nij + 1, sizeof(double));
            if (!p->ijw) goto nomem;
        }
    }
    p->logcap = spec->log_capacity > 0 ? spec->log_capacity : 0;
    {
        size_t L = (size_t)p->logcap + 1;
        p->lphase = calloc(L, 1);
        p->leps = calloc(L, sizeof(double));
        p->lpar = calloc(L * (size_t)(p->nparams > 0 ? p->nparams : 1), sizeof(double));
        p->ldel = calloc(L * (size_t)n, sizeof(double));
        p->lu = calloc(L * (size_t)m, sizeof(double));
        p->lrank = calloc(L * (size_t)ns, sizeof(int));
        if (!p->lphase || !p->leps || !p->lpar || !p->ldel || !p->lu || !p->lrank) goto nomem;
        if (p->spec.intermediate_correction) {
            p->lecor = calloc(L * (size_t)m, sizeof(double));
            if (!p->lecor) goto nomem;
        }
    }
    p->in = calloc((size_t)ns, sizeof(cs_input));
    p->incoef = calloc((size_t)m * NC + NC, sizeof(double));
    if (!p->in || !p->incoef) goto nomem;
    {
        double *coef = p->incoef;
        for (int i = 0; i < ns; i++) {
            p->in[i].nu = p->uo[i + 1] - p->uo[i];
            p->in[i].c = coef;
            coef += (size_t)NC * p->in[i].nu;
        }
    }
    for (int i = 0; p->spec.intermediate_correction && units && i < ns; i++) {
        cs_unit *u = units[i];
        if (u && u->ops->set_trace) {
            int rc = u->ops->set_trace(u, 1, err);
            if (rc) { cs_coupling_destroy(c); return rc; }
        }
    }
    if (spec->variant == CS_PRESTEP_CONTINUOUS) {
        int rc = prepare_continuous(p, H, err);
        if (rc) { cs_coupling_destroy(c); return rc; }
    }
    *out = c;
    return CS_OK;
nomem:
    cs_coupling_destroy(c);
    return cs_fail(err, CS_ERR_NOMEM, "pre-step: out of memory");
}

int cs_prestep_get_log(const cs_coupling *c, cs_prestep_log *log, cs_err *err) {
    if (!c || c->ops != &PRESTEP_OPS) return cs_fail(err, CS_ERR_ARG, "coupling: not a pre-step coupling");
    const prestep *p = c->content;
    long k = (long)p->st.scal[2];
    *log = (cs_prestep_log){.n = k < p->logcap ? k : p->logcap, .nparams = p->nparams, .ny = p->n, .nu = p->m,
                            .nsub = p->nsub, .phase = p->lphase, .eps = p->leps, .params = p->lpar,
                            .delta = p->ldel, .u = p->lu, .rank = p->lrank, .eps_cor = p->lecor,
                            .traced = p->st.icnt ? (long)p->st.icnt[0] : 0,
                            .fallback = p->st.icnt ? (long)p->st.icnt[1] : 0};
    return CS_OK;
}
