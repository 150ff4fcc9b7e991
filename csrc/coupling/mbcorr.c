/* MBCorr (a reconstruction, spec mbcorr.md §2) as a wrapper of the signal-based coupling: see
 * coupling/mbcorr.h. The surrogate's IJs come from a pre-step coupling object used only as the identification engine
 * (coupling/prestep_core.h: its IJ sources, its global matrices and its sample history); its predict never runs. */
#include "coupling/mbcorr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coupling/prestep_core.h"
#include "coupling/signal.h"
#include "coupling/wrap.h"
#include "linalg/dense.h"
#include "linalg/expm.h"
#include "sysid/qa.h"

/* per-step counters in the state block */
enum { CNT_LEARNING = 0, CNT_CORRECTED = 1, CNT_FALLBACK = 2, CNT_LOG = 3, NCNT = 4 };

typedef struct mbcorr {
    cs_coupling *inner;       /* the predictor Lagrange(p) (first: coupling/wrap.h) */
    cs_coupling *ps;          /* the pre-step object that owns the IJ source and the (u^k, y^k) history */
    prestep *p;               /* its content */
    const cs_network *net;
    cs_mbcorr_spec spec;
    int n, m;
    cs_input *in;             /* per unit: the predictor's input plus the correction */
    double *incoef;
    double Hc;                /* B1: the step the phi matrices belong to (0: none yet) */
    double *G0, *G1, *eye;    /* B1: H phi_1(M H), H phi_2(M H) (n x n), the identity (input matrix of the propagator) */
    double *yhat, *tgt, *uk;  /* Yhat (n), L Yhat + r (m), u^k (m) */
    double *Mc, *A, *work;    /* B2 system, workspace of the propagator and the solve */
    int *ipiv;
    double *st;               /* state block: umean (m), counters (NCNT) */
    size_t nst;
    double *umean, *cnt;
    long logcap;
    unsigned char *lphase;
    double *lyhat, *lcoef, *ldelta; /* per step: Yhat (n), input coefficients (3 x m), Delta (m) */
} mbcorr;

typedef struct mbcorr_snapshot {
    cs_wrap_snapshot head;
    void *ps;
    void (*ps_destroy)(void *);
    double *st;
} mbcorr_snapshot;

/* B1: G0 = H phi_1(M H), G1 = H phi_2(M H) for the current step H (the pre-step object refreshes M, g first). */
static int prepare_continuous(mbcorr *q, double H, cs_err *err) {
    if (q->Hc == H) return CS_OK;
    if (q->Hc > 0.0) CS_TRY(cs_ps_prepare_continuous(q->p, H, err));
    const int n = q->n;
    double *Phi = q->A, *Gam = q->G0;   /* G0, G1 are consecutive: Gam[0], Gam[1] */
    CS_TRY(cs_poly_propagator(n, n, 1, q->p->M, q->eye, H, Phi, Gam, q->work, q->ipiv, err));
    q->Hc = H;
    return CS_OK;
}

/* Yhat (B1): phi_1(M H) y^k + H phi_2(M H) g. */
static void mean_continuous(mbcorr *q, double H, const double *y) {
    const int n = q->n;
    const double *g = q->p->cvec;
    for (int a = 0; a < n; a++) {
        double s0 = 0.0, s1 = 0.0;
        for (int b = 0; b < n; b++) {
            s0 += q->G0[(size_t)a * n + b] * y[b];
            s1 += q->G1[(size_t)a * n + b] * g[b];
        }
        q->yhat[a] = s0 / H + s1;
    }
}

/* Yhat (B2): (I - Su^+ L) yhat^{k+1} = Sy y^k + Su^- u^k + Su^+ r, Yhat = (y^k + yhat^{k+1})/2. */
static int mean_discrete(mbcorr *q, const double *y, const double *uk, cs_err *err) {
    const prestep *p = q->p;
    const int n = q->n, m = q->m;
    const double *r = q->net->r;
    cs_ps_global_mats(q->p, q->Mc, q->A);
    for (int a = 0; a < n; a++) {
        double v = 0.0;
        for (int b = 0; b < n; b++) v += p->Sy[(size_t)a * n + b] * y[b];
        for (int b = 0; b < m; b++) v += p->Su[(size_t)a * m + b] * uk[b] + p->Sd[(size_t)a * m + b] * r[b];
        q->yhat[a] = v;
    }
    cs_err e = {0};
    if (cs_solve(n, 1, q->Mc, q->yhat, q->work, q->ipiv, &e)) return 1;   /* singular: this step falls back */
    for (int a = 0; a < n; a++) q->yhat[a] = 0.5 * (y[a] + q->yhat[a]);
    (void)err;
    return 0;
}

