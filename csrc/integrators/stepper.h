/* Stepper: a model plus an integrator (like an FMI co-simulation unit; DESIGN.md §2).
 *
 * Generic object {content, ops} in the style of SUNDIALS' generic objects: do_step is required, destroy optional.
 * Integrators restart at each macro point (the input may jump there), so the full state needed for an exact
 * rollback is (t, x) plus counters: cs_stepper_save / cs_stepper_restore copy exactly that. The one exception is
 * opt-in: CVODE with `continue_smooth` keeps its multistep history across a macro point where the master knows the
 * input to be continuous (EXTRIPOL, busch2016 §2), with `continue_agreeing` also where the input's value there
 * agrees to the solver's tolerance, with `continue_jumps` across every jump (integrators/cvode.c). set_state forces a
 * restart; so does restore, unless the
 * integrator still holds the restored state with its history (ops->resume: CVODE's second instance). */
#ifndef COSIM_STEPPER_H
#define COSIM_STEPPER_H

#include "kind.h"
#include "input/input.h"
#include "models/model.h"

typedef struct cs_stepper cs_stepper;

typedef struct cs_stepper_ops {
    /* Integrate from (st->t, st->x) over [T, T+H] with input `in`; on success st->t = T+H and st->x updated.
     * `restart`: CS_RESTART, CS_CONTINUE (same input function continues, e.g. the monolithic system), CS_SMOOTH
     * (new input, continuous across T), CS_JUMPS (new input that may jump), possibly | CS_MAY_ROLL_BACK
     * (input/input.h); an integrator with a history may keep it where its options allow. */
    int (*do_step)(cs_stepper *st, double T, double H, const cs_input *in, int restart, cs_err *err);
    void (*destroy)(cs_stepper *st);
    int reads_restart;   /* do_step reads `restart` (keeps history across smooth macro points: CVODE); 0: it restarts
                          * or has no history anyway, and the scheme need not work out the input's continuity */
    /* optional: after cs_stepper_restore of the state st->gen had when saved (`gen` > 0), 1 if the integrator still
     * holds that state with its history and continues from it, 0 if the next step must restart (CVODE) */
    int (*resume)(cs_stepper *st, long gen);
} cs_stepper_ops;

typedef struct cs_stepper_stats {
    long steps;        /* accepted micro steps */
    long failures;     /* rejected micro steps / convergence failures reported by the integrator */
    long jac_evals;
    long restarts;     /* integrator re-initialisations (CVODE) */
} cs_stepper_stats;

struct cs_stepper {
    cs_model *model;   /* not owned */
    const cs_stepper_ops *ops;
    void *content;
    double t;
    double *x;         /* nx, owned */
    double *u;         /* nu scratch for the input value, owned */
    int reset;         /* state was set from outside: the next step must restart the integrator */
    long gen;          /* names the state after a step for ops->resume and CVODE's warm start (0: none; set by the
                        * integrator, kept by restore, cleared by set_state) */
    long pinned;       /* gen at the last cs_stepper_save: a restart should not overwrite that state's history */
    cs_stepper_stats stats;
    /* Micro-step trace (units/unit.h set_trace/trace): with `tracing` on, the points (t, x) of the last step, from
     * (T, x(T)) to (T+H, x(T+H)); integrators push the end of every micro step, the buffers grow by doubling
     * (amortised, no allocation once they fit a macro step). Off: no cost. */
    int tracing;
    long tr_n, tr_cap;
    double *tr_t, *tr_x;
};

/* Saved state: t, x, counters. */
typedef struct cs_stepper_state {
    double t;
    double *x;
    long gen;
    cs_stepper_stats stats;
    long nrhs, nout;
} cs_stepper_state;

/* A stepper shell for `model` with ops, state and input vectors, no content (the integrator sets it). */
cs_stepper *cs_stepper_new_empty(cs_model *model, const cs_stepper_ops *ops, cs_err *err);
/* cs_stepper_new_empty with the integrator's zeroed content (content_size bytes, st->content) and nwork doubles of
 * scratch (*work, owned by the content: its destroy op frees it). Everything is freed again on failure. */
cs_stepper *cs_stepper_new_empty_with(cs_model *model, const cs_stepper_ops *ops, size_t content_size, size_t nwork,
                                      double **work, cs_err *err);
/* Free a shell without its destroy op (failure paths before the content exists). */
void cs_stepper_free_empty(cs_stepper *st);
/* ops->destroy, then the shell; NULL is ignored. */
void cs_stepper_destroy(cs_stepper *st);

/* The ops as functions. */
static inline int cs_stepper_do_step(cs_stepper *st, double T, double H, const cs_input *in, int restart,
                                     cs_err *err) {
    return st->ops->do_step(st, T, H, in, restart, err);
}
static inline int cs_stepper_reads_restart(const cs_stepper *st) { return st->ops->reads_restart; }
/* One macro step of the integrator (ops->do_step) with the restart after set_state/restore and the trace's end
 * points; inline: the master calls it for every unit and step, and untraced steps need no more than the call. */
