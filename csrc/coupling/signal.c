/* Signal-based coupling: every exchanged output y_j is replaced on [T_N, T_{N+1}] by a polynomial built from its
 * history at the macro points (coupling/approx.h: ZOH, Lagrange, EXTRIPOL-C0/C1, Hermite; busch2016 §2, moshagen
 * eq. 90), and u_i(t) = L_i ỹ(t) + r_i. Under Gauss-Seidel a unit stepped later interpolates the outputs of units
 * already at T_{N+1} through y*(T_{N+1}), y(T_N), ... (busch2016 eq. 13; the rule of schemes/scheme.h).
 *
 * Weights: on a uniform grid the weights in s = (t - T_N)/H do not depend on H, so regular steps take them from a
 * cache computed once from the nominal grid (s = 0, -1, -2, ...), not from T_{N+1} - T_N, which varies in its last
 * bits. Start-up steps, a shortened last step and explicit grids compute them from the actual times. */
#include "coupling/signal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NV CS_APPROX_NV
#define NC (CS_MAXDEG + 1)

typedef struct signal_coupling {
    const cs_network *net;
    cs_approx_spec spec;
    int depth;                     /* history samples kept */
    int need;                      /* samples the full-degree weights read (cs_approx_points_needed) */
    int nhist;                     /* samples in the history */
    long accepted;                 /* accepted steps (0: the first step is being taken) */
    double hT[CS_MAXHIST];         /* sample times, newest first */
    double hH[CS_MAXHIST];         /* hH[q]: nominal step from sample q+1 to q (0: not on a uniform grid) */
    double *hv;                    /* per output NV entries: values newest first, then derivatives */
    double *cext, *cint;           /* per output NC coefficients */
    const cs_approx_weights *Wext, *Wint;  /* this step's weights: into the cache or the scratch below */
    cs_approx_weights wext_tmp, wint_tmp;
    cs_approx_weights cache[2][CS_MAXHIST + 1];
    unsigned char cached[2][CS_MAXHIST + 1];
    double cache_H;                /* nominal step of the cache (derivative weights scale with it) */
    double Hw;                     /* the step the extrapolation weights of this step were computed with */
    double Hwi;                    /* ... and the interpolation weights (Gauss-Seidel) */
    int dext;                      /* degree of this step's extrapolants (acc positions: Wext->deg + 1) */
    /* acc/accRel (kraft2021 App. C): per output the velocity output whose polynomial it integrates (-1: none), or
     * NULL; the ACC part of accRel's weights and the relaxed end node's basis polynomial */
    int *integral_of;
    cs_approx_weights wacc;
    double ell[NC];
    /* Gauss-Seidel (interpolated) acc/accRel: data of a done unit's outputs with its T_{N+1} sample in slot 0; the
     * degree of the interpolants (acc positions: one more than Wint) */
    double *hvi;
    int dint;
    /* the extrapolation weights of the last step while they stay valid: same nominal step and history length,
     * and the newest sample on the same uniform grid (the older ones were checked when the weights were chosen);
     * NULL after a restore */
    const cs_approx_weights *wext_last;
    double wext_last_H;
    int wext_last_nhist;
    double T, H, Hnom;
    int interp_ready;              /* Wint valid for this step */
    cs_input *in;                  /* per unit */
    double *incoef;                /* the inputs' coefficients, unit after unit ((CS_MAXDEG + 1) x nu_i each) */
    int *inpos;                    /* per global input a: index of its s^0 coefficient in incoef */
    unsigned char *done;           /* per unit: reached T_{N+1} in this step */
    unsigned char *cont;           /* per unit: CS_INPUT_* of the last input built */
    int ndone;                     /* units done in this step (0: every input is the extrapolated one) */
    /* adaptive macro steps (set_degree / comparative): degree κ from the step controller, comparative inputs */
    int kappa_set, kappa;
    cs_input *cmp_in;              /* per unit */
    double *cmp_incoef, *chat;     /* input coefficients; per output NC coefficients */
} signal_coupling;