static void log_step(mbcorr *q, int phase, const double *delta) {
    const long k = (long)q->cnt[CNT_LOG];
    q->cnt[phase == CS_MBCORR_LEARNING ? CNT_LEARNING : phase == CS_MBCORR_CORRECTED ? CNT_CORRECTED : CNT_FALLBACK]
        += 1.0;
    if (k >= q->logcap) return;
    const int n = q->n, m = q->m;
    q->lphase[k] = (unsigned char)phase;
    for (int a = 0; a < n; a++) q->lyhat[(size_t)k * n + a] = phase == CS_MBCORR_CORRECTED ? q->yhat[a] : NAN;
    memcpy(q->ldelta + (size_t)k * m, delta, sizeof(double) * m);
    double *lc = q->lcoef + (size_t)k * 3 * m;
    memset(lc, 0, sizeof(double) * 3 * m);
    for (int i = 0; i < q->net->nsub; i++) {
        const cs_input *in = &q->in[i];
        const int a0 = q->net->uoff[i];
        for (int d = 0; d <= in->deg && d < 3; d++)
            for (int a = 0; a < in->nu; a++) lc[(size_t)d * m + a0 + a] = in->c[(size_t)d * in->nu + a];
    }
    q->cnt[CNT_LOG] = (double)(k + 1);
}

static int mb_predict(cs_coupling *c, double T, double H, double Hnom, cs_err *err) {
    mbcorr *q = c->content;
    prestep *p = q->p;
    const int n = q->n, m = q->m;
    CS_TRY(cs_coupling_predict(q->inner, T, H, Hnom, err));
    const long k = (long)p->st.scal[0];
    const double *y = p->st.y;
    for (int a = 0; a < m; a++) q->uk[a] = p->st.uc0[a] + p->st.uc1[a];
    const int learning = T < q->spec.ij.time_learning - 1e-12 * H;
    int status = 0;
    if (p->ij->identify) {
        double eps = 0.0;
        status = p->ij->identify(p, q->uk, k, &eps);
        if (status == 1 && p->ij->recover) p->ij->recover(p);
    }
    int phase = learning ? CS_MBCORR_LEARNING : status ? CS_MBCORR_FALLBACK : CS_MBCORR_CORRECTED;
    if (phase == CS_MBCORR_CORRECTED) {
        if (q->spec.ij.variant == CS_PRESTEP_CONTINUOUS) {
            CS_TRY(prepare_continuous(q, H, err));
            mean_continuous(q, H, y);
        } else if (mean_discrete(q, y, q->uk, err)) {
            phase = CS_MBCORR_FALLBACK;
        }
        if (phase == CS_MBCORR_CORRECTED && !cs_all_finite((size_t)n, q->yhat)) phase = CS_MBCORR_FALLBACK;
    }
    const double f = phase != CS_MBCORR_CORRECTED ? 0.0
                   : q->spec.ij.time_switch > 0.0 && T < q->spec.ij.time_learning + q->spec.ij.time_switch
                       ? cs_switch_factor(T, q->spec.ij.time_learning, q->spec.ij.time_switch) : 1.0;
    if (f != 0.0) cs_network_apply(q->net, q->yhat, 1, q->tgt);
    double *delta = q->Mc;   /* m doubles of scratch (Mc is n x n >= ... see create) */
    for (int i = 0; i < q->net->nsub; i++) {
        const cs_input *b = cs_coupling_input(q->inner, i);
        cs_input *in = &q->in[i];
        const int nu = in->nu, a0 = q->net->uoff[i];
        if (b->eval) return cs_fail(err, CS_ERR_ARG, "MBCorr: the predictor must be a polynomial (Lagrange)");
        in->deg = b->deg; in->T = b->T; in->H = b->H;
        memcpy(in->c, b->c, sizeof(double) * (size_t)(b->deg + 1) * nu);
        for (int a = 0; a < nu; a++) {
            /* int_0^1 sum_q c_q s^q ds = sum_q c_q / (q + 1) */
            double mean = 0.0;
            for (int d = 0; d <= in->deg; d++) mean += in->c[(size_t)d * nu + a] / (d + 1);
            const double D = f != 0.0 ? f * (q->tgt[a0 + a] - mean) : 0.0;
            delta[a0 + a] = D;
            if (q->spec.shape == CS_MBCORR_END) in->c[(size_t)in->deg * nu + a] += (in->deg + 1) * D;
            else in->c[a] += D;
            double um = 0.0;
            for (int d = 0; d <= in->deg; d++) um += in->c[(size_t)d * nu + a] / (d + 1);
            q->umean[a0 + a] = um;
        }
    }
    log_step(q, phase, delta);
    return CS_OK;
}

