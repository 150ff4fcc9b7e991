/* Implicit co-simulation: predictor/corrector with Newton on the coupling residual (kraft2021 §6, Sec. 2.4.2).
 *
 * Unknowns: the stacked inputs at the end of the window, u_{N+1}. Each unit integrates [T_N, T_{N+1}] with
 *     p^j(t) = p^pre(t) + (u^j - u^pre) ℓ(s)                     (2.24 with the end value u^j, ℓ = L^κ of eq. 3.11)
 * where p^pre is the coupling's extrapolation (a Lagrange polynomial through u_{N-κ}..u_N, so p^j interpolates
 * u_{N-κ+1}..u_N and u^j at T_{N+1}). j = 0 is the predictor u^0 = u^pre. The coupling residual
 *     g(u) = u - L y(u) - r,   y(u) = outputs at T_{N+1} (with the end input values, feed-through included)
 * is linearised (2.27): (I - L G) Δ = -g(u^j), G = blockdiag(dy_i/du_i) the interface Jacobian:
 *   fd     one perturbed integration per input of each unit from the saved state at T_N (§6.3): the input a of
 *          unit i gets p^j + Δ_a ℓ e_a, Δ_a = max(|u^j - u^{j-1}|, Δ_min) (corrector) or max(|u_N - u^pre_N|,
 *          Δ_min) (predictor: converged minus predicted value of the previous step);
 *   sap    kraft2021 App. A: the first series term per entry (the units' sensitivity op), once per step;
 *   sap2   the first two series terms per entry (App. A's "two-term" variant), once per step;
 *   exact  the units' exact sensitivity: LTI units from the exponential propagator, once per step; nonlinear units
 *          from their forward sensitivity equations along the trajectory of the iterate (the derivative of the
 *          window map, what fd approximates), at the predictor and again in every corrector iteration.
 * Convergence (2.31)-(2.33): δ^j = u^j - u^{j-1} (or y^j - y^{j-1}), ||δ||_WRMS with W = 1/(atol + tol |v^0|) of
 * the predicted values, R^j = ||δ^j|| / ||δ^{j-1}||, converged when R/(1-R) ||δ^j|| < τ; for j = 1 (no rate yet) the
 * factor R/(1-R) is replaced by 20 (IDA's start value; kraft leaves R^1 open, spec §22.6). Fails when R^j > 0.9
 * (j >= 2) or after max_iter corrector iterations: CS_ERR_CONVERGENCE (or go on with the last iterate, kraft §5.1).
 * The states and inputs of the step are those of the last integration (with p^l).
 * Step control (o.kappa = -1): the corrector polynomial has the controller's degree κ (that of p^pre), the states
 * after the predictor are kept for imMD and u^pre for imCV (scheme op predictor); a failure is retried by the
 * controller with r = 0.25 (master/algorithm.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/dense.h"
#include "parallel/pool.h"
#include "schemes/iter_common.h"

typedef struct implicit {
    cs_iter_record rec;           /* first: cs_iter_scheme_iterations reads it */
    cs_iter_opts o;
    int nsub, nu, ny, ready;
    cs_unit **units;              /* not owned (for the snapshots' destruction) */
    void **snap;
    cs_input *in;
    double *coef, *cpre;          /* per unit (CS_MAXDEG+1) x nu_i: p^j and p^pre */
    double *upre, *uj, *uprev, *du, *y, *yprev, *y0, *g, *M, *G, *work, *ypert, *lastdiff, *Wu, *Wy;
    double *delta;                /* fd: Δλ per input (stacked) */
    double *xpre;                 /* states of all units after the predictor j = 0 (imMD, kraft2021 §8.5) */
    int nx, have_xpre;
    int resens;                   /* jacobian exact and some unit nonlinear: its block is renewed per iteration */
    int *ipiv, *goff;             /* goff: offset of unit i's block of G */
    double ell[CS_MAXDEG + 1];
    int deg;
    struct implicit_par *par;     /* threads=n: the units' integrations on a pool (NULL: sequential) */
} implicit;

