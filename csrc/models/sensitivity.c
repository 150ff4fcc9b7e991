/* Forward-sensitivity model: see models/sensitivity.h. */
#include "models/sensitivity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sens_ctx {
    cs_model *inner, *self;
    double T, H;
    int deg, central;
    const double *ell;       /* deg + 1 coefficients, the caller's (valid during the integration) */
    double *sigma;           /* nu */
    double *xp, *up, *fp, *fm; /* nx, nu, nx, nx: the perturbed points of the difference quotients */
    double *fx;              /* nx x nx: f_x for the Newton matrix (the rhs borrows its first nx for a quotient) */
} sens_ctx;

static int keep(sens_ctx *q, int rc) {
    if (rc && q->inner->msg[0]) snprintf(q->self->msg, sizeof q->self->msg, "%s", q->inner->msg);
    return rc;
}

/* (f(x + h dx, u + h du) - f(x, u)) / h, or the central quotient; out: nx values. */
static int quotient(sens_ctx *q, double t, const double *x, const double *u, const double *f0, const double *dx,
                    int a, double du, double h, double *out) {
    cs_model *m = q->inner;
    const int nx = m->nx;
    int rc = CS_OK;
    for (int sg = 0; sg <= q->central && !rc; sg++) {
        double e = sg ? -h : h;
        for (int i = 0; i < nx; i++) q->xp[i] = dx ? x[i] + e * dx[i] : x[i];
        if (a >= 0) q->up[a] = u[a] + e * du;
        m->nrhs++;
        rc = m->ops->rhs(m->content, t, q->xp, q->up, sg ? q->fm : q->fp);
        if (a >= 0) q->up[a] = u[a];
    }
    if (rc) return rc;
    for (int i = 0; i < nx; i++) out[i] = q->central ? (q->fp[i] - q->fm[i]) / (2.0 * h) : (q->fp[i] - f0[i]) / h;
    return CS_OK;
}

/* f_x Z_a + ua f_u e_a: two difference quotients, along Z_a in x and along e_a in u, each with a step sized to its
 * own variable (one joint step would be too small for one of them, and its round-off would be amplified). Central
 * for adaptive integrators (noise ~ eps^(2/3), far below their error test, where a one-sided quotient's sqrt(eps)
 * would upset it), one-sided for fixed-step integrators (half the calls). */
static int sens_rhs(void *c, double t, const double *x, const double *u, double *xdot) {
    sens_ctx *q = c;
    cs_model *m = q->inner;
    const int nx = m->nx, nu = m->nu;
    m->nrhs++;
    int rc = m->ops->rhs(m->content, t, x, u, xdot);
    if (rc) return keep(q, rc);
    const double s = (t - q->T) / q->H;
    const double eps = q->central ? 6.0554544523933395e-06 : 1.4901161193847656e-08; /* cbrt, sqrt(2^-52) */
    double l = 0.0;
    for (int k = q->deg; k >= 0; k--) l = l * s + q->ell[k];
    double xs = 1.0;
    for (int i = 0; i < nx; i++) xs = fmax(xs, fabs(x[i]));
    memcpy(q->up, u, sizeof(double) * nu);
    for (int a = 0; a < nu; a++) {
        const double *Z = x + (size_t)nx * (a + 1);
        double *Zdot = xdot + (size_t)nx * (a + 1);
        double zn = 0.0, ua = l * q->sigma[a];
        for (int i = 0; i < nx; i++) zn = fmax(zn, fabs(Z[i]));
        memset(Zdot, 0, sizeof(double) * nx);
        if (ua != 0.0) { /* ua f_u e_a */
            rc = quotient(q, t, x, u, xdot, NULL, a, 1.0, eps * fmax(1.0, fabs(u[a])), q->fx);
            if (rc) return keep(q, rc);
            for (int i = 0; i < nx; i++) Zdot[i] = ua * q->fx[i];
        }
        if (zn > 0.0) { /* f_x Z_a */
            rc = quotient(q, t, x, u, xdot, Z, -1, 0.0, eps * xs / zn, q->fx);
            if (rc) return keep(q, rc);
            for (int i = 0; i < nx; i++) Zdot[i] += q->fx[i];
        }
    }
    return CS_OK;
}

