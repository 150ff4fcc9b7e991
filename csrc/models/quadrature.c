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
    int rc = m->ops->rhs(m->content, t, x, u, xdot);
    if (rc) return keep(q, rc);
    m->nout++;
    return keep(q, m->ops->output(m->content, t, x, u, xdot + m->nx));
}

static int quad_output(void *c, double t, const double *x, const double *u, double *y) {
    quad_ctx *q = c;
    q->inner->nout++;
    return keep(q, q->inner->ops->output(q->inner->content, t, x, u, y));
}

static int quad_output_dt(void *c, double t, const double *x, const double *u, const double *udot, double *ydot) {
    quad_ctx *q = c;
    return keep(q, q->inner->ops->output_dt(q->inner->content, t, x, u, udot, ydot));
}

static void quad_free(void *c) {
    quad_ctx *q = c;
    if (!q) return;
    free(q);
}

/* Two tables: output_dt is optional per inner model. */
static const cs_model_ops QUAD_OPS = {CS_MODEL_GENERIC, quad_rhs, quad_output, NULL, NULL, NULL, quad_free};
static const cs_model_ops QUAD_DT_OPS = {CS_MODEL_GENERIC, quad_rhs, quad_output, quad_output_dt, NULL, NULL,
                                         quad_free};

int cs_quadrature_model_create(cs_model *inner, cs_model **out, cs_err *err) {
    const int nx = inner->nx, nu = inner->nu, ny = inner->ny, na = nx + ny;
    const cs_linear_data *lin = cs_model_linear(inner);
    if (lin) {
        /* LTI: augmented matrices, so that the Exact integrator integrates q exactly */
        size_t n = (size_t)na;
        double *A = calloc(n * n + n * (size_t)nu + (size_t)ny * n + 1, sizeof(double));
        if (!A) return cs_fail(err, CS_ERR_NOMEM, "out of memory");
        double *B = A + n * n, *C = B + n * (size_t)nu;
        for (int i = 0; i < nx; i++) {
            memcpy(A + (size_t)i * na, lin->A + (size_t)i * nx, sizeof(double) * nx);
            memcpy(B + (size_t)i * nu, lin->B + (size_t)i * nu, sizeof(double) * nu);
        }
        for (int j = 0; j < ny; j++) {
            memcpy(A + (size_t)(nx + j) * na, lin->C + (size_t)j * nx, sizeof(double) * nx);
            memcpy(B + (size_t)(nx + j) * nu, lin->D + (size_t)j * nu, sizeof(double) * nu);
            memcpy(C + (size_t)j * na, lin->C + (size_t)j * nx, sizeof(double) * nx);
        }
        cs_model *m = NULL;
        int rc = cs_lti_create(na, nu, ny, A, B, C, lin->D, inner->name, &m, err);
        free(A);
        if (rc) return rc;
        m->feedthrough = inner->feedthrough;
        *out = m;
        return CS_OK;
    }
    cs_model *m = cs_model_new_empty(na, nu, ny, inner->name);
    quad_ctx *q = calloc(1, sizeof *q);
    if (!m || !q) {
        cs_model_free_empty(m);
        quad_free(q);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    q->inner = inner;
    q->self = m;
    cs_model_attach(m, cs_model_has_output_dt(inner) ? &QUAD_DT_OPS : &QUAD_OPS, q);
    m->feedthrough = inner->feedthrough;
    *out = m;
    return CS_OK;
}
