/* Unit: one subsystem as the master sees it (FMI co-simulation shape; DESIGN.md §2 "Unit").
 *
 * Generic object {content, ops} in the style of SUNDIALS' generic objects. The master and the schemes see only
 * units: they never touch a model, an integrator or a state vector directly.
 *
 * Required ops:
 *   do_step(T, H, input, restart)   integrate over [T, T+H] with the input function `input` (input/input.h);
 *                                   restart: CS_RESTART, CS_CONTINUE (same input continues), CS_SMOOTH (new input,
 *                                   continuous across T), CS_JUMPS (new input, may jump), input/input.h
 *   get_outputs(t, u, y)            outputs y = g(t, x, u) at the current state for input values u
 *   snapshot_create / save_state / restore_state / snapshot_destroy
 *                                   opaque copy of everything a rollback needs (a state copy, CVODE's state, an
 *                                   FMU's FMUstate); restore makes the next do_step reproduce the saved one bit for bit
 *                                   (CVODE(restart="continuous"): only where that step restarted or the history of
 *                                   the saved state is still held; else it restarts: the tolerance, not the bits)
 *   set_state(t, x)                 start values (x may be NULL for units whose state is not accessible)
 * Optional ops (NULL when absent):
 *   output_jacobian(t, u, G)        dy/du (ny x nu, row-major), exact where the unit knows it (LTI: D)
 *   output_rates(t, u, udot, ydot)  dy/dt along the trajectory (Hermite approximations, moshagen eq. 90)
 *   states()                        read-only view of the current states (nx values) for recording; the pointer
 *                                   is fixed for the unit's lifetime (the master reads it once)
 *   set_trace(on) / trace(tr)       micro-step trace: with tracing on, the unit keeps the points of its last do_step
 *                                   (its own micro-step times t_0 = T < ... < t_n = T+H, outputs there, output rates
 *                                   where it knows them); waveform relaxation with sub-step waveforms and NEPCE's
 *                                   integral of the extrapolation error read it. Off by default (no cost).
 *   sensitivity(T, H, ell, deg, mode, in, uend, G)
 *                                   interface Jacobian dy(T+H)/du_end (ny x nu, row-major) from the current state at
 *                                   T, when the input `in` on [T, T+H] changes by e_a ell(s), s = (t - T)/H (ell:
 *                                   deg+1 coefficients of s^m, ell(1) = 1: the Lagrange basis polynomial of the end
 *                                   node, kraft2021 §6.2/§8.1), outputs with the end input value uend = in(T+H).
 *                                   mode CS_SENS_EXACT: exact (LTI units: exponential propagator; nonlinear model
 *                                   units: the forward sensitivity equations integrated along the trajectory with
 *                                   `in`, which they need; the current state is kept);
 *                                   CS_SENS_SAP: kraft2021 App. A "sap", per entry the first non-vanishing series
 *                                   term, D + H c0 C B or D + H^2 c1 C A B (c0 = int ell, c1 = int (1-s) ell; Table A.1);
 *                                   CS_SENS_SAP2: the first two terms of the series per entry (+ H^2 c1 C A B or
 *                                   + H^3 c2 C A^2 B, c2 = int (1-s)^2/2 ell; §13.2's "two-term" variant)
 *   destroy()                       free `content`
 *   step_integral(Q)                ∫_T^{T+H} y dt over the last do_step (ny values), from a quadrature state
 *                                   integrated by the unit's own integrator (moshagen §2.6: the sender's exact
 *                                   integral for the balance correction); units created with
 *                                   cs_model_unit_create_quadrature have it
 * Every op returns CS_OK or an error code with a message in err. */
#ifndef COSIM_UNIT_H
#define COSIM_UNIT_H

#include "common.h"
#include "input/input.h"

typedef struct cs_unit cs_unit;

/* What a unit is, for the few places that must tell (a unit's ops table may be per instance, so type tests read this,
 * never compare ops or function pointers). */
