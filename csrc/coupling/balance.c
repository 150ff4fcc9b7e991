/* Balance correction coupling wrapper: see coupling/balance.h (moshagen §2.6, eqs. 77-79). */
#include "coupling/balance.h"
#include "coupling/wrap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NC (CS_MAXDEG + 1)
#define MS CS_BALANCE_MAX_SPREAD

typedef struct bal_unit_input {
    cs_input in;                 /* what unit i sees: the inner input plus the corrections */
    const cs_input *src;         /* the inner (uncorrected) input of this step */
    struct balance_coupling *b;
    int corrected;               /* unit i has a corrected input with a pending correction this step */
} bal_unit_input;

typedef struct balance_coupling {
    cs_coupling *inner;
    const cs_network *net;
    const cs_unit_access *units;
    cs_balance_spec spec;
    int M;
    unsigned char *track, *corr;  /* per input: connected (imbalance tracked), corrected */
    unsigned char *source;        /* per unit: feeds a tracked input */
    double K[MS][5];              /* kernel shape per interval index l */
    int Kdeg;
    double share[MS];             /* ∫_0^1 K_l */
    double T, H;
    int started;
    double *pend;                 /* per input M pending errors, newest first (pend[a*M + l]: applied with l) */
    double *cum;                  /* per input cumulative imbalance */
    double *intU;                 /* per input ∫ of this step's uncorrected input */
    double *Qy;                   /* per output the step integral */
    double *coef;                 /* per unit NC x nu coefficient storage */
    double *uscratch;             /* nu values for eval-path inputs */
    bal_unit_input *bu;           /* per unit */
} balance_coupling;

/* snapshot_destroy has no coupling argument: the snapshot remembers how to free the inner one */
typedef struct bal_snapshot {
    cs_wrap_snapshot head;         /* the inner coupling's */
    double *pend, *cum;
    int started;
} bal_snapshot;

int cs_balance_kernel(int kernel, int M, int l, double c[5]) {
    memset(c, 0, 5 * sizeof(double));
    if (kernel == CS_BALANCE_CONSTANT) { c[0] = 1.0 / M; return 0; }
    /* 30 σ²(1-σ)² / M with σ = a + b s, a = l/M, b = 1/M: p = σ - σ² = (a - a²) + (b - 2ab) s - b² s² */
    const double a = (double)l / M, b = 1.0 / M;
    const double p[3] = {a - a * a, b - 2.0 * a * b, -b * b};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) c[i + j] += p[i] * p[j];
    for (int m = 0; m < 5; m++) c[m] *= 30.0 / M;
    return 4;
}

const double *cs_balance_cumulative(const cs_coupling *c) { return ((const balance_coupling *)c->content)->cum; }

/* ∫_T^{T+H} of an input's component la: analytic for polynomials, Gauss-Legendre with 8 nodes (exact up to degree
 * 15: smoothed polynomial inputs) for the evaluation path. */
static const double GL_X[8] = {-0.9602898564975363, -0.7966664774136267, -0.5255324099163290, -0.1834346424956498,
                               0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363};
static const double GL_W[8] = {0.1012285362903763, 0.2223810344533745, 0.3137066278286366, 0.3626837833783620,
                               0.3626837833783620, 0.3137066278286366, 0.2223810344533745, 0.1012285362903763};

static void input_integrals(balance_coupling *b, const cs_input *in, int a0, double *intU) {
    const int nu = in->nu;
    if (!in->eval) {
        for (int la = 0; la < nu; la++) {
            double s = 0.0;
            for (int m = 0; m <= in->deg; m++) s += in->c[(size_t)m * nu + la] / (m + 1);
            intU[a0 + la] = in->H * s;
        }
        return;
    }
    for (int la = 0; la < nu; la++) intU[a0 + la] = 0.0;
    for (int q = 0; q < 8; q++) {
        double t = in->T + 0.5 * in->H * (1.0 + GL_X[q]);
        in->eval(in, t, b->uscratch, NULL);
        for (int la = 0; la < nu; la++) intU[a0 + la] += 0.5 * in->H * GL_W[q] * b->uscratch[la];
    }
}