typedef struct signal_snapshot {
    int nhist;
    long accepted;
    double hT[CS_MAXHIST], hH[CS_MAXHIST];
    double *hv;
    size_t n;
} signal_snapshot;

/* Polynomial coefficients c[0..deg] of one signal from its data vector v (NV entries). */
static inline void coefs(const cs_approx_weights *W, const double *v, double *c) { cs_approx_coefs(W, v, c); }

/* Are the newest `n` samples (and, for interpolation, the step itself) on the uniform grid of step Hnom? */
static int uniform(const signal_coupling *s, int n, double Hnom) {
    if (!(Hnom > 0.0)) return 0;
    for (int q = 0; q + 1 < n; q++)
        if (s->hH[q] != Hnom) return 0;
    return 1;
}

/* Weights on the actual sample times (a non-uniform grid, or a degree set for this step); with `interpolate` the
 * newest sample is T + H (Gauss-Seidel: the source unit has reached T_{N+1}). */
static int weights_on_times(signal_coupling *s, const cs_approx_spec *sp, int interpolate, int navail, double T,
                            double H, const cs_approx_weights **W, cs_err *err) {
    cs_approx_weights *tmp = interpolate ? &s->wint_tmp : &s->wext_tmp;
    double Ti[CS_MAXHIST];
    const double *Tv = s->hT;
    if (interpolate) {
        Ti[0] = T + H;
        memcpy(Ti + 1, s->hT, sizeof(double) * (CS_MAXHIST - 1));
        Tv = Ti;
    }
    *W = tmp;
    if (interpolate) s->Hwi = H;
    else s->Hw = H;
    return cs_approx_weights_compute(sp, interpolate, navail, Tv, T, H, tmp, err);
}

static int weights(signal_coupling *s, int interpolate, double T, double H, double Hnom,
                   const cs_approx_weights **W, cs_err *err) {
    int navail = interpolate ? s->nhist + 1 : s->nhist;
    if (navail > CS_MAXHIST) navail = CS_MAXHIST;
    if (s->kappa_set) {
        /* degree κ set by an adaptive step controller: Lagrange of degree κ on the actual (non-uniform) times,
         * reduced while the history is short (the fixed-degree path below is not used, so its numbers stay as
         * they are) */
        cs_approx_spec sp = {CS_APPROX_LAGRANGE, s->kappa};
        return weights_on_times(s, &sp, interpolate, navail, T, H, W, err);
    }
    int need = s->need + (interpolate && cs_approx_is_acc(s->spec.kind));  /* acc: also y(T_N) behind T_{N+1} */
    int n = navail < need ? navail : need;          /* samples the weights read */
    if (uniform(s, interpolate ? n - 1 : n, Hnom)) {
        if (Hnom != s->cache_H) {
            memset(s->cached, 0, sizeof s->cached);
            s->cache_H = Hnom;
        }
        if (!s->cached[interpolate][n]) {
            CS_TRY(cs_approx_uniform_weights(&s->spec, interpolate, n, Hnom, &s->cache[interpolate][n], err));
            s->cached[interpolate][n] = 1;
        }
        *W = &s->cache[interpolate][n];
        if (interpolate) s->Hwi = Hnom;
        else s->Hw = Hnom;
        if (!interpolate) {
            s->wext_last = *W;
            s->wext_last_H = Hnom;
            s->wext_last_nhist = s->nhist;
        }
        return CS_OK;
    }
    return weights_on_times(s, &s->spec, interpolate, navail, T, H, W, err);
}

static void build_input(signal_coupling *s, int i);
static void build_all_extrapolated(signal_coupling *s);

/* acc/accRel: a position output's polynomial is the integral of its velocity's, x̃(s) = x_N + H ∫_0^s ṽ(σ) dσ
 * (kraft2021 App. C: the extrapolated accelerations integrated twice). accRel relaxes the end value of that
 * integrated polynomial instead of the one from the position's own derivative samples: the difference of the two
 * ACC end values moves the relaxed end node (approx.h: cs_approx_acc_parts). */