enum { CS_UNIT_GENERIC = 0, CS_UNIT_FMU_CS = 1, CS_UNIT_FMU_ME = 2 };

typedef struct cs_unit_stats {
    long steps;        /* accepted micro steps */
    long failures;     /* rejected micro steps / convergence failures reported by the integrator */
    long jac_evals;
    long rhs_calls, output_calls;
    long restarts;     /* integrator re-initialisations at macro points */
    double wall;       /* seconds spent in do_step (only with timing on) */
} cs_unit_stats;

/* The points of the last do_step (valid until the next do_step / restore_state). */
typedef struct cs_trace {
    long n;                  /* points, including T and T+H */
    const double *t;         /* n times */
    const double *y;         /* n x ny outputs, row-major */
    const double *ydot;      /* n x ny output rates, or NULL */
} cs_trace;

enum { CS_SENS_EXACT = 0, CS_SENS_SAP = 1, CS_SENS_SAP2 = 2 };

typedef struct cs_unit_ops {
    int (*do_step)(cs_unit *u, double T, double H, const cs_input *in, int restart, cs_err *err);
    int (*get_outputs)(cs_unit *u, double t, const double *uin, double *y, cs_err *err);
    void *(*snapshot_create)(cs_unit *u);
    void (*save_state)(cs_unit *u, void *snap);
    void (*restore_state)(cs_unit *u, const void *snap);
    void (*snapshot_destroy)(void *snap);
    int (*set_state)(cs_unit *u, double t, const double *x, cs_err *err);
    int (*output_jacobian)(cs_unit *u, double t, const double *uin, double *G, cs_err *err);
    int (*output_rates)(cs_unit *u, double t, const double *uin, const double *udot, double *ydot, cs_err *err);
    const double *(*states)(const cs_unit *u);
    int (*set_trace)(cs_unit *u, int on, cs_err *err);
    int (*trace)(const cs_unit *u, cs_trace *tr);
    void (*get_stats)(const cs_unit *u, cs_unit_stats *s);
    void (*destroy)(cs_unit *u);
    int (*step_integral)(const cs_unit *u, double *Q);
    int (*sensitivity)(cs_unit *u, double T, double H, const double *ell, int deg, int mode, const cs_input *in,
                       const double *uend, double *G, cs_err *err);
} cs_unit_ops;

struct cs_unit {
    const cs_unit_ops *ops;
    void *content;
    int kind;          /* CS_UNIT_* (0 unless the implementation says) */
    int nx, nu, ny;
    int feedthrough;   /* y depends on u */
    int linear;        /* dy/du is constant (output_jacobian may be evaluated once) */
    int ignores_restart; /* do_step does not read `restart` (fixed-step and exact integrators, co-simulation FMUs):
                          * the scheme skips working it out; 0 (the default) is always correct */
    int timing;        /* measure wall time per do_step (off by default: two clock reads per step) */
    double wall;
    double idle;       /* timing: wait at the macro barrier, sum_N (max_L T_{L,N} - T_{i,N}) (kraft2021 eq. 4.5) */
    double save_wall;  /* timing: seconds in save_state/restore_state (rollback snapshots) */
    char name[64];
};

/* A unit shell with the given ops and sizes (content set by the implementation). */
cs_unit *cs_unit_new_empty(const cs_unit_ops *ops, int nx, int nu, int ny, const char *name, cs_err *err);
/* Free a shell without its destroy op (failure paths before the content exists). */
void cs_unit_free_empty(cs_unit *u);
/* ops->destroy, then the shell; NULL is ignored. */
void cs_unit_destroy(cs_unit *u);

/* do_step with the optional timing of the unit (the master calls this, not ops->do_step). */
int cs_unit_do_step_timed(cs_unit *u, double T, double H, const cs_input *in, int restart, cs_err *err);
/* inline: the master calls it for every unit and step */
static inline int cs_unit_do_step(cs_unit *u, double T, double H, const cs_input *in, int restart, cs_err *err) {
    return u->timing ? cs_unit_do_step_timed(u, T, H, in, restart, err) : u->ops->do_step(u, T, H, in, restart, err);
}