static void set_input(implicit *s, int i, const cs_network *net, const double *u) {
    cs_input *in = &s->in[i];
    const int nu = in->nu, a0 = net->uoff[i];
    memcpy(in->c, s->cpre + (size_t)a0 * (CS_MAXDEG + 1), sizeof(double) * (CS_MAXDEG + 1) * nu);
    for (int la = 0; la < nu; la++) {
        double d = u[a0 + la] - s->upre[a0 + la];
        for (int m = 0; m <= s->deg; m++) in->c[m * nu + la] += d * s->ell[m];
    }
}

static int alloc_all(implicit *s, cs_step_ctx *x, cs_err *err) {
    const cs_network *net = x->net;
    s->nu = net->nu;
    s->ny = net->ny;
    size_t nu = (size_t)net->nu + 1, ny = (size_t)net->ny + 1, nc = (size_t)(CS_MAXDEG + 1);
    long gsz = 0, maxb = 1;
    s->goff = calloc((size_t)s->nsub + 1, sizeof(int));
    if (!s->goff) return cs_fail(err, CS_ERR_NOMEM, "implicit: out of memory");
    for (int i = 0; i < s->nsub; i++) {
        s->goff[i] = (int)gsz;
        cs_unit *u = x->units[i];
        gsz += (long)u->ny * u->nu;
        if (u->ny > maxb) maxb = u->ny;
    }
    s->goff[s->nsub] = (int)gsz;
    s->units = x->units;
    s->snap = calloc((size_t)s->nsub, sizeof(void *));
    s->in = calloc((size_t)s->nsub, sizeof(cs_input));
    s->coef = calloc(nc * nu, sizeof(double));
    s->cpre = calloc(nc * nu, sizeof(double));
    double **v[] = {&s->upre, &s->uj, &s->uprev, &s->du, &s->g, &s->lastdiff, &s->Wu, &s->delta};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) *v[k] = calloc(nu, sizeof(double));
    double **w[] = {&s->y, &s->yprev, &s->y0, &s->Wy};
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) *w[k] = calloc(ny, sizeof(double));
    s->M = calloc(nu * nu, sizeof(double));
    s->G = calloc((size_t)gsz + 1, sizeof(double));
    s->work = calloc(nu * nu + nu, sizeof(double));
    int maxu = 1;
    s->nx = 0;
    for (int i = 0; i < s->nsub; i++) {
        s->nx += x->units[i]->nx;
        if (x->units[i]->nu > maxu) maxu = x->units[i]->nu;
    }
    s->ypert = calloc((size_t)(2 * maxb + maxu) + 1, sizeof(double)); /* work of cs_unit_window_jacobian_fd */
    s->xpre = calloc((size_t)s->nx + 1, sizeof(double));
    s->ipiv = calloc(nu, sizeof(int));
    s->resens = 0;
    for (int i = 0; i < s->nsub; i++) s->resens |= s->o.jacobian == CS_JAC_EXACT && !x->units[i]->linear;
    int ok = s->snap && s->in && s->coef && s->cpre && s->M && s->G && s->work && s->ypert && s->ipiv && s->xpre;
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) ok = ok && *v[k];
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) ok = ok && *w[k];
    for (int i = 0; ok && i < s->nsub; i++) {
        cs_unit *u = x->units[i];
        if (!cs_unit_can_restore(u))
            return cs_fail(err, CS_ERR_ARG, "implicit: unit %s cannot save and restore its state", u->name);
        ok = (s->snap[i] = cs_unit_snapshot_create(u)) != NULL;
        s->in[i].nu = u->nu;
        s->in[i].c = s->coef + (size_t)net->uoff[i] * nc;
    }
    if (!ok) return cs_fail(err, CS_ERR_NOMEM, "implicit: out of memory");
    s->ready = 1;
    return CS_OK;
}

/* threads=n (issue 11): the corrector's integrations (sweep) and the fd perturbed integrations of the units run on
 * a pool of the scheme's own. Each unit has its own error buffer and output slice of ypert, and touches only its own
 * slots (its inputs' slice of uj, its block of G, its in/snap), so the results are the same for every thread count;
 * a failure reports the lowest failing unit, as the sequential loops do. */
