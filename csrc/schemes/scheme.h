/* Scheme: how the units are advanced over one macro step [T_N, T_N + H] (DESIGN.md §2 "Scheme").
 *
 *   Jacobi (schemes/jacobi.c): every unit steps with inputs extrapolated from the macro points up to T_N; the units
 *     are independent within the step (busch2016 eq. 11/12/14, kraft2021 §5).
 *   Gauss-Seidel (schemes/gauss_seidel.c): units step one after another in a given order; a unit stepped later
 *     interpolates the outputs of units already at T_{N+1} (busch2016 eq. 13): cs_scheme_interpolates below is that
 *     rule, shared with the stability analysis (analysis/companion.c).
 * A scheme sees units and the coupling only, through cs_step_ctx, which the algorithm (master/) owns. */
#ifndef COSIM_SCHEME_H
#define COSIM_SCHEME_H

#include "kind.h"
#include "coupling/coupling.h"
#include "network/network.h"
#include "parallel/share.h"
#include "units/unit.h"

/* What a scheme object is (cs_scheme.kind: type tests, the analysis's Gauss-Seidel rule): the scheme's index in the
 * registry (master/registry.c), whose index is the code Python chooses (tests/test_codes.py ties the two). */
enum { CS_SCHEME_JACOBI = 0, CS_SCHEME_GAUSS_SEIDEL = 1 };
/* Iterative schemes (schemes/iterative.h): implicit predictor/corrector and waveform relaxation. */
enum { CS_SCHEME_IMPLICIT = 2, CS_SCHEME_WAVEFORM = 3 };

/* busch2016 eq. 13: under Gauss-Seidel, the input of unit `dst` interpolates an output of unit `src` iff `src` was
 * stepped before `dst` in this macro step (pos: position of each unit in the stepping order). */
static inline int cs_scheme_interpolates(int scheme, const int *pos, int src, int dst) {
    return scheme == CS_SCHEME_GAUSS_SEIDEL && pos[src] < pos[dst];
}

/* What a scheme works on during one macro step (owned by the algorithm). */
typedef struct cs_step_ctx {
    int nsub;
    cs_unit **units;
    cs_coupling *coupling;
    const cs_network *net;
    long step;                 /* index N of the macro step */
    int first;                 /* the first step of a run, or the first after a rollback: integrators restart */
    int continue_always;       /* the same input function goes on across macro points (monolithic system) */
    int exact_rollback;        /* steps may be rolled back: CS_MAY_ROLL_BACK on the restart code (a restored unit
                                * restarts, as CVODE's history cannot be saved; the integrator decides) */
    int side_runs;             /* the estimator re-integrates each step from T_N (CS_SIDE_RUNS) */
    int need_udot;             /* fill udot (Hermite rates) */
    double *uend, *udot;       /* stacked input values / rates at T_{N+1}- of the inputs the units used */
    double *ystar, *ydot;      /* Gauss-Seidel: outputs y* and rates of a unit at T_{N+1} with its own input */
    const cs_input **used;     /* the input function each unit used in this step (dense output re-integrates) */
    cs_share *share;           /* units distributed over processes (parallel/share.h), or NULL: this process steps
                                * only the units it owns, cs_scheme_share_states hands the states to the others */
    const int *xoff;           /* with share: nsub+1 offsets of the units' states in the stacked state vector */
} cs_step_ctx;

typedef struct cs_scheme cs_scheme;

typedef struct cs_scheme_ops {
    int (*macro_step)(cs_scheme *s, cs_step_ctx *x, double T, double H, cs_err *err); /* required */
    void (*destroy)(cs_scheme *s);                                                    /* optional */
    /* optional: iterations of the accepted macro steps 0..n-1 (per_step[N]; iterative schemes) */
    void (*iterations)(const cs_scheme *s, long n, const int **per_step, long *total);
    /* optional (iterative schemes): the predictor j = 0 of the macro step just taken, for the implicit error
     * estimators (kraft2021 §8.5-8.6): *x the stacked states of all units at T_{N+1} after the predictor integration
     * (NULL when not kept), *u the predicted inputs u^pre_{N+1} (stacked; NULL when not kept) */
    void (*predictor)(const cs_scheme *s, const double **x, const double **u);
} cs_scheme_ops;

struct cs_scheme {
    const cs_scheme_ops *ops;
    void *content;
    int kind;                  /* CS_SCHEME_* */
};

int cs_jacobi_create(cs_scheme **out, cs_err *err);
/* Jacobi over nsub units stepped on a pool of nthreads threads (1: sequential); schemes/jacobi.c. */
int cs_jacobi_create_parallel(int nsub, int nthreads, cs_scheme **out, cs_err *err);
/* Threads of a Jacobi scheme (1 when sequential); idle (room for that many values, or NULL) gets each thread's
 * accumulated wait at the macro barrier (timing on). */