static int integrate_positions(signal_coupling *s, cs_err *err) {
    const int dv = s->Wext->deg;
    if (s->spec.kind == CS_APPROX_ACC_REL) {
        int navail = s->nhist < s->need ? s->nhist : s->need;
        CS_TRY(cs_approx_acc_parts(&s->spec, navail, s->hT, s->T, s->Hw, dv, &s->wacc, s->ell, err));
    }
    s->dext = cs_approx_acc_positions(&s->spec, 0, s->integral_of, 0, s->net->ny, s->hv, s->cext, dv, s->Hw,
                                      &s->wacc, s->ell);
    return CS_OK;
}

static int sig_predict(cs_coupling *c, double T, double H, double Hnom, cs_err *err) {
    signal_coupling *s = c->content;
    const cs_network *net = s->net;
    if (s->nhist < 1) return cs_fail(err, CS_ERR_ARG, "coupling: predict before the initial outputs were accepted");
    s->T = T; s->H = H; s->Hnom = Hnom;
    if (s->wext_last && Hnom == s->wext_last_H && s->nhist == s->wext_last_nhist && s->hH[0] == Hnom &&
        !s->kappa_set)
    {
        s->Wext = s->wext_last;   /* the grid stays uniform: the weights of the last step */
        s->Hw = s->wext_last_H;
    }
    else
        CS_TRY(weights(s, 0, T, H, Hnom, &s->Wext, err));
    const cs_approx_weights *W = s->Wext;
    if (W->deg == 0 && W->npts == 1 && !W->uses_deriv) { /* a held sample (ZOH, start-up): one product per output */
        const double w0 = W->W[0];
        for (int j = 0; j < net->ny; j++) s->cext[(size_t)j * NC] = w0 * s->hv[(size_t)j * NV];
    } else {
        for (int j = 0; j < net->ny; j++) coefs(W, s->hv + (size_t)j * NV, s->cext + (size_t)j * NC);
    }
    s->dext = W->deg;
    if (s->integral_of) CS_TRY(integrate_positions(s, err));
    s->interp_ready = 0;
    if (s->ndone) memset(s->done, 0, (size_t)net->nsub);
    s->ndone = 0;
    build_all_extrapolated(s);
    c->ready = s->in;
    c->ready_cont = s->cont;
    return CS_OK;
}

/* Input polynomial of unit i: c[m][la] = r_a delta_m0 + sum_k gain_k coef(source_k)[m], where a source already at
 * T_{N+1} (Gauss-Seidel) contributes its interpolant and any other its extrapolant. */
static void build_input(signal_coupling *s, int i) {
    const cs_network *net = s->net;
    cs_input *in = &s->in[i];
    const int nu = in->nu, a0 = net->uoff[i];
    const int *restrict rowptr = net->rowptr, *restrict col = net->col, *restrict out_sub = net->out_sub;
    const double *restrict gain = net->gain, *restrict r = net->r;
    const unsigned char *restrict done = s->done;
    const double *restrict cext = s->cext, *restrict cint = s->cint;
    double *restrict cin = in->c;
    const int dext = s->dext, dint = s->interp_ready ? s->dint : 0, dmax = dext > dint ? dext : dint;
    int interp = 0, deg = 0;
    in->T = s->T;
    in->H = s->H;
    for (int la = 0; la < nu; la++) {
        const int a = a0 + la;
        double c0 = r[a];
        for (int m = 1; m <= dmax; m++) cin[m * nu + la] = 0.0;
        for (int k = rowptr[a]; k < rowptr[a + 1]; k++) {
            const int j = col[k], from_done = done[out_sub[j]];
            const int d = from_done ? dint : dext;
            const double *cj = (from_done ? cint : cext) + (size_t)j * NC;
            const double g = gain[k];
            interp |= from_done;
            if (d > deg) deg = d;
            c0 += g * cj[0];
            for (int m = 1; m <= d; m++) cin[m * nu + la] += g * cj[m];
        }
        cin[la] = c0;
    }
    in->deg = deg;
    /* EXTRIPOL inputs continue the previous window's polynomial at T_N (approx.c); interpolated Gauss-Seidel inputs
     * and every other approximation may jump there. */
    int kind = s->spec.kind, cont = CS_INPUT_JUMPS;
    if (!interp && s->accepted > 0)
        cont = kind == CS_APPROX_EXTRIPOL_C1 ? CS_INPUT_C1 : kind == CS_APPROX_EXTRIPOL_C0 ? CS_INPUT_C0 : CS_INPUT_JUMPS;
    s->cont[i] = (unsigned char)cont;
}

