/* Waveform relaxation (kraft2021 §7, eq. 2.34/2.35; preCICE's waveform iteration with quasi-Newton acceleration).
 *
 * Every macro step [T_N, T_{N+1}] (a "window") is iterated as a fixed point X = F(X) over the exchanged output
 * waveforms ỹ of all units: a sweep integrates every unit from its saved state at T_N with inputs
 * u_i(t) = L_i ỹ(t) + r_i formed from X (Jacobi), or, in Gauss-Seidel order, from the fresh outputs of units already
 * swept; F(X) are the units' new outputs. The iterate is relaxed or accelerated (schemes/acceleration.h) until the
 * residual F(X) - X is below the tolerance (WRMS, W = 1/(atol + tol |F|)).
 *
 * Waveforms (waveform=):
 *   polynomial  X = the outputs at T_{N+1}; ỹ_j on the window is the Lagrange polynomial of degree κ through
 *               y_j(T_{N-κ+1}), ..., y_j(T_N) and X_j at T_{N+1} (kraft's p^j of eq. 2.34; inputs stay polynomials,
 *               so exact LTI units work);
 *   substeps    X = the outputs at the unit's own micro-step points (the unit's trace, units/unit.h), ỹ_j the
 *               not-a-knot cubic spline through them (preCICE's study uses cubic B-splines; linear interpolation
 *               would limit the error to about 1e-3 on the preCICE oscillator). The sample grid of a window is the
 *               micro-step grid of its first sweep; later traces on other grids (CVODE) are resampled onto it.
 * The first iterate X^0 is the degree-κ extrapolation of the outputs at the macro points (the explicit predictor).
 * y_j(T_N) of the history comes from the units at the start of the window (outputs with the coupling's u_N).
 *
 * threads = n (Jacobi order only): the units of one sweep integrate concurrently on a pool of the scheme's own
 * (parallel/pool.h). In Jacobi order a sweep reads only the previous iterate X (and the extrapolation), which no unit
 * writes during the sweep; each unit writes only its own F, spline slopes, scratch, input and error slot, and every
 * input edge has its own interval hint, so the results are bit-identical for every thread count. Gauss-Seidel order
 * stays sequential (each unit needs the fresh waveforms of the units swept before it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/spline.h"
#include "parallel/pool.h"
#include "schemes/acceleration.h"
#include "schemes/iter_common.h"

#define NC (CS_MAXDEG + 1)

typedef struct wunit {
    int ny;
    long n, cap;
    double *t, *X, *F, *SX, *SF;  /* grid; samples and spline slopes, output-major [lj * cap + k] */
    unsigned char *mode;          /* per output: 0 extrapolation, 1 iterate X, 2 fresh F (Gauss-Seidel) */
    double *scr;                  /* the unit's own spline scratch (6 x scrcap doubles) */
    long scrcap;
    double *ext;                  /* per output NC coefficients in s of the extrapolation */
} wunit;

typedef struct waveform waveform;
typedef struct wave_ctx { waveform *w; int i; } wave_ctx;

/* threads=n: the pool and the arguments of the current sweep (per-unit return codes and error buffers). */
typedef struct wave_par {
    cs_pool *pool;
    cs_err *errs;
    int *rc;
    cs_step_ctx *x;
    long N;
    int k;
    double T, H;
} wave_par;

struct waveform {
    cs_iter_record rec;           /* first: cs_iter_scheme_iterations reads it */
    cs_iter_opts o;
    int nsub, ready;
    int *order;
    cs_unit **units;
    const cs_network *net;
    void **snap;
    cs_input *in;
    double *coef;                 /* per unit NC x nu_i (polynomial mode) */
    wave_ctx *wc;
    wunit *wu;
    cs_accel *acc;
    double *vx, *vf, *vn;
    long vcap;
    double *scr;                  /* spline scratch (sequential parts) */
    long scrcap;
    long *ehint;                  /* per input edge (net->col index): interval hint of the source's spline */
    wave_par *par;                /* NULL: sequential sweeps */
    double *yh;                   /* CS_ITER_HIST x ny: y at macro points */
    double *yN, *uN;
    double *upre, *yext;          /* predicted inputs u^pre_{N+1} of the first iterate (waCV), outputs at s = 1 */
    int have_upre;
    double T, H;
    int deg, ideg;
    double B[NC * NC];            /* polynomial mode: basis of nodes {1, s_N, s_{N-1}, ...} */
    int ntrace;
};

