#include "coupling/wrap.h"

int cs_wrap_predict(cs_coupling *c, double T, double H, double Hnom, cs_err *err) {
    return cs_coupling_predict(cs_wrap_inner(c), T, H, Hnom, err);
}

int cs_wrap_on_unit_done(cs_coupling *c, int i, double T1, const double *y_i, const double *ydot_i, cs_err *err) {
    return cs_coupling_on_unit_done(cs_wrap_inner(c), i, T1, y_i, ydot_i, err);
}

int cs_wrap_set_history_depth(cs_coupling *c, int depth, cs_err *err) {
    return cs_coupling_set_history_depth(cs_wrap_inner(c), depth, err);
}

void cs_wrap_init(cs_coupling *c, const cs_coupling_ops *ops, void *content, const cs_coupling *inner) {
    c->ops = ops;
    c->content = content;
    c->needs_rates = inner->needs_rates;
    c->rates_lagged = inner->rates_lagged;
}

int cs_wrap_snapshot_open(cs_wrap_snapshot *h, cs_coupling *c) {
    cs_coupling *inner = cs_wrap_inner(c);
    h->inner = cs_coupling_snapshot_create(inner);
    h->inner_destroy = inner->ops->snapshot_destroy;
    return h->inner != NULL;
}

void cs_wrap_snapshot_close(cs_wrap_snapshot *h) {
    if (h->inner) h->inner_destroy(h->inner);
    h->inner = NULL;
}
