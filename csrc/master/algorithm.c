#include "master/algorithm.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interrupt.h"

struct cs_algorithm {
    cs_algorithm_config cfg;
    int nx, maxwork;
    double *x0;
    double T;
    long steps;
    int initialized;
    double *y, *u, *ynew, *unew;      /* consistent outputs/inputs at T and at T_{N+1} */
    double *uend, *udot, *ystar, *ydot, *zero, *work;
    void **usnap, *csnap;             /* rollback snapshots (controllers that may reject) */
    void **dpre, **dpost;             /* dense output: units at T_N and at T_{N+1} */
    const cs_input **used;
    cs_states_ref *xs;                /* per unit: the states() view (fixed pointers) and its size */
    const double **xp;                /* per state: its address in the units' views (one flat pass per step) */
    int *xoff;                        /* nsub+1 offsets of the units' states (the exchanges of cfg.share) */
    cs_run_view view;                 /* what observers see after a step (the fields that change are set per step) */
    double *yd, *ud;                  /* dense output: outputs and inputs at an output point */
    long kout;                        /* next output point */
    cs_step_ctx ctx;
    cs_outputs outs;
    cs_estimate_view ev;              /* what the estimator sees of the candidate step */
    cs_estimate est;                  /* the estimator's record of it (all zero without an estimator) */
    cs_algorithm_timing timing;       /* cfg.timing */
};

/* Monotonic clock for cfg.timing. */
static double clock_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* 0 when timing is off: no clock read (two per step would be a quarter of a small run) */
static inline double clk(const cs_algorithm *a) { return a->cfg.timing ? clock_now() : 0.0; }

void cs_algorithm_get_timing(const cs_algorithm *a, cs_algorithm_timing *t) { *t = a->timing; }

/* The network evaluates outputs through the units (cs_outputs). */
static int outs_eval(void *ctx, int i, double t, const double *u_i, double *y_i, cs_err *err) {
    cs_unit *u = ((cs_algorithm *)ctx)->cfg.units[i];
    return cs_unit_get_outputs(u, t, u_i, y_i, err);
}

static int outs_jac(void *ctx, int i, double t, const double *u_i, double *G, cs_err *err) {
    cs_algorithm *a = ctx;
    return cs_unit_output_jacobian(a->cfg.units[i], t, u_i, G, a->work, err);
}

void cs_algorithm_destroy(cs_algorithm *a) {
    if (!a) return;
    if (a->usnap)
        for (int i = 0; i < a->cfg.nsub; i++)
            cs_unit_snapshot_destroy(a->cfg.units[i], a->usnap[i]);
    cs_coupling_snapshot_destroy(a->cfg.coupling, a->csnap);
    for (int i = 0; i < a->cfg.nsub; i++) {
        if (a->dpre && a->dpre[i]) cs_unit_snapshot_destroy(a->cfg.units[i], a->dpre[i]);
        if (a->dpost && a->dpost[i]) cs_unit_snapshot_destroy(a->cfg.units[i], a->dpost[i]);
    }
    free(a->dpre); free(a->dpost); free(a->used); free(a->xoff); free(a->xs); free(a->xp); free(a->yd); free(a->ud);
    free(a->usnap);
    free(a->x0); free(a->y); free(a->u); free(a->ynew); free(a->unew);
    free(a->uend); free(a->udot); free(a->ystar); free(a->ydot); free(a->zero); free(a->work);
    free(a);
}

