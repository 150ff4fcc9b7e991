#include "master/master.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NV CS_APPROX_NV
#define NC (CS_MAXDEG + 1)

typedef struct master_ws {
    int nhist;                  /* samples in the exchange history */
    double hT[CS_MAXHIST];      /* their times, newest first */
    double *hv;                 /* per output: NV data entries (values newest first, then derivatives) */
    double *cext, *cint;        /* per output: NC polynomial coefficients (extrapolated / interpolated) */
    cs_input *in;               /* per subsystem */
    double *incoef;
    double *x, *y, *u, *ydot, *uend, *udot;
    double *dtwork;
    int *done;
    int need_deriv;
} master_ws;

static void ws_free(master_ws *w) {
    free(w->hv); free(w->cext); free(w->cint); free(w->in); free(w->incoef);
    free(w->x); free(w->y); free(w->u); free(w->ydot); free(w->uend); free(w->udot); free(w->dtwork); free(w->done);
}

static int ws_alloc(master_ws *w, const cs_master_config *cfg, cs_err *err) {
    const cs_network *net = cfg->net;
    memset(w, 0, sizeof *w);
    int ny = net->ny, nu = net->nu, nx = net->nx, maxw = 1;
    w->hv = calloc((size_t)ny * NV + 1, sizeof(double));
    w->cext = calloc((size_t)ny * NC + 1, sizeof(double));
    w->cint = calloc((size_t)ny * NC + 1, sizeof(double));
    w->in = calloc(cfg->nsub, sizeof(cs_input));
    w->incoef = calloc((size_t)nu * NC + NC, sizeof(double));
    w->x = calloc(nx + 1, sizeof(double));
    w->y = calloc(ny + 1, sizeof(double));
    w->u = calloc(nu + 1, sizeof(double));
    w->ydot = calloc(ny + 1, sizeof(double));
    w->uend = calloc(nu + 1, sizeof(double));
    w->udot = calloc(nu + 1, sizeof(double));
    for (int i = 0; i < cfg->nsub; i++) {
        const cs_model *m = net->models[i];
        if (m->nx + m->ny + m->nu > maxw) maxw = m->nx + m->ny + m->nu;
    }
    w->dtwork = calloc(maxw + 1, sizeof(double));
    w->done = calloc(cfg->nsub, sizeof(int));
    if (!w->hv || !w->cext || !w->cint || !w->in || !w->incoef || !w->x || !w->y || !w->u || !w->ydot || !w->uend ||
        !w->udot || !w->dtwork || !w->done) {
        ws_free(w);
        return cs_fail(err, CS_ERR_NOMEM, "master: out of memory");
    }
    double *c = w->incoef;
    for (int i = 0; i < cfg->nsub; i++) {
        w->in[i].nu = net->models[i]->nu;
        w->in[i].c = c;
        c += (size_t)NC * net->models[i]->nu;
    }
    w->need_deriv = cfg->approx.kind == CS_APPROX_HERMITE && cfg->approx.k >= 1;
    return CS_OK;
}

long cs_master_capacity(const cs_master_config *cfg) {
    if (cfg->grid) return cfg->ngrid + 1;
    double n = ceil((cfg->t_end - cfg->t0) / cfg->H * (1.0 - 1e-12));
    return (long)n + 2 + (cfg->startup == CS_STARTUP_KRAFT ? 80 : 0);
}

int cs_master_result_alloc(cs_master_result *res, long cap, int nx, int ny, int nu) {
    memset(res, 0, sizeof *res);
    res->cap = cap;
    res->t = malloc(sizeof(double) * cap);
    res->x = malloc(sizeof(double) * (cap * nx + 1));
    res->y = malloc(sizeof(double) * (cap * ny + 1));
    res->u = malloc(sizeof(double) * (cap * nu + 1));
    if (!res->t || !res->x || !res->y || !res->u) { cs_master_result_free(res); return CS_ERR_NOMEM; }
    return CS_OK;
}

void cs_master_result_free(cs_master_result *res) {
    free(res->t); free(res->x); free(res->y); free(res->u);
    res->t = res->x = res->y = res->u = NULL;
}

/* Polynomial coefficients of every output signal from data vectors (NV entries each). */
static void signal_coefs(const cs_approx_weights *W, int ny, const double *data, double *coef) {
    for (int j = 0; j < ny; j++) {
        const double *v = data + (size_t)j * NV;
        double *c = coef + (size_t)j * NC;
        for (int m = 0; m < NC; m++) c[m] = 0.0;
        for (int m = 0; m <= W->deg; m++) {
            const double *w = W->W + (size_t)m * NV;
            double s = 0.0;
            for (int q = 0; q < W->npts; q++) s += w[q] * v[q];
            if (W->uses_deriv)
                for (int q = 0; q < W->npts; q++) s += w[CS_MAXHIST + q] * v[CS_MAXHIST + q];
            c[m] = s;
        }
    }
}