/* Correction polynomial coefficients of input a on this step (in s), added into c (stride nu, column la). */
static int add_correction(const balance_coupling *b, int a, double *c, int nu, int la) {
    const double *pe = b->pend + (size_t)a * b->M;
    int any = 0;
    for (int l = 0; l < b->M; l++) {
        if (pe[l] == 0.0) continue;
        any = 1;
        for (int m = 0; m <= b->Kdeg; m++) c[(size_t)m * nu + la] += pe[l] * b->K[l][m] / b->H;
    }
    return any;
}

/* Evaluation path (the inner input is not a polynomial): inner value plus the correction polynomial. */
static int bal_eval(const cs_input *in, double t, double *u, double *udot) {
    const bal_unit_input *bu = in->ctx;
    const balance_coupling *b = bu->b;
    const cs_input *src = bu->src;
    if (src->eval) { int rc = src->eval(src, t, u, udot); if (rc) return rc; }
    else {
        if (u) cs_input_eval(src, t, u);
        if (udot) cs_input_eval_dt(src, t, udot);
    }
    const int nu = in->nu;
    const double s = (t - in->T) / in->H;
    for (int la = 0; la < nu; la++) {
        double v = in->c[(size_t)b->Kdeg * nu + la], d = 0.0;
        for (int m = b->Kdeg - 1; m >= 0; m--) { d = d * s + v; v = v * s + in->c[(size_t)m * nu + la]; }
        if (u) u[la] += v;
        if (udot) udot[la] += d / in->H;
    }
    return 0;
}

static int bal_predict(cs_coupling *c, double T, double H, double Hnom, cs_err *err) {
    balance_coupling *b = c->content;
    b->T = T;
    b->H = H;
    return cs_coupling_predict(b->inner, T, H, Hnom, err);
}

static const cs_input *bal_input(cs_coupling *c, int i) {
    balance_coupling *b = c->content;
    const cs_network *net = b->net;
    bal_unit_input *bu = &b->bu[i];
    const cs_input *src = cs_coupling_input(b->inner, i);
    bu->src = src;
    const int a0 = net->uoff[i], nu = src->nu;
    input_integrals(b, src, a0, b->intU);
    cs_input *in = &bu->in;
    in->T = src->T;
    in->H = src->H;
    in->nu = nu;
    if (!src->eval) {
        int deg = src->deg;
        memcpy(in->c, src->c, sizeof(double) * (size_t)(deg + 1) * nu);
        for (int m = deg + 1; m <= b->Kdeg; m++) memset(in->c + (size_t)m * nu, 0, sizeof(double) * nu);
        int any = 0;
        for (int la = 0; la < nu; la++)
            if (b->corr[a0 + la]) any |= add_correction(b, a0 + la, in->c, nu, la);
        if (any && b->Kdeg > deg) deg = b->Kdeg;
        in->deg = deg;
        in->eval = NULL;
        bu->corrected = any;
        return in;
    }
    /* evaluation path: in->c holds only the correction polynomial */
    memset(in->c, 0, sizeof(double) * NC * nu);
    int any = 0;
    for (int la = 0; la < nu; la++)
        if (b->corr[a0 + la]) any |= add_correction(b, a0 + la, in->c, nu, la);
    bu->corrected = any;
    if (!any) return src;
    in->deg = b->Kdeg;
    in->eval = bal_eval;
    in->ctx = bu;
    return in;
}

static int bal_continuity(const cs_coupling *c, int i) {
    const balance_coupling *b = c->content;
    if (b->bu[i].corrected) return CS_INPUT_JUMPS;
    return cs_coupling_continuity(b->inner, i);
}