/* ---------------------------------------------------------------- cubic splines (not-a-knot) */

static int grow_scratch(double **scr, long *cap, long n, cs_err *err) {
    if (n <= *cap) return CS_OK;
    long c = n > 2 * *cap ? n : 2 * *cap;
    double *p = realloc(*scr, sizeof(double) * (size_t)c * 6);
    if (!p) return cs_fail(err, CS_ERR_NOMEM, "waveform relaxation: out of memory");
    *scr = p;
    *cap = c;
    return CS_OK;
}

static int ensure_scratch(waveform *w, long n, cs_err *err) { return grow_scratch(&w->scr, &w->scrcap, n, err); }

/* ---------------------------------------------------------------- inputs */

static inline void source_value(waveform *w, int jy, double t, long *hint, double *v, double *dv) {
    const cs_network *net = w->net;
    int p = net->out_sub[jy], lj = jy - net->yoff[p];
    wunit *q = &w->wu[p];
    if (q->mode[lj] == 0) {
        const double *c = q->ext + (size_t)lj * NC;
        double s = (t - w->T) / w->H, val = 0.0, der = 0.0;
        for (int m = w->ideg; m >= 0; m--) val = val * s + c[m];
        for (int m = w->ideg; m >= 1; m--) der = der * s + m * c[m];
        *v = val;
        *dv = der / w->H;
        return;
    }
    const double *y = (q->mode[lj] == 1 ? q->X : q->F) + (size_t)lj * q->cap;
    const double *s = (q->mode[lj] == 1 ? q->SX : q->SF) + (size_t)lj * q->cap;
    cs_spline_eval(q->n, q->t, y, s, t, hint, v, dv);
}

static int wave_eval(const cs_input *in, double t, double *u, double *udot) {
    const wave_ctx *c = in->ctx;
    waveform *w = c->w;
    const cs_network *net = w->net;
    const int i = c->i, a0 = net->uoff[i], nu = in->nu;
    for (int la = 0; la < nu; la++) {
        int a = a0 + la;
        double v = net->r[a], dv = 0.0;
        for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++) {
            double sv, sd;
            source_value(w, net->col[k], t, &w->ehint[k], &sv, &sd);
            v += net->gain[k] * sv;
            dv += net->gain[k] * sd;
        }
        if (u) u[la] = v;
        if (udot) udot[la] = dv;
    }
    return 0;
}

/* Polynomial mode: input of unit i with end values X (or fresh F) of its sources and the history. */
static void poly_input(waveform *w, int i, long N) {
    const cs_network *net = w->net;
    cs_input *in = &w->in[i];
    const int nu = in->nu, a0 = net->uoff[i], d = w->deg;
    memset(in->c, 0, sizeof(double) * NC * nu);
    for (int la = 0; la < nu; la++) {
        int a = a0 + la;
        in->c[la] = net->r[a];
        for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++) {
            int jy = net->col[k], p = net->out_sub[jy], lj = jy - net->yoff[p];
            const wunit *q = &w->wu[p];
            double v[NC];
            v[0] = q->mode[lj] == 2 ? q->F[(size_t)lj * q->cap] : q->X[(size_t)lj * q->cap];
            for (int h = 1; h <= d; h++) v[h] = w->yh[(size_t)((N - h + 1) % CS_ITER_HIST) * net->ny + jy];
            for (int m = 0; m <= d; m++) {
                double cm = 0.0;
                for (int h = 0; h <= d; h++) cm += v[h] * w->B[h * (d + 1) + m];
                in->c[m * nu + la] += net->gain[k] * cm;
            }
        }
    }
    in->deg = d;
    in->T = w->T;
    in->H = w->H;
}