int cs_algorithm_create(const cs_algorithm_config *cfg, cs_algorithm **out, cs_err *err) {
    *out = NULL;
    if (cfg->nsub < 1 || !cfg->units || !cfg->net || !cfg->coupling || !cfg->scheme || !cfg->controller)
        return cs_fail(err, CS_ERR_ARG, "algorithm: units, network, coupling, scheme and controller are required");
    if (cfg->net->nsub != cfg->nsub) return cs_fail(err, CS_ERR_ARG, "algorithm: network and units differ in number");
    if (cfg->update != CS_UPDATE_CONSISTENT && cfg->update != CS_UPDATE_SIMPLIFIED)
        return cs_fail(err, CS_ERR_ARG, "update: unknown update code %d", cfg->update);
    if (!isfinite(cfg->t0) || !isfinite(cfg->t_end) || !(cfg->t_end >= cfg->t0))
        return cs_fail(err, CS_ERR_ARG, "t_end: must be finite and >= the start time");
    cs_algorithm *a = calloc(1, sizeof *a);
    if (!a) return cs_fail(err, CS_ERR_NOMEM, "algorithm: out of memory");
    a->cfg = *cfg;
    const cs_network *net = cfg->net;
    int maxw = 1;
    for (int i = 0; i < cfg->nsub; i++) {
        cs_unit *u = cfg->units[i];
        if (u->nu != net->uoff[i + 1] - net->uoff[i] || u->ny != net->yoff[i + 1] - net->yoff[i]) {
            cs_algorithm_destroy(a);
            return cs_fail(err, CS_ERR_ARG, "algorithm: unit %s does not match the network's sizes", u->name);
        }
        a->nx += u->nx;
        if (u->nu + 2 * u->ny > maxw) maxw = u->nu + 2 * u->ny;
    }
    size_t nu = (size_t)net->nu + 1, ny = (size_t)net->ny + 1;
    a->x0 = calloc((size_t)a->nx + 1, sizeof(double));
    a->y = calloc(ny, sizeof(double)); a->ynew = calloc(ny, sizeof(double));
    a->u = calloc(nu, sizeof(double)); a->unew = calloc(nu, sizeof(double));
    a->uend = calloc(nu, sizeof(double)); a->udot = calloc(nu, sizeof(double)); a->zero = calloc(nu, sizeof(double));
    a->ystar = calloc(ny, sizeof(double)); a->ydot = calloc(ny, sizeof(double));
    a->work = calloc((size_t)maxw + 1, sizeof(double));
    if (!a->x0 || !a->y || !a->ynew || !a->u || !a->unew || !a->uend || !a->udot || !a->zero || !a->ystar ||
        !a->ydot || !a->work) {
        cs_algorithm_destroy(a);
        return cs_fail(err, CS_ERR_NOMEM, "algorithm: out of memory");
    }
    if (cfg->x0) memcpy(a->x0, cfg->x0, sizeof(double) * a->nx);
    if (cfg->controller->may_reject || (cfg->estimator && cfg->estimator->needs_snapshot)) {
        a->usnap = calloc((size_t)cfg->nsub, sizeof(void *));
        a->csnap = cs_coupling_snapshot_create(cfg->coupling);
        int ok = a->usnap && a->csnap;
        for (int i = 0; ok && i < cfg->nsub; i++) ok = (a->usnap[i] = cs_unit_snapshot_create(cfg->units[i])) != NULL;
        if (!ok) { cs_algorithm_destroy(a); return cs_fail(err, CS_ERR_NOMEM, "algorithm: out of memory (snapshots)"); }
    }
    a->used = calloc((size_t)cfg->nsub, sizeof(cs_input *));
    a->xoff = calloc((size_t)cfg->nsub + 1, sizeof(int));
    if (a->xoff)
        for (int i = 0; i < cfg->nsub; i++) a->xoff[i + 1] = a->xoff[i] + cfg->units[i]->nx;
    a->xs = calloc((size_t)cfg->nsub, sizeof(cs_states_ref));
    a->xp = calloc((size_t)a->nx + 1, sizeof(double *));
    if (!a->used || !a->xs || !a->xp || !a->xoff) { cs_algorithm_destroy(a); return cs_fail(err, CS_ERR_NOMEM, "algorithm: out of memory"); }
    if (cfg->nout > 0) {
        if (!cfg->t_out || cfg->t_out[0] != cfg->t0) {
            cs_algorithm_destroy(a);
            return cs_fail(err, CS_ERR_ARG, "t_eval: the output grid must start at the start time");
        }
        for (long k = 1; k < cfg->nout; k++)
            if (!(cfg->t_out[k] > cfg->t_out[k - 1]) || !(cfg->t_out[k] <= cfg->t_end)) {
                cs_algorithm_destroy(a);
                return cs_fail(err, CS_ERR_ARG, "t_eval: output times must increase strictly within [t0, t_end]");
            }
        a->dpre = calloc((size_t)cfg->nsub, sizeof(void *));
        a->dpost = calloc((size_t)cfg->nsub, sizeof(void *));
        a->yd = calloc(ny, sizeof(double));
        a->ud = calloc(nu, sizeof(double));
        int ok = a->dpre && a->dpost && a->yd && a->ud;
        for (int i = 0; ok && i < cfg->nsub; i++)
            ok = (a->dpre[i] = cs_unit_snapshot_create(cfg->units[i])) &&
                 (a->dpost[i] = cs_unit_snapshot_create(cfg->units[i]));
        if (!ok) { cs_algorithm_destroy(a); return cs_fail(err, CS_ERR_NOMEM, "algorithm: out of memory (dense output)"); }
    }
    a->kout = 1;
    a->ctx = (cs_step_ctx){.nsub = cfg->nsub, .units = cfg->units, .coupling = cfg->coupling, .net = cfg->net,
                           .continue_always = cfg->continue_always, .need_udot = cfg->coupling->needs_rates,
                           .uend = a->uend, .udot = a->udot, .ystar = a->ystar, .ydot = a->ydot,
                           .used = a->used, .exact_rollback = cfg->controller->may_reject,
                           .side_runs = cfg->estimator && cfg->estimator->needs_snapshot,
                           .share = cfg->share, .xoff = a->xoff};
    a->ev = (cs_estimate_view){.nsub = cfg->nsub, .net = cfg->net, .coupling = cfg->coupling,
                               .upre = a->uend, .used = a->used, .share = cfg->share};
    a->outs = (cs_outputs){.ctx = a, .eval = outs_eval, .jacobian = outs_jac};
    static const double no_state = 0.0;   /* what an inaccessible state reads as (recorded as 0, never diverges) */
    for (int i = 0, q = 0; i < cfg->nsub; i++) {
        cs_unit *u = cfg->units[i];
        a->xs[i] = (cs_states_ref){cs_unit_states(u), u->nx};
        for (int k = 0; k < u->nx; k++) a->xp[q++] = a->xs[i].x ? &a->xs[i].x[k] : &no_state;
    }
    a->view = (cs_run_view){.nsub = cfg->nsub, .units = cfg->units, .xs = a->xs, .xp = a->xp, .nx = a->nx,
                            .ny = cfg->net->ny,
                            .nu = cfg->net->nu};
    a->T = cfg->t0;
    *out = a;
    return CS_OK;
}

