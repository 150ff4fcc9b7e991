/* Kraft's adaptive macro-step and order controller (control/adaptive.h; kraft2021 §9-§11, §19). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control/adaptive.h"
#include "control/kraft.h"
#include "control/kraft_pool.h"
#include "coupling/signal.h"
#include "coupling/approx.h"

#define KH CS_MAXHIST           /* u history for SDN(κ+2): κ_max + 3 <= 8 samples */

typedef struct kraft_ctl {
    cs_kraft_opts o;            /* its in_index/in_atol are the copies below (the state arrays are not kept) */
    int *in_index;
    double *in_atol;
    double t0, t_end;
    double *e, *w;              /* nin scratch */
    double H;                   /* next step size */
    double Hprop;               /* the step size propose asked for (p->H = T1 − T may round above H_min) */
    int kappa;                  /* controller's degree κ */
    int kstep;                  /* degree of the step in progress */
    int n_fail, n_succ, initial;
    int npts;                   /* accepted macro points including T_0 */
    double hT[KH];              /* accepted times, newest first */
    double *hu;                 /* KH x nin monitored u, newest first (then a KH x nin scratch block) */
    double *ucand;              /* monitored u_{N+1} of the step in progress (from the estimate) */
    double eps_last;            /* eps of the step in progress */
    /* records (grown by doubling) */
    long n, cap, nrej, caprej, comparative_steps;
    double *rT, *rH, *reps, *rTrej, *rHrej;
    int *rk;
    int hmin_failed;
    long rec_lost;              /* steps not recorded (out of memory) */
    long conv_fail;             /* retries after the scheme did not converge (kraft2021 §19) */
} kraft_ctl;

/* Records grow by doubling: no allocation per step except O(log n) times. */
static int grow(void **p, long cap, size_t elem) {
    void *q = realloc(*p, elem * (size_t)cap);
    if (!q) return -1;
    *p = q;
    return 0;
}

static int record_step(kraft_ctl *ks, double T1, double H, int k, double eps) {
    if (ks->n >= ks->cap) {
        long cap = ks->cap ? 2 * ks->cap : 256;
        if (grow((void **)&ks->rT, cap, sizeof(double)) || grow((void **)&ks->rH, cap, sizeof(double)) ||
            grow((void **)&ks->reps, cap, sizeof(double)) || grow((void **)&ks->rk, cap, sizeof(int)))
            return -1;
        ks->cap = cap;
    }
    ks->rT[ks->n] = T1; ks->rH[ks->n] = H; ks->rk[ks->n] = k; ks->reps[ks->n] = eps;
    ks->n++;
    return 0;
}

static int record_reject(kraft_ctl *ks, double T1, double H) {
    if (ks->nrej >= ks->caprej) {
        long cap = ks->caprej ? 2 * ks->caprej : 64;
        if (grow((void **)&ks->rTrej, cap, sizeof(double)) || grow((void **)&ks->rHrej, cap, sizeof(double))) return -1;
        ks->caprej = cap;
    }
    ks->rTrej[ks->nrej] = T1; ks->rHrej[ks->nrej] = H;
    ks->nrej++;
    return 0;
}

/* Degree usable for the next step: κ+1 samples for the polynomial, κ+2 for the comparative runs of exLE/exMD. */
static int step_degree(const kraft_ctl *ks) {
    int k = ks->kappa, avail = ks->npts - 1;
    if (CS_EST_COMPARATIVE(ks->o.estimator) && ks->npts >= 2) avail = ks->npts - 2;
    if (k > avail) k = avail;
    if (ks->o.estimator == CS_EST_EXLE && k > CS_MAXDEG - 1) k = CS_MAXDEG - 1;
    if (k > CS_MAXDEG) k = CS_MAXDEG;
    return k < 0 ? 0 : k;
}

