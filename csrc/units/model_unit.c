/* Model + integrator unit: a cs_model (models/) integrated by a cs_stepper (integrators/: Euler, RK4, CVODE, and
 * the exact LTI propagator, which makes this also the exact LTI unit). The unit owns the stepper, not the model. */
#include "units/model_unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/quadrature.h"
#include "models/sensitivity.h"
#include "linalg/dense.h"
#include "linalg/expm.h"

typedef struct model_unit {
    cs_stepper *st;
    double *work;      /* nx + ny + nu doubles for output rates by difference quotients */
    /* trace: outputs and output rates at the recorded micro-step points (grown with the stepper's trace) */
    long tr_cap;
    double *tr_y, *tr_ydot, *tr_u, *tr_udot;
    /* sensitivity: work for kraft2021 App. A (sap) and the exact LTI propagator */
    double *sw;
    int *ipiv;
    /* exact sensitivity of a nonlinear model (models/sensitivity.h): made at the first use, integrated by the
     * unit's own integrator kind (opts) */
    cs_solver_opts opts;
    cs_model *sens;
    cs_stepper *sens_st;
    double *sens_w;    /* nx (1 + nu) start values, nu scales σ, nu + nx + 2 ny scratch, g_x (ny x nx) */
} model_unit;

static cs_stepper *ST(const cs_unit *u) { return ((model_unit *)u->content)->st; }

/* Outputs y and rates y' at the stepper's recorded points, with the step's own input values there. */
static int trace_outputs(cs_unit *u, const cs_input *in, cs_err *err) {
    model_unit *m = u->content;
    cs_stepper *st = m->st;
    cs_model *md = st->model;
    int nx = md->nx, ny = md->ny, nu = md->nu;
    if (st->tr_cap > m->tr_cap) {
        size_t n = (size_t)st->tr_cap;
        double *y = realloc(m->tr_y, sizeof(double) * n * (ny ? ny : 1));
        if (y) m->tr_y = y;
        double *yd = y ? realloc(m->tr_ydot, sizeof(double) * n * (ny ? ny : 1)) : NULL;
        if (yd) m->tr_ydot = yd;
        if (!y || !yd) return cs_fail(err, CS_ERR_NOMEM, "unit %s: out of memory (trace)", u->name);
        m->tr_cap = st->tr_cap;
    }
    for (long k = 0; k < st->tr_n; k++) {
        double t = st->tr_t[k];
        const double *x = st->tr_x + k * nx;
        cs_input_eval(in, t, m->tr_u);
        cs_input_eval_dt(in, t, m->tr_udot);
        CS_TRY(cs_model_output(md, t, x, m->tr_u, m->tr_y + k * ny, err));
        CS_TRY(cs_model_output_dt(md, t, x, m->tr_u, nu ? m->tr_udot : NULL, m->tr_ydot + k * ny, m->work, err));
    }
    return CS_OK;
}

static int mu_do_step(cs_unit *u, double T, double H, const cs_input *in, int restart, cs_err *err) {
    cs_stepper *st = ST(u);
    if (!st->tracing) return cs_stepper_step(st, T, H, in, restart, err);
    CS_TRY(cs_stepper_step(st, T, H, in, restart, err));
    return trace_outputs(u, in, err);
}

static int mu_set_trace(cs_unit *u, int on, cs_err *err) {
    model_unit *m = u->content;
    if (on && !m->tr_u) {
        m->tr_u = calloc(2 * (size_t)u->nu + 2, sizeof(double));
        if (!m->tr_u) return cs_fail(err, CS_ERR_NOMEM, "unit %s: out of memory (trace)", u->name);
        m->tr_udot = m->tr_u + u->nu + 1;
    }
    m->st->tracing = on != 0;
    m->st->tr_n = 0;
    return CS_OK;
}

static int mu_trace(const cs_unit *u, cs_trace *tr) {
    const model_unit *m = u->content;
    tr->n = m->st->tracing ? m->st->tr_n : 0;
    tr->t = m->st->tr_t;
    tr->y = m->tr_y;
    tr->ydot = m->tr_ydot;
    return CS_OK;
}

/* The exact interface Jacobian of a nonlinear model: the forward sensitivities S = ∂x/∂u_end integrated with the
 * state over the window (kraft2021 eqs. A.2/A.8 for any model; models/sensitivity.h) by the unit's integrator kind,
 * from the current state at T and the window's input `in`; then dy/du_end = g_x S + g_u at T+H. */
