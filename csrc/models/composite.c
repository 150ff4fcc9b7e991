#include "models/composite.h"

#include <stdlib.h>
#include <string.h>

typedef struct composite_ctx {
    int nsub;
    cs_model **models;
    cs_network *net;
    int *xoff;
    const double *x;   /* states the network's output callbacks read */
    double *u, *y, *work;
    cs_model *self;
} composite_ctx;

static int sub_eval(void *c, int i, double t, const double *u_i, double *y_i, cs_err *err) {
    composite_ctx *k = c;
    return cs_model_output(k->models[i], t, k->x + k->xoff[i], u_i, y_i, err);
}

static int sub_jac(void *c, int i, double t, const double *u_i, double *G, cs_err *err) {
    composite_ctx *k = c;
    return cs_model_output_du(k->models[i], t, k->x + k->xoff[i], u_i, G, k->work, err);
}

static int solve(composite_ctx *k, double t, const double *x, double *y) {
    cs_err err = {0};
    cs_outputs g = {k, sub_eval, sub_jac};
    k->x = x;
    if (cs_network_consistent(k->net, &g, t, k->u, y, k->u, &err)) {
        memcpy(k->self->msg, err.msg, sizeof k->self->msg);
        return -1;
    }
    return 0;
}

static int composite_rhs(void *c, double t, const double *x, const double *unused, double *xdot) {
    composite_ctx *k = c;
    if (solve(k, t, x, k->y)) return -1;
    for (int i = 0; i < k->nsub; i++) {
        cs_err err = {0};
        if (cs_model_rhs(k->models[i], t, x + k->xoff[i], k->u + k->net->uoff[i], xdot + k->xoff[i], &err)) {
            memcpy(k->self->msg, err.msg, sizeof k->self->msg);
            return -1;
        }
    }
    return 0;
}

static int composite_output(void *c, double t, const double *x, const double *unused, double *y) {
    return solve(c, t, x, y);
}

static void composite_free(void *c) {
    composite_ctx *k = c;
    if (!k) return;
    free(k->u); free(k->y); free(k->xoff); free(k->work);
    free(k);
}

static const cs_model_ops COMPOSITE_OPS = {CS_MODEL_GENERIC, composite_rhs, composite_output, NULL, NULL, NULL,
                                           composite_free};

int cs_composite_create(int nsub, cs_model **models, cs_network *net, const char *name, cs_model **out, cs_err *err) {
    int nx = 0, maxw = 1;
    for (int i = 0; i < nsub; i++) {
        nx += models[i]->nx;
        if (models[i]->nu + 2 * models[i]->ny > maxw) maxw = models[i]->nu + 2 * models[i]->ny;
    }
    cs_model *m = cs_model_new_empty(nx, 0, net->ny, name);
    composite_ctx *k = calloc(1, sizeof *k);
    if (k) {
        k->u = calloc((size_t)net->nu + 1, sizeof(double));
        k->y = calloc((size_t)net->ny + 1, sizeof(double));
        k->xoff = calloc((size_t)nsub + 1, sizeof(int));
        k->work = calloc((size_t)maxw + 1, sizeof(double));
    }
    if (!m || !k || !k->u || !k->y || !k->xoff || !k->work) {
        cs_model_free_empty(m);
        composite_free(k);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < nsub; i++) k->xoff[i + 1] = k->xoff[i] + models[i]->nx;
    k->nsub = nsub;
    k->models = models;
    k->net = net;
    k->self = m;
    cs_model_attach(m, &COMPOSITE_OPS, k);
    *out = m;
    return CS_OK;
}