void cs_algorithm_view(const cs_algorithm *a, cs_run_view *v) {
    *v = a->view;
    v->t = a->T;
    v->step = a->steps;
    v->final = a->T >= a->cfg.t_end;
    v->y = a->y;
    v->u = a->u;
}

double cs_algorithm_time(const cs_algorithm *a) { return a->T; }
long cs_algorithm_steps(const cs_algorithm *a) { return a->steps; }
long cs_algorithm_rejected(const cs_algorithm *a) {
    cs_controller_stats s;
    cs_controller_get_stats(a->cfg.controller, &s);
    return s.rejected;
}

/* One comparison per value: NaN, inf and states beyond the bound all fail !(|v| <= b); outputs (forces, ...) have
 * other scales than states and stop only when they are not finite. The scan has no call in it; the message is
 * formed only when something failed. */
static double divergence_bound(const cs_algorithm *a) {
    return a->cfg.divergence_bound > 0.0 ? a->cfg.divergence_bound : INFINITY;
}

/* The message of a failed check (cold: only after the scan found something). */
static __attribute__((noinline, cold)) int divergence_error(const cs_algorithm *a, double t, const double *y,
                                                            cs_err *err) {
    const cs_network *net = a->cfg.net;
    const double b = divergence_bound(a);
    for (int i = 0; i < a->cfg.nsub; i++) {
        const cs_unit *u = a->cfg.units[i];
        const double *x = a->xs[i].x;
        for (int q = 0; x && q < u->nx; q++)
            if (!(fabs(x[q]) <= b))
                return cs_fail(err, CS_ERR_DIVERGED, "co-simulation diverged at t = %.10g: state %s.x[%d] = %g %s "
                               "(numerically unstable coupling?)", t, u->name, q, x[q],
                               isfinite(x[q]) ? "exceeds the divergence bound" : "is not finite");
        for (int j = net->yoff[i]; j < net->yoff[i + 1]; j++)
            if (!(fabs(y[j]) < INFINITY))
                return cs_fail(err, CS_ERR_DIVERGED, "co-simulation diverged at t = %.10g: output %s.y[%d] = %g is "
                               "not finite (numerically unstable coupling?)", t, u->name, j - net->yoff[i], y[j]);
    }
    return CS_OK;
}