static int sensitivity_ode(cs_unit *u, double T, double H, const double *ell, int deg, const cs_input *in,
                           const double *uend, double *G, cs_err *err) {
    model_unit *m = u->content;
    cs_model *md = m->st->model;
    const int nx = md->nx, nu = md->nu, ny = md->ny, na = nx * (1 + nu);
    if (!in) return cs_fail(err, CS_ERR_ARG, "unit %s: the exact sensitivity of a nonlinear model needs the input", u->name);
    if (!m->sens) { /* once per unit: the augmented model, its stepper (dense: Z couples to x) and the work */
        cs_solver_opts o = m->opts;
        o.linear_solver = CS_LINSOL_DENSE;
        o.continue_smooth = 0;
        /* the sensitivity rhs is a central difference (relative noise ~ eps^(2/3) = 4e-11): a tighter error test
         * could not pass; a Jacobian to 1e-10 is far more than Newton needs */
        if (o.kind == CS_SOLVER_CVODE && o.rtol < 1e-10) o.rtol = 1e-10;
        m->sens_w = calloc((size_t)na + 3 * (size_t)nu + (size_t)nx + 2 * (size_t)ny + (size_t)ny * nx + 1,
                           sizeof(double));
        if (!m->sens_w) return cs_fail(err, CS_ERR_NOMEM, "unit %s: out of memory (sensitivity)", u->name);
        CS_TRY(cs_sensitivity_model_create(md, o.kind == CS_SOLVER_CVODE, &m->sens, err));
        if (cs_stepper_create(m->sens, &o, &m->sens_st, err)) {
            cs_model_destroy(m->sens);
            m->sens = NULL;
            return err->code;
        }
    }
    double *xa = m->sens_w, *sigma = xa + na, *u0 = sigma + nu, *f0 = u0 + nu, *y0 = f0 + nx, *y1 = y0 + ny,
           *f1 = m->work; /* nx of the unit's work */
    const double eps = 1.4901161193847656e-08; /* sqrt(2^-52) */
    const double *x = m->st->x;
    double xs = 1.0;
    for (int i = 0; i < nx; i++) xs = fmax(xs, fabs(x[i]));
    /* σ_a: Z_a = σ_a S_a of the size of the state (S_a ~ H f_u e_a over the window) */
    cs_input_eval(in, T, u0);
    CS_TRY(cs_model_rhs(md, T, x, u0, f0, err));
    for (int a = 0; a < nu; a++) {
        double d = eps * fmax(1.0, fabs(u0[a])), ua = u0[a], bn = 0.0;
        u0[a] = ua + d;
        int rc = cs_model_rhs(md, T, x, u0, f1, err);
        u0[a] = ua;
        if (rc) return rc;
        for (int i = 0; i < nx; i++) bn = fmax(bn, fabs(f1[i] - f0[i]) / d);
        sigma[a] = bn > 0.0 ? xs / (H * bn) : 1.0;
    }
    memcpy(xa, x, sizeof(double) * nx);
    memset(xa + nx, 0, sizeof(double) * (size_t)nx * nu);
    cs_sensitivity_model_window(m->sens, T, H, ell, deg, sigma);
    cs_stepper_set_state(m->sens_st, T, xa);
    int rc = cs_stepper_step(m->sens_st, T, H, in, CS_RESTART, err);
    if (rc) { cs_err_prefix(err, "unit %s, sensitivity equations: ", u->name); return rc; }
    const double *x1 = m->sens_st->x;
    CS_TRY(cs_model_output_du(md, T + H, x1, uend, G, m->work, err));
    CS_TRY(cs_model_output(md, T + H, x1, uend, y0, err));
    /* g_x by columns (steps exact in binary, so that outputs linear in x come out exact), then G += g_x S: per entry
     * accurate where one difference along Z_a would lose the small entries (x_λ ~ H^2 beside v_λ ~ H) */
    double *xp = xa, *gx = y1 + ny; /* the start values are spent: nx of them hold the perturbed end state */
    memcpy(xp, x1, sizeof(double) * nx);
    for (int j = 0; j < nx; j++) {
        volatile double xj = x1[j] + eps * fmax(1.0, fabs(x1[j]));
        double h = xj - x1[j];
        xp[j] = xj;
        CS_TRY(cs_model_output(md, T + H, xp, uend, y1, err));
        xp[j] = x1[j];
        for (int i = 0; i < ny; i++) gx[(size_t)i * nx + j] = (y1[i] - y0[i]) / h;
    }
    for (int a = 0; a < nu; a++) {
        const double *Z = x1 + (size_t)nx * (a + 1);
        for (int i = 0; i < ny; i++) {
            double v = 0.0;
            for (int j = 0; j < nx; j++) v += gx[(size_t)i * nx + j] * Z[j];
            G[(size_t)i * nu + a] += v / sigma[a];
        }
    }
    return CS_OK;
}