int cs_stepper_step_traced(cs_stepper *st, double T, double H, const cs_input *in, int restart, cs_err *err);
static inline int cs_stepper_step(cs_stepper *st, double T, double H, const cs_input *in, int restart, cs_err *err) {
    if (st->tracing) return cs_stepper_step_traced(st, T, H, in, restart, err);
    /* an integrator that restarts anyway has no restart flag to keep: the call is all (a tail call) */
    if (!cs_stepper_reads_restart(st)) return cs_stepper_do_step(st, T, H, in, restart, err);
    int rc = cs_stepper_do_step(st, T, H, in, st->reset ? CS_RESTART : restart, err);
    if (rc == CS_OK) st->reset = 0;
    return rc;
}
/* CS_ERR_DIVERGED unless every state is finite (the master checks states once per macro step itself). */
int cs_stepper_check_finite(const cs_stepper *st, double T, double H, cs_err *err);
void cs_stepper_set_state(cs_stepper *st, double t, const double *x);
/* Trace: make room for n points (grows the buffers only when needed); push the current (t, x). */
int cs_stepper_trace_reserve(cs_stepper *st, long n, cs_err *err);
static inline int cs_stepper_trace_push(cs_stepper *st, double t, cs_err *err) {
    if (st->tr_n >= st->tr_cap) {
        int rc = cs_stepper_trace_reserve(st, 2 * st->tr_cap + 16, err);
        if (rc) return rc;
    }
    int nx = st->model->nx;
    st->tr_t[st->tr_n] = t;
    for (int i = 0; i < nx; i++) st->tr_x[st->tr_n * nx + i] = st->x[i];
    st->tr_n++;
    return 0;
}
int cs_stepper_state_alloc(const cs_stepper *st, cs_stepper_state *s);
void cs_stepper_state_free(cs_stepper_state *s);
void cs_stepper_save(cs_stepper *st, cs_stepper_state *s);
void cs_stepper_restore(cs_stepper *st, const cs_stepper_state *s);

/* Cap on the micro steps of a fixed-step integrator (Euler/RK4) per macro step: n = substeps, or n = ceil(H/h)
 * for a fixed micro step h. Larger counts are rejected (CS_ERR_ARG) before any conversion of H/h to an integer, so
 * a tiny h can neither overflow the count nor hang a run. Mirrored by cosim.solvers.MAX_MICRO_STEPS. */
#define CS_MAX_MICRO_STEPS 10000000L

/* Integrators (integrators/<name>.c). */
enum { CS_SOLVER_EULER = 0, CS_SOLVER_RK4 = 1, CS_SOLVER_EXACT = 2, CS_SOLVER_CVODE = 3 };

typedef struct cs_solver_opts {
    int kind;
    int substeps;      /* Euler/RK4: micro steps per macro step (used when h <= 0) */
    double h;          /* Euler/RK4: fixed micro step; the step count is ceil(H/h) */
    double rtol, atol; /* CVODE */
    int adams;         /* CVODE: 1 = Adams-Moulton, 0 = BDF */
    long max_steps;    /* CVODE: per macro step */
    double max_h;      /* CVODE: maximum micro step (0 = unlimited) */
    int continue_smooth; /* CVODE: keep the history across macro points where the input is C0/C1 */
    int continue_agreeing; /* CVODE: also where it agrees to the tolerance, and under step control */
    int continue_jumps; /* CVODE: also where it jumps (with continue_agreeing) */
    int warm_start;    /* CVODE: a restart at a state it reached starts with the step size it had there */
    int starter;       /* AB2: CS_AB2_EULER or CS_AB2_HEUN */
    int linear_solver;   /* CVODE: CS_LINSOL_DENSE (0) or CS_LINSOL_BAND */
    int band_lower, band_upper; /* CVODE band: half-bandwidths ml, mu (< 0: found from the model) */
} cs_solver_opts;

/* Adams-Bashforth 2 (integrators/ab2.c): kind CS_SOLVER_AB2, `substeps` micro steps, restarted at every macro
 * point with the starter (moshagen §4.2.3). */
enum { CS_SOLVER_AB2 = 4 };
enum { CS_AB2_EULER = 0, CS_AB2_HEUN = 1 };
int cs_ab2_create(cs_model *model, const cs_solver_opts *opts, cs_stepper **out, cs_err *err);

enum { CS_LINSOL_DENSE = 0, CS_LINSOL_BAND = 1 };
/* CVODE stepper with the band solver: 1 and its half-bandwidths (after the first step), else 0. */
int cs_cvode_bandwidth(const cs_stepper *st, int *ml, int *mu);

/* The integrator opts->kind for `model` (not owned): CS_OK and the stepper in *out, or an error code with err
 * filled. */
int cs_stepper_create(cs_model *model, const cs_solver_opts *opts, cs_stepper **out, cs_err *err);
int cs_fixed_step_create(cs_model *model, const cs_solver_opts *opts, cs_stepper **out, cs_err *err);
int cs_exact_create(cs_model *model, cs_stepper **out, cs_err *err);
int cs_cvode_create(cs_model *model, const cs_solver_opts *opts, cs_stepper **out, cs_err *err);

/* The parameters of cs_solver_opts (master/registry.c). */
extern const cs_kind cs_solver_kind;

#endif
