/* Kraft's adaptive macro-step and order controller (control/adaptive.h; kraft2021 §9-§11, §19). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control/kraft_state.h"

/* Records grow by doubling: no allocation per step except O(log n) times. */
static int grow(void **p, long cap, size_t elem) {
    void *q = realloc(*p, elem * (size_t)cap);
    if (!q) return -1;
    *p = q;
    return 0;
}

static int record_step(kraft_state *ks, double T1, double H, int k, double eps) {
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

static int record_reject(kraft_state *ks, double T1, double H) {
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
static int step_degree(const kraft_state *ks) {
    int k = ks->kappa, avail = ks->npts - 1;
    if (CS_EST_COMPARATIVE(ks->o.estimator) && ks->npts >= 2) avail = ks->npts - 2;
    if (k > avail) k = avail;
    if (ks->o.estimator == CS_EST_EXLE && k > CS_MAXDEG - 1) k = CS_MAXDEG - 1;
    if (k > CS_MAXDEG) k = CS_MAXDEG;
    return k < 0 ? 0 : k;
}

static int ad_propose(cs_controller *c, double T, cs_step_plan *p, cs_err *err) {
    kraft_state *ks = c->content;
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
static int sdn_all(const kraft_state *ks, const double *T, const double *U, int nh, double H, int jmax, double *sdn) {
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

static int ad_judge(cs_controller *c, const cs_step_plan *p, double eps, int *accept, cs_err *err) {
    kraft_state *ks = c->content;
    const cs_kraft_opts *o = &ks->o;
    const int nin = o->nin, k = ks->kstep;
    const double H = p->H;
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
            if (ks->gused[g]) r = fmin(r, pow(o->safety * ks->gnorm[g], -1.0 / (k + off[g])));
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
    if (!pass && ks->npts == 1 && ks->tested) {
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
    kraft_state *ks = c->content;
    const int nin = ks->o.nin;
    for (int q = KH - 1; q >= 1; q--) ks->hT[q] = ks->hT[q - 1];
    memmove(ks->hu + nin, ks->hu, sizeof(double) * (size_t)(KH - 1) * nin);
    ks->hT[0] = p->T1;
    memcpy(ks->hu, ks->ucand, sizeof(double) * (size_t)nin);
    ks->npts++;
    if (record_step(ks, p->T1, p->H, ks->kstep, ks->eps_last)) ks->rec_lost++;
}

static void ad_destroy(cs_controller *c) {
    kraft_state *ks = c->content;
    if (!ks) return;
    if (ks->cur)
        for (int i = 0; i < ks->nsub; i++)
            cs_unit_snapshot_destroy(ks->units[i], ks->cur[i]);
    free(ks->cur); free(ks->cmp); free(ks->cmp_start); free(ks->cmp_start_c); free(ks->st_unit); free(ks->st_local); free(ks->unit_mon);
    free(ks->xact); free(ks->xcmp); free(ks->e); free(ks->w); free(ks->hu); free(ks->ucand);
    free(ks->state_index); free(ks->state_group); free(ks->in_index); free(ks->state_atol); free(ks->in_atol);
    free(ks->rT); free(ks->rH); free(ks->reps); free(ks->rk); free(ks->rTrej); free(ks->rHrej);
    free(ks);
    c->content = NULL;
}

/* corConvFail (kraft2021 §19, Listing 3.3): the scheme did not converge on step p; the step is repeated from T_N
 * with r = 0.25 (not below H_min; at H_min the controller gives up and the scheme's error stands). */
static int ad_retry(cs_controller *c, const cs_step_plan *p) {
    kraft_state *ks = c->content;
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

int cs_kraft_control_create(const cs_kraft_opts *o, double t0, double t_end, int nsub, cs_unit **units,
                            cs_coupling *coupling, cs_controller **ctl, cs_estimator **est, cs_err *err) {
    *ctl = NULL;
    *est = NULL;
    if (o->estimator < CS_EST_EXLE || o->estimator > CS_EST_WACV)
        return cs_fail(err, CS_ERR_ARG, "estimator: unknown estimator code %d", o->estimator);
    if (!(o->rtol > 0.0) || !isfinite(o->rtol)) return cs_fail(err, CS_ERR_ARG, "rtol: must be positive, got %g", o->rtol);
    if (!(o->safety > 0.0) || !isfinite(o->safety)) return cs_fail(err, CS_ERR_ARG, "safety: must be positive");
    if (!(o->r_min > 0.0 && o->r_min < 1.0 && o->r_max > 1.0 && isfinite(o->r_max)))
        return cs_fail(err, CS_ERR_ARG, "r_min/r_max: need 0 < r_min < 1 < r_max, got %g, %g", o->r_min, o->r_max);
    int kcap = o->estimator == CS_EST_EXLE ? CS_MAXDEG - 1 : CS_MAXDEG;
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
    cs_controller *c = calloc(1, sizeof *c);
    kraft_state *ks = calloc(1, sizeof *ks);
    if (!c || !ks) { free(c); free(ks); return cs_fail(err, CS_ERR_NOMEM, "step control: out of memory"); }
    c->ops = &KRAFT_OPS;
    c->content = ks;
    c->may_reject = 1;
    ks->o = *o;
    ks->t0 = t0; ks->t_end = t_end; ks->nsub = nsub; ks->units = units; ks->coupling = coupling;
    size_t ns = (size_t)o->nstate + 1, ni = (size_t)o->nin + 1, nw = (ns > ni ? ns : ni);
    ks->state_index = malloc(sizeof(int) * ns); ks->state_group = malloc(sizeof(int) * ns);
    ks->state_atol = malloc(sizeof(double) * ns);
    ks->in_index = malloc(sizeof(int) * ni); ks->in_atol = malloc(sizeof(double) * ni);
    ks->st_unit = malloc(sizeof(int) * ns); ks->st_local = malloc(sizeof(int) * ns);
    ks->unit_mon = calloc((size_t)nsub, 1);
    ks->cur = calloc((size_t)nsub, sizeof(void *));
    ks->cmp = calloc((size_t)nsub, sizeof(cs_input *));
    ks->xact = malloc(sizeof(double) * ns); ks->xcmp = malloc(sizeof(double) * ns);
    ks->e = malloc(sizeof(double) * nw); ks->w = malloc(sizeof(double) * nw);
    ks->hu = calloc((size_t)2 * KH * ni, sizeof(double));
    ks->ucand = calloc(ni, sizeof(double));
    if (!ks->state_index || !ks->state_group || !ks->state_atol || !ks->in_index || !ks->in_atol || !ks->st_unit ||
        !ks->st_local || !ks->unit_mon || !ks->cur || !ks->cmp || !ks->xact || !ks->xcmp || !ks->e || !ks->w ||
        !ks->hu || !ks->ucand) {
        cs_controller_destroy(c);
        return cs_fail(err, CS_ERR_NOMEM, "step control: out of memory");
    }
    if (o->nstate) {
        memcpy(ks->state_index, o->state_index, sizeof(int) * (size_t)o->nstate);
        memcpy(ks->state_group, o->state_group, sizeof(int) * (size_t)o->nstate);
        memcpy(ks->state_atol, o->state_atol, sizeof(double) * (size_t)o->nstate);
    }
    if (o->nin) {
        memcpy(ks->in_index, o->in_index, sizeof(int) * (size_t)o->nin);
        memcpy(ks->in_atol, o->in_atol, sizeof(double) * (size_t)o->nin);
    }
    ks->o.state_index = ks->state_index; ks->o.state_group = ks->state_group; ks->o.state_atol = ks->state_atol;
    ks->o.in_index = ks->in_index; ks->o.in_atol = ks->in_atol;
    int rc = CS_OK;
    for (int q = 0; q < o->nstate && !rc; q++) {
        int g = ks->state_index[q], off = 0, i = 0;
        for (; i < nsub; i++) {
            if (g >= off && g < off + units[i]->nx) break;
            off += units[i]->nx;
        }
        if (g < 0 || i == nsub) rc = cs_fail(err, CS_ERR_ARG, "monitor: state index %d out of range", g);
        else if (!cs_unit_has_states(units[i]))
            rc = cs_fail(err, CS_ERR_ARG, "monitor: unit %s does not expose its states", units[i]->name);
        else if (ks->state_group[q] != CS_GROUP_POS && ks->state_group[q] != CS_GROUP_VEL)
            rc = cs_fail(err, CS_ERR_ARG, "monitor: unknown group %d", ks->state_group[q]);
        else if (!(ks->state_atol[q] >= 0.0)) rc = cs_fail(err, CS_ERR_ARG, "atol: must be >= 0");
        else { ks->st_unit[q] = i; ks->st_local[q] = g - off; ks->unit_mon[i] = 1; }
    }
    int nu = 0;
    for (int i = 0; i < nsub; i++) nu += units[i]->nu;
    for (int a = 0; a < o->nin && !rc; a++) {
        if (ks->in_index[a] < 0 || ks->in_index[a] >= nu) rc = cs_fail(err, CS_ERR_ARG, "monitor: input index out of range");
        else if (!(ks->in_atol[a] >= 0.0)) rc = cs_fail(err, CS_ERR_ARG, "atol: must be >= 0");
    }
    if (!rc && CS_EST_COMPARATIVE(o->estimator))
        for (int i = 0; i < nsub && !rc; i++)
            if (ks->unit_mon[i] && !(ks->cur[i] = cs_unit_snapshot_create(units[i])))
                rc = cs_fail(err, CS_ERR_NOMEM, "step control: out of memory (snapshots)");
    if (!rc) rc = cs_kraft_estimator_create(ks, est, err);
    if (rc) { cs_controller_destroy(c); return rc; }
    ks->H = o->H_init;
    /* κ = 0 at the start (§4.3); a fixed κ without initial phase is used as soon as the history allows */
    ks->kappa = (o->order == CS_ORDER_FIXED && !o->initial_phase) ? o->k_max : 0;
    ks->initial = o->initial_phase;
    ks->npts = 1;
    ks->hT[0] = t0;
    *ctl = c;
    return CS_OK;
}

int cs_kraft_control_records(const cs_controller *c, cs_kraft_records *r) {
    if (!c || c->ops != &KRAFT_OPS) return 0;
    const kraft_state *ks = c->content;
    *r = (cs_kraft_records){.n = ks->n, .T = ks->rT, .H = ks->rH, .eps = ks->reps, .k = ks->rk, .nrej = ks->nrej,
                            .Trej = ks->rTrej, .Hrej = ks->rHrej, .comparative_steps = ks->comparative_steps,
                            .hmin_failed = ks->hmin_failed, .conv_fail = ks->conv_fail};
    return 1;
}
