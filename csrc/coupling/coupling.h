/* Coupling: how the inputs of the units are formed on a macro step from the outputs exchanged at macro points
 * (DESIGN.md §2 "Coupling"). Generic object {content, ops}.
 *
 * Call order within one macro step [T_N, T_{N+1}] (the scheme drives it):
 *   predict(T_N, H, Hnom)             prepare the step (extrapolate every exchanged signal)
 *   input(i)                          the input function of unit i, given the units already done in this step
 *   on_unit_done(i, T_{N+1}, y*_i)    unit i reached T_{N+1} with outputs y*_i (Gauss-Seidel: units stepped later
 *                                     interpolate through them, busch2016 eq. 13)
 *   accept(T_{N+1}, y, y')            the step is accepted: commit the consistent outputs to the history
 * save/restore copy the history for rejected steps and iterations.
 * Required ops: predict, input, accept, snapshot_create/save/restore/snapshot_destroy. Optional: on_unit_done
 * (NULL: nothing is interpolated), continuity (NULL: inputs jump at T_N), set_degree, comparative,
 * set_history_depth, destroy. Callers use the cs_coupling_* functions below, which hold these defaults once. */
#ifndef COSIM_COUPLING_H
#define COSIM_COUPLING_H

#include "common.h"
#include "input/input.h"

typedef struct cs_coupling cs_coupling;

/* Smoothness of a unit's input across T_N: integrators may keep their history where it is continuous. */
enum { CS_INPUT_JUMPS = 0, CS_INPUT_C0 = 1, CS_INPUT_C1 = 2 };

typedef struct cs_coupling_ops {
    /* Hnom > 0: the step is regular, T_{N+1} = T_N + Hnom on a uniform grid (H = T_{N+1} - T_N may differ from Hnom
     * in its last bits); the approximation weights may come from a cache. Hnom = 0: irregular step. */
    int (*predict)(cs_coupling *c, double T, double H, double Hnom, cs_err *err);
    const cs_input *(*input)(cs_coupling *c, int i);
    int (*on_unit_done)(cs_coupling *c, int i, double T1, const double *y_i, const double *ydot_i, cs_err *err);
    int (*accept)(cs_coupling *c, double T1, const double *y, const double *ydot, cs_err *err);
    /* CS_INPUT_* of the input that input(i) returned last (call after input(i)). */
    int (*continuity)(const cs_coupling *c, int i);
    void *(*snapshot_create)(cs_coupling *c);
    void (*save)(cs_coupling *c, void *snap);
    void (*restore)(cs_coupling *c, const void *snap);
    void (*snapshot_destroy)(void *snap);
    void (*destroy)(cs_coupling *c);
    /* Optional, for adaptive macro steps (control/adaptive.c, kraft2021 §8-§10):
     * set_degree(κ)                 the polynomial degree κ of the following steps (until set again)
     * comparative(mode, κ, in)      after the scheme step, before accept: the comparative input functions of the
     *                               step just taken (in[i] for every unit; owned by the coupling, valid until the
     *                               next predict): CS_CMP_EXLE the degree-(κ+1) extrapolant p̂^pre (kraft2021 eq.
     *                               3.2/3.3), CS_CMP_EXMD the degree-κ polynomial through the same κ points with the
     *                               end value û^pre of the degree-(κ+1) extrapolant (eq. 3.7/3.8). */
    int (*set_degree)(cs_coupling *c, int kappa, cs_err *err);
    int (*comparative)(cs_coupling *c, int mode, int kappa, const cs_input **in, cs_err *err);
    /* Optional: keep at least `depth` accepted samples (an adaptive controller raises the degree up to k_max + 1);
     * call before the first accept. Wrapping couplings forward it to the coupling they wrap. */
    int (*set_history_depth)(cs_coupling *c, int depth, cs_err *err);
} cs_coupling_ops;

enum { CS_CMP_EXLE = 0, CS_CMP_EXMD = 1 };

/* What a coupling is, for the accessors of one kind (type tests read this, never compare ops tables). */
enum { CS_CPL_KIND_SIGNAL = 0, CS_CPL_KIND_BALANCE = 1, CS_CPL_KIND_SMOOTH = 2, CS_CPL_KIND_NEPCE = 3,
       CS_CPL_KIND_PRESTEP = 4, CS_CPL_KIND_MBCORR = 5,
       CS_CPL_KIND_CALLBACK = 6 };

struct cs_coupling {
    const cs_coupling_ops *ops;
    void *content;
    int kind;               /* CS_CPL_KIND_* */
    int needs_rates;        /* accept/on_unit_done need output time derivatives y' (Hermite) */
    int rates_lagged;       /* y' from the step's own inputs at T_{N+1}- rather than the consistent ones */
    /* Optional shortcut of input()/continuity() for the schemes: every unit's input function and CS_INPUT_* as
     * predict built them, valid until a unit finishes the step (on_unit_done); NULL otherwise. */
    const cs_input *ready;
    const unsigned char *ready_cont;
};

void cs_coupling_destroy(cs_coupling *c);

/* The ops as functions, optional ops' defaults written once (inline: the schemes call them every macro step). */
static inline int cs_coupling_predict(cs_coupling *c, double T, double H, double Hnom, cs_err *err) {
    return c->ops->predict(c, T, H, Hnom, err);
}
static inline const cs_input *cs_coupling_input(cs_coupling *c, int i) { return c->ops->input(c, i); }
static inline int cs_coupling_on_unit_done(cs_coupling *c, int i, double T1, const double *y_i, const double *ydot_i,
                                           cs_err *err) {
    return c->ops->on_unit_done ? c->ops->on_unit_done(c, i, T1, y_i, ydot_i, err) : CS_OK;
}
static inline int cs_coupling_accept(cs_coupling *c, double T1, const double *y, const double *ydot, cs_err *err) {
    return c->ops->accept(c, T1, y, ydot, err);
}
static inline int cs_coupling_continuity(const cs_coupling *c, int i) {
    return c->ops->continuity ? c->ops->continuity(c, i) : CS_INPUT_JUMPS;
}
static inline void *cs_coupling_snapshot_create(cs_coupling *c) { return c->ops->snapshot_create(c); }
static inline void cs_coupling_save(cs_coupling *c, void *snap) { c->ops->save(c, snap); }
static inline void cs_coupling_restore(cs_coupling *c, const void *snap) { c->ops->restore(c, snap); }
static inline void cs_coupling_snapshot_destroy(const cs_coupling *c, void *snap) {
    if (snap) c->ops->snapshot_destroy(snap);
}
/* Without set_degree the coupling keeps its own degree. */
static inline int cs_coupling_set_degree(cs_coupling *c, int kappa, cs_err *err) {
    return c->ops->set_degree ? c->ops->set_degree(c, kappa, err) : CS_OK;
}
static inline int cs_coupling_has_comparative(const cs_coupling *c) { return c->ops->comparative != NULL; }
static inline int cs_coupling_comparative(cs_coupling *c, int mode, int kappa, const cs_input **in, cs_err *err) {
    if (!c->ops->comparative)
        return cs_fail(err, CS_ERR_ARG, "estimator: the coupling has no comparative polynomials (exLE/exMD)");
    return c->ops->comparative(c, mode, kappa, in, err);
}
int cs_coupling_set_history_depth(cs_coupling *c, int depth, cs_err *err);

#endif
