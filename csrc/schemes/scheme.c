#include "schemes/scheme.h"

#include <stdlib.h>

void cs_scheme_destroy(cs_scheme *s) {
    if (!s) return;
    if (s->ops && s->ops->destroy) s->ops->destroy(s);
    free(s);
}

void cs_scheme_step_failed(const cs_step_ctx *x, double T, double H, cs_err *err) {
    cs_err_prefix(err, "macro step %ld [%.10g, %.10g]: ", x->step, T, T + H);
}