/* Interface Jacobian of one window (unit.h "sensitivity"; kraft2021 §6.2, App. A). */
static int mu_sensitivity(cs_unit *u, double T, double H, const double *ell, int deg, int mode, const cs_input *in,
                          const double *uend, double *G, cs_err *err) {
    model_unit *m = u->content;
    cs_stepper *st = m->st;
    cs_model *md = st->model;
    const int nx = md->nx, nu = md->nu, ny = md->ny;
    if (deg < 0 || deg > CS_MAXDEG) return cs_fail(err, CS_ERR_ARG, "unit %s: sensitivity degree %d", u->name, deg);
    const cs_linear_data *lin = cs_model_linear(md);
    if (mode == CS_SENS_EXACT && !lin && nx > 0) return sensitivity_ode(u, T, H, ell, deg, in, uend, G, err);
    /* D (feed-through) part: outputs at T+H see the end value directly */
    CS_TRY(cs_model_output_du(md, T + H, st->x, uend, G, m->work, err));
    if (nx == 0) return CS_OK;
    if (mode == CS_SENS_EXACT) {
        double *Phi = m->sw, *Gam = Phi + (size_t)nx * nx, *dx = Gam + (size_t)nx * nu * (CS_MAXDEG + 1);
        double *work = dx + nx;
        CS_TRY(cs_poly_propagator(nx, nu, deg, lin->A, lin->B, H, Phi, Gam, work, m->ipiv, err));
        for (int a = 0; a < nu; a++) {
            for (int i = 0; i < nx; i++) {
                double v = 0.0;
                for (int k = 0; k <= deg; k++) v += ell[k] * Gam[(size_t)k * nx * nu + (size_t)i * nu + a];
                dx[i] = v;
            }
            for (int i = 0; i < ny; i++) {
                double v = 0.0;
                for (int q = 0; q < nx; q++) v += lin->C[(size_t)i * nx + q] * dx[q];
                G[(size_t)i * nu + a] += v;
            }
        }
        return CS_OK;
    }
    if (mode != CS_SENS_SAP && mode != CS_SENS_SAP2)
        return cs_fail(err, CS_ERR_ARG, "unit %s: unknown sensitivity mode %d", u->name, mode);
    const int two = mode == CS_SENS_SAP2;
    /* c_k = int_0^1 (1 - s)^k / k! ell(s) ds: c0 = C_vel, c1 = C_pos of kraft2021 eq. 3.11/3.15, c2 the third
     * coefficient of (A.5) (1/6, 1/24, 7/240, 17/720 for κ = 0..3) */
    double c0 = 0.0, c1 = 0.0, c2 = 0.0;
    for (int k = 0; k <= deg; k++) {
        c0 += ell[k] / (k + 1);
        c1 += ell[k] / ((k + 1.0) * (k + 2.0));
        c2 += ell[k] / ((k + 1.0) * (k + 2.0) * (k + 3.0));
    }
    double *CB = m->sw, *CAB = CB + (size_t)ny * nu, *f0 = CAB + (size_t)ny * nu, *b = f0 + nx, *ab = b + nx,
           *xp = ab + nx, *y0 = xp + nx, *y1 = y0 + ny, *up = y1 + ny, *CA2B = up + nu, *a2b = CA2B + (size_t)ny * nu;
    const double eps = 1.4901161193847656e-08; /* sqrt(2^-52) */
    double t = T;
    const double *x = st->x, *u0 = uend; /* sap: the coupling-body masses; the state at T, inputs at their end value */
    if (lin) {
        for (int a = 0; a < nu; a++) {
            for (int q = 0; q < nx; q++) { /* A B e_a (and A^2 B e_a) */
                double v = 0.0;
                for (int r = 0; r < nx; r++) v += lin->A[(size_t)q * nx + r] * lin->B[(size_t)r * nu + a];
                ab[q] = v;
            }
            if (two)
                for (int q = 0; q < nx; q++) {
                    double v = 0.0;
                    for (int r = 0; r < nx; r++) v += lin->A[(size_t)q * nx + r] * ab[r];
                    a2b[q] = v;
                }
            for (int i = 0; i < ny; i++) {
                double s0 = 0.0, s1 = 0.0, s2 = 0.0;
                for (int q = 0; q < nx; q++) {
                    s0 += lin->C[(size_t)i * nx + q] * lin->B[(size_t)q * nu + a];
                    s1 += lin->C[(size_t)i * nx + q] * ab[q];
                    if (two) s2 += lin->C[(size_t)i * nx + q] * a2b[q];
                }
                CB[(size_t)i * nu + a] = s0;
                CAB[(size_t)i * nu + a] = s1;
                if (two) CA2B[(size_t)i * nu + a] = s2;
            }
        }
    } else { /* directional difference quotients: b = f_u e_a, C B = g_x b, A B = f_x b, C A B = g_x (A B) */
        CS_TRY(cs_model_rhs(md, t, x, u0, f0, err));
        CS_TRY(cs_model_output(md, t, x, u0, y0, err));
        memcpy(up, u0, sizeof(double) * nu);
        double xs = 0.0;
        for (int q = 0; q < nx; q++) xs = fmax(xs, fabs(x[q]));
        for (int a = 0; a < nu; a++) {
            double d = eps * fmax(1.0, fabs(u0[a]));
            up[a] = u0[a] + d;
            CS_TRY(cs_model_rhs(md, t, x, up, b, err));
            up[a] = u0[a];
            double bn = 0.0;
            for (int q = 0; q < nx; q++) { b[q] = (b[q] - f0[q]) / d; bn = fmax(bn, fabs(b[q])); }
            /* the chain b, A b, A^2 b: each direction's step sized to the state, C d from the outputs, the next
             * direction f_x d from the right-hand side; a vanishing direction leaves its own and later terms 0 */
            double *dir[3] = {b, ab, a2b}, *col[3] = {CB, CAB, CA2B};
            const int levels = two ? 3 : 2;
            double dn = bn;
            for (int l = 0; l < levels; l++) {
                const double e = dn > 0.0 ? eps * fmax(1.0, xs) / dn : 0.0;
                if (!(e > 0.0)) {
                    for (; l < levels; l++)
                        for (int i = 0; i < ny; i++) col[l][(size_t)i * nu + a] = 0.0;
                    break;
                }
                for (int q = 0; q < nx; q++) xp[q] = x[q] + e * dir[l][q];
                CS_TRY(cs_model_output(md, t, xp, u0, y1, err));
                for (int i = 0; i < ny; i++) col[l][(size_t)i * nu + a] = (y1[i] - y0[i]) / e;
                if (l + 1 < levels) {
                    double *next = dir[l + 1];
                    CS_TRY(cs_model_rhs(md, t, xp, u0, next, err));
                    dn = 0.0;
                    for (int q = 0; q < nx; q++) { next[q] = (next[q] - f0[q]) / e; dn = fmax(dn, fabs(next[q])); }
                }
            }
        }
    }
    /* per entry the first non-vanishing term (kraft2021 §13.2: v_b ~ C_vel H/m_b, x_b ~ C_pos H^2/m_b, cross terms
     * of bodies not loaded directly ~ 0); "vanishing" relative to the largest first-order term (difference noise).
     * Two terms (CS_SENS_SAP2, the "two-term" variant of §13.2): plus the next power of H of the same entry, the
     * damping terms -C_pos d H^2/m^2 and -c2 d H^3/m^2 of (A.5) */
    double cbmax = 0.0, cabmax = 0.0;
    for (size_t k = 0; k < (size_t)ny * nu; k++) { cbmax = fmax(cbmax, fabs(CB[k])); cabmax = fmax(cabmax, fabs(CAB[k])); }
    for (size_t k = 0; k < (size_t)ny * nu; k++) {
        if (fabs(CB[k]) > 1e-6 * cbmax) {
            G[k] += H * c0 * CB[k];
            if (two) G[k] += H * H * c1 * CAB[k];
        } else if (fabs(CAB[k]) > 1e-6 * cabmax) {
            G[k] += H * H * c1 * CAB[k];
            if (two) G[k] += H * H * H * c2 * CA2B[k];
        }
    }
    return CS_OK;
}