/* All inputs from the extrapolants (no unit done yet): one flat pass over the inputs, u = L ỹ + r. */
static void build_all_extrapolated(signal_coupling *s) {
    const cs_network *net = s->net;
    const int *restrict rowptr = net->rowptr, *restrict col = net->col, *restrict pos = s->inpos;
    const double *restrict gain = net->gain, *restrict r = net->r, *restrict cext = s->cext;
    double *restrict coef = s->incoef;
    const int dext = s->dext, kind = s->spec.kind;
    int cont = CS_INPUT_JUMPS;
    if (s->accepted > 0)
        cont = kind == CS_APPROX_EXTRIPOL_C1 ? CS_INPUT_C1 : kind == CS_APPROX_EXTRIPOL_C0 ? CS_INPUT_C0 : CS_INPUT_JUMPS;
    for (int i = 0; i < net->nsub; i++) {
        cs_input *in = &s->in[i];
        in->T = s->T;
        in->H = s->H;
        in->deg = dext;
        s->cont[i] = (unsigned char)cont;
    }
    if (dext == 0) { /* constant inputs: u = L ỹ(T_N) + r */
        for (int a = 0; a < net->nu; a++) coef[pos[a]] = cs_network_row(net, cext, NC, a, r[a]);
        return;
    }
    for (int a = 0; a < net->nu; a++) {
        double *restrict c = coef + pos[a];
        const int nu = s->in[net->in_sub[a]].nu;   /* row stride of the unit's coefficients */
        double cm[NC] = {r[a]};
        for (int k = rowptr[a]; k < rowptr[a + 1]; k++) {
            const double *cj = cext + (size_t)col[k] * NC;
            for (int m = 0; m <= dext; m++) cm[m] += gain[k] * cj[m];
        }
        for (int m = 0; m <= dext; m++) c[m * nu] = cm[m];
    }
}

/* Jacobi inputs (and those of a Gauss-Seidel step's first unit) are built in predict, in one pass; only inputs that
 * read a unit already done in this step are rebuilt here. */
static const cs_input *sig_input(cs_coupling *c, int i) {
    signal_coupling *s = c->content;
    if (s->ndone) build_input(s, i);
    return &s->in[i];
}

static int sig_continuity(const cs_coupling *c, int i) { return ((signal_coupling *)c->content)->cont[i]; }

/* The outputs of a unit at T_{N+1} (Gauss-Seidel): their interpolants for the units stepped later (busch2016
 * eq. 13); under acc/accRel the data are kept in hvi, since a position's polynomial then integrates its velocity's
 * (each pair lies in one unit: cs_signal_coupling_set_integrals). */