static const cs_input *mb_input(cs_coupling *c, int i) { return &((mbcorr *)c->content)->in[i]; }

static int mb_continuity(const cs_coupling *c, int i) { return CS_INPUT_JUMPS; }

static int mb_accept(cs_coupling *c, double T1, const double *y, const double *ydot, cs_err *err) {
    mbcorr *q = c->content;
    /* the identification sample u^k of the next step: the mean of the input applied over this one (HOLD pairing) */
    memcpy(q->p->st.nc0, q->umean, sizeof(double) * q->m);
    memset(q->p->st.nc1, 0, sizeof(double) * q->m);
    CS_TRY(cs_coupling_accept(q->ps, T1, y, ydot, err));
    return cs_coupling_accept(q->inner, T1, y, ydot, err);
}

static void *mb_snapshot_create(cs_coupling *c) {
    mbcorr *q = c->content;
    mbcorr_snapshot *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->st = malloc(sizeof(double) * (q->nst + 1));
    s->ps = cs_coupling_snapshot_create(q->ps);
    s->ps_destroy = q->ps->ops->snapshot_destroy;
    if (!cs_wrap_snapshot_open(&s->head, c) || !s->st || !s->ps) {
        cs_wrap_snapshot_close(&s->head);
        if (s->ps) s->ps_destroy(s->ps);
        free(s->st); free(s);
        return NULL;
    }
    return s;
}

static void mb_save(cs_coupling *c, void *snap) {
    mbcorr *q = c->content;
    mbcorr_snapshot *s = snap;
    cs_wrap_save(c, &s->head);
    cs_coupling_save(q->ps, s->ps);
    memcpy(s->st, q->st, sizeof(double) * q->nst);
}

static void mb_restore(cs_coupling *c, const void *snap) {
    mbcorr *q = c->content;
    const mbcorr_snapshot *s = snap;
    cs_wrap_restore(c, &s->head);
    cs_coupling_restore(q->ps, s->ps);
    memcpy(q->st, s->st, sizeof(double) * q->nst);
}

static void mb_snapshot_destroy(void *snap) {
    mbcorr_snapshot *s = snap;
    if (!s) return;
    cs_wrap_snapshot_close(&s->head);
    if (s->ps) s->ps_destroy(s->ps);
    free(s->st);
    free(s);
}

static void mb_destroy(cs_coupling *c) {
    mbcorr *q = c->content;
    if (!q) return;
    cs_coupling_destroy(q->inner);
    cs_coupling_destroy(q->ps);
    free(q->in); free(q->incoef); free(q->G0); free(q->eye); free(q->yhat); free(q->tgt); free(q->uk);
    free(q->Mc); free(q->A); free(q->work); free(q->ipiv); free(q->st);
    free(q->lphase); free(q->lyhat); free(q->lcoef); free(q->ldelta);
    free(q);
    c->content = NULL;
}

static const cs_coupling_ops MBCORR_OPS = {
    .predict = mb_predict,
    .input = mb_input,
    .on_unit_done = cs_wrap_on_unit_done,
    .accept = mb_accept,
    .continuity = mb_continuity,
    .snapshot_create = mb_snapshot_create,
    .save = mb_save,
    .restore = mb_restore,
    .snapshot_destroy = mb_snapshot_destroy,
    .destroy = mb_destroy,
    .set_history_depth = cs_wrap_set_history_depth,
};

