/* Kraft's error estimators exLE, exMD, exCV (kraft2021 §8.2-8.4, §9) and the implicit imMD, imCV, waCV (§8.5-8.6),
 * each its own ops. They share nothing with the step controller (control/adaptive.c): every estimate fills the
 * record cs_estimate (eps, the value of the local error test: the largest WRMS norm of the monitored groups
 * (3.22)/(3.23); the group norms for (3.27)/(3.28); the coupling variables for the controller's order control). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control/adaptive.h"
#include "control/kraft_pool.h"
#include "coupling/approx.h"
#include "parallel/pool.h"

#define KH CS_MAXHIST           /* accepted macro times kept: κ_max + 3 <= 8 */

typedef struct kraft_estimator {
    cs_estimator base;              /* first: cs_estimator_destroy frees the whole object */
    cs_kraft_opts o;                /* its arrays are the copies below */
    int *state_index, *state_group, *in_index;
    double *state_atol, *in_atol;
    int nsub;
    const cs_unit_access *units;    /* not owned */
    cs_coupling *coupling;
    int *st_unit, *st_local;        /* monitored state -> unit, local index */
    unsigned char *unit_mon;        /* unit has monitored states (comparative run) */
    void **cur;                     /* per unit: snapshot of the actual step's state at T_{N+1} */
    const cs_input **cmp;           /* comparative inputs */
    cs_input *cmp_start;            /* per unit: the start-up comparative inputs (exLE/exMD before κ+2 points exist) */
    double *cmp_start_c;            /* their coefficients, (CS_MAXDEG + 1) x nu per unit */
    double *xact, *xcmp, *e, *w;    /* nstate (or nin) scratch */
    double hT[KH];                  /* accepted macro times, newest first (commit) */
    int npts;                       /* accepted macro points including T_0 */
    long startup_tests;             /* steps tested with the start-up comparative input (û = u_{N+1}) */
    /* the comparative integrations on a thread pool (simulate(threads=n), issue 11): one error buffer and return
     * code per unit, filled by whichever thread ran it, so that the estimate and the reported error (the lowest
     * failing unit) are the same for every thread count */
    cs_pool *pool;                  /* NULL: sequential (not owned: the Jacobi scheme's pool) */
    cs_err *errs;
    int *rc;
    const cs_estimate_view *v;      /* argument of the current estimate for the pool's task */
    /* units distributed over processes (v->share): the monitored states by unit, mon_q[mon_off[i] ..
     * mon_off[i+1]-1] those of unit i, the blocks of the exchange of the comparative states */
    int *mon_off, *mon_q;
} kraft_estimator;

/* One comparative integration: unit i from its state at T_N over H with the comparative inputs, its monitored
 * states into xcmp; the unit is left with the actual step's state. Touches only unit i's slots. */
static int comparative_unit(kraft_estimator *ke, const cs_estimate_view *v, int i, cs_err *err) {
    const cs_unit_access *u = ke->units;
    cs_ua_save_state(u, i, ke->cur[i]);
    cs_ua_restore_state(u, i, v->usnap[i]);
    int rc = cs_ua_do_step(u, i, v->plan->T, v->plan->H, ke->cmp[i], CS_RESTART, err);
    if (!rc) {
        const double *x = cs_ua_states(u, i);
        for (int q = 0; q < ke->o.nstate; q++)
            if (ke->st_unit[q] == i) ke->xcmp[q] = x[ke->st_local[q]];
    }
    cs_ua_restore_state(u, i, ke->cur[i]);
    if (rc) cs_err_prefix(err, "comparative integration of %s: ", cs_ua_name(u, i));
    return rc;
}

static void comparative_task(void *arg, int i, int worker) {
    kraft_estimator *ke = arg;
    (void)worker;
    ke->rc[i] = 0;
    if (!ke->unit_mon[i]) return;
    ke->errs[i].code = 0;
    ke->rc[i] = comparative_unit(ke, ke->v, i, &ke->errs[i]);
}

/* Start-up comparative inputs (kraft2021 §4.3/§19: the first steps, before the κ+2 macro points of (3.3)/(3.8)
 * exist). The Milne device (3.7) with the end value û := u_{N+1}, the consistent update of the step just taken
 * instead of the degree-(κ+1) extrapolant û^pre: p̂(t) = p^pre(t) + (u_{N+1} − u^pre_{N+1}) L^κ(t). u_{N+1} is
 * accurate to O(H^{κ+2}) (§8, eq. 3.1, no feed-through), as û^pre is, so (3.9)/(3.10) and the factors
 * C^{κ+1}/C^κ of (3.13)/(3.14) hold unchanged; on the first step (κ = 0) p^pre ≡ u_0 and p̂ ≡ u_1.
 * Returns 0 when a unit's input is not a polynomial (then the step stays untested, as before). */