/* |v| as the bits of a double with the sign cleared: for non-negative doubles the integer order is the numeric
 * order and every NaN lies above +inf, so |v| <= b (b > 0) and "finite" are single integer comparisons. */
static inline uint64_t abs_bits(double v) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b & 0x7fffffffffffffffULL;
}

static inline int check_divergence(const cs_algorithm *a, double t, const double *y, cs_err *err) {
    uint64_t mx = 0, my = 0;
    for (const double *const *p = a->xp, *const *end = a->xp + a->nx; p < end; p++) {
        const uint64_t v = abs_bits(**p);
        mx = v > mx ? v : mx;
    }
    for (int j = 0, ny = a->cfg.net->ny; j < ny; j++) {
        const uint64_t v = abs_bits(y[j]);
        my = v > my ? v : my;
    }
    const int bad = mx > abs_bits(divergence_bound(a)) || my >= abs_bits(INFINITY);
    return bad ? divergence_error(a, t, y, err) : CS_OK;
}

/* Output rates y' at t for all units (Hermite): with the inputs uu and rates udot. */
static int rates(cs_algorithm *a, double t, const double *uu, const double *udot, double *ydot, cs_err *err) {
    const cs_network *net = a->cfg.net;
    for (int i = 0; i < a->cfg.nsub; i++) {
        cs_unit *u = a->cfg.units[i];
        if (!cs_unit_has_output_rates(u))
            return cs_fail(err, CS_ERR_ARG, "unit %s: no output derivatives (needed by the Hermite approximation)",
                           u->name);
        CS_TRY(cs_unit_output_rates(u, t, uu + net->uoff[i], udot + net->uoff[i], ydot + net->yoff[i], err));
    }
    return CS_OK;
}

enum { OBSERVE_START, OBSERVE_STEP, OBSERVE_OUTPUT };

static int observe_view(cs_algorithm *a, int what, const cs_run_view *vp, cs_err *err) {
    int stop = 0;
    for (int k = 0; k < a->cfg.nobs; k++) {
        cs_observer *o = a->cfg.observers[k];
        if (what == OBSERVE_STEP && o->skip > 0) {
            o->skip--;
            continue;
        }
        int rc = what == OBSERVE_START  ? cs_observer_on_start(o, vp, err)
                 : what == OBSERVE_STEP ? cs_observer_on_step(o, vp, err)
                 : cs_observer_on_output(o, vp, err);
        if (rc == CS_STOPPED) stop = 1;
        else if (rc) return rc;
    }
    return stop ? CS_STOPPED : CS_OK;
}

static int observe(cs_algorithm *a, int start, cs_err *err) {
    cs_run_view *v = &a->view;
    v->t = a->T;
    v->step = a->steps;
    v->final = a->T >= a->cfg.t_end;
    v->y = a->y;
    v->u = a->u;
    return observe_view(a, start ? OBSERVE_START : OBSERVE_STEP, v, err);
}