int cs_mbcorr_coupling_create(const cs_network *net, const cs_approx_spec *base, const cs_mbcorr_spec *spec, double H,
                              cs_coupling **out, cs_err *err) {
    *out = NULL;
    if (!base || base->kind != CS_APPROX_LAGRANGE || base->k < 0 || base->k > 2)
        return cs_fail(err, CS_ERR_ARG, "MBCorr: the predictor must be Lagrange extrapolation of order 0, 1 or 2");
    if (spec->shape != CS_MBCORR_CONSTANT && spec->shape != CS_MBCORR_END)
        return cs_fail(err, CS_ERR_ARG, "shape: must be CS_MBCORR_CONSTANT (0) or CS_MBCORR_END (1)");
    if (spec->ij.variant != CS_PRESTEP_CONTINUOUS && spec->ij.variant != CS_PRESTEP_DISCRETE)
        return cs_fail(err, CS_ERR_ARG, "surrogate: must be continuous (B1) or discrete (B2)");
    cs_coupling *c = calloc(1, sizeof *c);
    mbcorr *q = calloc(1, sizeof *q);
    if (!c || !q) { free(c); free(q); return cs_fail(err, CS_ERR_NOMEM, "MBCorr: out of memory"); }
    c->ops = &MBCORR_OPS;
    c->content = q;
    q->net = net;
    q->spec = *spec;
    const int n = net->ny, m = net->nu;
    q->n = n; q->m = m;
    int rc = cs_signal_coupling_create(net, base, 0, &q->inner, err);
    if (rc) { cs_coupling_destroy(c); return rc; }
    cs_wrap_init(c, &MBCORR_OPS, q, q->inner);
    c->kind = CS_CPL_KIND_MBCORR;
    /* the identification engine: a pre-step object whose own Steps 1-3 never run */
    cs_prestep_spec ps = spec->ij;
    ps.use_ede = 0;
    ps.modified = 1;
    ps.intermediate_correction = 0;
    ps.log_capacity = 0;
    rc = cs_prestep_coupling_create(net, NULL, &ps, H, &q->ps, err);
    if (rc) { cs_err_prefix(err, "MBCorr: "); cs_coupling_destroy(c); return rc; }
    q->p = q->ps->content;
    const size_t nn = (size_t)n * n, mx = (size_t)(n > m ? n : m);
    q->G0 = calloc(2 * nn + 1, sizeof(double));
    q->G1 = q->G0 + nn;
    q->eye = calloc(nn + 1, sizeof(double));
    q->yhat = calloc((size_t)n + 1, sizeof(double));
    q->tgt = calloc((size_t)m + 1, sizeof(double));
    q->uk = calloc((size_t)m + 1, sizeof(double));
    q->Mc = calloc(nn + mx + 1, sizeof(double));   /* also the Delta scratch (m) of predict */
    q->A = calloc(nn + 1, sizeof(double));
    size_t nw = cs_poly_propagator_work_size(n, n, 1);
    if (nw < nn + n) nw = nn + n;
    q->work = calloc(nw + 1, sizeof(double));
    q->ipiv = calloc((size_t)n + 1, sizeof(int));
    q->nst = (size_t)m + NCNT;
    q->st = calloc(q->nst, sizeof(double));
    q->logcap = spec->ij.log_capacity > 0 ? spec->ij.log_capacity : 0;
    const size_t L = (size_t)q->logcap + 1;
    q->lphase = calloc(L, 1);
    q->lyhat = calloc(L * (n + 1), sizeof(double));
    q->lcoef = calloc(L * (3 * (size_t)m + 1), sizeof(double));
    q->ldelta = calloc(L * (m + 1), sizeof(double));
    q->in = calloc((size_t)net->nsub, sizeof(cs_input));
    q->incoef = calloc((size_t)m * NC + NC, sizeof(double));
    if (!q->G0 || !q->eye || !q->yhat || !q->tgt || !q->uk || !q->Mc || !q->A || !q->work || !q->ipiv || !q->st ||
        !q->lphase || !q->lyhat || !q->lcoef || !q->ldelta || !q->in || !q->incoef) {
        cs_coupling_destroy(c);
        return cs_fail(err, CS_ERR_NOMEM, "MBCorr: out of memory");
    }
    cs_eye(n, q->eye);
    q->umean = q->st;
    q->cnt = q->st + m;
    double *coef = q->incoef;
    for (int i = 0; i < net->nsub; i++) {
        q->in[i].nu = net->uoff[i + 1] - net->uoff[i];
        q->in[i].c = coef;
        coef += (size_t)NC * q->in[i].nu;
    }
    if (spec->ij.variant == CS_PRESTEP_CONTINUOUS) {
        rc = prepare_continuous(q, H, err);
        if (rc) { cs_err_prefix(err, "MBCorr: "); cs_coupling_destroy(c); return rc; }
    }
    *out = c;
    return CS_OK;
}