static int sig_on_unit_done(cs_coupling *c, int i, double T1, const double *y_i, const double *ydot_i, cs_err *err) {
    signal_coupling *s = c->content;
    const cs_network *net = s->net;
    if (!s->interp_ready) {
        CS_TRY(weights(s, 1, s->T, s->H, s->Hnom, &s->Wint, err));
        s->dint = s->Wint->deg + (s->integral_of && s->spec.kind == CS_APPROX_ACC);
        s->interp_ready = 1;
    }
    const int j0 = net->yoff[i], j1 = net->yoff[i + 1];
    double vloc[NV];
    for (int j = j0; j < j1; j++) {
        const double *h = s->hv + (size_t)j * NV;
        double *v = s->integral_of ? s->hvi + (size_t)j * NV : vloc, *cj = s->cint + (size_t)j * NC;
        v[0] = y_i[j - j0];
        v[CS_MAXHIST] = ydot_i ? ydot_i[j - j0] : 0.0;
        for (int q = 1; q < CS_MAXHIST; q++) { v[q] = h[q - 1]; v[CS_MAXHIST + q] = h[CS_MAXHIST + q - 1]; }
        if (s->integral_of)
            for (int m = 0; m < NC; m++) cj[m] = 0.0;   /* velocities: no stale coefficient up to dint */
        coefs(s->Wint, v, cj);
    }
    if (s->integral_of)
        cs_approx_acc_positions(&s->spec, 1, s->integral_of, j0, j1, s->hvi, s->cint, s->Wint->deg, s->Hwi, NULL,
                                NULL);
    s->done[i] = 1;
    s->ndone++;
    c->ready = NULL;   /* the inputs of units stepped later interpolate this unit (busch2016 eq. 13) */
    return CS_OK;
}

/* Push the consistent outputs at T1 (and y') into the history (only the `depth` samples the weights read). */
static inline void push(signal_coupling *s, double T1, double Hnom, const double *y, const double *ydot) {
    const cs_network *net = s->net;
    const int d = s->depth, ny = net->ny;
    for (int q = d - 1; q >= 1; q--) { s->hT[q] = s->hT[q - 1]; s->hH[q] = s->hH[q - 1]; } /* nhist <= d are read */
    s->hT[0] = T1;
    s->hH[0] = Hnom;
    double *restrict hv = s->hv;
    if (d == 1 && !ydot) {
        for (int j = 0; j < ny; j++) hv[(size_t)j * NV] = y[j];
    } else {
        for (int j = 0; j < ny; j++) {
            double *h = hv + (size_t)j * NV;
            for (int q = d - 1; q >= 1; q--) h[q] = h[q - 1];
            h[0] = y[j];
            if (ydot) {
                for (int q = d - 1; q >= 1; q--) h[CS_MAXHIST + q] = h[CS_MAXHIST + q - 1];
                h[CS_MAXHIST] = ydot[j];
            }
        }
    }
    if (s->nhist < d) s->nhist++;
}

static int sig_accept(cs_coupling *c, double T1, const double *y, const double *ydot, cs_err *err) {
    signal_coupling *s = c->content;
    if (s->nhist == 0) {
        push(s, T1, 0.0, y, ydot); /* initial outputs y(T_0) */
        return CS_OK;
    }
    push(s, T1, s->Hnom, y, ydot);
    s->accepted++;
    return CS_OK;
}

static void *sig_snapshot_create(cs_coupling *c) {
    signal_coupling *s = c->content;
    signal_snapshot *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = (size_t)s->net->ny * NV;
    p->hv = malloc(sizeof(double) * (p->n + 1));
    if (!p->hv) { free(p); return NULL; }
    return p;
}

static void sig_save(cs_coupling *c, void *snap) {
    signal_coupling *s = c->content;
    signal_snapshot *p = snap;
    p->nhist = s->nhist;
    p->accepted = s->accepted;
    memcpy(p->hT, s->hT, sizeof p->hT);
    memcpy(p->hH, s->hH, sizeof p->hH);
    memcpy(p->hv, s->hv, sizeof(double) * p->n);
}

static void sig_restore(cs_coupling *c, const void *snap) {
    signal_coupling *s = c->content;
    const signal_snapshot *p = snap;
    s->nhist = p->nhist;
    s->accepted = p->accepted;
    s->wext_last = NULL;
    memcpy(s->hT, p->hT, sizeof p->hT);
    memcpy(s->hH, p->hH, sizeof p->hH);
    memcpy(s->hv, p->hv, sizeof(double) * p->n);
}