/* Unit i's inputs and outputs at the output point t, after it re-integrated up to t. */
static int dense_outputs(cs_algorithm *a, int i, double t, cs_err *err) {
    const cs_network *net = a->cfg.net;
    cs_input_eval(a->used[i], t, a->ud + net->uoff[i]);
    return cs_unit_get_outputs(a->cfg.units[i], t, a->ud + net->uoff[i], a->yd + net->yoff[i], err);
}

/* Dense output for the output points in (T, T1]: between macro points every unit re-integrates from its state at T
 * with the input function it used on this step (outputs with the input values at t); at T1 the accepted values. */
static int dense_output(cs_algorithm *a, double T, double T1, cs_err *err) {
    const cs_algorithm_config *c = &a->cfg;
    const double tol = 1e-9 * (T1 - T);
    int moved = 0, rc = CS_OK;
    while (a->kout < c->nout && c->t_out[a->kout] < T1 - tol) {
        double t = c->t_out[a->kout];
        for (int i = 0; i < c->nsub && !rc; i++) {
            cs_unit *u = c->units[i];
            if (!moved) cs_unit_save_state(u, a->dpost[i]);
            cs_unit_restore_state(u, a->dpre[i]);
            if (!c->share) {
                rc = cs_unit_do_step(u, T, t - T, a->used[i], CS_RESTART, err);
                if (!rc) rc = dense_outputs(a, i, t, err);
            } else if (cs_share_owns(c->share, i)) {
                rc = cs_unit_do_step(u, T, t - T, a->used[i], CS_RESTART, err);
            }
        }
        if (c->share) { /* every process its own units, one exchange, then the outputs of all */
            rc = cs_scheme_share_states(&a->ctx, 0, c->nsub, t, rc, err);
            for (int i = 0; i < c->nsub && !rc; i++) rc = dense_outputs(a, i, t, err);
        }
        moved = 1;
        if (rc) { cs_err_prefix(err, "dense output at t = %.10g: ", t); break; }
        cs_run_view v;
        cs_algorithm_view(a, &v);
        v.t = t;
        v.final = 0;
        v.y = a->yd;
        v.u = a->ud;
        rc = observe_view(a, OBSERVE_OUTPUT, &v, err);
        a->kout++;
        if (rc) break;
    }
    if (moved)
        for (int i = 0; i < c->nsub; i++) cs_unit_restore_state(c->units[i], a->dpost[i]);
    if (rc) return rc;
    if (a->kout < c->nout && c->t_out[a->kout] <= T1 + tol) {
        cs_run_view v;
        cs_algorithm_view(a, &v);
        v.t = c->t_out[a->kout];
        a->kout++;
        return observe_view(a, OBSERVE_OUTPUT, &v, err);
    }
    return CS_OK;
}

int cs_algorithm_initialize(cs_algorithm *a, cs_err *err) {
    const cs_algorithm_config *c = &a->cfg;
    const double *x = a->x0;
    for (int i = 0; i < c->nsub; i++) {
        cs_unit *u = c->units[i];
        CS_TRY(cs_unit_set_state(u, c->t0, x, err));
        x += u->nx;
    }
    a->T = c->t0;
    a->steps = 0;
    /* consistent initial coupling values u_0 = phi(y_0) (kraft2021 §4.3) */
    int rc = cs_network_consistent(c->net, &a->outs, c->t0, NULL, a->y, a->u, err);
    if (rc) { cs_err_prefix(err, "initial coupling values at t = %.10g: ", c->t0); return rc; }
    if (c->coupling->needs_rates) CS_TRY(rates(a, c->t0, a->u, a->zero, a->ydot, err));
    CS_TRY(check_divergence(a, c->t0, a->y, err));
    CS_TRY(cs_coupling_accept(c->coupling, c->t0, a->y, c->coupling->needs_rates ? a->ydot : NULL, err));
    a->initialized = 1;
    return observe(a, 1, err);
}

