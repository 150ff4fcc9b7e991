/* Model-based pre-step stabilization (Genser 2020) as a coupling: see coupling/prestep.h. This file holds the coupling
 * ops, the creation and the log; the variants and the IJ sources are in prestep_continuous.c, prestep_discrete.c and
 * prestep_ij.c (coupling/prestep_core.h).
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

#include "coupling/prestep_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/dense.h"
#include "linalg/expm.h"
#include "linalg/pinv.h"
#include "sysid/ij.h"
#include "sysid/jsvd.h"
#include "sysid/qa.h"

typedef struct ps_snapshot {
    double *st;
    double *rls;   /* concatenated RLS states */
    size_t nst, nrls;
} ps_snapshot;

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

/* ---------------------------------------------------------------------------------------------- coupling ops */

static void log_step(prestep *p, int phase, double eps) {
    ps_state *s = &p->st;
    long k = (long)s->scal[2];
    if (k >= p->logcap) return;
    p->lphase[k] = (unsigned char)phase;
    p->leps[k] = eps;
    if (p->nparams && p->ij->log_params) p->ij->log_params(p, p->lpar + (size_t)k * p->nparams);
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
    if (p->ij->identify) {
        /* a window still filling during the learning phase is no failure: its IJs are not used there */
        int st = p->ij->identify(p, uk, k, &eps);
        if (st == 1 && p->ij->recover) p->ij->recover(p);
        if (st == 1 || (st == 2 && !learning)) ij_ok = 0;
    }
    double *c0 = s->nc0, *c1 = s->nc1;
    int ok = 1;
    if (!ij_ok) phase = CS_PHASE_FALLBACK;
    else if (learning) phase = CS_PHASE_LEARNING;
    else if (identified && eps >= p->spec.th_sbc) phase = CS_PHASE_SBC;
    else if (p->spec.modified || (identified && eps >= p->spec.th_mod)) phase = CS_PHASE_MOD;
    if (p->spec.variant == CS_PRESTEP_CONTINUOUS)
        CS_TRY(cs_ps_continuous_predict(p, H, Hnom, Hp, k, phase, c0, c1, &ok, err));
    else
        CS_TRY(cs_ps_discrete_predict(p, uk, k, ij_ok, phase, c0, c1, &ok, err));
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
        if (p->units && cs_ua_trace_integral(p->units, i, T1, H, s->yint + j0)) continue;
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
        if (p->ij->initial_sample) p->ij->initial_sample(p, s->uc0);
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

int cs_prestep_coupling_create(const cs_network *net, const cs_unit_access *units, const cs_prestep_spec *spec,
                               double H, cs_coupling **out, cs_err *err) {
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
    /* the arrays' lengths follow from the network: a short one would be read past its end */
    long ny = 0, ny2 = 0, nyu = 0;
    for (int i = 0; i < net->nsub; i++) {
        const long ni = net->yoff[i + 1] - net->yoff[i], mi = net->uoff[i + 1] - net->uoff[i];
        ny += ni;
        ny2 += ni * ni;
        nyu += ni * mi;
    }
    if (spec->ij_source == CS_PRESTEP_IJ_GIVEN && (spec->nSy != ny2 || spec->nSu != nyu || spec->nSd != nyu))
        return cs_fail(err, CS_ERR_ARG, "jacobians: Sy, Su, Sd have %d, %d, %d entries; the units need %ld, %ld, %ld "
                       "(sum over units of ny_i^2, ny_i nu_i, ny_i nu_i)", spec->nSy, spec->nSu, spec->nSd, ny2, nyu,
                       nyu);
    if (spec->ij_source == CS_PRESTEP_IJ_MOESP && spec->nmoesp_cfg != 4L * net->nsub)
        return cs_fail(err, CS_ERR_ARG, "jacobians: the MOESP settings (moesp_cfg) have %d entries; %d units need %d",
                       spec->nmoesp_cfg, net->nsub, 4 * net->nsub);
    if (spec->ij_source == CS_PRESTEP_IJ_RLS && spec->rls_a0 && spec->rls_b0 &&
        (spec->na0 != ny * spec->rls_na || spec->nb0 != nyu * spec->rls_nb))
        return cs_fail(err, CS_ERR_ARG, "a0, b0: %d and %d initial RLS parameters; the units need %ld and %ld "
                       "(ny n_a, sum of ny_i nu_i n_b)", spec->na0, spec->nb0, ny * spec->rls_na, nyu * spec->rls_nb);
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
    c->kind = CS_CPL_KIND_PRESTEP;
    c->content = p;
    p->net = net;
    p->units = units;
    p->spec = *spec;
    p->ij = cs_ps_ij_source(spec->ij_source);
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
        int rc = cs_ua_set_trace(units, i, 1, err);
        if (rc) { cs_coupling_destroy(c); return rc; }
    }
    if (spec->variant == CS_PRESTEP_CONTINUOUS) {
        int rc = cs_ps_prepare_continuous(p, H, err);
        if (rc) { cs_coupling_destroy(c); return rc; }
    }
    *out = c;
    return CS_OK;
nomem:
    cs_coupling_destroy(c);
    return cs_fail(err, CS_ERR_NOMEM, "pre-step: out of memory");
}