/* ---------------------------------------------------------------- set-up */

static int wu_reserve(wunit *q, long n, cs_err *err) {
    if (n <= q->cap) return CS_OK;
    long c = n > 2 * q->cap ? n : 2 * q->cap;
    size_t sz = (size_t)c * (q->ny ? q->ny : 1);
    free(q->t); free(q->X); free(q->F); free(q->SX); free(q->SF);
    q->t = malloc(sizeof(double) * (size_t)c);
    q->X = malloc(sizeof(double) * sz); q->F = malloc(sizeof(double) * sz);
    q->SX = malloc(sizeof(double) * sz); q->SF = malloc(sizeof(double) * sz);
    if (!q->t || !q->X || !q->F || !q->SX || !q->SF) { q->cap = 0; return cs_fail(err, CS_ERR_NOMEM, "waveform relaxation: out of memory"); }
    q->cap = c;
    return CS_OK;
}

static int alloc_all(waveform *w, cs_step_ctx *x, cs_err *err) {
    const cs_network *net = x->net;
    w->units = x->units;
    w->net = net;
    size_t nu = (size_t)net->nu + 1, ny = (size_t)net->ny + 1;
    w->snap = calloc((size_t)w->nsub, sizeof(void *));
    w->in = calloc((size_t)w->nsub, sizeof(cs_input));
    w->wc = calloc((size_t)w->nsub, sizeof(wave_ctx));
    w->wu = calloc((size_t)w->nsub, sizeof(wunit));
    w->coef = calloc(NC * nu, sizeof(double));
    w->yh = calloc((size_t)CS_ITER_HIST * ny, sizeof(double));
    w->yN = calloc(ny, sizeof(double));
    w->uN = calloc(nu, sizeof(double));
    w->upre = calloc(nu, sizeof(double));
    w->yext = calloc(ny, sizeof(double));
    w->ehint = calloc((size_t)net->rowptr[net->nu] + 1, sizeof(long));
    if (!w->ehint || !w->snap || !w->in || !w->wc || !w->wu || !w->coef || !w->yh || !w->yN || !w->uN || !w->upre || !w->yext)
        return cs_fail(err, CS_ERR_NOMEM, "waveform relaxation: out of memory");
    for (int i = 0; i < w->nsub; i++) {
        cs_unit *u = x->units[i];
        wunit *q = &w->wu[i];
        q->ny = u->ny;
        q->mode = calloc((size_t)u->ny + 1, 1);
        q->ext = calloc(NC * ((size_t)u->ny + 1), sizeof(double));
        if (!q->mode || !q->ext) return cs_fail(err, CS_ERR_NOMEM, "waveform relaxation: out of memory");
        CS_TRY(wu_reserve(q, w->o.waveform == CS_WAVE_SUBSTEPS ? 64 : 1, err));
        if (!cs_unit_can_restore(u))
            return cs_fail(err, CS_ERR_ARG, "waveform relaxation: unit %s cannot save and restore its state", u->name);
        if (!(w->snap[i] = cs_unit_snapshot_create(u)))
            return cs_fail(err, CS_ERR_NOMEM, "waveform relaxation: out of memory (snapshots)");
        w->in[i].nu = u->nu;
        w->in[i].c = w->coef + (size_t)net->uoff[i] * NC;
        w->wc[i] = (wave_ctx){w, i};
        if (w->o.waveform == CS_WAVE_SUBSTEPS) {
            if (!cs_unit_has_trace(u))
                return cs_fail(err, CS_ERR_ARG, "waveform='substeps': unit %s has no micro-step trace (use "
                               "waveform='polynomial')", u->name);
            CS_TRY(cs_unit_set_trace(u, 1, err));
            w->in[i].eval = wave_eval;
            w->in[i].ctx = &w->wc[i];
        }
    }
    CS_TRY(cs_accel_create(w->o.accel, w->o.omega, w->o.max_iter, w->o.reuse, w->o.filter, &w->acc, err));
    w->ready = 1;
    return CS_OK;
}

