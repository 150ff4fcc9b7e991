/* Kraft's error estimators exLE, exMD, exCV (kraft2021 §8.2-8.4, §9) and the implicit imMD, imCV, waCV (§8.5-8.6),
 * on the state shared with the adaptive controller (control/kraft_state.h). eps is the value of the local error test: the largest WRMS norm of
 * the monitored groups (3.22)/(3.23); the controller reads the group norms for (3.27)/(3.28). */
#include <math.h>
#include <stdlib.h>

#include "control/kraft_pool.h"
#include "control/kraft_state.h"
#include "parallel/pool.h"

/* The estimator object with what its comparative integrations need on a thread pool (simulate(threads=n), issue
 * 11): one error buffer and return code per unit, filled by whichever thread ran it, so that the estimate and the
 * reported error (the lowest failing unit) are the same for every thread count. */
typedef struct kraft_estimator {
    cs_estimator base;              /* first: cs_estimator_destroy frees the whole object */
    cs_pool *pool;                  /* NULL: sequential (not owned: the Jacobi scheme's pool) */
    cs_err *errs;
    int *rc;
    kraft_state *ks;                /* arguments of the current estimate for the pool's task */
    const cs_estimate_view *v;
} kraft_estimator;

/* One comparative integration: unit i from its state at T_N over H with the comparative inputs, its monitored
 * states into xcmp; the unit is left with the actual step's state. Touches only unit i's slots. */
static int comparative_unit(kraft_state *ks, const cs_estimate_view *v, int i, cs_err *err) {
    const cs_kraft_opts *o = &ks->o;
    cs_unit *u = ks->units[i];
    cs_unit_save_state(u, ks->cur[i]);
    cs_unit_restore_state(u, v->usnap[i]);
    int rc = cs_unit_do_step(u, v->plan->T, v->plan->H, ks->cmp[i], CS_RESTART, err);
    if (!rc) {
        const double *x = cs_unit_states(u);
        for (int q = 0; q < o->nstate; q++)
            if (ks->st_unit[q] == i) ks->xcmp[q] = x[ks->st_local[q]];
    }
    cs_unit_restore_state(u, ks->cur[i]);
    if (rc) cs_err_prefix(err, "comparative integration of %s: ", u->name);
    return rc;
}

static void comparative_task(void *arg, int i, int worker) {
    kraft_estimator *ke = arg;
    (void)worker;
    ke->rc[i] = 0;
    if (!ke->ks->unit_mon[i]) return;
    ke->errs[i].code = 0;
    ke->rc[i] = comparative_unit(ke->ks, ke->v, i, &ke->errs[i]);
}

/* What every estimate shares with the controller: the candidate u_{N+1}, u_N and cleared group norms. */
static void est_begin(kraft_state *ks, const cs_estimate_view *v) {
    ks->T1c = v->plan->T1;
    for (int a = 0; a < ks->o.nin; a++) {
        ks->ucand[a] = v->u1[ks->in_index[a]];
        ks->hu[a] = v->u0[ks->in_index[a]];    /* u_N, consistent (also u_0 at the first step) */
    }
    for (int g = 0; g < 3; g++) { ks->gnorm[g] = 0.0; ks->gused[g] = 0; }
    ks->tested = 0;
}

/* Start-up comparative inputs (kraft2021 §4.3/§19: the first steps, before the κ+2 macro points of (3.3)/(3.8)
 * exist). The Milne device (3.7) with the end value û := u_{N+1}, the consistent update of the step just taken
 * instead of the degree-(κ+1) extrapolant û^pre: p̂(t) = p^pre(t) + (u_{N+1} − u^pre_{N+1}) L^κ(t). u_{N+1} is
 * accurate to O(H^{κ+2}) (§8, eq. 3.1, no feed-through), as û^pre is, so (3.9)/(3.10) and the factors
 * C^{κ+1}/C^κ of (3.13)/(3.14) hold unchanged; on the first step (κ = 0) p^pre ≡ u_0 and p̂ ≡ u_1.
 * Returns 0 when a unit's input is not a polynomial (then the step stays untested, as before). */
