/* Jacobi scheme: all units step over [T_N, T_{N+1}] with extrapolated inputs, independently of each other. */
#include <stdlib.h>

#include "schemes/scheme.h"

static int jacobi_step(cs_scheme *s, cs_step_ctx *x, double T, double H, cs_err *err) {
    for (int i = 0; i < x->nsub; i++) CS_TRY(cs_scheme_step_unit(x, i, T, H, err));
    return CS_OK;
}

static const cs_scheme_ops JACOBI_OPS = {.macro_step = jacobi_step};

int cs_jacobi_create(cs_scheme **out, cs_err *err) {
    cs_scheme *s = calloc(1, sizeof *s);
    if (!s) return cs_fail(err, CS_ERR_NOMEM, "scheme: out of memory");
    s->ops = &JACOBI_OPS;
    s->kind = CS_SCHEME_JACOBI;
    *out = s;
    return CS_OK;
}
