/* Quadrature-augmented model: see models/quadrature.h. */
#include "models/quadrature.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct quad_ctx {
    cs_model *inner, *self;
} quad_ctx;

static int keep(quad_ctx *q, int rc) {
    if (rc && q->inner->msg[0]) snprintf(q->self->msg, sizeof q->self->msg, "%s", q->inner->msg);
    return rc;
}

static int quad_rhs(void *c, double t, const double *x, const double *u, double *xdot) {
    quad_ctx *q = c;
    cs_model *m = q->inner;
    m->nrhs++;
    int rc = m->rhs(m->ctx, t, x, u, xdot);
    if (rc) return keep(q, rc);
    m->nout++;
    return keep(q, m->output(m->ctx, t, x, u, xdot + m->nx));
}

static int quad_output(void *c, double t, const double *x, const double *u, double *y) {
    quad_ctx *q = c;
    q->inner->nout++;
    return keep(q, q->inner->output(q->inner->ctx, t, x, u, y));
}

static int quad_output_dt(void *c, double t, const double *x, const double *u, const double *udot, double *ydot) {
    quad_ctx *q = c;
    return keep(q, q->inner->output_dt(q->inner->ctx, t, x, u, udot, ydot));
}

static void quad_free(void *c) {
    quad_ctx *q = c;
    if (!q) return;
    free(q);
}

cs_model *cs_quadrature_model_new(cs_model *inner, cs_err *err) {
    const int nx = inner->nx, nu = inner->nu, ny = inner->ny, na = nx + ny;
    if (inner->A) {
        /* LTI: augmented matrices, so that the Exact integrator integrates q exactly */
        size_t n = (size_t)na;
        double *A = calloc(n * n + n * (size_t)nu + (size_t)ny * n + 1, sizeof(double));
        if (!A) { cs_fail(err, CS_ERR_NOMEM, "out of memory"); return NULL; }
        double *B = A + n * n, *C = B + n * (size_t)nu;
        for (int i = 0; i < nx; i++) {
            memcpy(A + (size_t)i * na, inner->A + (size_t)i * nx, sizeof(double) * nx);
            memcpy(B + (size_t)i * nu, inner->B + (size_t)i * nu, sizeof(double) * nu);
        }
        for (int j = 0; j < ny; j++) {
            memcpy(A + (size_t)(nx + j) * na, inner->C + (size_t)j * nx, sizeof(double) * nx);
            memcpy(B + (size_t)(nx + j) * nu, inner->D + (size_t)j * nu, sizeof(double) * nu);
            memcpy(C + (size_t)j * na, inner->C + (size_t)j * nx, sizeof(double) * nx);
        }
        cs_model *m = cs_lti_new(na, nu, ny, A, B, C, inner->D, inner->name, err);
        free(A);
        if (m) m->feedthrough = inner->feedthrough;
        return m;
    }
    cs_model *m = cs_model_new(na, nu, ny, inner->name);
    quad_ctx *q = calloc(1, sizeof *q);
    if (!m || !q) {
        cs_model_free(m);
        quad_free(q);
        cs_fail(err, CS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    q->inner = inner;
    q->self = m;
    m->ctx = q;
    m->destroy_ctx = quad_free;
    m->rhs = quad_rhs;
    m->output = quad_output;
    m->output_dt = inner->output_dt ? quad_output_dt : NULL;
    m->feedthrough = inner->feedthrough;
    return m;
}