static int startup_inputs(kraft_state *ks, const cs_estimate_view *v, int k) {
    const cs_network *net = v->net;
    double L[CS_MAXDEG + 1];
    if (k > CS_MAXDEG || k > ks->npts - 1 || !v->used) return 0;
    for (int m = 0; m <= CS_MAXDEG; m++) L[m] = 0.0;
    L[0] = 1.0;
    const double TN = v->plan->T, H = v->plan->H;
    for (int j = 0; j < k; j++) {           /* L <- L (s - s_j)/(1 - s_j), s_j = (T_{N-j} - T_N)/H */
        double z = (ks->hT[j] - TN) / H, d = 1.0 - z;
        for (int m = j + 1; m >= 1; m--) L[m] = (L[m - 1] - z * L[m]) / d;
        L[0] = -z * L[0] / d;
    }
    size_t off = 0;
    for (int i = 0; i < ks->nsub; i++) {
        const int nu = ks->units[i]->nu;
        cs_input *in = &ks->cmp_start[i];
        in->c = ks->cmp_start_c + off;
        off += (size_t)(CS_MAXDEG + 1) * (size_t)nu;
        ks->cmp[i] = in;
        if (!ks->unit_mon[i]) continue;
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

/* eps: the largest group norm (the local error test (3.21)-(3.23)). */
static double est_finish(kraft_state *ks) {
    double m = 0.0;
    for (int g = 0; g < 3; g++)
        if (ks->gused[g] && !(ks->gnorm[g] <= m)) m = ks->gnorm[g];  /* NaN propagates */
    ks->eps_last = m;
    return m;
}

/* The input group (3.16)/(3.20): ε^u = |u^pre_{N+1} - u_{N+1}| of the monitored inputs, weights (3.23). */
static void input_error(kraft_state *ks, const double *upre, const double *u1) {
    const cs_kraft_opts *o = &ks->o;
    for (int a = 0; a < o->nin; a++) {
        int q = ks->in_index[a];
        ks->e[a] = fabs(upre[q] - u1[q]);
        ks->w[a] = 1.0 / (ks->in_atol[a] + o->rtol * fabs(u1[q]));
    }
    ks->gnorm[2] = cs_kraft_wrms(o->nin, ks->e, ks->w);
    ks->gused[2] = 1;
    ks->tested = o->nin > 0;
}

/* The ratios C^{κ+1}/C^κ of the position and velocity error constants with the actual step ratios
 * a_i = (T_{N+1} - T_{N+1-i})/H (kraft2021 (3.13)-(3.15)). */
static int constant_ratios(const kraft_state *ks, const cs_estimate_view *v, int k, double *rpos, double *rvel,
                           cs_err *err) {
    const double H = v->plan->H;
    double a[CS_KRAFT_KMAX + 1], cp0, cv0, cp1, cv1;
    for (int i = 2; i <= k + 1 && i - 1 < KH; i++) a[i - 2] = (v->plan->T1 - ks->hT[i - 1]) / H;
    CS_TRY(cs_kraft_error_constants(k, a, &cp0, &cv0, err));
    CS_TRY(cs_kraft_error_constants(k + 1, a, &cp1, &cv1, err));
    *rpos = cp1 / cp0;
    *rvel = cv1 / cv0;
    return CS_OK;
}

static int est_estimate(cs_estimator *e, const cs_estimate_view *v, double *eps, cs_err *err) {
    kraft_state *ks = e->content;
    const cs_kraft_opts *o = &ks->o;
    const double rtol = o->rtol;
    const int k = ks->kstep;
    est_begin(ks, v);
    if (o->estimator == CS_EST_EXCV) {
        input_error(ks, v->upre, v->u1); /* (3.16) */
    } else if (o->nstate > 0 && (ks->npts >= k + 2 || (ks->cmp_start && startup_inputs(ks, v, k)))) {
        /* comparative integration from the saved state at T_N with p̂^pre (exLE: eq. 3.2/3.3, exMD: eq. 3.7/3.8);
         * at start-up (fewer than κ+2 macro points) with the inputs of startup_inputs and the Milne factors */
        const int startup = ks->npts < k + 2;
        if (!v->usnap) return cs_fail(err, CS_ERR_ARG, "estimator: the units were not saved at T_N");
        cs_coupling *c = ks->coupling;
        if (!startup)
            CS_TRY(cs_coupling_comparative(c, o->estimator == CS_EST_EXLE ? CS_CMP_EXLE : CS_CMP_EXMD, k, ks->cmp, err));
        else
            ks->startup_tests++;
        for (int q = 0; q < o->nstate; q++) {
            const cs_unit *u = ks->units[ks->st_unit[q]];
            ks->xact[q] = cs_unit_states(u)[ks->st_local[q]];
        }
        kraft_estimator *ke = (kraft_estimator *)e;
        if (ke->pool) {             /* the units' comparative integrations in parallel, as the scheme's steps */
            ke->ks = ks;
            ke->v = v;
            cs_pool_set_timing(ke->pool, 0);
            cs_pool_run(ke->pool, ks->nsub, comparative_task, ke);
            for (int i = 0; i < ks->nsub; i++) {
                if (!ks->unit_mon[i]) continue;
                ks->comparative_steps++;
                if (ke->rc[i]) { *err = ke->errs[i]; return ke->rc[i]; }
            }
        } else {
            for (int i = 0; i < ks->nsub; i++) {
                if (!ks->unit_mon[i]) continue;
                ks->comparative_steps++;
                CS_TRY(comparative_unit(ks, v, i, err));
            }
        }
        double fpos = 1.0, fvel = 1.0;
        if (o->estimator == CS_EST_EXMD || startup) {
            /* (3.13)/(3.14): factors C^{κ+1}/C^κ */
            CS_TRY(constant_ratios(ks, v, k, &fpos, &fvel, err));
        }
        for (int g = 0; g < 2; g++) {
            int n = 0;
            for (int q = 0; q < o->nstate; q++) {
                if (ks->state_group[q] != g) continue;
                ks->e[n] = (g == CS_GROUP_POS ? fpos : fvel) * fabs(ks->xact[q] - ks->xcmp[q]);
                ks->w[n] = 1.0 / (ks->state_atol[q] + rtol * fabs(ks->xact[q]));
                n++;
            }
            if (n) { ks->gnorm[g] = cs_kraft_wrms(n, ks->e, ks->w); ks->gused[g] = 1; }
        }
        ks->tested = 1;
    }
    *eps = est_finish(ks);
    return CS_OK;
}

/* imMD (3.18)/(3.19): ε = (1 - C^{κ+1}/C^κ) |x^pre - x| from the predictor states x^pre (j = 0, integrated with
 * p^pre) and the corrected states x (final iterate), since p^pre - p^corr = (u^pre - u_{N+1}) L^κ; the factors with
 * the actual step ratios a_i (kraft2021 §8.1; errata: (3.17) needs C^{κ+1}, (3.19) uses the constants (3.15)).
 * imCV (3.20) / waCV: ε^u = |u^pre_{N+1} - u_{N+1}| with the predicted and the converged coupling variables. No
 * extra integration: the scheme's predictor supplies x^pre / u^pre. */
static int est_implicit(cs_estimator *e, const cs_estimate_view *v, double *eps, cs_err *err) {
    kraft_state *ks = e->content;
    const cs_kraft_opts *o = &ks->o;
    const double rtol = o->rtol;
    const int k = ks->kstep;
    est_begin(ks, v);
    if (o->estimator == CS_EST_IMMD) {
        if (!v->xpre)
            return cs_fail(err, CS_ERR_ARG, "estimator: imMD needs the predictor states of cosim.Implicit (units "
                           "that expose their states)");
        double rpos, rvel;
        CS_TRY(constant_ratios(ks, v, k, &rpos, &rvel, err));
        const double fpos = fabs(1.0 - rpos), fvel = fabs(1.0 - rvel);
        for (int g = 0; g < 2; g++) {
            int n = 0;
            for (int q = 0; q < o->nstate; q++) {
                if (ks->state_group[q] != g) continue;
                const cs_unit *u = ks->units[ks->st_unit[q]];
                double x = cs_unit_states(u)[ks->st_local[q]];
                ks->e[n] = (g == CS_GROUP_POS ? fpos : fvel) * fabs(v->xpre[o->state_index[q]] - x);
                ks->w[n] = 1.0 / (ks->state_atol[q] + rtol * fabs(x));
                n++;
            }
            if (n) { ks->gnorm[g] = cs_kraft_wrms(n, ks->e, ks->w); ks->gused[g] = 1; }
        }
        ks->tested = 1;
    } else {
        if (!v->upre0)
            return cs_fail(err, CS_ERR_ARG, "estimator: %s needs the predicted coupling variables of an iterative scheme",
                           o->estimator == CS_EST_WACV ? "waCV" : "imCV");
        input_error(ks, v->upre0, v->u1); /* (3.20) */
    }
    *eps = est_finish(ks);
    return CS_OK;
}

static void est_destroy(cs_estimator *e) {
    kraft_estimator *ke = (kraft_estimator *)e;
    free(ke->errs);
    free(ke->rc);
}

static const cs_estimator_ops KRAFT_EST_OPS = {.estimate = est_estimate, .destroy = est_destroy};
static const cs_estimator_ops KRAFT_IMPLICIT_EST_OPS = {.estimate = est_implicit, .destroy = est_destroy};

int cs_kraft_estimator_use_pool(cs_estimator *e, cs_pool *pool) {
    if (!e || e->ops != &KRAFT_EST_OPS || !pool || cs_pool_threads(pool) < 2) return 0;
    kraft_estimator *ke = (kraft_estimator *)e;
    if (!ke->errs || !ke->rc) return 0;
    ke->pool = pool;
    return 1;
}

int cs_kraft_estimator_create(kraft_state *ks, cs_estimator **out, cs_err *err) {
    kraft_estimator *ke = calloc(1, sizeof *ke);
    if (!ke) return cs_fail(err, CS_ERR_NOMEM, "estimator: out of memory");
    ke->errs = calloc((size_t)(ks->nsub > 0 ? ks->nsub : 1), sizeof(cs_err));
    ke->rc = calloc((size_t)(ks->nsub > 0 ? ks->nsub : 1), sizeof(int));
    if (!ke->errs || !ke->rc) {
        free(ke->errs); free(ke->rc); free(ke);
        return cs_fail(err, CS_ERR_NOMEM, "estimator: out of memory");
    }
    if (CS_EST_COMPARATIVE(ks->o.estimator)) {
        size_t nc = 0;
        for (int i = 0; i < ks->nsub; i++) nc += (size_t)(CS_MAXDEG + 1) * (size_t)ks->units[i]->nu;
        ks->cmp_start = calloc((size_t)(ks->nsub > 0 ? ks->nsub : 1), sizeof(cs_input));
        ks->cmp_start_c = calloc(nc > 0 ? nc : 1, sizeof(double));
        if (!ks->cmp_start || !ks->cmp_start_c) {
            free(ks->cmp_start); free(ks->cmp_start_c);
            ks->cmp_start = NULL; ks->cmp_start_c = NULL;
            free(ke->errs); free(ke->rc); free(ke);
            return cs_fail(err, CS_ERR_NOMEM, "estimator: out of memory");
        }
    }
    cs_estimator *e = &ke->base;
    e->ops = ks->o.estimator >= CS_EST_IMMD ? &KRAFT_IMPLICIT_EST_OPS : &KRAFT_EST_OPS;
    e->content = ks;            /* owned by the controller */
    e->needs_snapshot = CS_EST_COMPARATIVE(ks->o.estimator);
    *out = e;
    return CS_OK;
}