static int mu_get_outputs(cs_unit *u, double t, const double *uin, double *y, cs_err *err) {
    cs_stepper *st = ST(u);
    return cs_model_output(st->model, t, st->x, uin, y, err);
}

static void *mu_snapshot_create(cs_unit *u) {
    cs_stepper_state *s = calloc(1, sizeof *s);
    if (s && cs_stepper_state_alloc(ST(u), s)) { free(s); s = NULL; }
    return s;
}

static void mu_save(cs_unit *u, void *snap) { cs_stepper_save(ST(u), snap); }
static void mu_restore(cs_unit *u, const void *snap) { cs_stepper_restore(ST(u), snap); }

static void mu_snapshot_destroy(void *snap) {
    if (!snap) return;
    cs_stepper_state_free(snap);
    free(snap);
}

static int mu_set_state(cs_unit *u, double t, const double *x, cs_err *err) {
    cs_stepper_set_state(ST(u), t, x);
    return CS_OK;
}

static int mu_output_jacobian(cs_unit *u, double t, const double *uin, double *G, cs_err *err) {
    cs_stepper *st = ST(u);
    return cs_model_output_du(st->model, t, st->x, uin, G, ((model_unit *)u->content)->work, err);
}

static int mu_output_rates(cs_unit *u, double t, const double *uin, const double *udot, double *ydot, cs_err *err) {
    cs_stepper *st = ST(u);
    return cs_model_output_dt(st->model, t, st->x, uin, udot, ydot, ((model_unit *)u->content)->work, err);
}