static int startup_inputs(kraft_estimator *ke, const cs_estimate_view *v, int k) {
    const cs_network *net = v->net;
    double L[CS_MAXDEG + 1];
    if (k > CS_MAXDEG || k > ke->npts - 1 || !v->used) return 0;
    for (int m = 0; m <= CS_MAXDEG; m++) L[m] = 0.0;
    L[0] = 1.0;
    const double TN = v->plan->T, H = v->plan->H;
    for (int j = 0; j < k; j++) {           /* L <- L (s - s_j)/(1 - s_j), s_j = (T_{N-j} - T_N)/H */
        double z = (ke->hT[j] - TN) / H, d = 1.0 - z;
        for (int m = j + 1; m >= 1; m--) L[m] = (L[m - 1] - z * L[m]) / d;
        L[0] = -z * L[0] / d;
    }
    size_t off = 0;
    for (int i = 0; i < ke->nsub; i++) {
        const int nu = cs_ua_nu(ke->units, i);
        cs_input *in = &ke->cmp_start[i];
        in->c = ke->cmp_start_c + off;
        off += (size_t)(CS_MAXDEG + 1) * (size_t)nu;
        ke->cmp[i] = in;
        if (!ke->unit_mon[i]) continue;
        const cs_input *src = v->used[i];
        if (!src || src->eval || src->nu != nu || src->deg > CS_MAXDEG) return 0;
        const int deg = src->deg > k ? src->deg : k;
        const double *u1 = v->u1 + net->uoff[i], *up = v->upre + net->uoff[i];
        in->nu = nu; in->deg = deg; in->T = src->T; in->H = src->H; in->eval = NULL; in->ctx = NULL;
        if (!(src->H > 0.0) || src->T != TN) return 0;
        /* L^κ above is in s = (t - T_N)/H; the unit's input uses s' = (t - src->T)/src->H */
        double Ls[CS_MAXDEG + 1], q = src->H / H, f = 1.0;
        for (int m = 0; m <= k; m++) { Ls[m] = L[m] * f; f *= q; }
        for (int m = 0; m <= deg; m++)
            for (int a = 0; a < nu; a++) {
                double c = m <= src->deg ? src->c[(size_t)m * nu + a] : 0.0;
                if (m <= k) c += (u1[a] - up[a]) * Ls[m];
                in->c[(size_t)m * nu + a] = c;
            }
    }
    return 1;
}

/* What every estimate reports besides its norms: the coupling variables of the step; then eps, the largest group
 * norm (the local error test (3.21)-(3.23)). */
static void est_begin(const cs_estimate_view *v, cs_estimate *est) {
    est->u0 = v->u0;
    est->u1 = v->u1;
}

static void est_finish(cs_estimate *est) {
    double m = 0.0;
    for (int g = 0; g < CS_EST_NGROUP; g++)
        if (est->used[g] && !(est->norm[g] <= m)) m = est->norm[g];  /* NaN propagates */
    est->eps = m;
}

/* The input group (3.16)/(3.20): ε^u = |u^pre_{N+1} - u_{N+1}| of the monitored inputs, weights (3.23). */
static void input_error(kraft_estimator *ke, const double *upre, const double *u1, cs_estimate *est) {
    const cs_kraft_opts *o = &ke->o;
    for (int a = 0; a < o->nin; a++) {
        int q = ke->in_index[a];
        ke->e[a] = fabs(upre[q] - u1[q]);
        ke->w[a] = 1.0 / (ke->in_atol[a] + o->rtol * fabs(u1[q]));
    }
    est->norm[2] = cs_kraft_wrms(o->nin, ke->e, ke->w);
    est->used[2] = 1;
    est->tested = o->nin > 0;
}

/* The state groups (positions, velocities) of |x - x̂| with the factors fpos/fvel, weights (3.22) on x; x̂ from
 * xcmp[q] (comparative runs) or, with xcmp NULL, from the stacked states xpre (implicit predictor). */