static void save(cs_algorithm *a) {
    double t0 = clk(a);
    for (int i = 0; i < a->cfg.nsub; i++) {
        double ti = clk(a);
        cs_unit_save_state(a->cfg.units[i], a->usnap[i]);
        if (a->cfg.timing) a->cfg.units[i]->save_wall += clk(a) - ti;
    }
    cs_coupling_save(a->cfg.coupling, a->csnap);
    if (a->cfg.timing) a->timing.save += clk(a) - t0;
}

static void restore(cs_algorithm *a) {
    double t0 = clk(a);
    for (int i = 0; i < a->cfg.nsub; i++) {
        double ti = clk(a);
        cs_unit_restore_state(a->cfg.units[i], a->usnap[i]);
        if (a->cfg.timing) a->cfg.units[i]->save_wall += clk(a) - ti;
    }
    cs_coupling_restore(a->cfg.coupling, a->csnap);
    if (a->cfg.timing) a->timing.save += clk(a) - t0;
}

/* Outputs and inputs at T_{N+1} after the units stepped (into ynew, unew). */
static int update(cs_algorithm *a, double T1, cs_err *err) {
    const cs_algorithm_config *c = &a->cfg;
    const cs_network *net = c->net;
    int rc = CS_OK;
    if (c->update == CS_UPDATE_CONSISTENT && net->any_feedthrough) {
        rc = cs_network_consistent(c->net, &a->outs, T1, a->uend, a->ynew, a->unew, err);
    } else {
        /* the explicit update, and the consistent one when no unit has feed-through (y = g(x) does not depend on
         * u): outputs with the inputs the units ended the step with, then u = L y + r */
        for (int i = 0; i < c->nsub && !rc; i++) {
            cs_unit *u = c->units[i];
            rc = cs_unit_get_outputs(u, T1, a->uend + net->uoff[i], a->ynew + net->yoff[i], err);
        }
        if (!rc) cs_network_inputs(net, a->ynew, a->unew);
    }
    if (rc) { cs_err_prefix(err, "update at t = %.10g: ", T1); return rc; }
    if (c->coupling->needs_rates) {
        const double *uu = c->coupling->rates_lagged ? a->uend : a->unew;
        CS_TRY(rates(a, T1, uu, a->udot, a->ydot, err));
    }
    return CS_OK;
}

/* The estimator's record of the candidate step (units at T_{N+1}, consistent values at T_N in y/u, candidates in
 * ynew/unew). */
static int estimate(cs_algorithm *a, const cs_step_plan *p, cs_estimate *est, cs_err *err) {
    cs_estimate_view *v = &a->ev;
    v->plan = p;
    v->y0 = a->y; v->u0 = a->u; v->y1 = a->ynew; v->u1 = a->unew;
    v->usnap = a->usnap;
    cs_scheme_predictor(a->cfg.scheme, &v->xpre, &v->upre0);
    int rc = cs_estimator_estimate(a->cfg.estimator, v, est, err);
    if (rc) { cs_err_prefix(err, "error estimate at t = %.10g: ", p->T1); return rc; }
    if (!(est->eps >= 0.0))
        return cs_fail(err, CS_ERR_SOLVER, "error estimate at t = %.10g is not a number >= 0", p->T1);
    return CS_OK;
}

