/* A coupling that wraps another one (balance correction, input smoothing, NEPCE): the ops it only forwards to the
 * wrapped coupling, and the wrapped coupling's part of its snapshots, written once. A wrapper's content struct starts
 * with `cs_coupling *inner` (the wrapped coupling, owned); its snapshot struct starts with a cs_wrap_snapshot. */
#ifndef COSIM_WRAP_H
#define COSIM_WRAP_H

#include "coupling/coupling.h"

static inline cs_coupling *cs_wrap_inner(const cs_coupling *c) { return *(cs_coupling *const *)c->content; }

/* Forwarding ops (plug into the wrapper's ops table). */
int cs_wrap_predict(cs_coupling *c, double T, double H, double Hnom, cs_err *err);
int cs_wrap_on_unit_done(cs_coupling *c, int i, double T1, const double *y_i, const double *ydot_i, cs_err *err);
int cs_wrap_set_history_depth(cs_coupling *c, int depth, cs_err *err);
/* The wrapper sets needs_rates / rates_lagged as its inner coupling. */
void cs_wrap_init(cs_coupling *c, const cs_coupling_ops *ops, void *content, const cs_coupling *inner);

typedef struct cs_wrap_snapshot {
    void *inner;                   /* the wrapped coupling's snapshot */
    void (*inner_destroy)(void *); /* its destroy op (snapshot_destroy has no coupling) */
} cs_wrap_snapshot;

/* Creates the inner snapshot; 0 when out of memory. */
int cs_wrap_snapshot_open(cs_wrap_snapshot *h, cs_coupling *c);
void cs_wrap_snapshot_close(cs_wrap_snapshot *h);
static inline void cs_wrap_save(cs_coupling *c, cs_wrap_snapshot *h) { cs_coupling_save(cs_wrap_inner(c), h->inner); }
static inline void cs_wrap_restore(cs_coupling *c, const cs_wrap_snapshot *h) {
    cs_coupling_restore(cs_wrap_inner(c), h->inner);
}

#endif
