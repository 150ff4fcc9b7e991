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

static const cs_model_ops CFUNC_OPS = {CS_MODEL_GENERIC, cf_rhs, cf_output, NULL, NULL, NULL, free};

int cs_cfunc_create(int nx, int nu, int ny, int feedthrough, cs_c_rhs_fn rhs, cs_c_output_fn output, void *user_data,
                    const char *name, cs_model **out, cs_err *err) {
    if (!rhs || !output) return cs_fail(err, CS_ERR_ARG, "CModel: NULL function pointer");
    cs_model *m = cs_model_new_empty(nx, nu, ny, name);
    cfunc_ctx *c = calloc(1, sizeof *c);
    if (!m || !c) { cs_model_free_empty(m); free(c); return cs_fail(err, CS_ERR_NOMEM, "CModel: out of memory"); }
    c->rhs = rhs; c->output = output; c->user = user_data;
    cs_model_attach(m, &CFUNC_OPS, c);
    m->feedthrough = feedthrough;
    *out = m;
    return CS_OK;
}
