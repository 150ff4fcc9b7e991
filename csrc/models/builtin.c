/* The table of built-in models. */
#include "models/builtin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const cs_builtin_model *const builtins[] = {
    &cs_model_dmo_force_impulse,
    &cs_model_dmo_base_nonlinear,
    &cs_model_chain_segment,
    &cs_model_chain_element,
    &cs_model_kraft_mass,
    &cs_model_kraft_element,
};

int cs_builtin_create(const char *kind, int nparams, const double *params, const char *name, cs_model **out,
                      cs_err *err) {
    for (int i = 0; i < nparams; i++)
        if (!isfinite(params[i])) return cs_fail(err, CS_ERR_ARG, "%s: parameter %d is not finite", kind, i);
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
        if (strcmp(kind, builtins[i]->name) == 0) return builtins[i]->create(nparams, params, name, out, err);
    return cs_fail(err, CS_ERR_ARG, "unknown built-in model %s", kind);
}

int cs_builtin_params_model(const cs_model_ops *ops, int nx, int nu, int ny, int feedthrough, size_t size, int nparams,
                            const double *params, const char *name, cs_model **out, cs_err *err) {
    void *c = calloc(1, size);
    cs_model *m = cs_model_new_empty(nx, nu, ny, name);
    if (!c || !m) { free(c); cs_model_free_empty(m); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    memcpy(c, params, sizeof(double) * (size_t)nparams);
    cs_model_attach(m, ops, c);
    m->feedthrough = feedthrough;
    *out = m;
    return CS_OK;
}