static void state_error(kraft_estimator *ke, const double *xcmp, const double *xpre, double fpos, double fvel,
                        cs_estimate *est) {
    const cs_kraft_opts *o = &ke->o;
    for (int g = 0; g < 2; g++) {
        int n = 0;
        for (int q = 0; q < o->nstate; q++) {
            if (ke->state_group[q] != g) continue;
            const double x = ke->xact[q], xh = xcmp ? xcmp[q] : xpre[ke->state_index[q]];
            ke->e[n] = (g == CS_GROUP_POS ? fpos : fvel) * fabs(x - xh);
            ke->w[n] = 1.0 / (ke->state_atol[q] + o->rtol * fabs(x));
            n++;
        }
        if (n) { est->norm[g] = cs_kraft_wrms(n, ke->e, ke->w); est->used[g] = 1; }
    }
    est->tested = 1;
}

/* The monitored states of the actual step (units at T_{N+1}) into xact. */
static void actual_states(kraft_estimator *ke) {
    for (int q = 0; q < ke->o.nstate; q++)
        ke->xact[q] = cs_ua_states(ke->units, ke->st_unit[q])[ke->st_local[q]];
}

/* The ratios C^{κ+1}/C^κ of the position and velocity error constants with the actual step ratios
 * a_i = (T_{N+1} - T_{N+1-i})/H (kraft2021 (3.13)-(3.15)). */
static int constant_ratios(const kraft_estimator *ke, const cs_estimate_view *v, int k, double *rpos, double *rvel,
                           cs_err *err) {
    const double H = v->plan->H;
    double a[CS_KRAFT_KMAX + 1], cp0, cv0, cp1, cv1;
    for (int i = 2; i <= k + 1 && i - 1 < KH; i++) a[i - 2] = (v->plan->T1 - ke->hT[i - 1]) / H;
    CS_TRY(cs_kraft_error_constants(k, a, &cp0, &cv0, err));
    CS_TRY(cs_kraft_error_constants(k + 1, a, &cp1, &cv1, err));
    *rpos = cp1 / cp0;
    *rvel = cv1 / cv0;
    return CS_OK;
}

static void xcmp_pack(void *ctx, int i, double *dst) {
    const kraft_estimator *ke = ctx;
    for (int k = ke->mon_off[i]; k < ke->mon_off[i + 1]; k++) *dst++ = ke->xcmp[ke->mon_q[k]];
}

static void xcmp_unpack(void *ctx, int i, const double *src) {
    kraft_estimator *ke = ctx;
    for (int k = ke->mon_off[i]; k < ke->mon_off[i + 1]; k++) ke->xcmp[ke->mon_q[k]] = *src++;
}

/* Units distributed over processes: each process integrates its own monitored units, one exchange of their
 * monitored comparative states. */
static int comparative_shared(kraft_estimator *ke, const cs_estimate_view *v, cs_estimate *est, cs_err *err) {
    int rc = CS_OK;
    for (int i = 0; i < ke->nsub; i++) {
        if (!ke->unit_mon[i]) continue;
        est->integrations++;
        if (!rc && cs_share_owns(v->share, i)) rc = comparative_unit(ke, v, i, err);
    }
    return cs_share_exchange(v->share, 0, ke->nsub, ke->mon_off, xcmp_pack, xcmp_unpack, ke, rc, err);
}

/* exLE / exMD: comparative integration from the saved state at T_N with p̂^pre (exLE: eq. 3.2/3.3, exMD: eq.
 * 3.7/3.8); at start-up (fewer than κ+2 macro points) with the inputs of startup_inputs and the Milne factors. The
 * step's degree κ is the plan's (the controller's propose). */