/* ---- the kind (master/registry.c) ---- */

#define P(name, type, field) CS_PARAM_FIELD(cs_mbcorr_spec, name, type, field)
#define V(name, field, len) CS_PARAM_VECTOR(cs_mbcorr_spec, name, CS_PARAM_DOUBLES, field, len)
static const cs_param mbcorr_params[] = {
    P("variant", CS_PARAM_INT, ij.variant), P("ij_source", CS_PARAM_INT, ij.ij_source),
    V("Sy", ij.Sy, ij.nSy), V("Su", ij.Su, ij.nSu), V("Sd", ij.Sd, ij.nSd),
    P("time_learning", CS_PARAM_DOUBLE, ij.time_learning), P("time_switch", CS_PARAM_DOUBLE, ij.time_switch),
    P("rls_lambda", CS_PARAM_DOUBLE, ij.rls_lambda), P("rls_P0", CS_PARAM_DOUBLE, ij.rls_P0),
    P("rls_na", CS_PARAM_INT, ij.rls_na), P("rls_nb", CS_PARAM_INT, ij.rls_nb),
    V("a0", ij.rls_a0, ij.na0), V("b0", ij.rls_b0, ij.nb0), P("rtol", CS_PARAM_DOUBLE, ij.rtol),
    V("moesp_cfg", ij.moesp_cfg, ij.nmoesp_cfg), P("moesp_threshold", CS_PARAM_DOUBLE, ij.moesp_threshold),
    P("moesp_refresh", CS_PARAM_INT, ij.moesp_refresh), P("log_capacity", CS_PARAM_LONG, ij.log_capacity),
    P("shape", CS_PARAM_INT, shape),
};
#undef P
#undef V

static void mbcorr_defaults(void *spec) {
    cs_mbcorr_spec *s = spec;
    s->ij.rls_na = s->ij.rls_nb = 1;
    s->ij.th_sbc = s->ij.th_mod = INFINITY;   /* no phase check of the pre-step (its Steps never run) */
}

static int mbcorr_create(const void *spec, const cs_coupling_env *e, cs_coupling **out, cs_err *err) {
    return cs_mbcorr_coupling_create(e->net, e->approx, spec, e->H, out, err);
}

static int mbcorr_log(const void *coupling, cs_fields *out, cs_err *err) {
    const cs_coupling *c = coupling;
    if (!c || c->kind != CS_CPL_KIND_MBCORR) return cs_fail(err, CS_ERR_ARG, "coupling: not an MBCorr coupling");
    const mbcorr *q = c->content;
    const long k = (long)q->cnt[CNT_LOG], nl = k < q->logcap ? k : q->logcap;
    cs_fields_array(out, "phase", CS_FIELD_BYTE, nl, 0, q->lphase);
    cs_fields_array(out, "yhat", CS_FIELD_DOUBLE, nl, q->n, q->lyhat);
    cs_fields_array(out, "u_coef", CS_FIELD_DOUBLE, nl, 3 * q->m, q->lcoef);
    cs_fields_array(out, "delta", CS_FIELD_DOUBLE, nl, q->m, q->ldelta);
    cs_fields_count(out, "learning_steps", (long)q->cnt[CNT_LEARNING]);
    cs_fields_count(out, "corrected_steps", (long)q->cnt[CNT_CORRECTED]);
    cs_fields_count(out, "fallback_steps", (long)q->cnt[CNT_FALLBACK]);
    return CS_OK;
}

const cs_kind cs_coupling_mbcorr_kind = {"mbcorr", mbcorr_params, CS_NPARAMS(mbcorr_params), sizeof(cs_mbcorr_spec),
                                         mbcorr_defaults, {.coupling = mbcorr_create}, mbcorr_log};
