/* Model from C function pointers (the fast path for user models: ctypes, cffi, numba cfunc). */
#include <stdlib.h>

#include "models/model.h"

typedef struct cfunc_ctx {
    cs_c_rhs_fn rhs;
    cs_c_output_fn output;
    void *user;
} cfunc_ctx;

static int cf_rhs(void *c, double t, const double *x, const double *u, double *xdot) {
    cfunc_ctx *m = c;
    return m->rhs(t, x, u, xdot, m->user);
}

static int cf_output(void *c, double t, const double *x, const double *u, double *y) {
    cfunc_ctx *m = c;
    return m->output(t, x, u, y, m->user);
}

cs_model *cs_cfunc_new(int nx, int nu, int ny, int feedthrough, cs_c_rhs_fn rhs, cs_c_output_fn output,
                       void *user_data, const char *name, cs_err *err) {
    if (!rhs || !output) { cs_fail(err, CS_ERR_ARG, "CModel: NULL function pointer"); return NULL; }
    cs_model *m = cs_model_new(nx, nu, ny, name);
    cfunc_ctx *c = calloc(1, sizeof *c);
    if (!m || !c) { free(m); free(c); cs_fail(err, CS_ERR_NOMEM, "CModel: out of memory"); return NULL; }
    c->rhs = rhs; c->output = output; c->user = user_data;
    m->ctx = c;
    m->feedthrough = feedthrough;
    m->rhs = cf_rhs;
    m->output = cf_output;
    m->destroy_ctx = free;
    return m;
}