typedef struct implicit_par {
    cs_pool *pool;
    cs_err *errs;
    int *rc;
    double *ypert;                /* ny + nu: unit i's fd work at net->yoff[i] + net->uoff[i] (allocated at the first use) */
    implicit *s;                  /* arguments of the current run */
    cs_step_ctx *x;
    double T, H;
    const double *u;
    double *y;
    int restore, j, fd;
} implicit_par;

static int sweep_unit(implicit *s, cs_step_ctx *x, int i, double T, double H, const double *u, double *y, int restore,
                      cs_err *err) {
    const cs_network *net = x->net;
    cs_unit *un = x->units[i];
    if (restore) cs_unit_restore_state(un, s->snap[i]);
    set_input(s, i, net, u);
    int rc = cs_unit_do_step(un, T, H, &s->in[i], CS_RESTART, err);
    if (!rc) rc = cs_unit_get_outputs(un, T + H, u + net->uoff[i], y + net->yoff[i], err);
    return rc;
}

static int fd_unit(implicit *s, cs_step_ctx *x, int i, double T, double H, int j, double *work, cs_err *err);

static void par_task(void *arg, int i, int worker) {
    implicit_par *p = arg;
    (void)worker;
    p->errs[i].code = 0;
    const cs_network *net = p->x->net;
    p->rc[i] = p->fd ? fd_unit(p->s, p->x, i, p->T, p->H, p->j, p->ypert + net->yoff[i] + net->uoff[i], &p->errs[i])
                     : sweep_unit(p->s, p->x, i, p->T, p->H, p->u, p->y, p->restore, &p->errs[i]);
}

static int par_run(implicit *s, cs_step_ctx *x, double T, double H, const double *u, double *y, int restore, int j,
                   int fd, cs_err *err) {
    implicit_par *p = s->par;
    if (fd && !p->ypert && !(p->ypert = calloc((size_t)x->net->ny + (size_t)x->net->nu + 1, sizeof(double))))
        return cs_fail(err, CS_ERR_NOMEM, "implicit: out of memory");
    p->s = s; p->x = x; p->T = T; p->H = H; p->u = u; p->y = y; p->restore = restore; p->j = j; p->fd = fd;
    cs_pool_run(p->pool, s->nsub, par_task, p);
    for (int i = 0; i < s->nsub; i++)
        if (p->rc[i]) {
            *err = p->errs[i];
            cs_err_prefix(err, fd ? "implicit (fd Jacobian), macro step %ld [%.10g, %.10g]: "
                                  : "implicit, macro step %ld [%.10g, %.10g]: ", x->step, T, T + H);
            return p->rc[i];
        }
    return CS_OK;
}

static void implicit_par_free(implicit_par *p) {
    if (!p) return;
    cs_pool_destroy(p->pool);
    free(p->errs); free(p->rc); free(p->ypert);
    free(p);
}

int cs_implicit_use_threads(cs_scheme *sc, int nthreads, cs_err *err) {
    implicit *s = sc ? sc->content : NULL;
    if (!s || sc->kind != CS_SCHEME_IMPLICIT) return cs_fail(err, CS_ERR_ARG, "threads: not an implicit scheme");
    if (nthreads < 1) return cs_fail(err, CS_ERR_ARG, "threads: must be >= 1, got %d", nthreads);
    if (nthreads == 1 || s->nsub < 2 || s->par) return CS_OK;
    implicit_par *p = calloc(1, sizeof *p);
    if (p) {
        p->errs = calloc((size_t)s->nsub, sizeof(cs_err));
        p->rc = calloc((size_t)s->nsub, sizeof(int));
    }
    if (!p || !p->errs || !p->rc) {
        implicit_par_free(p);
        return cs_fail(err, CS_ERR_NOMEM, "implicit: out of memory");
    }
    int rc = cs_pool_create(nthreads < s->nsub ? nthreads : s->nsub, &p->pool, err);
    if (rc) { implicit_par_free(p); return rc; }
    s->par = p;
    return CS_OK;
}

/* Units distributed over processes (x->share): each process integrates its own units, one exchange of the states
 * at T1, then every process evaluates the other units' outputs itself (the same function of the same state). */