static int gather_reserve(waveform *w, long n, cs_err *err) {
    if (n <= w->vcap) return CS_OK;
    long c = n > 2 * w->vcap ? n : 2 * w->vcap;
    free(w->vx); free(w->vf); free(w->vn);
    w->vx = malloc(sizeof(double) * (size_t)c);
    w->vf = malloc(sizeof(double) * (size_t)c);
    w->vn = malloc(sizeof(double) * (size_t)c);
    if (!w->vx || !w->vf || !w->vn) { w->vcap = 0; return cs_fail(err, CS_ERR_NOMEM, "waveform relaxation: out of memory"); }
    w->vcap = c;
    return CS_OK;
}

/* Fresh outputs F of unit i after its step (and the slopes of their splines). */
static int collect(waveform *w, int i, int first, double T1, cs_err *err) {
    cs_unit *u = w->units[i];
    wunit *q = &w->wu[i];
    const int ny = u->ny;
    if (w->o.waveform == CS_WAVE_POLYNOMIAL) {
        double *ue = w->uN + w->net->uoff[i];
        cs_input_eval(&w->in[i], T1, ue);
        if (ny > 64) CS_TRY(grow_scratch(&q->scr, &q->scrcap, ny, err));
        double yb[64], *y = ny <= 64 ? yb : q->scr;
        CS_TRY(cs_unit_get_outputs(u, T1, ue, y, err));
        q->n = 1;
        q->t[0] = T1;
        for (int lj = 0; lj < ny; lj++) q->F[(size_t)lj * q->cap] = y[lj];
        return CS_OK;
    }
    cs_trace tr;
    CS_TRY(cs_unit_trace(u, &tr));
    if (tr.n < 2) return cs_fail(err, CS_ERR_ARG, "waveform relaxation: unit %s left no micro-step trace", u->name);
    if (first) {
        CS_TRY(wu_reserve(q, tr.n, err));
        q->n = tr.n;
        memcpy(q->t, tr.t, sizeof(double) * (size_t)tr.n);
    }
    int same = tr.n == q->n && memcmp(tr.t, q->t, sizeof(double) * (size_t)tr.n) == 0;
    CS_TRY(grow_scratch(&q->scr, &q->scrcap, tr.n > q->n ? tr.n : q->n, err));
    double *col = q->scr, *sl = col + q->scrcap, *wk = sl + q->scrcap;
    for (int lj = 0; lj < ny; lj++) {
        double *F = q->F + (size_t)lj * q->cap;
        if (same) {
            for (long k = 0; k < tr.n; k++) F[k] = tr.y[k * ny + lj];
        } else { /* resample the trace's spline onto the window's grid */
            for (long k = 0; k < tr.n; k++) col[k] = tr.y[k * ny + lj];
            cs_spline_slopes(tr.n, tr.t, col, sl, wk);
            long hint = 0;
            double der;
            for (long k = 0; k < q->n; k++) cs_spline_eval(tr.n, tr.t, col, sl, q->t[k], &hint, &F[k], &der);
        }
        cs_spline_slopes(q->n, q->t, F, q->SF + (size_t)lj * q->cap, wk);
    }
    return CS_OK;
}

static double resid_norm(const waveform *w, long n) {
    double s = 0.0, atol = w->o.atol > 0.0 ? w->o.atol : w->o.tol;
    for (long k = 0; k < n; k++) {
        double r = (w->vf[k] - w->vx[k]) / (atol + w->o.tol * fabs(w->vf[k]));
        s += r * r;
    }
    return n ? sqrt(s / n) : 0.0;
}