static int ad_propose(cs_controller *c, double T, cs_step_plan *p, cs_err *err) {
    kraft_ctl *ks = c->content;
    double H = fmin(ks->H, ks->o.H_max), rem = ks->t_end - T;
    double Hl = cs_kraft_land_micro_step(H, rem);    /* Listing 4.1 applied to the macro grid: land on t_end */
    if (Hl < H && Hl < rem && Hl < ks->o.H_min) Hl = rem;
    p->T = T;
    p->H = Hl;
    p->T1 = Hl >= rem ? ks->t_end : T + Hl;
    if (p->T1 >= ks->t_end) p->T1 = ks->t_end;
    p->H = p->T1 - T;
    p->Hnom = 0.0;
    ks->Hprop = H;
    ks->kstep = step_degree(ks);
    p->kappa = ks->kstep;
    if (!(p->H > 0.0)) return cs_fail(err, CS_ERR_SOLVER, "H: macro step at t = %.17g has no length", T);
    return CS_OK;
}

/* SDN(j) = ||H^j P_j^(j)|| = ||H^j j! u[T_M, ..., T_{M-j}]||_WRMS (kraft2021 §10), j = 1..nsdn-1, on the history
 * T (newest first), U (KH x nin). */
static int sdn_all(const kraft_ctl *ks, const double *T, const double *U, int nh, double H, int jmax, double *sdn) {
    const int nin = ks->o.nin;
    int nsdn = jmax + 1 < nh ? jmax + 1 : nh;
    double col[KH], *e = ks->e, *w = ks->w;
    for (int a = 0; a < nin; a++) w[a] = 1.0 / (ks->in_atol[a] + ks->o.rtol * fabs(U[a]));
    sdn[0] = 0.0;
    double f = 1.0;
    for (int j = 1; j < nsdn; j++) {
        f *= H * j;
        for (int a = 0; a < nin; a++) {
            for (int q = 0; q <= j; q++) col[q] = U[(size_t)q * nin + a];
            e[a] = f * cs_kraft_divided_difference(j + 1, T, col);
        }
        sdn[j] = cs_kraft_wrms(nin, e, w);
    }
    return nsdn;
}