static int sweep_shared(implicit *s, cs_step_ctx *x, double T, double H, const double *u, double *y, int restore,
                        cs_err *err) {
    const cs_network *net = x->net;
    int rc = CS_OK;
    for (int i = 0; i < s->nsub; i++) {
        if (!cs_share_owns(x->share, i)) {
            set_input(s, i, net, u);   /* the input function is published for every unit (cs_iter_publish_inputs) */
            continue;
        }
        if (!rc) rc = sweep_unit(s, x, i, T, H, u, y, restore, err);
    }
    if (rc) cs_err_prefix(err, "implicit, macro step %ld [%.10g, %.10g]: ", x->step, T, T + H);
    CS_TRY(cs_scheme_share_states(x, 0, s->nsub, T + H, rc, err));
    for (int i = 0; i < s->nsub; i++)
        if (!cs_share_owns(x->share, i))
            CS_TRY(cs_unit_get_outputs(x->units[i], T + H, u + net->uoff[i], y + net->yoff[i], err));
    return CS_OK;
}

/* Restore every unit to T_N and integrate with the inputs u (end values); outputs at T1 into y. */
static int sweep(implicit *s, cs_step_ctx *x, double T, double H, const double *u, double *y, int restore, cs_err *err) {
    if (x->share) return sweep_shared(s, x, T, H, u, y, restore, err);
    if (s->par) return par_run(s, x, T, H, u, y, restore, 0, 0, err);
    const cs_network *net = x->net;
    for (int i = 0; i < s->nsub; i++) {
        cs_unit *un = x->units[i];
        if (restore) cs_unit_restore_state(un, s->snap[i]);
        set_input(s, i, net, u);
        int rc = cs_unit_do_step(un, T, H, &s->in[i], CS_RESTART, err);
        if (!rc) rc = cs_unit_get_outputs(un, T + H, u + net->uoff[i], y + net->yoff[i], err);
        if (rc) { cs_err_prefix(err, "implicit, macro step %ld [%.10g, %.10g]: ", x->step, T, T + H); return rc; }
    }
    return CS_OK;
}

/* The fd columns of one unit (kraft2021 §6.3), shared by the scheme and cs_unit_window_jacobian_fd: from the state
 * in snap, one perturbed integration per input a with the end value raised by Δ_a = delta[a] (the polynomial gets
 * + Δ_a ℓ in column a), G[:, a] = (y(T+H; p + Δ_a ℓ e_a) - ybase) / Δ_a with ybase the outputs of the unperturbed
 * run. `in` is modified and restored; the unit ends in the state of the last perturbed run. work: ny + nu doubles. */
static int fd_columns(cs_unit *u, const void *snap, double T, double H, cs_input *in, const double *ell, int deg,
                      const double *uend, const double *delta, const double *ybase, double *G, double *work,
                      cs_err *err) {
    const int nu = u->nu, ny = u->ny;
    double *y1 = work, *ue = work + ny;
    memcpy(ue, uend, sizeof(double) * nu);
    for (int a = 0; a < nu; a++) {
        double d = delta[a];
        if (!(d > 0.0) || !isfinite(d)) return cs_fail(err, CS_ERR_ARG, "perturbation: must be positive, got %g", d);
        for (int m = 0; m <= deg; m++) in->c[m * nu + a] += d * ell[m];
        ue[a] += d;
        cs_unit_restore_state(u, snap);
        int rc = cs_unit_do_step(u, T, H, in, CS_RESTART, err);
        if (!rc) rc = cs_unit_get_outputs(u, T + H, ue, y1, err);
        for (int m = 0; m <= deg; m++) in->c[m * nu + a] -= d * ell[m];
        ue[a] = uend[a];
        if (rc) return rc;
        for (int q = 0; q < ny; q++) G[(size_t)q * nu + a] = (y1[q] - ybase[q]) / d;
    }
    return CS_OK;
}

/* Interface Jacobian blocks by perturbed integrations (fd, §6.3): Δλ = max(|u^j - u^{j-1}|, Δλ_min) in the
 * corrector, max(|u_N - u^pre_N|, Δλ_min) in the predictor (j = 0). The base run is the sweep with u^j (outputs y). */