/* The ops as functions (inline: the schemes call them every step), the optional ops' defaults written once. */
static inline int cs_unit_get_outputs(cs_unit *u, double t, const double *uin, double *y, cs_err *err) {
    return u->ops->get_outputs(u, t, uin, y, err);
}
static inline void *cs_unit_snapshot_create(cs_unit *u) { return u->ops->snapshot_create(u); }
static inline void cs_unit_save_state(cs_unit *u, void *snap) { u->ops->save_state(u, snap); }
static inline void cs_unit_restore_state(cs_unit *u, const void *snap) { u->ops->restore_state(u, snap); }
static inline void cs_unit_snapshot_destroy(const cs_unit *u, void *snap) {
    if (snap) u->ops->snapshot_destroy(snap);
}
static inline int cs_unit_set_state(cs_unit *u, double t, const double *x, cs_err *err) {
    return u->ops->set_state(u, t, x, err);
}
/* The current states (nx values), NULL for a unit that does not expose them. */
static inline int cs_unit_has_states(const cs_unit *u) { return u->ops->states != NULL; }
/* Rollback (iterative schemes): the unit can save and restore its state. */
static inline int cs_unit_can_restore(const cs_unit *u) { return u->ops->snapshot_create && u->ops->restore_state; }
static inline const double *cs_unit_states(const cs_unit *u) { return u->ops->states ? u->ops->states(u) : NULL; }
static inline int cs_unit_has_output_rates(const cs_unit *u) { return u->ops->output_rates != NULL; }
static inline int cs_unit_output_rates(cs_unit *u, double t, const double *uin, const double *udot, double *ydot,
                                       cs_err *err) {
    if (!u->ops->output_rates) return cs_fail(err, CS_ERR_ARG, "unit %s: no output derivatives (Hermite)", u->name);
    return u->ops->output_rates(u, t, uin, udot, ydot, err);
}
static inline int cs_unit_has_trace(const cs_unit *u) { return u->ops->set_trace && u->ops->trace; }
/* Tracing on or off; a unit without a trace ignores it. */
static inline int cs_unit_set_trace(cs_unit *u, int on, cs_err *err) {
    return u->ops->set_trace ? u->ops->set_trace(u, on, err) : CS_OK;
}
static inline int cs_unit_trace(const cs_unit *u, cs_trace *tr) {
    return u->ops->trace ? u->ops->trace(u, tr) : CS_ERR_ARG;
}
static inline int cs_unit_has_step_integral(const cs_unit *u) { return u->ops->step_integral != NULL; }
static inline int cs_unit_step_integral(const cs_unit *u, double *Q) { return u->ops->step_integral(u, Q); }
static inline int cs_unit_has_sensitivity(const cs_unit *u) { return u->ops->sensitivity != NULL; }
static inline int cs_unit_sensitivity(cs_unit *u, double T, double H, const double *ell, int deg, int mode,
                                      const cs_input *in, const double *uend, double *G, cs_err *err) {
    return u->ops->sensitivity(u, T, H, ell, deg, mode, in, uend, G, err);
}

/* int y dt over the last step [T1 - H, T1] of each output into yint (ny values): the trapezoidal rule on the unit's
 * micro-step trace (intermediate values). Returns 1, or 0 when the unit has no trace of that step (yint untouched). */
int cs_unit_trace_integral(cs_unit *u, double T1, double H, double *yint);

/* dy/du: ops->output_jacobian, else forward differences of get_outputs (work: nu + 2 ny doubles). */
int cs_unit_output_jacobian(cs_unit *u, double t, const double *uin, double *G, double *work, cs_err *err);

void cs_unit_get_stats(const cs_unit *u, cs_unit_stats *s);

#endif
