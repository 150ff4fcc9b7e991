/* NEPCE as a wrapper of a signal-based coupling: see coupling/nepce.h. */
#include "coupling/nepce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coupling/signal.h"
#include "coupling/wrap.h"

#define NC (CS_MAXDEG + 1)

typedef struct nepce {
    cs_coupling *inner;     /* the signal coupling whose inputs are corrected (first: coupling/wrap.h) */
    const cs_network *net;
    const cs_unit_access *units;
    cs_nepce_spec spec;
    cs_input *in;           /* per unit: the base input plus the correction */
    double *incoef;
    double *st;             /* corr (nu), yprev (ny), started, traced, fallback */
    size_t nst;
    double *corr, *yprev, *cnt;
    double *Hc;             /* in st: the step length the correction rates corr refer to (0: none yet) */
    double *intu;           /* nu: integral of the input handed out in this step */
    double *yint;           /* ny: integral of each output over the step */
    double H;
} nepce;

typedef struct nepce_snapshot { cs_wrap_snapshot head; double *st; } nepce_snapshot;

static int np_predict(cs_coupling *c, double T, double H, double Hnom, cs_err *err) {
    nepce *p = c->content;
    /* Variable macro steps (ECCO, adaptive control): corr is the rate K E_k / H_k that delivers the amount K E_k over
     * a step of length H_k = *Hc; over a step of another length H the same amount needs the rate corr H_k / H.
     * (Constant H: no rescaling, the numbers are those of the fixed-step method.) */
    if (*p->Hc > 0.0 && H != *p->Hc) {
        const double scale = *p->Hc / H;
        for (int a = 0; a < p->net->nu; a++) p->corr[a] *= scale;
    }
    *p->Hc = H;
    p->H = H;
    return cs_coupling_predict(p->inner, T, H, Hnom, err);
}

static const cs_input *np_input(cs_coupling *c, int i) {
    nepce *p = c->content;
    const cs_input *b = cs_coupling_input(p->inner, i);
    cs_input *in = &p->in[i];
    const int nu = in->nu, a0 = p->net->uoff[i];
    in->deg = b->deg; in->T = b->T; in->H = b->H;
    memcpy(in->c, b->c, sizeof(double) * (size_t)(b->deg + 1) * nu);
    for (int a = 0; a < nu; a++) {
        in->c[a] += p->corr[a0 + a];
        /* int_T^{T+H} u dt = H sum_m c_m / (m + 1) */
        double s = 0.0;
        for (int q = 0; q <= in->deg; q++) s += in->c[(size_t)q * nu + a] / (q + 1);
        p->intu[a0 + a] = s * in->H;
    }
    return in;
}

static int np_continuity(const cs_coupling *c, int i) { return CS_INPUT_JUMPS; }

/* int y_j dt over the accepted step of length H for the outputs of unit i: trace or trapezoidal rule. */
static void output_integrals(nepce *p, int i, double T1, const double *y) {
    const cs_network *net = p->net;
    const int j0 = net->yoff[i], ny = net->yoff[i + 1] - j0;
    const double H = p->H;
    if (p->units && cs_ua_trace_integral(p->units, i, T1, H, p->yint + j0)) {
        p->cnt[1] += 1.0;
        return;
    }
    for (int j = 0; j < ny; j++) p->yint[j0 + j] = 0.5 * H * (p->yprev[j0 + j] + y[j0 + j]);
    p->cnt[2] += 1.0;
}

static int np_accept(cs_coupling *c, double T1, const double *y, const double *ydot, cs_err *err) {
    nepce *p = c->content;
    const cs_network *net = p->net;
    if (p->cnt[0] > 0.0) {
        for (int i = 0; i < net->nsub; i++) output_integrals(p, i, T1, y);
        const double H = p->H, K = p->spec.K;
        const double f = p->spec.tau > 0.0 ? H / (p->spec.tau + H) : 1.0;
        for (int a = 0; a < net->nu; a++) {
            double E = cs_network_row(net, p->yint, 1, a, net->r[a] * H - p->intu[a]);
            double target = K * E / H;
            p->corr[a] += f * (target - p->corr[a]);
        }
    }
    p->cnt[0] = 1.0;
    memcpy(p->yprev, y, sizeof(double) * net->ny);
    return cs_coupling_accept(p->inner, T1, y, ydot, err);
}

static void *np_snapshot_create(cs_coupling *c) {
    nepce *p = c->content;
    nepce_snapshot *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->st = malloc(sizeof(double) * (p->nst + 1));
    if (!cs_wrap_snapshot_open(&q->head, c) || !q->st) {
        cs_wrap_snapshot_close(&q->head);
        free(q->st); free(q);
        return NULL;
    }
    return q;
}

static void np_save(cs_coupling *c, void *snap) {
    nepce *p = c->content;
    nepce_snapshot *q = snap;
    cs_wrap_save(c, &q->head);
    memcpy(q->st, p->st, sizeof(double) * p->nst);
}

