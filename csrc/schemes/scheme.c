#include "schemes/scheme.h"

#include <stdlib.h>
#include <string.h>

void cs_scheme_destroy(cs_scheme *s) {
    if (!s) return;
    if (s->ops && s->ops->destroy) s->ops->destroy(s);
    free(s);
}

void cs_scheme_step_failed(const cs_step_ctx *x, double T, double H, cs_err *err) {
    cs_err_prefix(err, "macro step %ld [%.10g, %.10g]: ", x->step, T, T + H);
}

typedef struct share_ctx { cs_unit **units; double t; } share_ctx;

static void states_pack(void *ctx, int i, double *dst) {
    const cs_unit *u = ((share_ctx *)ctx)->units[i];
    memcpy(dst, cs_unit_states(u), sizeof(double) * (size_t)u->nx);
}

static void states_unpack(void *ctx, int i, const double *src) {
    share_ctx *k = ctx;
    cs_err ignored;   /* the distributed run admits only units whose set_state cannot fail (master/setup.c) */
    cs_unit_set_state(k->units[i], k->t, src, &ignored);
}

int cs_scheme_share_states(cs_step_ctx *x, int i0, int i1, double t, int rc, cs_err *err) {
    if (!x->share) return rc;
    share_ctx k = {x->units, t};
    return cs_share_exchange(x->share, i0, i1, x->xoff, states_pack, states_unpack, &k, rc, err);
}