static const double *mu_states(const cs_unit *u) { return ST(u)->x; }

static void mu_stats(const cs_unit *u, cs_unit_stats *s) {
    cs_stepper *st = ST(u);
    s->steps = st->stats.steps;
    s->failures = st->stats.failures;
    s->jac_evals = st->stats.jac_evals;
    s->restarts = st->stats.restarts;
    s->rhs_calls = st->model->nrhs;
    s->output_calls = st->model->nout;
}

static void mu_destroy(cs_unit *u) {
    model_unit *m = u->content;
    if (!m) return;
    cs_stepper_destroy(m->st);
    free(m->work);
    free(m->tr_y); free(m->tr_ydot); free(m->tr_u);
    free(m->sw); free(m->ipiv);
    cs_stepper_destroy(m->sens_st);
    cs_model_destroy(m->sens);
    free(m->sens_w);
    free(m);
    u->content = NULL;
}

static const cs_unit_ops MODEL_UNIT_OPS = {
    .do_step = mu_do_step,
    .get_outputs = mu_get_outputs,
    .snapshot_create = mu_snapshot_create,
    .save_state = mu_save,
    .restore_state = mu_restore,
    .snapshot_destroy = mu_snapshot_destroy,
    .set_state = mu_set_state,
    .output_jacobian = mu_output_jacobian,
    .output_rates = mu_output_rates,
    .states = mu_states,
    .set_trace = mu_set_trace,
    .trace = mu_trace,
    .get_stats = mu_stats,
    .destroy = mu_destroy,
    .sensitivity = mu_sensitivity,
};