static void sig_snapshot_destroy(void *snap) {
    signal_snapshot *p = snap;
    if (!p) return;
    free(p->hv);
    free(p);
}

static void sig_destroy(cs_coupling *c) {
    signal_coupling *s = c->content;
    if (!s) return;
    free(s->hv); free(s->cext); free(s->cint); free(s->in); free(s->incoef); free(s->inpos); free(s->done); free(s->cont);
    free(s->cmp_in); free(s->cmp_incoef); free(s->chat); free(s->integral_of); free(s->hvi);
    free(s);
    c->content = NULL;
}

static int sig_set_degree(cs_coupling *c, int kappa, cs_err *err) {
    signal_coupling *s = c->content;
    if (s->spec.kind != CS_APPROX_LAGRANGE)
        return cs_fail(err, CS_ERR_ARG, "approximation: adaptive order control needs a Lagrange (or ZOH) approximation");
    if (kappa < 0 || kappa > CS_MAXDEG || kappa + 1 > s->depth)
        return cs_fail(err, CS_ERR_ARG, "kappa: degree %d needs %d history samples, the coupling keeps %d", kappa,
                       kappa + 1, s->depth);
    s->kappa_set = 1;
    s->kappa = kappa;
    s->wext_last = NULL;
    return CS_OK;
}

/* Inputs u = L p + r of all units from output polynomials coef (NC per output) of degree deg into ins. */
static void build_inputs_from(signal_coupling *s, const double *coef, int deg, cs_input *ins) {
    const cs_network *net = s->net;
    for (int i = 0; i < net->nsub; i++) {
        cs_input *in = &ins[i];
        const int nu = in->nu, a0 = net->uoff[i];
        in->T = s->T;
        in->H = s->H;
        in->deg = deg;
        for (int la = 0; la < nu; la++) {
            const int a = a0 + la;
            for (int m = 0; m <= deg; m++) in->c[m * nu + la] = m == 0 ? net->r[a] : 0.0;
            for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++) {
                const double *cj = coef + (size_t)net->col[k] * NC;
                for (int m = 0; m <= deg; m++) in->c[m * nu + la] += net->gain[k] * cj[m];
            }
        }
    }
}

/* Comparative inputs of Kraft's explicit estimators (kraft2021 §8.2/8.3) for the step just taken with the
 * extrapolants of degree κ = Wext->deg (Jacobi). */