static int jacobian_fd(implicit *s, cs_step_ctx *x, double T, double H, int j, cs_err *err) {
    if (x->share) { /* each process its own units' columns, then one exchange of the blocks of G */
        int rc = CS_OK;
        for (int i = 0; i < s->nsub && !rc; i++)
            if (cs_share_owns(x->share, i)) rc = fd_unit(s, x, i, T, H, j, s->ypert, err);
        if (rc) cs_err_prefix(err, "implicit (fd Jacobian), macro step %ld [%.10g, %.10g]: ", x->step, T, T + H);
        return cs_share_stacked(x->share, s->G, s->goff, 0, s->nsub, rc, err);
    }
    if (s->par) return par_run(s, x, T, H, NULL, NULL, 0, j, 1, err);
    for (int i = 0; i < s->nsub; i++) {
        int rc = fd_unit(s, x, i, T, H, j, s->ypert, err);
        if (rc) {
            cs_err_prefix(err, "implicit (fd Jacobian), macro step %ld [%.10g, %.10g]: ", x->step, T, T + H);
            return rc;
        }
    }
    return CS_OK;
}

/* The fd columns of unit i (one definition for the sequential and the pooled path): its Δλ, then fd_columns from
 * its snapshot at T_N. Touches only unit i's slices (delta, in, G) and `work` (ny_i + nu_i doubles). */
static int fd_unit(implicit *s, cs_step_ctx *x, int i, double T, double H, int j, double *work, cs_err *err) {
    const cs_network *net = x->net;
    cs_unit *un = x->units[i];
    const int a0 = net->uoff[i];
    for (int la = 0; la < un->nu; la++) {
        const int a = a0 + la;
        double base = j == 0 ? s->lastdiff[a] : fabs(s->uj[a] - s->uprev[a]);
        double dmin = s->o.perturbation > 0.0 ? s->o.perturbation : 1e-6 * (1.0 + fabs(s->uj[a]));
        s->delta[a] = fmax(base, dmin);
    }
    set_input(s, i, net, s->uj);
    int rc = fd_columns(un, s->snap[i], T, H, &s->in[i], s->ell, s->deg, s->uj + a0, s->delta + a0,
                        s->y + net->yoff[i], s->G + s->goff[i], work, err);
    set_input(s, i, net, s->uj);
    return rc;
}

/* The sensitivity blocks of unit i at the iterate u (exact for nonlinear units): from its saved state at T_N with
 * the input p^j; the unit is left at T_N (the next sweep restores it anyway). */
static int sensitivity_unit(implicit *s, cs_step_ctx *x, int i, double T, double H, const double *u, cs_err *err) {
    const cs_network *net = x->net;
    cs_unit *un = x->units[i];
    if (!cs_unit_has_sensitivity(un))
        return cs_fail(err, CS_ERR_ARG, "implicit: unit %s has no interface Jacobian (use jacobian='fd')", un->name);
    set_input(s, i, net, u);
    return cs_unit_sensitivity(un, T, H, s->ell, s->deg, cs_jacobian_sensitivity_mode(s->o.jacobian), &s->in[i],
                               u + net->uoff[i], s->G + s->goff[i], err);
}

/* Corrector iteration j >= 1 with jacobian exact: the blocks of the nonlinear units at u^j (LTI blocks stay). */
static int jacobian_renew(implicit *s, cs_step_ctx *x, double T, double H, cs_err *err) {
    int rc = CS_OK;
    for (int i = 0; i < s->nsub && !rc; i++) {
        cs_unit *un = x->units[i];
        if (un->linear || (x->share && !cs_share_owns(x->share, i))) continue;
        cs_unit_restore_state(un, s->snap[i]);
        rc = sensitivity_unit(s, x, i, T, H, s->uj, err);
    }
    if (rc) cs_err_prefix(err, "implicit (exact Jacobian), macro step %ld [%.10g, %.10g]: ", x->step, T, T + H);
    return x->share ? cs_share_stacked(x->share, s->G, s->goff, 0, s->nsub, rc, err) : rc;
}