/* One unit of a sweep: from its state at T_N (restored after the first sweep) with the inputs formed from the
 * iterate, its fresh outputs F. Touches only unit i's slots. */
static int sweep_unit(waveform *w, cs_step_ctx *x, int i, int k, long N, double T, double H, cs_err *err) {
    cs_unit *u = x->units[i];
    if (k > 0) cs_unit_restore_state(u, w->snap[i]);
    if (w->o.waveform == CS_WAVE_POLYNOMIAL) poly_input(w, i, N);
    else { w->in[i].T = T; w->in[i].H = H; w->in[i].deg = 0; }
    int rc = cs_unit_do_step(u, T, H, &w->in[i], CS_RESTART, err);
    if (!rc) rc = collect(w, i, k == 0, T + H, err);
    return rc;
}

static void par_task(void *arg, int i, int worker) {
    waveform *w = arg;
    wave_par *p = w->par;
    (void)worker;
    p->errs[i].code = 0;
    p->rc[i] = sweep_unit(w, p->x, i, p->k, p->N, p->T, p->H, &p->errs[i]);
}

/* A Jacobi sweep on the pool; a failure reports the lowest failing unit, as the sequential sweep does. */
static int par_sweep(waveform *w, cs_step_ctx *x, int k, long N, double T, double H, cs_err *err) {
    wave_par *p = w->par;
    p->x = x; p->k = k; p->N = N; p->T = T; p->H = H;
    cs_pool_run(p->pool, w->nsub, par_task, w);
    for (int i = 0; i < w->nsub; i++)
        if (p->rc[i]) {
            *err = p->errs[i];
            cs_err_prefix(err, "waveform relaxation, macro step %ld [%.10g, %.10g], iteration %d: ", N, T, T + H, k + 1);
            return p->rc[i];
        }
    return CS_OK;
}

static void wave_par_free(wave_par *p) {
    if (!p) return;
    cs_pool_destroy(p->pool);
    free(p->errs); free(p->rc);
    free(p);
}

int cs_waveform_use_threads(cs_scheme *sc, int nthreads, cs_err *err) {
    waveform *w = sc ? sc->content : NULL;
    if (!w || sc->kind != CS_SCHEME_WAVEFORM) return cs_fail(err, CS_ERR_ARG, "threads: not a waveform relaxation scheme");
    if (nthreads < 1) return cs_fail(err, CS_ERR_ARG, "threads: must be >= 1, got %d", nthreads);
    if (nthreads == 1 || w->nsub < 2 || w->par || w->o.gauss_seidel) return CS_OK; /* Gauss-Seidel: sequential */
    wave_par *p = calloc(1, sizeof *p);
    if (p) {
        p->errs = calloc((size_t)w->nsub, sizeof(cs_err));
        p->rc = calloc((size_t)w->nsub, sizeof(int));
    }
    if (!p || !p->errs || !p->rc) {
        wave_par_free(p);
        return cs_fail(err, CS_ERR_NOMEM, "waveform relaxation: out of memory");
    }
    int rc = cs_pool_create(nthreads < w->nsub ? nthreads : w->nsub, &p->pool, err);
    if (rc) { wave_par_free(p); return rc; }
    w->par = p;
    return CS_OK;
}