static int sig_comparative(cs_coupling *c, int mode, int kappa, const cs_input **in, cs_err *err) {
    signal_coupling *s = c->content;
    const cs_network *net = s->net;
    const int k = s->Wext->deg;
    if (kappa != k)
        return cs_fail(err, CS_ERR_ARG, "comparative: the step was taken with degree %d, not %d", k, kappa);
    if (s->nhist < k + 2 || k + 2 > CS_MAXHIST)
        return cs_fail(err, CS_ERR_ARG, "comparative: degree %d needs %d history samples, %d available", k + 1, k + 2,
                       s->nhist);
    double sv[CS_MAXHIST];
    for (int q = 0; q < k + 2; q++) sv[q] = (s->hT[q] - s->T) / s->H;
    if (mode == CS_CMP_EXLE) {
        /* eq. 3.2/3.3: p̂^pre is the degree-(κ+1) extrapolant through T_N, ..., T_{N-κ-1} */
        if (k + 1 > CS_MAXDEG)
            return cs_fail(err, CS_ERR_ARG, "comparative: exLE needs degree %d > %d", k + 1, CS_MAXDEG);
        cs_approx_spec sp = {CS_APPROX_LAGRANGE, k + 1};
        cs_approx_weights w;
        CS_TRY(cs_approx_weights_compute(&sp, 0, k + 2, s->hT, s->T, s->H, &w, err));
        for (int j = 0; j < net->ny; j++) coefs(&w, s->hv + (size_t)j * NV, s->chat + (size_t)j * NC);
        build_inputs_from(s, s->chat, k + 1, s->cmp_in);
    } else if (mode == CS_CMP_EXMD) {
        /* eq. 3.7/3.8: p̂^pre = p^pre + (û^pre - u^pre) L^κ(s), û^pre the value at s = 1 of the degree-(κ+1)
         * extrapolant, L^κ the Lagrange basis polynomial of the node s = 1 among 1, s(T_N), ..., s(T_{N-κ+1}) */
        double lw[CS_MAXHIST], L[NC];
        for (int q = 0; q < k + 2; q++) {
            double p = 1.0;
            for (int r = 0; r < k + 2; r++)
                if (r != q) p *= (1.0 - sv[r]) / (sv[q] - sv[r]);
            lw[q] = p;
        }
        for (int m = 0; m < NC; m++) L[m] = 0.0;
        cs_lagrange_end_basis(k, sv, L);
        for (int j = 0; j < net->ny; j++) {
            const double *h = s->hv + (size_t)j * NV, *ce = s->cext + (size_t)j * NC;
            double *ch = s->chat + (size_t)j * NC;
            double uhat = 0.0, upre = 0.0;
            for (int q = 0; q < k + 2; q++) uhat += lw[q] * h[q];
            for (int m = 0; m <= k; m++) upre += ce[m];
            for (int m = 0; m <= k; m++) ch[m] = ce[m] + (uhat - upre) * L[m];
        }
        build_inputs_from(s, s->chat, k, s->cmp_in);
    } else {
        return cs_fail(err, CS_ERR_ARG, "comparative: unknown mode %d", mode);
    }
    for (int i = 0; i < net->nsub; i++) in[i] = &s->cmp_in[i];
    return CS_OK;
}

static int sig_set_history_depth(cs_coupling *c, int depth, cs_err *err) {
    signal_coupling *s = c->content;
    if (s->nhist > 0) return cs_fail(err, CS_ERR_ARG, "coupling: set the history depth before the first accept");
    if (depth > CS_MAXHIST) depth = CS_MAXHIST;
    if (depth > s->depth) s->depth = depth;
    return CS_OK;
}

static const cs_coupling_ops SIGNAL_OPS = {
    .predict = sig_predict,
    .input = sig_input,
    .on_unit_done = sig_on_unit_done,
    .accept = sig_accept,
    .continuity = sig_continuity,
    .snapshot_create = sig_snapshot_create,
    .save = sig_save,
    .restore = sig_restore,
    .snapshot_destroy = sig_snapshot_destroy,
    .destroy = sig_destroy,
    .set_degree = sig_set_degree,
    .comparative = sig_comparative,
    .set_history_depth = sig_set_history_depth,
};

