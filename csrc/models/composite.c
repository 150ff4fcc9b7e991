#include "models/composite.h"

#include <stdlib.h>
#include <string.h>

typedef struct composite_ctx {
    cs_network *net;
    double *u, *y; /* nu, ny scratch */
    cs_model *self;
} composite_ctx;

static int composite_rhs(void *c, double t, const double *x, const double *unused, double *xdot) {
    composite_ctx *k = c;
    cs_network *net = k->net;
    cs_err err = {0};
    if (cs_network_consistent(net, t, x, k->u, k->y, k->u, &err)) {
        memcpy(k->self->msg, err.msg, sizeof k->self->msg);
        return -1;
    }
    for (int i = 0; i < net->nsub; i++)
        if (cs_model_rhs(net->models[i], t, x + net->xoff[i], k->u + net->uoff[i], xdot + net->xoff[i], &err)) {
            memcpy(k->self->msg, err.msg, sizeof k->self->msg);
            return -1;
        }
    return 0;
}

static int composite_output(void *c, double t, const double *x, const double *unused, double *y) {
    composite_ctx *k = c;
    cs_err err = {0};
    if (cs_network_consistent(k->net, t, x, k->u, y, k->u, &err)) {
        memcpy(k->self->msg, err.msg, sizeof k->self->msg);
        return -1;
    }
    return 0;
}

static void composite_free(void *c) {
    composite_ctx *k = c;
    if (!k) return;
    free(k->u);
    free(k->y);
    free(k);
}

cs_model *cs_composite_new(cs_network *net, const char *name, cs_err *err) {
    cs_model *m = cs_model_new(net->nx, 0, net->ny, name);
    composite_ctx *k = calloc(1, sizeof *k);
    if (k) {
        k->u = calloc((size_t)net->nu + 1, sizeof(double));
        k->y = calloc((size_t)net->ny + 1, sizeof(double));
    }
    if (!m || !k || !k->u || !k->y) {
        free(m);
        composite_free(k);
        cs_fail(err, CS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    k->net = net;
    k->self = m;
    m->ctx = k;
    m->rhs = composite_rhs;
    m->output = composite_output;
    m->destroy_ctx = composite_free;
    return m;
}