/* Interpolated coefficients of the outputs of subsystem i, whose new values y(T_{N+1}) (and y') are known. */
static void interp_coefs(const cs_network *net, int i, const cs_approx_weights *W, const master_ws *w,
                         const double *ynew, const double *ydnew, double *coef) {
    double v[NV];
    for (int j = net->yoff[i]; j < net->yoff[i + 1]; j++) {
        const double *h = w->hv + (size_t)j * NV;
        v[0] = ynew[j];
        v[CS_MAXHIST] = ydnew ? ydnew[j] : 0.0;
        for (int q = 1; q < CS_MAXHIST; q++) { v[q] = h[q - 1]; v[CS_MAXHIST + q] = h[CS_MAXHIST + q - 1]; }
        signal_coefs(W, 1, v, coef + (size_t)j * NC);
    }
}

/* Input polynomial of subsystem i: c[m][la] = r delta_m0 + sum_k gain_k coef(source_k)[m].
 * Returns 1 if some source was interpolated (Gauss-Seidel). */
static int build_input(const cs_network *net, int i, const master_ws *w, int gs, double T, double H, int deg_ext,
                        int deg_int) {
    cs_input *in = &w->in[i];
    int nu = in->nu, deg = 0, any_interp = 0;
    in->T = T;
    in->H = H;
    memset(in->c, 0, sizeof(double) * NC * (nu ? nu : 1));
    for (int la = 0; la < nu; la++) {
        int a = net->uoff[i] + la;
        in->c[la] = net->r[a];
        for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++) {
            int j = net->col[k];
            int interp = gs && w->done[net->out_sub[j]];
            any_interp |= interp;
            const double *c = (interp ? w->cint : w->cext) + (size_t)j * NC;
            int d = interp ? deg_int : deg_ext;
            if (d > deg) deg = d;
            for (int m = 0; m <= d; m++) in->c[(size_t)m * nu + la] += net->gain[k] * c[m];
        }
    }
    in->deg = deg;
    return any_interp;
}

static void push_history(const cs_network *net, master_ws *w, double T, const double *y, const double *ydot) {
    memmove(w->hT + 1, w->hT, sizeof(double) * (CS_MAXHIST - 1));
    w->hT[0] = T;
    for (int j = 0; j < net->ny; j++) {
        double *h = w->hv + (size_t)j * NV;
        memmove(h + 1, h, sizeof(double) * (CS_MAXHIST - 1));
        memmove(h + CS_MAXHIST + 1, h + CS_MAXHIST, sizeof(double) * (CS_MAXHIST - 1));
        h[0] = y[j];
        h[CS_MAXHIST] = ydot ? ydot[j] : 0.0;
    }
    if (w->nhist < CS_MAXHIST) w->nhist++;
}

static void gather_x(const cs_master_config *cfg, double *x) {
    for (int i = 0; i < cfg->nsub; i++)
        memcpy(x + cfg->net->xoff[i], cfg->steppers[i]->x, sizeof(double) * cfg->net->models[i]->nx);
}

/* Output derivatives of subsystem i at t with inputs u_i and input rates udot_i. */
static int output_rates(const cs_master_config *cfg, master_ws *w, int i, double t, const double *u, const double *udot,
                        double *ydot, cs_err *err) {
    const cs_network *net = cfg->net;
    return cs_model_output_dt(net->models[i], t, cfg->steppers[i]->x, u + net->uoff[i], udot + net->uoff[i],
                              ydot + net->yoff[i], w->dtwork, err);
}

static int check_finite(const cs_master_config *cfg, const master_ws *w, double t, cs_err *err) {
    const cs_network *net = cfg->net;
    double b = cfg->divergence_bound;
    for (int i = 0; i < net->nx; i++)
        if (!isfinite(w->x[i]) || (b > 0 && fabs(w->x[i]) > b))
            return cs_fail(err, CS_ERR_DIVERGED, "co-simulation diverged at t = %.10g: state %d = %g exceeds the "
                           "divergence bound %g (numerically unstable coupling?)", t, i, w->x[i], b);
    for (int j = 0; j < net->ny; j++)
        if (!isfinite(w->y[j]))
            return cs_fail(err, CS_ERR_DIVERGED, "co-simulation diverged at t = %.10g: output %d is not finite", t, j);
    return CS_OK;
}