static int comparative_estimate(kraft_estimator *ke, const cs_estimate_view *v, int cmp_kind, int milne,
                                cs_estimate *est, cs_err *err) {
    const int k = v->plan->kappa;
    est_begin(v, est);
    if (ke->o.nstate > 0 && (ke->npts >= k + 2 || (ke->cmp_start && startup_inputs(ke, v, k)))) {
        const int startup = ke->npts < k + 2;
        if (!v->usnap) return cs_fail(err, CS_ERR_ARG, "estimator: the units were not saved at T_N");
        if (!startup) CS_TRY(cs_coupling_comparative(ke->coupling, cmp_kind, k, ke->cmp, err));
        else ke->startup_tests++;
        actual_states(ke);
        if (v->share) CS_TRY(comparative_shared(ke, v, est, err));
        else if (ke->pool) {             /* the units' comparative integrations in parallel, as the scheme's steps */
            ke->v = v;
            cs_pool_set_timing(ke->pool, 0);
            cs_pool_run(ke->pool, ke->nsub, comparative_task, ke);
            for (int i = 0; i < ke->nsub; i++) {
                if (!ke->unit_mon[i]) continue;
                est->integrations++;
                if (ke->rc[i]) { *err = ke->errs[i]; return ke->rc[i]; }
            }
        } else {
            for (int i = 0; i < ke->nsub; i++) {
                if (!ke->unit_mon[i]) continue;
                est->integrations++;
                CS_TRY(comparative_unit(ke, v, i, err));
            }
        }
        double fpos = 1.0, fvel = 1.0;
        if (milne || startup) CS_TRY(constant_ratios(ke, v, k, &fpos, &fvel, err)); /* (3.13)/(3.14) */
        state_error(ke, ke->xcmp, NULL, fpos, fvel, est);
    }
    est_finish(est);
    return CS_OK;
}

static int exle_estimate(cs_estimator *e, const cs_estimate_view *v, cs_estimate *est, cs_err *err) {
    return comparative_estimate((kraft_estimator *)e, v, CS_CMP_EXLE, 0, est, err);
}

static int exmd_estimate(cs_estimator *e, const cs_estimate_view *v, cs_estimate *est, cs_err *err) {
    return comparative_estimate((kraft_estimator *)e, v, CS_CMP_EXMD, 1, est, err);
}

/* exCV (3.16): the coupling variables' extrapolation error, no extra integration. */
static int excv_estimate(cs_estimator *e, const cs_estimate_view *v, cs_estimate *est, cs_err *err) {
    (void)err;
    est_begin(v, est);
    input_error((kraft_estimator *)e, v->upre, v->u1, est);
    est_finish(est);
    return CS_OK;
}

/* imMD (3.18)/(3.19): ε = (1 - C^{κ+1}/C^κ) |x^pre - x| from the predictor states x^pre (j = 0, integrated with
 * p^pre) and the corrected states x (final iterate), since p^pre - p^corr = (u^pre - u_{N+1}) L^κ; the factors with
 * the actual step ratios a_i (kraft2021 §8.1; errata: (3.17) needs C^{κ+1}, (3.19) uses the constants (3.15)). No
 * extra integration: the scheme's predictor supplies x^pre. */
static int immd_estimate(cs_estimator *e, const cs_estimate_view *v, cs_estimate *est, cs_err *err) {
    kraft_estimator *ke = (kraft_estimator *)e;
    est_begin(v, est);
    if (!v->xpre)
        return cs_fail(err, CS_ERR_ARG, "estimator: imMD needs the predictor states of cosim.Implicit (units "
                       "that expose their states)");
    double rpos, rvel;
    CS_TRY(constant_ratios(ke, v, v->plan->kappa, &rpos, &rvel, err));
    actual_states(ke);
    state_error(ke, NULL, v->xpre, fabs(1.0 - rpos), fabs(1.0 - rvel), est);
    est_finish(est);
    return CS_OK;
}

/* imCV (3.20) / waCV: ε^u = |u^pre_{N+1} - u_{N+1}| with the predicted and the converged coupling variables of the
 * iterative scheme's predictor. */
static int imcv_estimate(cs_estimator *e, const cs_estimate_view *v, cs_estimate *est, cs_err *err) {
    est_begin(v, est);
    if (!v->upre0)
        return cs_fail(err, CS_ERR_ARG, "estimator: %s needs the predicted coupling variables of an iterative scheme",
                       e->kind == CS_EST_WACV ? "waCV" : "imCV");
    input_error((kraft_estimator *)e, v->upre0, v->u1, est);
    est_finish(est);
    return CS_OK;
}

/* The step was accepted: its end time joins the history of macro times (step ratios, start-up inputs). */
static void est_commit(cs_estimator *e, const cs_estimate_view *v) {
    kraft_estimator *ke = (kraft_estimator *)e;
    memmove(ke->hT + 1, ke->hT, sizeof(double) * (KH - 1));
    ke->hT[0] = v->plan->T1;
    ke->npts++;
}