static int ad_judge(cs_controller *c, const cs_step_plan *p, const cs_estimate *est, int *accept, cs_err *err) {
    kraft_ctl *ks = c->content;
    const cs_kraft_opts *o = &ks->o;
    const int nin = o->nin, k = ks->kstep;
    const double H = p->H, eps = est->eps;
    /* the monitored coupling variables: the candidate u_{N+1}, and u_N (consistent; also u_0 at the first step) */
    for (int a = 0; a < nin; a++) {
        ks->ucand[a] = est->u1[ks->in_index[a]];
        ks->hu[a] = est->u0[ks->in_index[a]];
    }
    ks->eps_last = eps;
    ks->comparative_steps += est->integrations;
    const int pass = eps <= 1.0;                        /* local error test (3.21)-(3.23) */
    *accept = pass;
    ks->n_fail = pass ? 0 : ks->n_fail + 1;
    /* history after this step: M = N+1 on success, M = N on failure (3.24) */
    double T[KH];
    double *Uh = ks->hu + (size_t)KH * nin;             /* scratch block after the history */
    int nh = ks->npts < KH ? ks->npts : KH;
    if (pass) {
        T[0] = p->T1;
        for (int q = 0; q + 1 < KH; q++) T[q + 1] = ks->hT[q];
        memcpy(Uh, ks->ucand, sizeof(double) * (size_t)nin);
        memcpy(Uh + nin, ks->hu, sizeof(double) * (size_t)(KH - 1) * nin);
        nh = nh + 1 < KH ? nh + 1 : KH;
    } else {
        memcpy(T, ks->hT, sizeof T);
        memcpy(Uh, ks->hu, sizeof(double) * (size_t)KH * nin);
    }
    /* order control (§10) */
    int kn = k;
    double sdn[KH + 1];
    const int kmax = o->k_max;
    if (o->order != CS_ORDER_FIXED && nin > 0) {
        int nsdn = sdn_all(ks, T, Uh, nh, H, k + 2, sdn);
        int kcap = kmax;
        kn = cs_kraft_select_order(k, sdn, nsdn, ks->n_succ, ks->n_fail, kcap, o->order);
    }
    /* step ratio (§11.2) */
    double r = INFINITY;
    if (kn == k || nh < kn + 2 || nin == 0) {
        static const int off[3] = {3, 2, 1};
        for (int g = 0; g < 3; g++)
            if (est->used[g]) r = fmin(r, pow(o->safety * est->norm[g], -1.0 / (k + off[g])));
    } else {
        /* a-priori estimate (3.26) of the next step with κ := κ_new and T_{M+1} = T_M + H */
        for (int a = 0; a < nin; a++) {
            double col[KH];
            for (int q = 0; q < kn + 2; q++) col[q] = Uh[(size_t)q * nin + a];
            ks->e[a] = fabs(cs_kraft_newton_difference(kn, T, col, T[0] + H));
            ks->w[a] = 1.0 / (ks->in_atol[a] + o->rtol * fabs(Uh[a]));
        }
        r = pow(o->safety * cs_kraft_wrms(nin, ks->e, ks->w), -1.0 / (kn + 1));
    }
    if (!(r == r)) r = 0.0;
    const double r_est = r;
    r = cs_kraft_limit_step_ratio(r, ks->n_fail, o->r_min, o->r_max, o->dead_zone, 0);
    double Hn;
    int knext;
    if (!pass && ks->npts == 1 && est->tested) {
        /* the first step failed its test (start-up estimate, estimators.c): H_init was too large. H from the
         * estimate itself, r = 0.9 (Γ||ε||)^(-1/order) without Listing 3.3's floor 0.25 (down to 1e-4 per attempt),
         * κ kept; the initial phase of §19 starts with the first accepted step */
        double rf = 0.9 * r_est;
        Hn = (rf < 0.9 ? (rf > 1e-4 ? rf : 1e-4) : 0.9) * H;
        knext = ks->kappa;
    } else if (ks->initial && pass && kn >= k && r >= 1.0) {
        /* initial phase (§4.3, §19): H doubled, κ raised by one until κ_max */
        Hn = 2.0 * H;
        knext = ks->kappa + 1 <= kmax ? ks->kappa + 1 : kmax;
        if (knext >= kmax) ks->initial = 0;
    } else {
        ks->initial = 0;
        Hn = r * H;
        knext = o->order == CS_ORDER_FIXED ? kmax : kn;
    }
    ks->n_succ = (pass && kn == k && r >= 1.0) ? ks->n_succ + 1 : 0;
    if (Hn > o->H_max) Hn = o->H_max;
    if (Hn < o->H_min) {
        /* at H_min: the step asked for was H_min (p->H = T1 − T rounds to a few ulps of T above it; comparing
         * p->H repeated the same failing step forever, M3 exCV rtol 1e-6) */
        if (!pass && !(H > o->H_min && ks->Hprop > o->H_min)) {
            ks->hmin_failed = 1;
            return cs_fail(err, CS_ERR_SOLVER, "step size: the local error test failed at t = %.10g with H = %.6g at "
                           "H_min = %.6g (estimate %.6g > 1); loosen rtol/atol or lower H_min", p->T, H, o->H_min, eps);
        }
        Hn = o->H_min;
    }
    ks->H = Hn;
    ks->kappa = knext;
    if (!pass && record_reject(ks, p->T1, H)) return cs_fail(err, CS_ERR_NOMEM, "step control: out of memory");
    return CS_OK;
}

static void ad_commit(cs_controller *c, const cs_step_plan *p) {
    kraft_ctl *ks = c->content;
    const int nin = ks->o.nin;
    for (int q = KH - 1; q >= 1; q--) ks->hT[q] = ks->hT[q - 1];
    memmove(ks->hu + nin, ks->hu, sizeof(double) * (size_t)(KH - 1) * nin);
    ks->hT[0] = p->T1;
    memcpy(ks->hu, ks->ucand, sizeof(double) * (size_t)nin);
    ks->npts++;
    if (record_step(ks, p->T1, p->H, ks->kstep, ks->eps_last)) ks->rec_lost++;
}

static void ad_destroy(cs_controller *c) {
    kraft_ctl *ks = c->content;
    if (!ks) return;
    free(ks->e); free(ks->w); free(ks->hu); free(ks->ucand); free(ks->in_index); free(ks->in_atol);
    free(ks->rT); free(ks->rH); free(ks->reps); free(ks->rk); free(ks->rTrej); free(ks->rHrej);
    free(ks);
    c->content = NULL;
}

/* corConvFail (kraft2021 §19, Listing 3.3): the scheme did not converge on step p; the step is repeated from T_N
 * with r = 0.25 (not below H_min; at H_min the controller gives up and the scheme's error stands). */