/* M = I - L G (dense nu x nu). */
static void assemble(implicit *s, const cs_network *net) {
    const int n = s->nu;
    memset(s->M, 0, sizeof(double) * (size_t)n * n);
    for (int a = 0; a < n; a++) {
        s->M[(size_t)a * n + a] = 1.0;
        for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++) {
            int jy = net->col[k], i = net->out_sub[jy];
            const double *G = s->G + s->goff[i];
            int nui = net->uoff[i + 1] - net->uoff[i], lj = jy - net->yoff[i];
            for (int lb = 0; lb < nui; lb++) s->M[(size_t)a * n + net->uoff[i] + lb] -= net->gain[k] * G[(size_t)lj * nui + lb];
        }
    }
}

static double wrms(int n, const double *d, const double *W) {
    if (n == 0) return 0.0;
    double s = 0.0;
    for (int k = 0; k < n; k++) s += (d[k] * W[k]) * (d[k] * W[k]);
    return sqrt(s / n);
}

static int implicit_step(cs_scheme *sc, cs_step_ctx *x, double T, double H, cs_err *err) {
    implicit *s = sc->content;
    if (!s->ready) CS_TRY(alloc_all(s, x, err));
    const cs_network *net = x->net;
    cs_coupling *cpl = x->coupling;
    const double T1 = T + H;
    const int nu = s->nu, ny = s->ny;
    const size_t nc = CS_MAXDEG + 1;
    cs_iter_note_time(&s->rec, x->step, T);
    /* predictor inputs p^pre (the coupling's extrapolation), u^pre = p^pre(T_{N+1}) */
    int deg = 0;
    for (int i = 0; i < s->nsub; i++) {
        const cs_input *p = cs_coupling_input(cpl, i);
        if (p->eval) return cs_fail(err, CS_ERR_ARG, "implicit: needs polynomial coupling inputs (Lagrange/ZOH)");
        if (p->deg > deg) deg = p->deg;
    }
    for (int i = 0; i < s->nsub; i++) {
        const cs_input *p = cs_coupling_input(cpl, i);
        const int nui = p->nu, a0 = net->uoff[i];
        double *c = s->cpre + (size_t)a0 * nc;
        memset(c, 0, sizeof(double) * nc * nui);
        memcpy(c, p->c, sizeof(double) * (size_t)(p->deg + 1) * nui);
        s->in[i].T = T; s->in[i].H = H; s->in[i].deg = deg; s->in[i].eval = NULL;
        cs_input_eval(p, T1, s->upre + a0);
        cs_unit_save_state(x->units[i], s->snap[i]);
    }
    /* ℓ = L^κ: nodes T_{N+1}, T_N, ..., T_{N-κ+1} (a_i = (T_{N+1} - T_{N+1-i}) / H), κ = min(k, macro points
     * known); p^pre (degree deg) passes through all of them as long as κ <= deg + 1 (during start-up the end value
     * adds one degree: the first step is linear between u_0 and u_1) */
    double z[CS_MAXDEG]; /* the nodes 1 - a_i = (T_{N+1-i} - T_N)/H ... of L^κ besides s = 1 (kraft2021 eq. 3.11) */
    int kap = s->o.kappa < deg + 1 ? s->o.kappa : deg + 1;
    if (s->o.kappa < 0) kap = deg; /* adaptive (kraft2021 §6, §19): the corrector keeps the controller's degree κ of
                                    * p^pre, so that p^pre - p^corr = (u^pre - u_{N+1}) L^κ (imMD, eq. 3.18) */
    for (int k = 0; k < kap; k++) {
        double Tk = cs_iter_time(&s->rec, x->step, k);
        if (isnan(Tk)) { kap = k; break; }
        z[k] = 1.0 - (T1 - Tk) / H;
    }
    if (kap > deg) deg = kap;
    s->deg = deg;
    for (int i = 0; i < s->nsub; i++) s->in[i].deg = deg;
    memset(s->ell, 0, sizeof s->ell);
    cs_lagrange_end_basis(kap, z, s->ell);
    /* sap / sap2 / exact: from the state at T_N and the predictor's input p^pre */
    if (s->o.jacobian != CS_JAC_FD)
        for (int i = 0; i < s->nsub; i++) CS_TRY(sensitivity_unit(s, x, i, T, H, s->upre, err));
    /* predictor j = 0 */
    memcpy(s->uj, s->upre, sizeof(double) * nu);
    CS_TRY(sweep(s, x, T, H, s->uj, s->y, 0, err));
    memcpy(s->y0, s->y, sizeof(double) * ny);
    s->have_xpre = 1; /* predictor states q^pre, v^pre (imMD) */
    for (int i = 0, off = 0; i < s->nsub; off += x->units[i]->nx, i++) {
        const cs_unit *un = x->units[i];
        if (cs_unit_has_states(un)) memcpy(s->xpre + off, cs_unit_states(un), sizeof(double) * un->nx);
        else s->have_xpre = 0;
    }
    const double atol = s->o.atol > 0.0 ? s->o.atol : s->o.tol; /* kraft eq. 2.32 */
    for (int k = 0; k < nu; k++) s->Wu[k] = 1.0 / (atol + s->o.tol * fabs(s->upre[k]));
    for (int k = 0; k < ny; k++) s->Wy[k] = 1.0 / (atol + s->o.tol * fabs(s->y0[k]));
    double nprev = 0.0, norm = 0.0, R = 0.0;
    int j = 0, converged = 0;
    if (s->o.jacobian != CS_JAC_FD) assemble(s, net); /* constant within the step */
    while (!converged) {
        if (j >= s->o.max_iter) break;
        /* residual g = u^j - L y^j - r */
        cs_network_inputs(net, s->y, s->g);
        for (int k = 0; k < nu; k++) s->g[k] = s->uj[k] - s->g[k];
        if (s->o.jacobian == CS_JAC_FD) {
            CS_TRY(jacobian_fd(s, x, T, H, j, err));
            assemble(s, net);
        } else if (s->resens && j > 0) {
            CS_TRY(jacobian_renew(s, x, T, H, err));
            assemble(s, net);
        }
        for (int k = 0; k < nu; k++) s->du[k] = -s->g[k];
        int rc = cs_solve(nu, 1, s->M, s->du, s->work, s->ipiv, err);
        if (rc) {
            cs_err_prefix(err, "implicit, macro step %ld [%.10g, %.10g]: the Newton matrix I - L dy/du is singular: ",
                          x->step, T, T1);
            err->code = CS_ERR_CONVERGENCE;
            return CS_ERR_CONVERGENCE;
        }
        memcpy(s->uprev, s->uj, sizeof(double) * nu);
        memcpy(s->yprev, s->y, sizeof(double) * ny);
        for (int k = 0; k < nu; k++) s->uj[k] += s->du[k];
        CS_TRY(sweep(s, x, T, H, s->uj, s->y, 1, err));
        j++;
        if (s->o.conv_y) {
            for (int k = 0; k < ny; k++) s->yprev[k] = s->y[k] - s->yprev[k];
            norm = wrms(ny, s->yprev, s->Wy);
        } else {
            norm = wrms(nu, s->du, s->Wu);
        }
        if (!isfinite(norm)) break;
        if (norm == 0.0) { converged = 1; break; }
        if (j == 1) {
            converged = 20.0 * norm < s->o.tau;
        } else {
            R = norm / nprev;
            if (R < 1.0) converged = R / (1.0 - R) * norm < s->o.tau;
            if (!converged && R > 0.9) break; /* diverging or too slow */
        }
        nprev = norm;
    }
    if (converged || s->o.on_failure == CS_ONFAIL_CONTINUE) /* a failed step is retried (corConvFail): keep Δλ */
        for (int k = 0; k < nu; k++) s->lastdiff[k] = fabs(s->uj[k] - s->upre[k]);
    return cs_iter_end_step(&s->rec, x, net, s->nsub, s->in, T, T1, s->uj, j,
                            !converged && s->o.on_failure != CS_ONFAIL_CONTINUE, err, "implicit: the corrector",
                            "(||δ||_WRMS = %.3g, rate R = %.3g, tau = %g); use a smaller H, more max_iter, another "
                            "jacobian or on_failure='continue'", norm, R, s->o.tau);
}