int cs_jacobi_threads(const cs_scheme *s, double *idle);
/* Timing with thread CPU clocks: per unit (n = the scheme's unit count) the summed CPU seconds of its steps and its
 * CPU idle time at the macro barrier (eq. 4.5 with CPU clocks); the same two sums in right-hand sides (the work
 * counted: deterministic). Returns 0 (nothing written) for other schemes. */
int cs_jacobi_cpu_times(const cs_scheme *s, int n, double *cpu, double *idle, double *rhs, double *rhs_idle);
/* Per thread (room for cs_jacobi_threads values) the seconds it ran units, the units it took from other threads'
 * lists and the units on its own list (the last step's); *critical = sum_N max_thread (CPU seconds of the units that thread stepped in step N): the stepping time
 * were every thread alone on a core (timing on). Returns 0 (nothing written) for other schemes. */
int cs_jacobi_thread_work(const cs_scheme *s, double *busy, long *stolen, int *units, double *critical);
/* The thread pool of a Jacobi scheme (NULL when sequential or another scheme), for the estimators' comparative runs. */
struct cs_pool *cs_jacobi_pool(const cs_scheme *s);
/* order: stepping order, a permutation of 0..nsub-1 (NULL: as given); copied. */
int cs_gauss_seidel_create(int nsub, const int *order, cs_scheme **out, cs_err *err);
void cs_scheme_destroy(cs_scheme *s);

/* The ops as functions, the optional ops' defaults written once. */
static inline int cs_scheme_macro_step(cs_scheme *s, cs_step_ctx *x, double T, double H, cs_err *err) {
    return s->ops->macro_step(s, x, T, H, err);
}
/* 1 and the iterations of macro steps 0..n-1 for an iterative scheme; 0 (outputs untouched) for the others. */
static inline int cs_scheme_iterations(const cs_scheme *s, long n, const int **per_step, long *total) {
    if (!s->ops->iterations) return 0;
    s->ops->iterations(s, n, per_step, total);
    return 1;
}
/* The predictor of the step just taken (*x, *u; NULL when the scheme keeps none). */
static inline void cs_scheme_predictor(const cs_scheme *s, const double **x, const double **u) {
    *x = *u = NULL;
    if (s->ops->predictor) s->ops->predictor(s, x, u);
}

void cs_scheme_step_failed(const cs_step_ctx *x, double T, double H, cs_err *err); /* prefixes the step to err */

/* Units distributed over processes (x->share): after the units i0..i1-1 stepped to time t, every process gets the
 * states of those it does not own (one collective; set_state of the copies). rc/err: this process's status (its
 * lowest failing unit); returns the agreed one (share.h). Without a share, returns rc. */
int cs_scheme_share_states(cs_step_ctx *x, int i0, int i1, double t, int rc, cs_err *err);

/* Step unit i over [T, T+H] with the input the coupling forms for it now; records its input at T+H in uend/udot.
 * Shared by the schemes; inline, as it runs for every unit and step. */
static inline int cs_scheme_step_unit(cs_step_ctx *x, int i, double T, double H, cs_err *err) {
    cs_coupling *cpl = x->coupling;
    cs_unit *u = x->units[i];
    const cs_input *in = cpl->ready ? &cpl->ready[i] : cs_coupling_input(cpl, i);
    x->used[i] = in;
    int restart = CS_RESTART;
    if (u->ignores_restart) {
        /* nothing to work out */
    } else if (!x->continue_always) {
        int cont = cpl->ready ? cpl->ready_cont[i] : cs_coupling_continuity(cpl, i);
        restart = x->first ? CS_RESTART
                           : (cont == CS_INPUT_JUMPS ? CS_JUMPS : CS_SMOOTH) |
                                 (x->exact_rollback ? CS_MAY_ROLL_BACK : 0) | (x->side_runs ? CS_SIDE_RUNS : 0);
    } else if (!x->first) {
        restart = CS_CONTINUE;
    }
    int rc = cs_share_owns(x->share, i) ? cs_unit_do_step(u, T, H, in, restart, err) : CS_OK;
    if (rc) {
        cs_scheme_step_failed(x, T, H, err);
        return rc;
    }
    const int a = x->net->uoff[i];
    cs_input_eval(in, T + H, x->uend + a);
    if (x->need_udot) cs_input_eval_dt(in, T + H, x->udot + a);
    return CS_OK;
}

/* The kinds (master/registry.c). */
extern const cs_kind cs_scheme_jacobi_kind, cs_scheme_gauss_seidel_kind;

#endif