static int wave_step(cs_scheme *sc, cs_step_ctx *x, double T, double H, cs_err *err) {
    waveform *w = sc->content;
    if (!w->ready) CS_TRY(alloc_all(w, x, err));
    const cs_network *net = x->net;
    cs_coupling *cpl = x->coupling;
    const long N = x->step;
    const double T1 = T + H;
    const int ny = net->ny;
    w->T = T;
    w->H = H;
    cs_iter_note_time(&w->rec, N, T);
    int kap = w->o.kappa;
    if (kap < 0) { /* adaptive (kraft2021 §19): the controller's degree κ, set on the coupling for this step */
        kap = 0;
        for (int i = 0; i < w->nsub; i++) {
            const cs_input *p = cs_coupling_input(cpl, i);
            if (p->deg > kap) kap = p->deg;
        }
        if (kap > CS_MAXDEG) kap = CS_MAXDEG;
    }
    /* y(T_N) from the units with the coupling's u_N (Lagrange inputs interpolate u_N at T_N) */
    for (int i = 0; i < w->nsub; i++) {
        cs_unit *u = x->units[i];
        cs_unit_save_state(u, w->snap[i]);
        const cs_input *p = cs_coupling_input(cpl, i);
        cs_input_eval(p, T, w->uN + net->uoff[i]);
        CS_TRY(cs_unit_get_outputs(u, T, w->uN + net->uoff[i], w->yh + (size_t)(N % CS_ITER_HIST) * ny + net->yoff[i], err));
    }
    /* history nodes s_h = (T_{N-h} - T_N)/H, h = 0.. */
    double hs[NC];
    int navail = 0;
    for (int h = 0; h < NC && h <= kap; h++) {
        double Th = cs_iter_time(&w->rec, N, h);
        if (isnan(Th)) break;
        hs[navail++] = (Th - T) / H;
    }
    /* extrapolation X^0: degree min(κ, navail - 1) through the history */
    w->ideg = navail - 1;
    double Bx[NC * NC];
    cs_lagrange_basis(w->ideg + 1, hs, Bx);
    for (int i = 0; i < w->nsub; i++) {
        wunit *q = &w->wu[i];
        for (int lj = 0; lj < q->ny; lj++) {
            int jy = net->yoff[i] + lj;
            double *c = q->ext + (size_t)lj * NC;
            for (int m = 0; m <= w->ideg; m++) {
                double cm = 0.0;
                for (int h = 0; h <= w->ideg; h++) cm += w->yh[(size_t)((N - h) % CS_ITER_HIST) * ny + jy] * Bx[h * (w->ideg + 1) + m];
                c[m] = cm;
            }
        }
    }
    /* u^pre_{N+1} = L ỹ^0(T_{N+1}) + r, the explicit prediction (waCV, kraft2021 §8.6) */
    for (int i = 0; i < w->nsub; i++)
        for (int lj = 0; lj < w->wu[i].ny; lj++) {
            const double *c = w->wu[i].ext + (size_t)lj * NC;
            double v = 0.0;
            for (int m = w->ideg; m >= 0; m--) v += c[m];
            w->yext[net->yoff[i] + lj] = v;
        }
    cs_network_inputs(net, w->yext, w->upre);
    w->have_upre = 1;
    /* polynomial mode: nodes {1, s_0, ..., s_{d-1}}, d = min(κ, navail) */
    if (w->o.waveform == CS_WAVE_POLYNOMIAL) {
        int d = navail < kap ? navail : kap;
        double nodes[NC];
        nodes[0] = 1.0;
        for (int h = 0; h < d; h++) nodes[h + 1] = hs[h];
        w->deg = d;
        cs_lagrange_basis(d + 1, nodes, w->B);
        for (int i = 0; i < w->nsub; i++) {
            wunit *q = &w->wu[i];
            q->n = 1;
            for (int lj = 0; lj < q->ny; lj++) {
                double v = 0.0, *c = q->ext + (size_t)lj * NC;
                for (int m = w->ideg; m >= 0; m--) v = v + c[m]; /* at s = 1 */
                q->X[(size_t)lj * q->cap] = v;
                q->mode[lj] = 1;
            }
        }
    }
    int k = 0, converged = 0;
    long n = 0;
    double norm = INFINITY;
    for (k = 0; k < w->o.max_iter; k++) {
        for (int i = 0; i < w->nsub; i++) {
            wunit *q = &w->wu[i];
            memset(q->mode, w->o.waveform == CS_WAVE_POLYNOMIAL || k > 0 ? 1 : 0, (size_t)q->ny);
        }
        if (w->par) CS_TRY(par_sweep(w, x, k, N, T, H, err));
        else
            for (int p = 0; p < w->nsub; p++) {
                int i = w->o.gauss_seidel ? w->order[p] : p;
                int rc = sweep_unit(w, x, i, k, N, T, H, err);
                if (rc) { cs_err_prefix(err, "waveform relaxation, macro step %ld [%.10g, %.10g], iteration %d: ", N, T, T1, k + 1); return rc; }
                if (w->o.gauss_seidel) memset(w->wu[i].mode, 2, (size_t)w->wu[i].ny);
            }
        if (k == 0 && w->o.waveform == CS_WAVE_SUBSTEPS) { /* X^0: the extrapolation on the grid */
            for (int i = 0; i < w->nsub; i++) {
                wunit *q = &w->wu[i];
                CS_TRY(ensure_scratch(w, q->n, err));
                for (int lj = 0; lj < q->ny; lj++) {
                    const double *c = q->ext + (size_t)lj * NC;
                    double *X = q->X + (size_t)lj * q->cap;
                    for (long t = 0; t < q->n; t++) {
                        double s = (q->t[t] - T) / H, v = 0.0;
                        for (int m = w->ideg; m >= 0; m--) v = v * s + c[m];
                        X[t] = v;
                    }
                }
            }
        }
        /* gather */
        n = 0;
        for (int i = 0; i < w->nsub; i++) n += (long)w->wu[i].ny * w->wu[i].n;
        CS_TRY(gather_reserve(w, n + 1, err));
        long o = 0;
        for (int i = 0; i < w->nsub; i++) {
            wunit *q = &w->wu[i];
            for (int lj = 0; lj < q->ny; lj++) {
                memcpy(w->vx + o, q->X + (size_t)lj * q->cap, sizeof(double) * (size_t)q->n);
                memcpy(w->vf + o, q->F + (size_t)lj * q->cap, sizeof(double) * (size_t)q->n);
                o += q->n;
            }
        }
        if (k == 0) CS_TRY(cs_accel_begin_window(w->acc, n, err));
        norm = resid_norm(w, n);
        if (!isfinite(norm)) break;
        if (norm <= 1.0) { converged = 1; k++; break; }
        if (k + 1 == w->o.max_iter) { k++; break; }
        CS_TRY(cs_accel_update(w->acc, w->vx, w->vf, w->vn, err));
        o = 0;
        for (int i = 0; i < w->nsub; i++) {
            wunit *q = &w->wu[i];
            for (int lj = 0; lj < q->ny; lj++) {
                memcpy(q->X + (size_t)lj * q->cap, w->vn + o, sizeof(double) * (size_t)q->n);
                o += q->n;
                if (w->o.waveform == CS_WAVE_SUBSTEPS) {
                    CS_TRY(ensure_scratch(w, q->n, err));
                    cs_spline_slopes(q->n, q->t, q->X + (size_t)lj * q->cap, q->SX + (size_t)lj * q->cap, w->scr);
                }
            }
        }
    }
    cs_accel_end_window(w->acc);
    return cs_iter_end_step(&w->rec, x, net, w->nsub, w->in, T, T1, NULL, k,
                            !converged && w->o.on_failure != CS_ONFAIL_CONTINUE, err, "waveform relaxation",
                            "(residual %.3g x tol); use a smaller H, more max_iter, acceleration='iqn-ils' or "
                            "on_failure='continue'", norm);
}