int cs_model_unit_create(cs_model *model, const cs_solver_opts *opts, cs_unit **out, cs_err *err) {
    cs_unit *u = cs_unit_new_empty(&MODEL_UNIT_OPS, model->nx, model->nu, model->ny, model->name, err);
    if (!u) return err->code;
    model_unit *m = calloc(1, sizeof *m);
    if (!m) { cs_unit_destroy(u); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    u->content = m;
    m->work = calloc((size_t)model->nx + 2 * (size_t)model->ny + 2 * (size_t)model->nu + 1, sizeof(double));
    if (!m->work) { cs_unit_destroy(u); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    {
        size_t nx = (size_t)model->nx, nu = (size_t)model->nu, ny = (size_t)model->ny;
        size_t sap = 3 * ny * nu + 6 * nx + 2 * ny + nu; /* two-term sap: CA2B and a2b */
        size_t ex = cs_model_linear(model) ? nx * nx + nx * nu * (CS_MAXDEG + 1) + nx +
                                                 cs_poly_propagator_work_size(model->nx, model->nu, CS_MAXDEG)
                                           : 0;
        m->sw = calloc((sap > ex ? sap : ex) + 1, sizeof(double));
        m->ipiv = calloc(nx + nu * (CS_MAXDEG + 1) + 1, sizeof(int));
        if (!m->sw || !m->ipiv) { cs_unit_destroy(u); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    }
    if (cs_stepper_create(model, opts, &m->st, err)) { cs_unit_destroy(u); return err->code; }
    m->opts = *opts;
    u->feedthrough = model->feedthrough;
    u->linear = cs_model_linear(model) != NULL; /* LTI: dy/du = D */
    u->ignores_restart = !cs_stepper_reads_restart(m->st);
    *out = u;
    return CS_OK;
}

/* --- Model unit with step integrals (moshagen §2.6; models/quadrature.h) -------------------------------------
 * The stepper integrates the augmented model [x; q]' = [f; g]; the unit shows only x (nx = the model's nx) and
 * returns Q = q(T+H) - q(T) of its last do_step through the step_integral op. q is never reset (a reset would
 * break the history of an integrator that continues across macro points); the difference of the running
 * integral loses about eps * T / H relative accuracy, far below any integrator tolerance. */
typedef struct quad_unit {
    model_unit mu;      /* first: the model unit's ops read content as a model_unit */
    cs_model *aug;      /* owned */
    double *xa;         /* nx + ny: set_state */
    double *Q;          /* ny: the last step's integral */
    int nx, ny;
} quad_unit;

static int qu_do_step(cs_unit *u, double T, double H, const cs_input *in, int restart, cs_err *err) {
    quad_unit *q = u->content;
    cs_stepper *st = q->mu.st;
    for (int j = 0; j < q->ny; j++) q->Q[j] = st->x[q->nx + j];
    int rc = cs_stepper_step(st, T, H, in, restart, err);
    for (int j = 0; j < q->ny; j++) q->Q[j] = rc ? 0.0 : st->x[q->nx + j] - q->Q[j];
    return rc;
}

static int qu_set_state(cs_unit *u, double t, const double *x, cs_err *err) {
    quad_unit *q = u->content;
    memset(q->xa, 0, sizeof(double) * ((size_t)q->nx + q->ny));
    if (x) memcpy(q->xa, x, sizeof(double) * q->nx);
    memset(q->Q, 0, sizeof(double) * q->ny);
    cs_stepper_set_state(q->mu.st, t, q->xa);
    return CS_OK;
}

static int qu_step_integral(const cs_unit *u, double *Q) {
    const quad_unit *q = u->content;
    memcpy(Q, q->Q, sizeof(double) * q->ny);
    return CS_OK;
}

static void qu_destroy(cs_unit *u) {
    quad_unit *q = u->content;
    if (!q) return;
    cs_stepper_destroy(q->mu.st);
    cs_model_destroy(q->aug);
    free(q->mu.work); free(q->xa); free(q->Q);
    free(q);
    u->content = NULL;
}

static const cs_unit_ops QUAD_UNIT_OPS = {
    .do_step = qu_do_step,
    .get_outputs = mu_get_outputs,
    .snapshot_create = mu_snapshot_create,
    .save_state = mu_save,
    .restore_state = mu_restore,
    .snapshot_destroy = mu_snapshot_destroy,
    .set_state = qu_set_state,
    .output_jacobian = mu_output_jacobian,
    .output_rates = mu_output_rates,
    .states = mu_states,
    .get_stats = mu_stats,
    .destroy = qu_destroy,
    .step_integral = qu_step_integral,
};

int cs_model_unit_create_quadrature(cs_model *model, const cs_solver_opts *opts, cs_unit **out, cs_err *err) {
    cs_unit *u = cs_unit_new_empty(&QUAD_UNIT_OPS, model->nx, model->nu, model->ny, model->name, err);
    if (!u) return err->code;
    quad_unit *q = calloc(1, sizeof *q);
    if (!q) { cs_unit_destroy(u); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    u->content = q;
    q->nx = model->nx;
    q->ny = model->ny;
    q->mu.work = calloc((size_t)model->nx + 3 * (size_t)model->ny + 2 * (size_t)model->nu + 1, sizeof(double));
    q->xa = calloc((size_t)model->nx + model->ny + 1, sizeof(double));
    q->Q = calloc((size_t)model->ny + 1, sizeof(double));
    if (!q->mu.work || !q->xa || !q->Q) { cs_unit_destroy(u); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    if (cs_quadrature_model_create(model, &q->aug, err)) { cs_unit_destroy(u); return err->code; }
    if (cs_stepper_create(q->aug, opts, &q->mu.st, err)) { cs_unit_destroy(u); return err->code; }
    u->feedthrough = model->feedthrough;
    u->linear = cs_model_linear(model) != NULL;
    u->ignores_restart = !cs_stepper_reads_restart(q->mu.st);
    *out = u;
    return CS_OK;
}
