/* Linear time-invariant model x' = A x + B u, y = C x + D u. */
#include <stdlib.h>
#include <string.h>

#include "linalg/dense.h"
#include "models/model.h"

typedef struct lti_ctx {
    int nx, nu, ny;
    double *A, *B, *C, *D; /* one allocation */
} lti_ctx;

static int lti_rhs(void *c, double t, const double *x, const double *u, double *xdot) {
    lti_ctx *m = c;
    cs_affine(m->nx, m->nx, m->nu, m->A, x, m->B, u, xdot);
    return 0;
}

static int lti_output(void *c, double t, const double *x, const double *u, double *y) {
    lti_ctx *m = c;
    cs_affine(m->ny, m->nx, m->nu, m->C, x, m->D, u, y);
    return 0;
}

/* y' = C (A x + B u) + D u' */
static int lti_output_dt(void *c, double t, const double *x, const double *u, const double *udot, double *ydot) {
    lti_ctx *m = c;
    double buf[256];
    double *f = m->nx <= 256 ? buf : malloc(sizeof(double) * m->nx);
    if (!f) return -1;
    lti_rhs(c, t, x, u, f);
    cs_matvec(m->ny, m->nx, m->C, f, ydot, 0);
    if (udot) cs_matvec(m->ny, m->nu, m->D, udot, ydot, 1);
    if (f != buf) free(f);
    return 0;
}

static int lti_jac(void *c, double t, const double *x, const double *u, double *J) {
    lti_ctx *m = c;
    memcpy(J, m->A, sizeof(double) * m->nx * m->nx);
    return 0;
}

static void lti_linear_data(const void *c, cs_linear_data *lin) {
    const lti_ctx *m = c;
    *lin = (cs_linear_data){m->A, m->B, m->C, m->D};
}

static void lti_free(void *c) {
    lti_ctx *m = c;
    if (!m) return;
    free(m->A);
    free(m);
}

static const cs_model_ops LTI_OPS = {CS_MODEL_LTI, lti_rhs, lti_output, lti_output_dt, lti_jac, lti_linear_data,
                                     lti_free};

int cs_lti_create(int nx, int nu, int ny, const double *A, const double *B, const double *C, const double *D,
                  const char *name, cs_model **out, cs_err *err) {
    if (nx < 0 || nu < 0 || ny < 0) return cs_fail(err, CS_ERR_ARG, "LTI: negative dimension");
    cs_model *m = cs_model_new_empty(nx, nu, ny, name);
    lti_ctx *c = calloc(1, sizeof *c);
    size_t n = (size_t)nx * nx + (size_t)nx * nu + (size_t)ny * nx + (size_t)ny * nu;
    double *mem = malloc(sizeof(double) * (n + 1));
    if (!m || !c || !mem) {
        cs_model_free_empty(m); free(c); free(mem);
        return cs_fail(err, CS_ERR_NOMEM, "LTI: out of memory");
    }
    c->nx = nx; c->nu = nu; c->ny = ny;
    c->A = mem; c->B = c->A + (size_t)nx * nx; c->C = c->B + (size_t)nx * nu; c->D = c->C + (size_t)ny * nx;
    memcpy(c->A, A, sizeof(double) * nx * nx);
    memcpy(c->B, B, sizeof(double) * nx * nu);
    memcpy(c->C, C, sizeof(double) * ny * nx);
    memcpy(c->D, D, sizeof(double) * ny * nu);
    int ft = 0;
    for (int i = 0; i < ny * nu; i++) ft |= c->D[i] != 0.0;
    cs_model_attach(m, &LTI_OPS, c);
    m->feedthrough = ft;
    *out = m;
    return CS_OK;
}
