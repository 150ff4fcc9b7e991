/* Smoothing of the switch between old and new input: see coupling/smooth.h (moshagen §2.2.5). */
#include "coupling/smooth.h"
#include "coupling/wrap.h"

#include <stdlib.h>
#include <string.h>

#define NC (CS_MAXDEG + 1)

/* One unit's input polynomial: u(t) = sum_m c[m][.] ((t - T)/H)^m. */
typedef struct smooth_poly {
    double T, H;
    int deg, valid;
    double *c;                     /* NC x nu */
} smooth_poly;

typedef struct smooth_unit {
    cs_input in;                   /* what the unit sees */
    smooth_poly prev, cur;         /* the previous accepted step's inner input, this step's */
    double *P, *D;                 /* eval path: P(s) (prev continued) and D(s) = cur - prev, NC x nu each */
    int degP, degD;
    int smoothed;                  /* the last input() blended (continuity C1 across T_N) */
} smooth_unit;

typedef struct smooth_coupling {
    cs_coupling *inner;
    const cs_network *net;
    smooth_unit *su;
    double *store;                 /* all coefficient arrays */
    size_t ncoef;                  /* NC * nu */
} smooth_coupling;

typedef struct smooth_snapshot {
    cs_wrap_snapshot head;         /* the inner coupling's */
    double *prevc;                 /* NC * nu */
    double *meta;                  /* per unit T, H, deg, valid */
    int nsub;
} smooth_snapshot;

/* The quintic switch in s: q(s) = 10 s^3 - 15 s^4 + 6 s^5. */
static const double Q5[6] = {0.0, 0.0, 0.0, 10.0, -15.0, 6.0};

/* Re-expand p (degree deg, variable s' = alpha + beta s) as a polynomial in s into out (column la, stride nu). */
static void reexpand(const double *p, int deg, int nu, int la, double alpha, double beta, double *out) {
    double r[NC];
    for (int m = 0; m < NC; m++) r[m] = 0.0;
    r[0] = p[(size_t)deg * nu + la];
    for (int m = deg - 1; m >= 0; m--) {
        /* r <- r * (alpha + beta s) + p_m */
        for (int q = deg - m; q >= 1; q--) r[q] = r[q] * alpha + r[q - 1] * beta;
        r[0] = r[0] * alpha + p[(size_t)m * nu + la];
    }
    for (int m = 0; m <= deg; m++) out[(size_t)m * nu + la] = r[m];
}

static int smooth_eval(const cs_input *in, double t, double *u, double *udot) {
    const smooth_unit *su = in->ctx;
    const int nu = in->nu;
    const double s = (t - in->T) / in->H;
    const double q = cs_smoothstep5(s), dq = cs_smoothstep5_dt(s);
    for (int la = 0; la < nu; la++) {
        double p = su->P[(size_t)su->degP * nu + la], dp = 0.0;
        for (int m = su->degP - 1; m >= 0; m--) { dp = dp * s + p; p = p * s + su->P[(size_t)m * nu + la]; }
        double d = su->D[(size_t)su->degD * nu + la], dd = 0.0;
        for (int m = su->degD - 1; m >= 0; m--) { dd = dd * s + d; d = d * s + su->D[(size_t)m * nu + la]; }
        if (u) u[la] = p + q * d;
        if (udot) udot[la] = (dp + dq * d + q * dd) / in->H;
    }
    return 0;
}

static const cs_input *sm_input(cs_coupling *c, int i) {
    smooth_coupling *m = c->content;
    smooth_unit *su = &m->su[i];
    const cs_input *src = cs_coupling_input(m->inner, i);
    su->smoothed = 0;
    if (src->eval) { su->cur.valid = 0; return src; }   /* not a polynomial: passed through unsmoothed */
    const int nu = src->nu;
    su->cur.T = src->T;
    su->cur.H = src->H;
    su->cur.deg = src->deg;
    su->cur.valid = 1;
    memcpy(su->cur.c, src->c, sizeof(double) * (size_t)(src->deg + 1) * nu);
    if (!su->prev.valid) return src;                   /* the first step: nothing to blend from */
    /* P(s): the previous polynomial continued, s' = (T + s H - T') / H' = alpha + beta s */
    const double alpha = (src->T - su->prev.T) / su->prev.H, beta = src->H / su->prev.H;
    const int dP = su->prev.deg, dC = src->deg, dD = dP > dC ? dP : dC;
    for (int la = 0; la < nu; la++) {
        reexpand(su->prev.c, dP, nu, la, alpha, beta, su->P);
        for (int k = 0; k <= dD; k++) {
            double pc = k <= dP ? su->P[(size_t)k * nu + la] : 0.0, cc = k <= dC ? src->c[(size_t)k * nu + la] : 0.0;
            su->D[(size_t)k * nu + la] = cc - pc;
        }
    }
    su->degP = dP;
    su->degD = dD;
    su->smoothed = 1;
    cs_input *in = &su->in;
    in->T = src->T;
    in->H = src->H;
    in->nu = nu;
    if (dD == 0) {
        /* fast path (e.g. ZOH): c = P + q D with a constant D, degree 5; higher dD are evaluated by the callback,
         * exactly as the product form (1 - q) P + q C (one rounding path whatever CS_MAXDEG is) */
        const int deg = 5;
        for (int la = 0; la < nu; la++)
            for (int k = 0; k <= deg; k++) {
                double v = k <= dP ? su->P[(size_t)k * nu + la] : 0.0;
                for (int a = 0; a <= dD && a <= k; a++) v += Q5[k - a] * su->D[(size_t)a * nu + la];
                in->c[(size_t)k * nu + la] = v;
            }
        in->deg = deg;
        in->eval = NULL;
        in->ctx = NULL;
    } else {
        in->deg = dD + 5;
        in->eval = smooth_eval;
        in->ctx = su;
    }
    return in;
}