static void est_destroy(cs_estimator *e) {
    kraft_estimator *ke = (kraft_estimator *)e;
    if (ke->cur)
        for (int i = 0; i < ke->nsub; i++)
            cs_ua_snapshot_destroy(ke->units, i, ke->cur[i]);
    free(ke->cur); free(ke->cmp); free(ke->cmp_start); free(ke->cmp_start_c);
    free(ke->st_unit); free(ke->st_local); free(ke->unit_mon);
    free(ke->xact); free(ke->xcmp); free(ke->e); free(ke->w);
    free(ke->state_index); free(ke->state_group); free(ke->in_index); free(ke->state_atol); free(ke->in_atol);
    free(ke->errs); free(ke->rc); free(ke->mon_off); free(ke->mon_q);
}

static const cs_estimator_ops EXLE_OPS = {.estimate = exle_estimate, .commit = est_commit, .destroy = est_destroy};
static const cs_estimator_ops EXMD_OPS = {.estimate = exmd_estimate, .commit = est_commit, .destroy = est_destroy};
static const cs_estimator_ops EXCV_OPS = {.estimate = excv_estimate, .commit = est_commit, .destroy = est_destroy};
static const cs_estimator_ops IMMD_OPS = {.estimate = immd_estimate, .commit = est_commit, .destroy = est_destroy};
static const cs_estimator_ops IMCV_OPS = {.estimate = imcv_estimate, .commit = est_commit, .destroy = est_destroy};

int cs_kraft_estimator_use_pool(cs_estimator *e, cs_pool *pool) {
    if (!e || !CS_EST_COMPARATIVE(e->kind) || !pool || cs_pool_threads(pool) < 2) return 0;
    ((kraft_estimator *)e)->pool = pool;
    return 1;
}

/* Where the monitored states live (unit, local index) and whether the monitored inputs exist. */
static int locate_monitors(kraft_estimator *ke, cs_err *err) {
    const cs_kraft_opts *o = &ke->o;
    for (int q = 0; q < o->nstate; q++) {
        int g = ke->state_index[q], off = 0, i = 0;
        for (; i < ke->nsub; i++) {
            if (g >= off && g < off + cs_ua_nx(ke->units, i)) break;
            off += cs_ua_nx(ke->units, i);
        }
        if (g < 0 || i == ke->nsub) return cs_fail(err, CS_ERR_ARG, "monitor: state index %d out of range", g);
        if (!cs_ua_has_states(ke->units, i))
            return cs_fail(err, CS_ERR_ARG, "monitor: unit %s does not expose its states", cs_ua_name(ke->units, i));
        if (ke->state_group[q] != CS_GROUP_POS && ke->state_group[q] != CS_GROUP_VEL)
            return cs_fail(err, CS_ERR_ARG, "monitor: unknown group %d", ke->state_group[q]);
        if (!(ke->state_atol[q] >= 0.0)) return cs_fail(err, CS_ERR_ARG, "atol: must be >= 0");
        ke->st_unit[q] = i; ke->st_local[q] = g - off; ke->unit_mon[i] = 1;
    }
    /* the monitored states ordered by unit (the exchange of distributed runs; once, at creation) */
    for (int q = 0; q < o->nstate; q++) ke->mon_off[ke->st_unit[q] + 1]++;
    for (int i = 0; i < ke->nsub; i++) ke->mon_off[i + 1] += ke->mon_off[i];
    for (int i = 0, k = 0; i < ke->nsub; i++)
        for (int q = 0; q < o->nstate; q++)
            if (ke->st_unit[q] == i) ke->mon_q[k++] = q;
    int nu = 0;
    for (int i = 0; i < ke->nsub; i++) nu += cs_ua_nu(ke->units, i);
    for (int a = 0; a < o->nin; a++) {
        if (ke->in_index[a] < 0 || ke->in_index[a] >= nu) return cs_fail(err, CS_ERR_ARG, "monitor: input index out of range");
        if (!(ke->in_atol[a] >= 0.0)) return cs_fail(err, CS_ERR_ARG, "atol: must be >= 0");
    }
    return CS_OK;
}