static void record(const cs_master_config *cfg, const master_ws *w, cs_master_result *res, double t) {
    const cs_network *net = cfg->net;
    long n = res->n;
    if (n >= res->cap) return;
    res->t[n] = t;
    memcpy(res->x + n * net->nx, w->x, sizeof(double) * net->nx);
    memcpy(res->y + n * net->ny, w->y, sizeof(double) * net->ny);
    memcpy(res->u + n * net->nu, w->u, sizeof(double) * net->nu);
    res->n = n + 1;
}

/* Next macro point after T (kraft2021 Listing 5.1 start-up, then the regular grid T_base + k H). */
static double next_time(const cs_master_config *cfg, double T, long nsteps, int *in_startup, double *Tbase, long *k) {
    double H = cfg->H, T1;
    if (cfg->grid) return cfg->grid[nsteps + 1];
    if (*in_startup) {
        double Tst = cfg->t0 + 2.0 * H;
        T1 = T + cfg->startup_factor * H * ldexp(1.0, (int)(nsteps < 1000 ? nsteps : 1000));
        if (T1 >= Tst * (1.0 - 1e-15) || T1 >= cfg->t_end) {
            T1 = fmin(Tst, cfg->t_end);
            *in_startup = 0;
            *Tbase = T1;
            *k = 0;
        }
        return T1;
    }
    T1 = *Tbase + (double)(*k + 1) * H;
    if (T1 > cfg->t_end - 1e-9 * H) T1 = cfg->t_end;
    (*k)++;
    return T1;
}