int cs_prestep_get_log(const cs_coupling *c, cs_prestep_log *log, cs_err *err) {
    if (!c || c->kind != CS_CPL_KIND_PRESTEP) return cs_fail(err, CS_ERR_ARG, "coupling: not a pre-step coupling");
    const prestep *p = c->content;
    long k = (long)p->st.scal[2];
    *log = (cs_prestep_log){.n = k < p->logcap ? k : p->logcap, .nparams = p->nparams, .ny = p->n, .nu = p->m,
                            .nsub = p->nsub, .phase = p->lphase, .eps = p->leps, .params = p->lpar,
                            .delta = p->ldel, .u = p->lu, .rank = p->lrank, .eps_cor = p->lecor,
                            .traced = p->st.icnt ? (long)p->st.icnt[0] : 0,
                            .fallback = p->st.icnt ? (long)p->st.icnt[1] : 0};
    return CS_OK;
}

/* ---- the kind (master/registry.c) ---- */

#define P(name, type, field) CS_PARAM_FIELD(cs_prestep_spec, name, type, field)
#define V(name, field, len) CS_PARAM_VECTOR(cs_prestep_spec, name, CS_PARAM_DOUBLES, field, len)
static const cs_param prestep_params[] = {
    P("variant", CS_PARAM_INT, variant), P("ij_source", CS_PARAM_INT, ij_source),
    P("modified", CS_PARAM_INT, modified), P("hold", CS_PARAM_INT, hold), P("sbc_foh", CS_PARAM_INT, sbc_foh),
    V("Sy", Sy, nSy), V("Su", Su, nSu), V("Sd", Sd, nSd),
    P("use_ede", CS_PARAM_INT, use_ede), P("ede_exact", CS_PARAM_INT, ede_exact),
    P("ede_steps", CS_PARAM_INT, ede_steps), P("extrap_exact", CS_PARAM_INT, extrap_exact),
    P("extrap_steps", CS_PARAM_INT, extrap_steps), P("dsm_steps", CS_PARAM_INT, dsm_steps),
    P("time_learning", CS_PARAM_DOUBLE, time_learning), P("time_switch", CS_PARAM_DOUBLE, time_switch),
    P("th_sbc", CS_PARAM_DOUBLE, th_sbc), P("th_mod", CS_PARAM_DOUBLE, th_mod),
    P("rls_lambda", CS_PARAM_DOUBLE, rls_lambda), P("rls_P0", CS_PARAM_DOUBLE, rls_P0),
    P("rls_na", CS_PARAM_INT, rls_na), P("rls_nb", CS_PARAM_INT, rls_nb),
    V("a0", rls_a0, na0), V("b0", rls_b0, nb0), P("rtol", CS_PARAM_DOUBLE, rtol),
    V("moesp_cfg", moesp_cfg, nmoesp_cfg), P("moesp_threshold", CS_PARAM_DOUBLE, moesp_threshold),
    P("moesp_refresh", CS_PARAM_INT, moesp_refresh), P("log_capacity", CS_PARAM_LONG, log_capacity),
    P("intermediate_correction", CS_PARAM_INT, intermediate_correction),
};
#undef P
#undef V

static void prestep_defaults(void *spec) {
    cs_prestep_spec *s = spec;
    s->rls_na = s->rls_nb = 1;   /* the thesis's first-order RLS model */
}

static int prestep_create(const void *spec, const cs_coupling_env *e, cs_coupling **out, cs_err *err) {
    return cs_prestep_coupling_create(e->net, e->units, spec, e->H, out, err);
}

static int prestep_log(const void *coupling, cs_fields *out, cs_err *err) {
    cs_prestep_log lg;
    CS_TRY(cs_prestep_get_log(coupling, &lg, err));
    cs_fields_array(out, "phase", CS_FIELD_BYTE, lg.n, 0, lg.phase);
    cs_fields_array(out, "eps_si", CS_FIELD_DOUBLE, lg.n, 0, lg.eps);
    cs_fields_array(out, "params", CS_FIELD_DOUBLE, lg.n, lg.nparams, lg.params);
    cs_fields_array(out, "delta", CS_FIELD_DOUBLE, lg.n, lg.ny, lg.delta);
    cs_fields_array(out, "u", CS_FIELD_DOUBLE, lg.n, lg.nu, lg.u);
    cs_fields_array(out, "rank", CS_FIELD_INT, lg.n, lg.nsub, lg.rank);
    if (lg.eps_cor) { /* intermediate-value correction: eps_cor per step, the trace / macro-point fallback counts */
        cs_fields_array(out, "eps_cor", CS_FIELD_DOUBLE, lg.n, lg.nu, lg.eps_cor);
        cs_fields_count(out, "traced_steps", lg.traced);
        cs_fields_count(out, "macro_point_steps", lg.fallback);
    }
    return CS_OK;
}

const cs_kind cs_coupling_prestep_kind = {"prestep", prestep_params, CS_NPARAMS(prestep_params),
                                          sizeof(cs_prestep_spec), prestep_defaults, {.coupling = prestep_create},
                                          prestep_log};