static void implicit_predictor(const cs_scheme *sc, const double **x, const double **u) {
    const implicit *s = sc->content;
    *x = s->ready && s->have_xpre ? s->xpre : NULL;
    *u = s->ready ? s->upre : NULL;
}

static void implicit_destroy(cs_scheme *sc) {
    implicit *s = sc->content;
    if (!s) return;
    cs_iter_free_snapshots(s->units, s->nsub, s->snap);
    free(s->goff); free(s->in); free(s->coef); free(s->cpre);
    free(s->upre); free(s->uj); free(s->uprev); free(s->du); free(s->g); free(s->lastdiff); free(s->Wu);
    free(s->y); free(s->yprev); free(s->y0); free(s->Wy);
    free(s->M); free(s->G); free(s->work); free(s->ypert); free(s->ipiv); free(s->delta); free(s->xpre);
    cs_iter_free(&s->rec);
    implicit_par_free(s->par);
    free(s);
    sc->content = NULL;
}

static const cs_scheme_ops IMPLICIT_OPS = {.macro_step = implicit_step, .destroy = implicit_destroy,
                                           .iterations = cs_iter_scheme_iterations, .predictor = implicit_predictor};

int cs_implicit_create(int nsub, const cs_iter_opts *o, cs_scheme **out, cs_err *err) {
    *out = NULL;
    if (nsub < 1) return cs_fail(err, CS_ERR_ARG, "scheme: need at least one unit");
    if (!(o->tol > 0.0)) return cs_fail(err, CS_ERR_ARG, "tol: must be positive, got %g", o->tol);
    if (o->max_iter < 1) return cs_fail(err, CS_ERR_ARG, "max_iter: must be >= 1, got %d", o->max_iter);
    if (o->jacobian < CS_JAC_FD || o->jacobian > CS_JAC_SAP2)
        return cs_fail(err, CS_ERR_ARG, "jacobian: unknown code %d", o->jacobian);
    if (!(o->tau > 0.0 && o->tau < 1.0)) return cs_fail(err, CS_ERR_ARG, "tau: must be in (0, 1), got %g", o->tau);
    cs_scheme *sc = calloc(1, sizeof *sc);
    implicit *s = calloc(1, sizeof *s);
    if (!sc || !s) { free(sc); free(s); return cs_fail(err, CS_ERR_NOMEM, "scheme: out of memory"); }
    s->o = *o;
    s->nsub = nsub;
    sc->ops = &IMPLICIT_OPS;
    sc->content = s;
    sc->kind = CS_SCHEME_IMPLICIT;
    *out = sc;
    return CS_OK;
}