static int bal_accept(cs_coupling *c, double T1, const double *y, const double *ydot, cs_err *err) {
    balance_coupling *b = c->content;
    const cs_network *net = b->net;
    if (!b->started) {               /* the initial outputs at T_0: nothing was delivered yet */
        b->started = 1;
        return cs_coupling_accept(b->inner, T1, y, ydot, err);
    }
    for (int i = 0; i < net->nsub; i++) {
        if (!b->source[i]) continue;
        CS_TRY(cs_ua_step_integral(b->units, i, b->Qy + net->yoff[i]));
    }
    const int M = b->M;
    for (int a = 0; a < net->nu; a++) {
        if (!b->track[a]) continue;
        double Q = cs_network_row(net, b->Qy, 1, a, net->r[a] * b->H); /* ∫ (L y + r) dt over the step */
        double *pe = b->pend + (size_t)a * M;
        double intC = 0.0;
        if (b->corr[a])
            for (int l = 0; l < M; l++) intC += pe[l] * b->share[l];
        b->cum[a] += Q - (b->intU[a] + intC);
        if (!b->corr[a]) continue;
        double e = b->spec.variant == CS_BALANCE_LITERAL ? Q - (b->intU[a] + intC) : Q - b->intU[a];
        for (int l = M - 1; l >= 1; l--) pe[l] = pe[l - 1];
        pe[0] = e;
    }
    return cs_coupling_accept(b->inner, T1, y, ydot, err);
}

static void bal_snapshot_destroy(void *snap);

static void *bal_snapshot_create(cs_coupling *c) {
    balance_coupling *b = c->content;
    bal_snapshot *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    size_t nu = (size_t)b->net->nu;
    p->pend = calloc(nu * b->M + 1, sizeof(double));
    p->cum = calloc(nu + 1, sizeof(double));
    if (!cs_wrap_snapshot_open(&p->head, c) || !p->pend || !p->cum) {
        bal_snapshot_destroy(p);
        return NULL;
    }
    return p;
}

static void bal_save(cs_coupling *c, void *snap) {
    balance_coupling *b = c->content;
    bal_snapshot *p = snap;
    size_t nu = (size_t)b->net->nu;
    memcpy(p->pend, b->pend, sizeof(double) * nu * b->M);
    memcpy(p->cum, b->cum, sizeof(double) * nu);
    p->started = b->started;
    cs_wrap_save(c, &p->head);
}

static void bal_restore(cs_coupling *c, const void *snap) {
    balance_coupling *b = c->content;
    const bal_snapshot *p = snap;
    size_t nu = (size_t)b->net->nu;
    memcpy(b->pend, p->pend, sizeof(double) * nu * b->M);
    memcpy(b->cum, p->cum, sizeof(double) * nu);
    b->started = p->started;
    cs_wrap_restore(c, &p->head);
}

static void bal_destroy(cs_coupling *c) {
    balance_coupling *b = c->content;
    if (!b) return;
    cs_coupling_destroy(b->inner);
    free(b->track); free(b->corr); free(b->source); free(b->pend); free(b->cum); free(b->intU); free(b->Qy);
    free(b->coef); free(b->uscratch); free(b->bu);
    free(b);
    c->content = NULL;
}

static void bal_snapshot_destroy(void *snap) {
    bal_snapshot *p = snap;
    if (!p) return;
    cs_wrap_snapshot_close(&p->head);
    free(p->pend); free(p->cum);
    free(p);
}

static const cs_coupling_ops BALANCE_OPS = {
    .predict = bal_predict,
    .input = bal_input,
    .on_unit_done = cs_wrap_on_unit_done,
    .accept = bal_accept,
    .continuity = bal_continuity,
    .snapshot_create = bal_snapshot_create,
    .save = bal_save,
    .restore = bal_restore,
    .snapshot_destroy = bal_snapshot_destroy,
    .destroy = bal_destroy,
    .set_history_depth = cs_wrap_set_history_depth,
};