int cs_signal_coupling_create(const cs_network *net, const cs_approx_spec *spec, int rates_lagged, cs_coupling **out,
                              cs_err *err) {
    *out = NULL;
    CS_TRY(cs_approx_check(spec, err));
    cs_coupling *c = calloc(1, sizeof *c);
    signal_coupling *s = calloc(1, sizeof *s);
    if (!c || !s) { free(c); free(s); return cs_fail(err, CS_ERR_NOMEM, "coupling: out of memory"); }
    c->ops = &SIGNAL_OPS;
    c->content = s;
    c->needs_rates = (spec->kind == CS_APPROX_HERMITE && spec->k >= 1) || cs_approx_is_acc(spec->kind);
    c->rates_lagged = rates_lagged;
    s->net = net;
    s->spec = *spec;
    s->need = s->depth = cs_approx_points_needed(spec);
    if (s->depth < 1) s->depth = 1;
    if (s->depth > CS_MAXHIST) s->depth = CS_MAXHIST;
    s->hv = calloc((size_t)net->ny * NV + 1, sizeof(double));
    s->cext = calloc((size_t)net->ny * NC + 1, sizeof(double));
    s->cint = calloc((size_t)net->ny * NC + 1, sizeof(double));
    s->in = calloc((size_t)net->nsub, sizeof(cs_input));
    s->incoef = calloc((size_t)net->nu * NC + NC, sizeof(double));
    s->inpos = calloc((size_t)net->nu + 1, sizeof(int));
    s->done = calloc((size_t)net->nsub, 1);
    s->cont = calloc((size_t)net->nsub, 1);
    s->cmp_in = calloc((size_t)net->nsub, sizeof(cs_input));
    s->cmp_incoef = calloc((size_t)net->nu * NC + NC, sizeof(double));
    s->chat = calloc((size_t)net->ny * NC + 1, sizeof(double));
    if (!s->hv || !s->cext || !s->cint || !s->in || !s->incoef || !s->inpos || !s->done || !s->cont || !s->cmp_in ||
        !s->cmp_incoef || !s->chat) {
        cs_coupling_destroy(c);
        return cs_fail(err, CS_ERR_NOMEM, "coupling: out of memory");
    }
    double *coef = s->incoef;
    for (int i = 0; i < net->nsub; i++) {
        s->in[i].nu = net->uoff[i + 1] - net->uoff[i];
        s->in[i].c = coef;
        for (int a = net->uoff[i]; a < net->uoff[i + 1]; a++) s->inpos[a] = (int)(coef - s->incoef) + a - net->uoff[i];
        coef += (size_t)NC * s->in[i].nu;
    }
    coef = s->cmp_incoef;
    for (int i = 0; i < net->nsub; i++) {
        s->cmp_in[i].nu = s->in[i].nu;
        s->cmp_in[i].c = coef;
        coef += (size_t)NC * s->in[i].nu;
    }
    *out = c;
    return CS_OK;
}

int cs_signal_coupling_set_depth(cs_coupling *c, int depth, cs_err *err) {
    return cs_coupling_set_history_depth(c, depth, err);
}

int cs_signal_coupling_set_integrals(cs_coupling *c, const int *integral_of, int n, cs_err *err) {
    signal_coupling *s = c->content;
    const int ny = s->net->ny;
    if (!cs_approx_is_acc(s->spec.kind))
        return cs_fail(err, CS_ERR_ARG, "approximation: position/velocity pairs are read by acc and accRel only");
    if (n != ny) return cs_fail(err, CS_ERR_ARG, "approximation: %d position/velocity entries for %d outputs", n, ny);
    for (int j = 0; j < ny; j++) {
        const int p = integral_of[j];
        if (p < -1 || p >= ny || p == j || (p >= 0 && integral_of[p] >= 0))
            return cs_fail(err, CS_ERR_ARG, "approximation: output %d cannot integrate output %d (a velocity output "
                           "that is not itself a position is needed)", j, p);
        if (p >= 0 && s->net->out_sub[p] != s->net->out_sub[j])
            return cs_fail(err, CS_ERR_ARG, "approximation: output %d cannot integrate output %d of another unit", j,
                           p);
    }
    int *copy = malloc(sizeof(int) * (size_t)(ny + 1));
    double *hvi = calloc((size_t)ny * NV + 1, sizeof(double));
    if (!copy || !hvi) { free(copy); free(hvi); return cs_fail(err, CS_ERR_NOMEM, "coupling: out of memory"); }
    memcpy(copy, integral_of, sizeof(int) * (size_t)ny);
    free(s->integral_of);
    free(s->hvi);
    s->integral_of = copy;
    s->hvi = hvi;
    return CS_OK;
}

static int signal_create(const void *spec, const cs_coupling_env *e, cs_coupling **out, cs_err *err) {
    CS_TRY(cs_signal_coupling_create(e->net, e->approx, e->rates_lagged, out, err));
    if (e->integral_of) {
        int rc = cs_signal_coupling_set_integrals(*out, e->integral_of, e->integral_of_n, err);
        if (rc) { cs_coupling_destroy(*out); *out = NULL; return rc; }
    }
    return CS_OK;
}

const cs_kind cs_coupling_signal_kind = {"signal", NULL, 0, 0, NULL, {.coupling = signal_create}, NULL};