static int sm_continuity(const cs_coupling *c, int i) {
    const smooth_coupling *m = c->content;
    if (m->su[i].smoothed) return CS_INPUT_C1;
    return cs_coupling_continuity(m->inner, i);
}

static int sm_accept(cs_coupling *c, double T1, const double *y, const double *ydot, cs_err *err) {
    smooth_coupling *m = c->content;
    for (int i = 0; i < m->net->nsub; i++) {
        smooth_unit *su = &m->su[i];
        if (!su->cur.valid) continue;                  /* the initial outputs: no step was taken */
        double *tmp = su->prev.c;
        su->prev = su->cur;
        su->cur.c = tmp;
        su->cur.valid = 0;
    }
    return cs_coupling_accept(m->inner, T1, y, ydot, err);
}

static void sm_snapshot_destroy(void *snap) {
    smooth_snapshot *p = snap;
    if (!p) return;
    cs_wrap_snapshot_close(&p->head);
    free(p->prevc);
    free(p->meta);
    free(p);
}

static void *sm_snapshot_create(cs_coupling *c) {
    smooth_coupling *m = c->content;
    smooth_snapshot *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->nsub = m->net->nsub;
    p->prevc = calloc(m->ncoef + 1, sizeof(double));
    p->meta = calloc((size_t)4 * p->nsub + 1, sizeof(double));
    if (!cs_wrap_snapshot_open(&p->head, c) || !p->prevc || !p->meta) { sm_snapshot_destroy(p); return NULL; }
    return p;
}

static void sm_save(cs_coupling *c, void *snap) {
    smooth_coupling *m = c->content;
    smooth_snapshot *p = snap;
    double *dst = p->prevc;
    for (int i = 0; i < p->nsub; i++) {
        const smooth_unit *su = &m->su[i];
        size_t n = (size_t)NC * su->in.nu;
        memcpy(dst, su->prev.c, sizeof(double) * n);
        dst += n;
        p->meta[4 * i] = su->prev.T;
        p->meta[4 * i + 1] = su->prev.H;
        p->meta[4 * i + 2] = su->prev.deg;
        p->meta[4 * i + 3] = su->prev.valid;
    }
    cs_wrap_save(c, &p->head);
}

static void sm_restore(cs_coupling *c, const void *snap) {
    smooth_coupling *m = c->content;
    const smooth_snapshot *p = snap;
    const double *src = p->prevc;
    for (int i = 0; i < p->nsub; i++) {
        smooth_unit *su = &m->su[i];
        size_t n = (size_t)NC * su->in.nu;
        memcpy(su->prev.c, src, sizeof(double) * n);
        src += n;
        su->prev.T = p->meta[4 * i];
        su->prev.H = p->meta[4 * i + 1];
        su->prev.deg = (int)p->meta[4 * i + 2];
        su->prev.valid = (int)p->meta[4 * i + 3];
        su->cur.valid = 0;
    }
    cs_wrap_restore(c, &p->head);
}

static void sm_destroy(cs_coupling *c) {
    smooth_coupling *m = c->content;
    if (!m) return;
    cs_coupling_destroy(m->inner);
    free(m->su);
    free(m->store);
    free(m);
    c->content = NULL;
}

static const cs_coupling_ops SMOOTH_OPS = {
    .predict = cs_wrap_predict,
    .input = sm_input,
    .on_unit_done = cs_wrap_on_unit_done,
    .accept = sm_accept,
    .continuity = sm_continuity,
    .snapshot_create = sm_snapshot_create,
    .save = sm_save,
    .restore = sm_restore,
    .snapshot_destroy = sm_snapshot_destroy,
    .destroy = sm_destroy,
    .set_history_depth = cs_wrap_set_history_depth,
};

int cs_smooth_coupling_create(cs_coupling *inner, const cs_network *net, cs_coupling **out, cs_err *err) {
    *out = NULL;
    if (!inner) return cs_fail(err, CS_ERR_ARG, "smoothing: no coupling to wrap");
    cs_coupling *c = calloc(1, sizeof *c);
    smooth_coupling *m = calloc(1, sizeof *m);
    if (!c || !m) { free(c); free(m); cs_coupling_destroy(inner); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    cs_wrap_init(c, &SMOOTH_OPS, m, inner);
    c->kind = CS_CPL_KIND_SMOOTH;
    m->inner = inner;
    m->net = net;
    m->ncoef = (size_t)NC * net->nu;
    m->su = calloc((size_t)net->nsub + 1, sizeof(smooth_unit));
    m->store = calloc(5 * m->ncoef + 1, sizeof(double));   /* in, prev, cur, P, D */
    if (!m->su || !m->store) { cs_coupling_destroy(c); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    double *p = m->store;
    for (int i = 0; i < net->nsub; i++) {
        smooth_unit *su = &m->su[i];
        size_t n = (size_t)NC * (net->uoff[i + 1] - net->uoff[i]);
        su->in.nu = net->uoff[i + 1] - net->uoff[i];
        su->in.c = p; p += n;
        su->prev.c = p; p += n;
        su->cur.c = p; p += n;
        su->P = p; p += n;
        su->D = p; p += n;
    }
    *out = c;
    return CS_OK;
}
