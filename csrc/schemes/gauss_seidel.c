/* Gauss-Seidel scheme: units step one after another in a fixed order; after each, its outputs y*(T_{N+1}) (with its
 * own approximated input at T_{N+1}) are handed to the coupling, so that units stepped later interpolate them
 * (busch2016 eq. 13-14, kraft2021 §5). */
#include <stdlib.h>
#include <string.h>

#include "schemes/scheme.h"

typedef struct gs_content {
    int nsub;
    int *order;
} gs_content;

static int gs_step(cs_scheme *s, cs_step_ctx *x, double T, double H, cs_err *err) {
    gs_content *g = s->content;
    const cs_network *net = x->net;
    cs_coupling *cpl = x->coupling;
    double T1 = T + H;
    for (int p = 0; p < g->nsub; p++) {
        int i = g->order[p];
        int rcs = cs_scheme_step_unit(x, i, T, H, err);
        if (x->share) rcs = cs_scheme_share_states(x, i, i + 1, T1, rcs, err);   /* the owner hands it on */
        if (rcs) return rcs;
        cs_unit *u = x->units[i];
        double *ys = x->ystar + net->yoff[i], *yd = NULL;
        const double *ue = x->uend + net->uoff[i];
        int rc = cs_unit_get_outputs(u, T1, ue, ys, err);
        if (!rc && cpl->needs_rates) {
            yd = x->ydot + net->yoff[i];
            rc = cs_unit_output_rates(u, T1, ue, x->udot + net->uoff[i], yd, err);
        }
        if (!rc) rc = cs_coupling_on_unit_done(cpl, i, T1, ys, yd, err);
        if (rc) { cs_err_prefix(err, "macro step %ld [%.10g, %.10g]: ", x->step, T, T1); return rc; }
    }
    return CS_OK;
}

static void gs_destroy(cs_scheme *s) {
    gs_content *g = s->content;
    if (g) free(g->order);
    free(g);
    s->content = NULL;
}

static const cs_scheme_ops GS_OPS = {.macro_step = gs_step, .destroy = gs_destroy};

int cs_gauss_seidel_create(int nsub, const int *order, cs_scheme **out, cs_err *err) {
    *out = NULL;
    if (nsub < 1) return cs_fail(err, CS_ERR_ARG, "scheme: need at least one unit");
    cs_scheme *s = calloc(1, sizeof *s);
    gs_content *g = calloc(1, sizeof *g);
    unsigned char *seen = calloc((size_t)nsub, 1);
    if (g) g->order = malloc(sizeof(int) * (size_t)nsub);
    if (!s || !g || !seen || !g->order) {
        free(s); free(seen); if (g) free(g->order); free(g);
        return cs_fail(err, CS_ERR_NOMEM, "scheme: out of memory");
    }
    for (int p = 0; p < nsub; p++) {
        int i = order ? order[p] : p;
        if (i < 0 || i >= nsub || seen[i]++) {
            free(s); free(seen); free(g->order); free(g);
            return cs_fail(err, CS_ERR_ARG, "order: must be a permutation of the %d subsystems", nsub);
        }
        g->order[p] = i;
    }
    free(seen);
    g->nsub = nsub;
    s->ops = &GS_OPS;
    s->content = g;
    s->kind = CS_SCHEME_GAUSS_SEIDEL;
    *out = s;
    return CS_OK;
}

static int gauss_seidel_kind_create(const void *spec, const cs_scheme_env *e, cs_scheme **out, cs_err *err) {
    return cs_gauss_seidel_create(e->nunits, e->order, out, err);
}

const cs_kind cs_scheme_gauss_seidel_kind = {"gauss-seidel", NULL, 0, 0, NULL, {.scheme = gauss_seidel_kind_create},
                                             NULL};
