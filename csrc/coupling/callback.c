/* The callback coupling: see coupling/callback.h. */
#include "coupling/callback.h"

#include <stdlib.h>
#include <string.h>

#define NC (CS_MAXDEG + 1)

typedef struct callback {
    const cs_network *net;
    cs_callback_spec spec;
    cs_input *in;          /* per unit, filled by the callbacks */
    double *incoef;
    int failed;            /* a save/restore callback failed: its error, reported by the next predict/accept */
    cs_err pending;
} callback;

typedef struct callback_snapshot {
    const cs_callback_ops *ops;
    void *token;
} callback_snapshot;

/* The degree a callback wrote must fit the coefficient rows. */
static int check_inputs(const callback *b, cs_err *err) {
    for (int i = 0; i < b->net->nsub; i++)
        if (b->in[i].deg < 0 || b->in[i].deg > CS_MAXDEG)
            return cs_fail(err, CS_ERR_ARG, "coupling: unit %d's input has degree %d (0..%d)", i, b->in[i].deg,
                           CS_MAXDEG);
    return CS_OK;
}

static int take_pending(callback *b, cs_err *err) {
    if (!b->failed) return CS_OK;
    b->failed = 0;
    if (err) *err = b->pending;
    return b->pending.code ? b->pending.code : CS_ERR_CALLBACK;
}

static int cb_predict(cs_coupling *c, double T, double H, double Hnom, cs_err *err) {
    callback *b = c->content;
    CS_TRY(take_pending(b, err));
    for (int i = 0; i < b->net->nsub; i++) { b->in[i].T = T; b->in[i].H = H; }
    CS_TRY(b->spec.ops->predict(b->spec.user, b->net, T, H, Hnom, b->in, err));
    return check_inputs(b, err);
}

static const cs_input *cb_input(cs_coupling *c, int i) { return &((callback *)c->content)->in[i]; }

static int cb_on_unit_done(cs_coupling *c, int i, double T1, const double *y_i, const double *ydot_i, cs_err *err) {
    callback *b = c->content;
    if (!b->spec.ops->on_unit_done) return CS_OK;
    int changed = 0;
    CS_TRY(b->spec.ops->on_unit_done(b->spec.user, b->net, i, T1, y_i, b->in, &changed, err));
    return changed ? check_inputs(b, err) : CS_OK;
}

static int cb_accept(cs_coupling *c, double T1, const double *y, const double *ydot, cs_err *err) {
    callback *b = c->content;
    CS_TRY(take_pending(b, err));
    return b->spec.ops->accept(b->spec.user, b->net, T1, y, err);
}

static void *cb_snapshot_create(cs_coupling *c) {
    callback *b = c->content;
    callback_snapshot *s = calloc(1, sizeof *s);
    if (s) s->ops = b->spec.ops;
    return s;
}

static void cb_save(cs_coupling *c, void *snap) {
    callback *b = c->content;
    callback_snapshot *s = snap;
    void *token = NULL;
    if (b->spec.ops->save(b->spec.user, &token, &b->pending)) { b->failed = 1; return; }
    if (s->token) s->ops->release(s->token);
    s->token = token;
}

static void cb_restore(cs_coupling *c, const void *snap) {
    callback *b = c->content;
    const callback_snapshot *s = snap;
    if (!s->token) {
        b->failed = 1;
        cs_fail(&b->pending, CS_ERR_ARG, "coupling: restore before any save");
        return;
    }
    if (b->spec.ops->restore(b->spec.user, s->token, &b->pending)) b->failed = 1;
}

static void cb_snapshot_destroy(void *snap) {
    callback_snapshot *s = snap;
    if (!s) return;
    if (s->token) s->ops->release(s->token);
    free(s);
}

static void cb_destroy(cs_coupling *c) {
    callback *b = c->content;
    if (!b) return;
    if (b->spec.ops && b->spec.ops->destroy) b->spec.ops->destroy(b->spec.user);
    free(b->in); free(b->incoef);
    free(b);
    c->content = NULL;
}

static int cb_continuity(const cs_coupling *c, int i) { return CS_INPUT_JUMPS; }

static const cs_coupling_ops CALLBACK_OPS = {
    .predict = cb_predict,
    .input = cb_input,
    .on_unit_done = cb_on_unit_done,
    .accept = cb_accept,
    .continuity = cb_continuity,
    .snapshot_create = cb_snapshot_create,
    .save = cb_save,
    .restore = cb_restore,
    .snapshot_destroy = cb_snapshot_destroy,
    .destroy = cb_destroy,
};

int cs_callback_coupling_create(const cs_network *net, const cs_callback_spec *spec, cs_coupling **out, cs_err *err) {
    *out = NULL;
    const cs_callback_ops *ops = spec ? spec->ops : NULL;
    if (!ops || !ops->predict || !ops->accept || !ops->save || !ops->restore || !ops->release)
        return cs_fail(err, CS_ERR_ARG, "coupling: a callback coupling needs its callbacks (set by the binding)");
    cs_coupling *c = calloc(1, sizeof *c);
    callback *b = calloc(1, sizeof *b);
    if (!c || !b) { free(c); free(b); return cs_fail(err, CS_ERR_NOMEM, "coupling: out of memory"); }
    c->ops = &CALLBACK_OPS;
    c->kind = CS_CPL_KIND_CALLBACK;
    c->content = b;
    b->net = net;
    b->in = calloc((size_t)net->nsub + 1, sizeof(cs_input));
    b->incoef = calloc((size_t)net->nu * NC + NC, sizeof(double));
    if (!b->in || !b->incoef) {
        cs_coupling_destroy(c);   /* spec not yet owned: its user stays with the caller */
        return cs_fail(err, CS_ERR_NOMEM, "coupling: out of memory");
    }
    double *coef = b->incoef;
    for (int i = 0; i < net->nsub; i++) {
        b->in[i].nu = net->uoff[i + 1] - net->uoff[i];
        b->in[i].c = coef;
        coef += (size_t)NC * b->in[i].nu;
    }
    b->spec = *spec;
    *out = c;
    return CS_OK;
}

/* ---- the kind (master/registry.c) ---- */

static int callback_create(const void *spec, const cs_coupling_env *e, cs_coupling **out, cs_err *err) {
    return cs_callback_coupling_create(e->net, spec, out, err);
}

const cs_kind cs_coupling_callback_kind = {"callback", NULL, 0, sizeof(cs_callback_spec), NULL,
                                           {.coupling = callback_create}, NULL};
