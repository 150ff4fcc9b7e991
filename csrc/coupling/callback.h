/* A coupling whose ops call a table of callbacks (coupling/coupling.h's ops in a data-oriented form): the slow path
 * through which couplings written in Python reach the engine (py/pycoupling.c fills the table; this layer knows
 * nothing of Python). Its spec has no parameters a dict can set: the binding sets `ops` and `user` after parsing,
 * and a spec without them is refused at creation.
 *
 * The callbacks, all returning CS_OK or an error with its message in err:
 *   predict(user, net, T, H, Hnom, in)   fill the input polynomial in[i] (deg, c) of every unit for [T, T + H]
 *   on_unit_done(user, net, i, T1, y_i, in, *changed)   optional (NULL: nothing is interpolated): unit i reached
 *                                        T1; may rewrite in[] of the units stepped later (*changed = 1)
 *   accept(user, net, T1, y)             the accepted consistent outputs (first call: the initial outputs at t0)
 *   save(user, &token)                   the coupling's state as a new token (owned by the snapshot)
 *   restore(user, token)                 go back to a saved state
 *   release(token)                       free a token (no user: snapshots are destroyed without their coupling)
 *   destroy(user)                        optional, when the coupling is destroyed
 * save and restore report errors too: the coupling keeps the first one and fails its next predict or accept. */
#ifndef COSIM_CALLBACK_COUPLING_H
#define COSIM_CALLBACK_COUPLING_H

#include "kind.h"
#include "coupling/coupling.h"
#include "network/network.h"

typedef struct cs_callback_ops {
    int (*predict)(void *user, const cs_network *net, double T, double H, double Hnom, cs_input *in, cs_err *err);
    int (*on_unit_done)(void *user, const cs_network *net, int i, double T1, const double *y_i, cs_input *in,
                        int *changed, cs_err *err);
    int (*accept)(void *user, const cs_network *net, double T1, const double *y, cs_err *err);
    int (*save)(void *user, void **token, cs_err *err);
    int (*restore)(void *user, const void *token, cs_err *err);
    void (*release)(void *token);
    void (*destroy)(void *user);
} cs_callback_ops;

typedef struct cs_callback_spec {
    const cs_callback_ops *ops;   /* set by the binding, not by a parameter */
    void *user;
} cs_callback_spec;

int cs_callback_coupling_create(const cs_network *net, const cs_callback_spec *spec, cs_coupling **out, cs_err *err);

/* The kind (master/registry.c). */
extern const cs_kind cs_coupling_callback_kind;

#endif
