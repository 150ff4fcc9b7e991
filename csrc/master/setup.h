/* A run assembled from plain specifications: the objects of DESIGN.md §2 built and wired for one co-simulation (or
 * the monolithic reference), so that the bindings only convert arguments. */
#ifndef COSIM_SETUP_H
#define COSIM_SETUP_H

#include "control/adaptive.h"
#include "coupling/approx.h"
#include "coupling/balance.h"
#include "master/algorithm.h"
#include "master/registry.h"
#include "master/unit_binding.h"
#include "parallel/share.h"
#include "units/model_set.h"

typedef struct cs_run_config {
    int nsub;
    cs_model **models;          /* ownership passes to the run (also on failure) */
    const cs_solver_opts *solvers; /* nsub entries (monolithic: 1) */
    int nconn;
    const int *conn_in, *conn_out; /* global input / output indices */
    const double *conn_gain, *r;
    const double *x0;           /* stacked */
    cs_choice scheme;           /* a kind of the registry's "scheme" (kind NULL: Jacobi) */
    const int *order;           /* Gauss-Seidel order, NULL = as given */
    cs_approx_spec approx;
    int rates_lagged;           /* Hermite: lagged output derivatives */
    const int *integral_of;     /* acc/accRel: per output, the output whose polynomial it integrates (-1 none);
                                 * NULL: none; integral_of_n entries */
    int integral_of_n;
    int update;                 /* CS_UPDATE_* */
    double t0, t_end, H;
    int startup;                /* CS_STARTUP_* */
    double startup_factor;
    const double *grid;         /* explicit macro grid (ngrid points) or NULL */
    long ngrid;
    const long *reject;         /* test controller: steps rejected once (NULL: fixed controller) */
    int nreject;
    double divergence_bound;
    int monolithic;             /* integrate the strongly coupled system as one unit */
    int timing;                 /* per-unit wall clock */
    const double *t_out;        /* dense output grid (NULL: records at the macro points) */
    long nout;
    /* balance correction (coupling/balance.h, moshagen §2.6; NULL: off): wraps the signal coupling; the source units
     * get quadrature states (cs_model_unit_create_quadrature) */
    const cs_balance_spec *balance;
    const unsigned char *balance_corrected; /* nu flags (NULL: every connected input) */
    cs_choice coupling;         /* a kind of the registry's "coupling" (kind NULL: the signal coupling of `approx`) */
    int threads;                /* Jacobi: units stepped on a pool of this many threads (<= 1: sequential) */
    /* a kind of the registry's "step_control" (kraft2021 §8-§11 adaptive steps, ECCO), or kind NULL: the fixed
     * controller (or the rejecting test controller of `reject`) */
    cs_choice step_control;
    int smooth;                 /* quintic smoothing of the input switch (coupling/smooth.h, moshagen §2.5) */
    cs_unit **units;            /* optional: nsub prebuilt units (FMUs); NULL entries wrap models[i], whose entry is
                                 * NULL where a unit is given. Ownership passes to the run (also on failure). */
    /* optional: units distributed over processes (parallel/share.h; simulate(parallel=cosim.MPI())): the backend
     * (not owned) and the first unit of each process (size+1 entries) */
    const cs_share_backend *share;
    const int *share_first;
} cs_run_config;

typedef struct cs_run {
    int nsub;
    cs_model_set models;        /* the models behind the model units (and the monolithic composite) */
    cs_network net, unit_net;   /* the coupling network; the one the algorithm sees (monolithic: trivial) */
    int have_net, have_unit_net;
    cs_unit **units;
    int nunits;
    cs_unit_access unit_access; /* the units as the couplings and step controllers see them */
    cs_coupling *coupling;
    const cs_kind *coupling_kind; /* the registry kind that made `coupling` (before the wrappers) */
    cs_scheme *scheme;
    cs_controller *controller;
    cs_estimator *estimator;    /* NULL: no error estimate */
    cs_observer *observers[8];
    int nobs;
    cs_observer *recorder;      /* the one that keeps the records (cs_run_add_recorder), or NULL */
    cs_algorithm *alg;
    cs_share *share;            /* cfg.share: the units distributed over processes, or NULL */
    int nx, ny, nu;             /* sizes of the records */
    const double *balance_cum;  /* balance correction: cumulative imbalance per input (nu), or NULL */
    long max_steps;             /* the step controller's bound on the steps (0: the fixed controller's count) */
    int adaptive;               /* step_control given: the number of steps is not known in advance */
} cs_run;