int cs_master_run(const cs_master_config *cfg, cs_master_result *res, cs_err *err) {
    cs_network *net = cfg->net;
    int nsub = cfg->nsub, gs = cfg->scheme == CS_SCHEME_GAUSS_SEIDEL;
    if (!(cfg->H > 0.0) || !isfinite(cfg->H)) return cs_fail(err, CS_ERR_ARG, "H: must be positive and finite");
    if (cfg->grid) {
        if (cfg->ngrid < 1 || cfg->grid[0] != cfg->t0 || cfg->grid[cfg->ngrid - 1] != cfg->t_end)
            return cs_fail(err, CS_ERR_ARG, "grid: must run from the start time to t_end");
        for (long i = 1; i < cfg->ngrid; i++)
            if (!(cfg->grid[i] > cfg->grid[i - 1]) || !isfinite(cfg->grid[i]))
                return cs_fail(err, CS_ERR_ARG, "grid: macro time points must be finite and strictly increasing");
    }
    if (!(cfg->t_end >= cfg->t0)) return cs_fail(err, CS_ERR_ARG, "t_end: must be >= the start time");
    CS_TRY(cs_approx_check(&cfg->approx, err));
    if (cfg->startup == CS_STARTUP_KRAFT && !(cfg->startup_factor > 0.0 && cfg->startup_factor <= 1.0))
        return cs_fail(err, CS_ERR_ARG, "startup_factor: must be in (0, 1]");
    if (cfg->scheme != CS_SCHEME_JACOBI && cfg->scheme != CS_SCHEME_GAUSS_SEIDEL)
        return cs_fail(err, CS_ERR_ARG, "scheme: unknown scheme %d", cfg->scheme);
    if (gs && cfg->order) {
        int seen[4096] = {0};
        if (nsub > 4096) return cs_fail(err, CS_ERR_ARG, "order: too many subsystems");
        for (int p = 0; p < nsub; p++) {
            if (cfg->order[p] < 0 || cfg->order[p] >= nsub || seen[cfg->order[p]]++)
                return cs_fail(err, CS_ERR_ARG, "order: must be a permutation of the subsystems");
        }
    }
    master_ws w;
    CS_TRY(ws_alloc(&w, cfg, err));
    int rc = CS_OK;

    /* Initial state and consistent initial coupling values u_0 = phi(y_0) (kraft2021 §4.3). */
    for (int i = 0; i < nsub; i++) cs_stepper_set_state(cfg->steppers[i], cfg->t0, cfg->x0 + net->xoff[i]);
    memcpy(w.x, cfg->x0, sizeof(double) * net->nx);
    rc = cs_network_consistent(net, cfg->t0, w.x, NULL, w.y, w.u, err);
    if (rc) goto done;
    if (w.need_deriv) {
        memset(w.udot, 0, sizeof(double) * net->nu);
        for (int i = 0; i < nsub && !rc; i++) rc = output_rates(cfg, &w, i, cfg->t0, w.u, w.udot, w.ydot, err);
        if (rc) goto done;
    }
    rc = check_finite(cfg, &w, cfg->t0, err);
    if (rc) goto done;
    record(cfg, &w, res, cfg->t0);
    push_history(net, &w, cfg->t0, w.y, w.need_deriv ? w.ydot : NULL);

    double T = cfg->t0, Tbase = cfg->t0;
    long k = 0, nsteps = 0;
    int in_startup = cfg->startup == CS_STARTUP_KRAFT;
    while (T < cfg->t_end) {
        double T1 = next_time(cfg, T, nsteps, &in_startup, &Tbase, &k), H = T1 - T;
        cs_approx_weights Wext, Wint;
        rc = cs_approx_weights_compute(&cfg->approx, 0, w.nhist, w.hT, T, H, &Wext, err);
        if (rc) goto done;
        signal_coefs(&Wext, net->ny, w.hv, w.cext);
        if (gs) {
            double Ti[CS_MAXHIST];
            Ti[0] = T1;
            memcpy(Ti + 1, w.hT, sizeof(double) * (CS_MAXHIST - 1));
            int navail = w.nhist + 1 < CS_MAXHIST ? w.nhist + 1 : CS_MAXHIST;
            rc = cs_approx_weights_compute(&cfg->approx, 1, navail, Ti, T, H, &Wint, err);
            if (rc) goto done;
            memset(w.done, 0, sizeof(int) * nsub);
        }
        /* Step 2: integrate the subsystems. */
        for (int p = 0; p < nsub; p++) {
            int i = (gs && cfg->order) ? cfg->order[p] : p;
            int interp = build_input(net, i, &w, gs, T, H, Wext.deg, gs ? Wint.deg : 0);
            /* EXTRIPOL-C1 inputs are C1 across T_N once both windows are full (busch2016 §2); interpolated
             * Gauss-Seidel inputs and start-up steps are not. */
            int smooth = cfg->approx.kind == CS_APPROX_EXTRIPOL_C1 && !interp && nsteps >= cfg->approx.k + 2;
            int restart = nsteps == 0 ? CS_RESTART
                          : !cfg->restart_each_step ? CS_CONTINUE : smooth ? CS_SMOOTH : CS_RESTART;
            rc = cs_stepper_step(cfg->steppers[i], T, H, &w.in[i], restart, err);
            if (rc) { cs_err_prefix(err, "macro step %ld [%.10g, %.10g]: ", nsteps, T, T1); goto done; }
            cs_input_eval(&w.in[i], T1, w.uend + net->uoff[i]);
            cs_input_eval_dt(&w.in[i], T1, w.udot + net->uoff[i]);
            if (gs) {
                /* New outputs of i at T_{N+1} with its own (predicted) input; later subsystems interpolate them. */
                cs_model *m = net->models[i];
                rc = cs_model_output(m, T1, cfg->steppers[i]->x, w.uend + net->uoff[i], w.y + net->yoff[i], err);
                if (!rc && Wint.uses_deriv) rc = output_rates(cfg, &w, i, T1, w.uend, w.udot, w.ydot, err);
                if (rc) goto done;
                interp_coefs(net, i, &Wint, &w, w.y, Wint.uses_deriv ? w.ydot : NULL, w.cint);
                w.done[i] = 1;
            }
        }
        /* Step 3: update at T_{N+1}. */
        gather_x(cfg, w.x);
        if (cfg->update == CS_UPDATE_CONSISTENT) {
            rc = cs_network_consistent(net, T1, w.x, w.uend, w.y, w.u, err);
        } else {
            for (int i = 0; i < nsub && !rc; i++)
                rc = cs_model_output(net->models[i], T1, w.x + net->xoff[i], w.uend + net->uoff[i], w.y + net->yoff[i],
                                     err);
            if (!rc) cs_network_inputs(net, w.y, w.u);
        }
        if (rc) { cs_err_prefix(err, "update at t = %.10g: ", T1); goto done; }
        /* Step 4: output derivatives for Hermite (consistent: new inputs; lagged: the step's own input at T1-). */
        if (w.need_deriv) {
            const double *uu = cfg->deriv_mode == CS_DERIV_LAGGED ? w.uend : w.u;
            for (int i = 0; i < nsub && !rc; i++) rc = output_rates(cfg, &w, i, T1, uu, w.udot, w.ydot, err);
            if (rc) goto done;
        }
        rc = check_finite(cfg, &w, T1, err);
        if (rc) goto done;
        push_history(net, &w, T1, w.y, w.need_deriv ? w.ydot : NULL);
        record(cfg, &w, res, T1);
        nsteps++;
        res->macro_steps = nsteps;
        T = T1;
    }
done:
    res->newton_iterations = net->newton_iterations;
    ws_free(&w);
    return rc;
}