int cs_kraft_estimator_create(const cs_kraft_opts *o, double t0, const cs_unit_access *units, cs_coupling *coupling,
                              cs_estimator **out, cs_err *err) {
    const int nsub = units->n;
    static const cs_estimator_ops *const ops[] = {[CS_EST_EXLE] = &EXLE_OPS, [CS_EST_EXMD] = &EXMD_OPS,
                                                   [CS_EST_EXCV] = &EXCV_OPS, [CS_EST_IMMD] = &IMMD_OPS,
                                                   [CS_EST_IMCV] = &IMCV_OPS, [CS_EST_WACV] = &IMCV_OPS};
    *out = NULL;
    if (o->estimator < CS_EST_EXLE || o->estimator > CS_EST_WACV)
        return cs_fail(err, CS_ERR_ARG, "estimator: unknown estimator code %d", o->estimator);
    kraft_estimator *ke = calloc(1, sizeof *ke);
    if (!ke) return cs_fail(err, CS_ERR_NOMEM, "estimator: out of memory");
    cs_estimator *e = &ke->base;
    e->ops = ops[o->estimator];
    e->content = ke;
    e->kind = o->estimator;
    e->needs_snapshot = CS_EST_COMPARATIVE(o->estimator);
    ke->o = *o;
    ke->nsub = nsub; ke->units = units; ke->coupling = coupling;
    ke->npts = 1;
    ke->hT[0] = t0;
    const size_t ns = (size_t)o->nstate + 1, ni = (size_t)o->nin + 1, nw = ns > ni ? ns : ni;
    const size_t nunit = (size_t)(nsub > 0 ? nsub : 1);
    ke->state_index = malloc(sizeof(int) * ns); ke->state_group = malloc(sizeof(int) * ns);
    ke->state_atol = malloc(sizeof(double) * ns);
    ke->in_index = malloc(sizeof(int) * ni); ke->in_atol = malloc(sizeof(double) * ni);
    ke->st_unit = malloc(sizeof(int) * ns); ke->st_local = malloc(sizeof(int) * ns);
    ke->unit_mon = calloc(nunit, 1);
    ke->cur = calloc(nunit, sizeof(void *));
    ke->cmp = calloc(nunit, sizeof(cs_input *));
    ke->xact = malloc(sizeof(double) * ns); ke->xcmp = malloc(sizeof(double) * ns);
    ke->e = malloc(sizeof(double) * nw); ke->w = malloc(sizeof(double) * nw);
    ke->errs = calloc(nunit, sizeof(cs_err));
    ke->rc = calloc(nunit, sizeof(int));
    ke->mon_off = calloc(nunit + 1, sizeof(int));
    ke->mon_q = malloc(sizeof(int) * ns);
    int rc = !ke->state_index || !ke->state_group || !ke->state_atol || !ke->in_index || !ke->in_atol ||
             !ke->st_unit || !ke->st_local || !ke->unit_mon || !ke->cur || !ke->cmp || !ke->xact || !ke->xcmp ||
             !ke->e || !ke->w || !ke->errs || !ke->rc || !ke->mon_off || !ke->mon_q
                 ? cs_fail(err, CS_ERR_NOMEM, "estimator: out of memory")
                 : CS_OK;
    if (!rc) {
        if (o->nstate) {
            memcpy(ke->state_index, o->state_index, sizeof(int) * (size_t)o->nstate);
            memcpy(ke->state_group, o->state_group, sizeof(int) * (size_t)o->nstate);
            memcpy(ke->state_atol, o->state_atol, sizeof(double) * (size_t)o->nstate);
        }
        if (o->nin) {
            memcpy(ke->in_index, o->in_index, sizeof(int) * (size_t)o->nin);
            memcpy(ke->in_atol, o->in_atol, sizeof(double) * (size_t)o->nin);
        }
        ke->o.state_index = ke->state_index; ke->o.state_group = ke->state_group; ke->o.state_atol = ke->state_atol;
        ke->o.in_index = ke->in_index; ke->o.in_atol = ke->in_atol;
        rc = locate_monitors(ke, err);
    }
    if (!rc && CS_EST_COMPARATIVE(o->estimator)) {
        size_t nc = 0;
        for (int i = 0; i < nsub; i++) nc += (size_t)(CS_MAXDEG + 1) * (size_t)cs_ua_nu(units, i);
        ke->cmp_start = calloc(nunit, sizeof(cs_input));
        ke->cmp_start_c = calloc(nc > 0 ? nc : 1, sizeof(double));
        if (!ke->cmp_start || !ke->cmp_start_c) rc = cs_fail(err, CS_ERR_NOMEM, "estimator: out of memory");
        for (int i = 0; i < nsub && !rc; i++)
            if (ke->unit_mon[i] && !(ke->cur[i] = cs_ua_snapshot_create(units, i)))
                rc = cs_fail(err, CS_ERR_NOMEM, "step control: out of memory (snapshots)");
    }
    if (rc) { cs_estimator_destroy(e); return rc; }
    *out = e;
    return CS_OK;
}