int cs_run_create(const cs_run_config *cfg, cs_run **out, cs_err *err);
/* Records the run can make (the initial point plus every step), or -1 when it does not fit a long. Adaptive runs:
 * an initial guess (the records grow). */
long cs_run_capacity(const cs_run *run);
/* Adds an observer (ownership passes to the run), before cs_run_execute. */
int cs_run_add_observer(cs_run *run, cs_observer *o, cs_err *err);
/* The same for the recorder of the run's records (cs_recorder_create and kin): the report gives its rows. */
int cs_run_add_recorder(cs_run *run, cs_observer *o, cs_err *err);
int cs_run_execute(cs_run *run, cs_err *err);
/* One unit's counters and, where the run measured time (cfg.timing), its wall, barrier idle and snapshot times. */
typedef struct cs_unit_report {
    cs_unit_stats stats;        /* stats.wall: with `timed` only */
    int timed;
    double idle, save_wall;     /* kraft2021 §16.3: idle at the macro barrier (eq. 4.5), snapshot time */
} cs_unit_report;

/* What a finished run reports, filled by cs_run_get_report (the bindings only convert it). */
typedef struct cs_run_report {
    long records;               /* rows the recorder wrote */
    double *records_t, *records_x, *records_y, *records_u; /* a growing recorder's buffers (records x 1, nx, ny, nu),
                                 * handed over: owned by the report (the caller may take them, NULL otherwise) */
    int nx, ny, nu;
    void *model_cause;          /* what the first failing model left (cs_model_take_cause; Python: the exception),
                                 * owned by the caller, or NULL */
    cs_fields coupling_log;     /* the coupling kind's log (its `log`, kind.h); n = -1 where the kind keeps none */
    long macro_steps, rejected_steps, newton_iterations;
    int nunits;
    cs_unit_report *units;      /* nunits entries */
    int iterative;              /* an iterative scheme: the iteration counts below are set */
    const int *iterations_per_step; /* macro_steps entries, or NULL (none recorded) */
    long iterations;            /* in total */
    int has_step_records;       /* an adaptive controller's records (kraft2021 §19) below */
    cs_kraft_records step_records;
    /* run-level timing (cfg.timing; issue 11, T25) */
    cs_algorithm_timing timing;
    int threads;                /* the Jacobi pool's threads (1: sequential) */
    double *thread_idle;        /* threads entries: barrier wait per thread */
    double *thread_busy;        /* threads entries: seconds each thread ran units (Jacobi) */
    long *thread_stolen;        /* threads entries: units each thread took from other threads' lists (Jacobi) */
    int *thread_units;          /* threads entries: units on each thread's list (Jacobi) */
    double cpu_critical;        /* Jacobi: sum_N max_thread CPU seconds of its units (cs_jacobi_thread_work) */
    int has_thread_work;        /* the three above were measured */
    double *unit_rhs, *unit_rhs_idle; /* nunits entries each, with unit_cpu: right-hand sides and idle in them */
    double *unit_cpu, *unit_cpu_idle; /* nunits entries each (Jacobi on a pool: thread-CPU solver time and idle), or
                                       * NULL where not measured */
} cs_run_report;

/* Fills out (the arrays allocated, free with cs_run_report_free; the pointers into the run stay valid while it lives).
 * Call once: it hands over the growing recorder's buffers and the models' causes. */
int cs_run_get_report(const cs_run *run, cs_run_report *out, cs_err *err);
void cs_run_report_free(cs_run_report *r);

void cs_run_destroy(cs_run *run);

#endif