static int ad_retry(cs_controller *c, const cs_step_plan *p) {
    kraft_ctl *ks = c->content;
    if (!(p->H > ks->o.H_min && ks->Hprop > ks->o.H_min)) return 0;
    double Hn = 0.25 * p->H;
    ks->H = Hn > ks->o.H_min ? Hn : ks->o.H_min;
    ks->n_fail++;
    ks->n_succ = 0;
    ks->initial = 0;
    ks->conv_fail++;
    if (record_reject(ks, p->T1, p->H)) ks->rec_lost++;
    return 1;
}

static const cs_controller_ops KRAFT_OPS = {.propose = ad_propose, .judge = ad_judge, .commit = ad_commit,
                                            .destroy = ad_destroy, .retry = ad_retry};

/* One check of the options of the pair, in the order the messages have always come. */
static int check_opts(const cs_kraft_opts *o, cs_err *err) {
    if (o->estimator < CS_EST_EXLE || o->estimator > CS_EST_WACV)
        return cs_fail(err, CS_ERR_ARG, "estimator: unknown estimator code %d", o->estimator);
    if (!(o->rtol > 0.0) || !isfinite(o->rtol)) return cs_fail(err, CS_ERR_ARG, "rtol: must be positive, got %g", o->rtol);
    if (!(o->safety > 0.0) || !isfinite(o->safety)) return cs_fail(err, CS_ERR_ARG, "safety: must be positive");
    if (!(o->r_min > 0.0 && o->r_min < 1.0 && o->r_max > 1.0 && isfinite(o->r_max)))
        return cs_fail(err, CS_ERR_ARG, "r_min/r_max: need 0 < r_min < 1 < r_max, got %g, %g", o->r_min, o->r_max);
    /* κ + 1 <= 7 for exLE's comparative polynomial and exMD's error-constant ratio C^{κ+1}/C^κ */
    const int kcap = CS_KRAFT_KMAX - 1;
    if (o->k_max < 0 || o->k_max > kcap)
        return cs_fail(err, CS_ERR_ARG, "k_max: must be in 0..%d for this estimator, got %d", kcap, o->k_max);
    if (o->order < CS_ORDER_IDA || o->order > CS_ORDER_FIXED) return cs_fail(err, CS_ERR_ARG, "order: unknown strategy");
    if (!(o->H_init > 0.0) || !(o->H_min >= 0.0) || !(o->H_max >= o->H_init) || !(o->H_init >= o->H_min))
        return cs_fail(err, CS_ERR_ARG, "H: need 0 <= H_min <= H <= H_max, got %g, %g, %g", o->H_min, o->H_init, o->H_max);
    if (o->nin < 0 || o->nstate < 0 || o->nin > 100000) return cs_fail(err, CS_ERR_ARG, "monitor: bad sizes");
    if (!CS_EST_ON_STATES(o->estimator) && o->nin < 1)
        return cs_fail(err, CS_ERR_ARG, "monitor: exCV/imCV/waCV need at least one monitored coupling variable");
    if (CS_EST_ON_STATES(o->estimator) && o->nstate < 1)
        return cs_fail(err, CS_ERR_ARG, "monitor: exLE/exMD/imMD need at least one monitored state");
    return CS_OK;
}

int cs_kraft_controller_create(const cs_kraft_opts *o, double t0, double t_end, cs_controller **out, cs_err *err) {
    *out = NULL;
    cs_controller *c = calloc(1, sizeof *c);
    kraft_ctl *ks = calloc(1, sizeof *ks);
    if (!c || !ks) { free(c); free(ks); return cs_fail(err, CS_ERR_NOMEM, "step control: out of memory"); }
    c->ops = &KRAFT_OPS;
    c->kind = CS_CTL_KRAFT;
    c->content = ks;
    c->may_reject = 1;
    ks->o = *o;
    ks->o.state_index = ks->o.state_group = NULL;   /* the estimator's business */
    ks->o.state_atol = NULL;
    ks->t0 = t0; ks->t_end = t_end;
    const size_t ni = (size_t)o->nin + 1;
    ks->in_index = malloc(sizeof(int) * ni); ks->in_atol = malloc(sizeof(double) * ni);
    ks->e = malloc(sizeof(double) * ni); ks->w = malloc(sizeof(double) * ni);
    ks->hu = calloc((size_t)2 * KH * ni, sizeof(double));
    ks->ucand = calloc(ni, sizeof(double));
    if (!ks->in_index || !ks->in_atol || !ks->e || !ks->w || !ks->hu || !ks->ucand) {
        cs_controller_destroy(c);
        return cs_fail(err, CS_ERR_NOMEM, "step control: out of memory");
    }
    if (o->nin) {
        memcpy(ks->in_index, o->in_index, sizeof(int) * (size_t)o->nin);
        memcpy(ks->in_atol, o->in_atol, sizeof(double) * (size_t)o->nin);
    }
    ks->o.in_index = ks->in_index; ks->o.in_atol = ks->in_atol;
    ks->H = o->H_init;
    /* κ = 0 at the start (§4.3); a fixed κ without initial phase is used as soon as the history allows */
    ks->kappa = (o->order == CS_ORDER_FIXED && !o->initial_phase) ? o->k_max : 0;
    ks->initial = o->initial_phase;
    ks->npts = 1;
    ks->hT[0] = t0;
    *out = c;
    return CS_OK;
}