/* One macro step of an initialized run before t_end (inlined into the run's loop: no call per step) */
static inline __attribute__((always_inline)) int step(cs_algorithm *a, cs_err *err) {
    const cs_algorithm_config *c = &a->cfg;
    cs_controller *ctl = c->controller;
    cs_coupling *cpl = c->coupling;
    cs_step_plan p = {.kappa = -1};
    CS_TRY(cs_controller_propose(ctl, a->T, &p, err));
    const double T = a->T;
    const int dense = c->nout > 0 && a->kout < c->nout && c->t_out[a->kout] <= p.T1 + 1e-9 * p.H;
    if (dense)
        for (int i = 0; i < c->nsub; i++) cs_unit_save_state(c->units[i], a->dpre[i]);
    for (;;) {
        if (a->usnap) save(a);
        a->ctx.step = a->steps;
        a->ctx.first = a->steps == 0;
        if (p.kappa >= 0) CS_TRY(cs_coupling_set_degree(cpl, p.kappa, err));
        double tk0 = 0.0, tk1 = 0.0, tk2 = 0.0;
        if (c->timing) tk0 = clock_now();
        CS_TRY(cs_coupling_predict(cpl, p.T, p.H, p.Hnom, err));
        if (c->timing) tk1 = clock_now();
        int rcs = cs_scheme_macro_step(c->scheme, &a->ctx, p.T, p.H, err);
        if (rcs == CS_ERR_CONVERGENCE && a->usnap && cs_controller_retry(ctl, &p)) {
            /* kraft2021 §19 corConvFail: restore units and coupling, repeat the step with r = 0.25 */
            err->code = CS_OK;
            err->msg[0] = '\0';
            restore(a);
            CS_TRY(cs_controller_propose(ctl, a->T, &p, err));
            continue;
        }
        if (rcs) return rcs;
        if (c->timing) tk2 = clock_now();
        CS_TRY(update(a, p.T1, err));
        if (c->estimator) CS_TRY(estimate(a, &p, &a->est, err));
        int accept;
        CS_TRY(cs_controller_judge(ctl, &p, &a->est, &accept, err));
        if (c->timing) {
            a->timing.scheme += tk2 - tk1;
            a->timing.interface += (tk1 - tk0) + (clock_now() - tk2);
        }
        if (accept) break;
        if (!a->usnap) return cs_fail(err, CS_ERR_ARG, "step controller: rejected a step without may_reject");
        restore(a);
        CS_TRY(cs_controller_propose(ctl, a->T, &p, err));
    }
    const double ta0 = c->timing ? clock_now() : 0.0;
    CS_TRY(check_divergence(a, p.T1, a->ynew, err));
    CS_TRY(cs_coupling_accept(cpl, p.T1, a->ynew, cpl->needs_rates ? a->ydot : NULL, err));
    if (c->estimator) cs_estimator_commit(c->estimator, &a->ev);
    if (c->timing) a->timing.interface += clk(a) - ta0;
    cs_controller_commit(ctl, &p);
    double *t;
    t = a->y; a->y = a->ynew; a->ynew = t;
    t = a->u; a->u = a->unew; a->unew = t;
    a->T = p.T1;
    a->steps++;
    if (dense) {
        int rc = dense_output(a, T, p.T1, err);
        if (rc) return rc;
    }
    return observe(a, 0, err);
}

/* One macro step, its wall time added to timing.run (timing on) */
static inline __attribute__((always_inline)) int timed(cs_algorithm *a, cs_err *err) {
    if (!a->cfg.timing) return step(a, err);
    const double t0 = clock_now();
    const int rc = step(a, err);
    a->timing.run += clock_now() - t0;
    return rc;
}

int cs_algorithm_do_step(cs_algorithm *a, cs_err *err) {
    if (!a->initialized) return cs_fail(err, CS_ERR_ARG, "algorithm: initialize before do_step");
    if (a->T >= a->cfg.t_end) return cs_fail(err, CS_ERR_ARG, "algorithm: the run has reached t_end");
    return timed(a, err);
}

int cs_algorithm_run(cs_algorithm *a, cs_err *err) {
    if (!a->initialized) CS_TRY(cs_algorithm_initialize(a, err));
    while (a->T < a->cfg.t_end) {
        CS_TRY(timed(a, err));
        if (cs_interrupted()) return cs_interrupt_fail(err, a->T);   /* Ctrl-C between short macro steps */
    }
    return CS_OK;
}

void cs_algorithm_set_observers(cs_algorithm *a, cs_observer **obs, int n) {
    a->cfg.observers = obs;
    a->cfg.nobs = n;
}