static void wave_predictor(const cs_scheme *sc, const double **x, const double **u) {
    const waveform *w = sc->content;
    *x = NULL;
    *u = w->have_upre ? w->upre : NULL;
}

static void wave_destroy(cs_scheme *sc) {
    waveform *w = sc->content;
    if (!w) return;
    cs_iter_free_snapshots(w->units, w->nsub, w->snap);
    for (int i = 0; w->wu && i < w->nsub; i++) {
        wunit *q = &w->wu[i];
        free(q->t); free(q->X); free(q->F); free(q->SX); free(q->SF); free(q->mode); free(q->scr); free(q->ext);
    }
    free(w->in); free(w->wc); free(w->wu); free(w->coef); free(w->yh); free(w->yN); free(w->uN); free(w->upre); free(w->yext);
    free(w->vx); free(w->vf); free(w->vn); free(w->scr); free(w->order); free(w->ehint);
    wave_par_free(w->par);
    cs_accel_destroy(w->acc);
    cs_iter_free(&w->rec);
    free(w);
    sc->content = NULL;
}

static const cs_scheme_ops WAVE_OPS = {.macro_step = wave_step, .destroy = wave_destroy,
                                       .iterations = cs_iter_scheme_iterations, .predictor = wave_predictor};

int cs_waveform_create(int nsub, const int *order, const cs_iter_opts *o, cs_scheme **out, cs_err *err) {
    *out = NULL;
    if (nsub < 1) return cs_fail(err, CS_ERR_ARG, "scheme: need at least one unit");
    if (!(o->tol > 0.0)) return cs_fail(err, CS_ERR_ARG, "tol: must be positive, got %g", o->tol);
    if (o->max_iter < 1) return cs_fail(err, CS_ERR_ARG, "max_iter: must be >= 1, got %d", o->max_iter);
    if (!(o->omega > 0.0 && o->omega < 2.0)) return cs_fail(err, CS_ERR_ARG, "omega: must be in (0, 2), got %g", o->omega);
    if (o->accel < CS_ACCEL_NONE || o->accel > CS_ACCEL_IQN_ILS)
        return cs_fail(err, CS_ERR_ARG, "acceleration: unknown code %d", o->accel);
    if (o->waveform != CS_WAVE_POLYNOMIAL && o->waveform != CS_WAVE_SUBSTEPS)
        return cs_fail(err, CS_ERR_ARG, "waveform: unknown code %d", o->waveform);
    if (o->kappa < -1 || o->kappa > CS_MAXDEG) return cs_fail(err, CS_ERR_ARG, "waveform relaxation: degree %d", o->kappa);
    cs_scheme *sc = calloc(1, sizeof *sc);
    waveform *w = calloc(1, sizeof *w);
    int *ord = malloc(sizeof(int) * (size_t)nsub);
    unsigned char *seen = calloc((size_t)nsub, 1);
    if (!sc || !w || !ord || !seen) {
        free(sc); free(w); free(ord); free(seen);
        return cs_fail(err, CS_ERR_NOMEM, "scheme: out of memory");
    }
    for (int p = 0; p < nsub; p++) {
        int i = order ? order[p] : p;
        if (i < 0 || i >= nsub || seen[i]++) {
            free(sc); free(w); free(ord); free(seen);
            return cs_fail(err, CS_ERR_ARG, "order: must be a permutation of the %d subsystems", nsub);
        }
        ord[p] = i;
    }
    free(seen);
    w->o = *o;
    w->nsub = nsub;
    w->order = ord;
    sc->ops = &WAVE_OPS;
    sc->content = w;
    sc->kind = CS_SCHEME_WAVEFORM;
    *out = sc;
    if (o->threads > 1) { /* threads=n from the run options (Jacobi order; Gauss-Seidel stays sequential) */
        int rc = cs_waveform_use_threads(sc, o->threads, err);
        if (rc) { wave_destroy(sc); free(sc); *out = NULL; return rc; }
    }
    return CS_OK;
}

static int waveform_kind_create(const void *spec, const cs_scheme_env *e, cs_scheme **out, cs_err *err) {
    cs_iter_opts o = *(const cs_iter_opts *)spec;
    o.threads = e->threads;   /* Jacobi sweeps on a pool */
    return cs_waveform_create(e->nunits, e->order, &o, out, err);
}

const cs_kind cs_scheme_waveform_kind = {"waveform", cs_iter_params, CS_ITER_NPARAMS, sizeof(cs_iter_opts), NULL,
                                         {.scheme = waveform_kind_create}, NULL};