int cs_kraft_control_create(const cs_kraft_opts *o, double t0, double t_end, const cs_unit_access *units,
                            cs_coupling *coupling, cs_controller **ctl, cs_estimator **est, cs_err *err) {
    *ctl = NULL;
    *est = NULL;
    CS_TRY(check_opts(o, err));
    CS_TRY(cs_kraft_estimator_create(o, t0, units, coupling, est, err));
    int rc = cs_kraft_controller_create(o, t0, t_end, ctl, err);
    if (rc) { cs_estimator_destroy(*est); *est = NULL; }
    return rc;
}

int cs_kraft_control_records(const cs_controller *c, cs_kraft_records *r) {
    if (!c || c->kind != CS_CTL_KRAFT) return 0;
    const kraft_ctl *ks = c->content;
    *r = (cs_kraft_records){.n = ks->n, .T = ks->rT, .H = ks->rH, .eps = ks->reps, .k = ks->rk, .nrej = ks->nrej,
                            .Trej = ks->rTrej, .Hrej = ks->rHrej, .comparative_steps = ks->comparative_steps,
                            .hmin_failed = ks->hmin_failed, .conv_fail = ks->conv_fail};
    return 1;
}

/* ---- the kind (master/registry.c) ---- */

#define P(name, type) CS_PARAM_FIELD(cs_kraft_opts, #name, type, name)
#define V(name, type, len) CS_PARAM_VECTOR(cs_kraft_opts, #name, type, name, len)
static const cs_param kraft_params[] = {
    P(estimator, CS_PARAM_INT), P(rtol, CS_PARAM_DOUBLE), P(safety, CS_PARAM_DOUBLE), P(r_min, CS_PARAM_DOUBLE),
    P(r_max, CS_PARAM_DOUBLE), P(dead_zone, CS_PARAM_INT), P(order, CS_PARAM_INT), P(k_max, CS_PARAM_INT),
    P(H_init, CS_PARAM_DOUBLE), P(H_min, CS_PARAM_DOUBLE), P(H_max, CS_PARAM_DOUBLE),
    P(initial_phase, CS_PARAM_INT), V(state_index, CS_PARAM_INDICES, nstate),
    V(state_group, CS_PARAM_INDICES, nstate), V(state_atol, CS_PARAM_DOUBLES, nstate),
    V(in_index, CS_PARAM_INDICES, nin), V(in_atol, CS_PARAM_DOUBLES, nin),
};
#undef P
#undef V

static int kraft_create(const void *spec, cs_control_env *e, cs_controller **ctl, cs_estimator **est, cs_err *err) {
    const cs_kraft_opts *o = spec;
    CS_TRY(cs_signal_coupling_set_depth(e->coupling, o->k_max + 2, err));
    CS_TRY(cs_kraft_control_create(o, e->t0, e->t_end, e->units, e->coupling, ctl, est, err));
    cs_kraft_estimator_use_pool(*est, e->pool);   /* threads=n: comparative runs */
    e->adaptive = 1;
    return CS_OK;
}

const cs_kind cs_control_kraft_kind = {"kraft", kraft_params, CS_NPARAMS(kraft_params), sizeof(cs_kraft_opts), NULL,
                                       {.control = kraft_create}, NULL};