static void np_restore(cs_coupling *c, const void *snap) {
    nepce *p = c->content;
    const nepce_snapshot *q = snap;
    cs_wrap_restore(c, &q->head);
    memcpy(p->st, q->st, sizeof(double) * p->nst);
}

static void np_snapshot_destroy(void *snap) {
    nepce_snapshot *q = snap;
    if (!q) return;
    cs_wrap_snapshot_close(&q->head);
    free(q->st);
    free(q);
}

static void np_destroy(cs_coupling *c) {
    nepce *p = c->content;
    if (!p) return;
    cs_coupling_destroy(p->inner);
    free(p->in); free(p->incoef); free(p->st); free(p->intu); free(p->yint);
    free(p);
    c->content = NULL;
}

static const cs_coupling_ops NEPCE_OPS = {
    .predict = np_predict,
    .input = np_input,
    .on_unit_done = cs_wrap_on_unit_done,
    .accept = np_accept,
    .continuity = np_continuity,
    .snapshot_create = np_snapshot_create,
    .save = np_save,
    .restore = np_restore,
    .snapshot_destroy = np_snapshot_destroy,
    .destroy = np_destroy,
    .set_history_depth = cs_wrap_set_history_depth,
};

int cs_nepce_coupling_create(const cs_network *net, const cs_unit_access *units, const cs_approx_spec *base,
                             const cs_nepce_spec *spec, cs_coupling **out, cs_err *err) {
    *out = NULL;
    if (!(isfinite(spec->K)) || !(spec->tau >= 0.0) || !isfinite(spec->tau))
        return cs_fail(err, CS_ERR_ARG, "NEPCE: K must be finite and filter >= 0");
    cs_coupling *c = calloc(1, sizeof *c);
    nepce *p = calloc(1, sizeof *p);
    if (!c || !p) { free(c); free(p); return cs_fail(err, CS_ERR_NOMEM, "NEPCE: out of memory"); }
    c->ops = &NEPCE_OPS;
    c->content = p;
    p->net = net;
    p->units = units;
    p->spec = *spec;
    int rc = cs_signal_coupling_create(net, base, 0, &p->inner, err);
    if (rc) { cs_coupling_destroy(c); return rc; }
    cs_wrap_init(c, &NEPCE_OPS, p, p->inner);
    c->kind = CS_CPL_KIND_NEPCE;
    p->nst = (size_t)net->nu + net->ny + 3 + 1;
    p->st = calloc(p->nst, sizeof(double));
    p->intu = calloc((size_t)net->nu + 1, sizeof(double));
    p->yint = calloc((size_t)net->ny + 1, sizeof(double));
    p->in = calloc((size_t)net->nsub, sizeof(cs_input));
    p->incoef = calloc((size_t)net->nu * NC + NC, sizeof(double));
    if (!p->st || !p->intu || !p->yint || !p->in || !p->incoef) {
        cs_coupling_destroy(c);
        return cs_fail(err, CS_ERR_NOMEM, "NEPCE: out of memory");
    }
    p->corr = p->st;
    p->yprev = p->st + net->nu;
    p->cnt = p->yprev + net->ny;
    p->Hc = p->cnt + 3;
    double *coef = p->incoef;
    for (int i = 0; i < net->nsub; i++) {
        p->in[i].nu = net->uoff[i + 1] - net->uoff[i];
        p->in[i].c = coef;
        coef += (size_t)NC * p->in[i].nu;
        if (units) {
            rc = cs_ua_set_trace(units, i, 1, err);
            if (rc) { cs_coupling_destroy(c); return rc; }
        }
    }
    *out = c;
    return CS_OK;
}

int cs_nepce_counts(const cs_coupling *c, long *traced, long *fallback, cs_err *err) {
    if (!c || c->kind != CS_CPL_KIND_NEPCE) return cs_fail(err, CS_ERR_ARG, "coupling: not a NEPCE coupling");
    const nepce *p = c->content;
    *traced = (long)p->cnt[1];
    *fallback = (long)p->cnt[2];
    return CS_OK;
}

/* ---- the kind (master/registry.c) ---- */

static const cs_param nepce_params[] = {
    CS_PARAM_FIELD(cs_nepce_spec, "K", CS_PARAM_DOUBLE, K), CS_PARAM_FIELD(cs_nepce_spec, "tau", CS_PARAM_DOUBLE, tau),
};

static int nepce_create(const void *spec, const cs_coupling_env *e, cs_coupling **out, cs_err *err) {
    return cs_nepce_coupling_create(e->net, e->units, e->approx, spec, out, err);
}

static int nepce_log(const void *coupling, cs_fields *out, cs_err *err) {
    long traced = 0, fallback = 0;
    CS_TRY(cs_nepce_counts(coupling, &traced, &fallback, err));
    cs_fields_count(out, "traced_steps", traced);
    cs_fields_count(out, "macro_point_steps", fallback);
    return CS_OK;
}

const cs_kind cs_coupling_nepce_kind = {"nepce", nepce_params, CS_NPARAMS(nepce_params), sizeof(cs_nepce_spec), NULL,
                                        {.coupling = nepce_create}, nepce_log};