int cs_balance_coupling_create(cs_coupling *inner, const cs_network *net, const cs_unit_access *units,
                               const unsigned char *corrected, const cs_balance_spec *spec, cs_coupling **out,
                               cs_err *err) {
    *out = NULL;
    if (!inner) return cs_fail(err, CS_ERR_ARG, "balance correction: no coupling to wrap");
    if (spec->kernel != CS_BALANCE_CONSTANT && spec->kernel != CS_BALANCE_SMOOTH) {
        cs_coupling_destroy(inner);
        return cs_fail(err, CS_ERR_ARG, "kernel: unknown balance kernel code %d", spec->kernel);
    }
    if (spec->spread < 1 || spec->spread > MS) {
        cs_coupling_destroy(inner);
        return cs_fail(err, CS_ERR_ARG, "spread: must be in 1..%d, got %d", MS, spec->spread);
    }
    if (spec->variant != CS_BALANCE_TELESCOPING && spec->variant != CS_BALANCE_LITERAL) {
        cs_coupling_destroy(inner);
        return cs_fail(err, CS_ERR_ARG, "variant: unknown balance variant code %d", spec->variant);
    }
    cs_coupling *c = calloc(1, sizeof *c);
    balance_coupling *b = calloc(1, sizeof *b);
    if (!c || !b) { free(c); free(b); cs_coupling_destroy(inner); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    cs_wrap_init(c, &BALANCE_OPS, b, inner);
    c->kind = CS_CPL_KIND_BALANCE;
    b->inner = inner;
    b->net = net;
    b->units = units;
    b->spec = *spec;
    b->M = spec->spread;
    size_t nu = (size_t)net->nu, ny = (size_t)net->ny, ns = (size_t)net->nsub;
    b->track = calloc(nu + 1, 1);
    b->corr = calloc(nu + 1, 1);
    b->source = calloc(ns + 1, 1);
    b->pend = calloc(nu * b->M + 1, sizeof(double));
    b->cum = calloc(nu + 1, sizeof(double));
    b->intU = calloc(nu + 1, sizeof(double));
    b->Qy = calloc(ny + 1, sizeof(double));
    b->coef = calloc(nu * NC + NC, sizeof(double));
    b->uscratch = calloc(nu + 1, sizeof(double));
    b->bu = calloc(ns + 1, sizeof(bal_unit_input));
    if (!b->track || !b->corr || !b->source || !b->pend || !b->cum || !b->intU || !b->Qy || !b->coef ||
        !b->uscratch || !b->bu) {
        cs_coupling_destroy(c);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    for (int a = 0; a < net->nu; a++) {
        if (net->rowptr[a + 1] == net->rowptr[a]) continue;
        b->track[a] = 1;
        b->corr[a] = corrected ? corrected[a] != 0 : 1;
        for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++) b->source[net->out_sub[net->col[k]]] = 1;
    }
    for (int i = 0; i < net->nsub; i++)
        if (b->source[i] && !cs_ua_has_step_integral(units, i)) {
            int rc = cs_fail(err, CS_ERR_ARG, "coupling: balance correction integrates the outputs of subsystem %s "
                             "over each macro step, which this subsystem cannot do (an FMU reports no step "
                             "integrals); couple it without BalanceCorrection or model it as LTI/ODE/CModel",
                             cs_ua_name(units, i));
            cs_coupling_destroy(c);
            return rc;
        }
    for (int l = 0; l < b->M; l++) {
        b->Kdeg = cs_balance_kernel(spec->kernel, b->M, l, b->K[l]);
        double s = 0.0;
        for (int m = 0; m <= b->Kdeg; m++) s += b->K[l][m] / (m + 1);
        b->share[l] = s;
    }
    double *coef = b->coef;
    for (int i = 0; i < net->nsub; i++) {
        b->bu[i].b = b;
        b->bu[i].in.nu = net->uoff[i + 1] - net->uoff[i];
        b->bu[i].in.c = coef;
        coef += (size_t)NC * b->bu[i].in.nu;
    }
    *out = c;
    return CS_OK;
}

/* ---- the parameters of cs_balance_spec (master/registry.c) ---- */

static const cs_param balance_params[] = {
    CS_PARAM_FIELD(cs_balance_spec, "kernel", CS_PARAM_INT, kernel),
    CS_PARAM_FIELD(cs_balance_spec, "spread", CS_PARAM_INT, spread),
    CS_PARAM_FIELD(cs_balance_spec, "variant", CS_PARAM_INT, variant),
};

const cs_kind cs_balance_kind = {"balance", balance_params, CS_NPARAMS(balance_params), sizeof(cs_balance_spec), NULL,
                                 {NULL}, NULL};