/* Newton matrix of an implicit integrator: blockdiag(f_x, ..., f_x), without the f_xx Z blocks below the diagonal
 * (a modified Newton iteration, the matrix of CVODES' staggered sensitivity corrector). f_x: the inner model's
 * Jacobian, else forward differences. */
static int sens_jac(void *c, double t, const double *x, const double *u, double *J) {
    sens_ctx *q = c;
    cs_model *m = q->inner;
    const int nx = m->nx, na = q->self->nx;
    int rc;
    if (m->ops->jac) {
        rc = m->ops->jac(m->content, t, x, u, q->fx);
    } else {
        m->nrhs++;
        rc = m->ops->rhs(m->content, t, x, u, q->fm);
        memcpy(q->xp, x, sizeof(double) * nx);
        for (int j = 0; j < nx && !rc; j++) {
            double d = 1.4901161193847656e-08 * fmax(1.0, fabs(x[j]));
            q->xp[j] = x[j] + d;
            m->nrhs++;
            rc = m->ops->rhs(m->content, t, q->xp, u, q->fp);
            q->xp[j] = x[j];
            for (int i = 0; i < nx; i++) q->fx[(size_t)i * nx + j] = (q->fp[i] - q->fm[i]) / d;
        }
    }
    if (rc) return keep(q, rc);
    memset(J, 0, sizeof(double) * (size_t)na * na);
    for (int b = 0; b * nx < na; b++)
        for (int i = 0; i < nx; i++)
            memcpy(J + (size_t)(b * nx + i) * na + (size_t)b * nx, q->fx + (size_t)i * nx, sizeof(double) * nx);
    return CS_OK;
}

static int sens_output(void *c, double t, const double *x, const double *u, double *y) {
    sens_ctx *q = c;
    q->inner->nout++;
    return keep(q, q->inner->ops->output(q->inner->content, t, x, u, y));
}

static void sens_free(void *c) {
    sens_ctx *q = c;
    if (!q) return;
    free(q->sigma);
    free(q);
}

static const cs_model_ops SENS_OPS = {CS_MODEL_GENERIC, sens_rhs, sens_output, NULL, sens_jac, NULL, sens_free};

int cs_sensitivity_model_create(cs_model *inner, int central, cs_model **out, cs_err *err) {
    const int nx = inner->nx, nu = inner->nu;
    cs_model *m = cs_model_new_empty(nx * (1 + nu), nu, inner->ny, inner->name);
    sens_ctx *q = calloc(1, sizeof *q);
    double *w = calloc(2 * (size_t)nu + 3 * (size_t)nx + (size_t)nx * nx + 1, sizeof(double));
    if (!m || !q || !w) {
        cs_model_free_empty(m);
        free(q);
        free(w);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory (sensitivity model)");
    }
    q->inner = inner;
    q->self = m;
    q->sigma = w;
    q->up = w + nu;
    q->xp = q->up + nu;
    q->fp = q->xp + nx;
    q->fm = q->fp + nx;
    q->fx = q->fm + nx;
    q->H = 1.0;
    q->central = central != 0;
    for (int a = 0; a < nu; a++) q->sigma[a] = 1.0;
    cs_model_attach(m, &SENS_OPS, q);
    m->feedthrough = inner->feedthrough;
    *out = m;
    return CS_OK;
}

void cs_sensitivity_model_window(cs_model *sens, double T, double H, const double *ell, int deg, const double *sigma) {
    sens_ctx *q = sens->content;
    q->T = T;
    q->H = H;
    q->deg = deg;
    q->ell = ell;
    memcpy(q->sigma, sigma, sizeof(double) * (size_t)sens->nu);
}