int cs_unit_window_jacobian_fd(cs_unit *u, const void *snap, double T, double H, cs_input *in, const double *ell,
                               int deg, const double *uend, const double *delta, double *G, double *work,
                               cs_err *err) {
    double *y0 = work;
    if (in->eval || deg > in->deg) return cs_fail(err, CS_ERR_ARG, "fd Jacobian: needs a polynomial input of degree >= %d", deg);
    cs_unit_restore_state(u, snap);
    CS_TRY(cs_unit_do_step(u, T, H, in, CS_RESTART, err));
    CS_TRY(cs_unit_get_outputs(u, T + H, uend, y0, err));
    return fd_columns(u, snap, T, H, in, ell, deg, uend, delta, y0, G, work + u->ny, err);
}

static int implicit_kind_create(const void *spec, const cs_scheme_env *e, cs_scheme **out, cs_err *err) {
    CS_TRY(cs_implicit_create(e->nunits, spec, out, err));
    return e->threads > 1 ? cs_implicit_use_threads(*out, e->threads, err) : CS_OK;
}

const cs_kind cs_scheme_implicit_kind = {"implicit", cs_iter_params, CS_ITER_NPARAMS, sizeof(cs_iter_opts), NULL,
                                         {.scheme = implicit_kind_create}, NULL};
