/* Jacobi scheme: all units step over [T_N, T_{N+1}] with extrapolated inputs, independently of each other
 * (kraft2021 §5 step 3: "integrate every subsystem independently ... (parallel)").
 *
 * With a thread pool (cs_jacobi_create_parallel, simulate(threads=n)) the units of one macro step are stepped
 * concurrently; the pool's barrier is the macro point. Each unit owns its workspace (integrator, model scratch) and
 * gets its own error buffer here, so a step's outcome does not depend on the number of threads or on which thread
 * ran a unit: the results are bit-identical for every n, and on failure the error of the lowest failing unit index
 * is reported (as in the sequential loop). Units of Python callables serialise on the GIL (they re-acquire it
 * around every callback): correct, but not faster with threads.
 *
 * Timing (units' timing flag): per unit and macro step the solver time T^solv_{L,N}; each unit's idle time at the
 * macro barrier sum_N (max_L' T^solv_{L',N} - T^solv_{L,N}) (kraft2021 eq. 4.5, one core per subsystem).
 * The same two sums are also kept with the CPU clock of the thread that ran the unit (CLOCK_THREAD_CPUTIME_ID):
 * on a shared machine a preemption does not count as solver time of the unit that was running, so the CPU idle time
 * is the load imbalance of the units' work alone (cs_jacobi_cpu_times). So are the units' right-hand sides per step
 * and their idle in right-hand sides, sum_N (max_L' r_{L',N} - r_{L,N}): eq. 4.5 with the work counted instead of
 * timed, the same on every machine and in every run (T25). */
#include <stdlib.h>
#include <time.h>

#include "parallel/pool.h"
#include "schemes/scheme.h"

typedef struct jacobi_content {
    int nsub;
    cs_pool *pool;       /* NULL: sequential */
    cs_pool_plan *plan;  /* which thread steps which units (balanced by their measured cost) */
    cs_err *errs;        /* one per unit */
    int *rc;
    double *w0;          /* units' wall clocks before the step (timing) */
    double *cstep;       /* timing: thread CPU seconds of each unit's current step */
    double *cpu, *cidle; /* timing: per unit sum_N of its CPU time and of (max_L' CPU_{L',N} - CPU_{L,N}) */
    long *rstep;         /* timing: right-hand sides of each unit's current step */
    double *rhs, *ridle; /* timing: per unit sum_N r_{L,N} and sum_N (max_L' r_{L',N} - r_{L,N}) */
    int *ran_by;         /* timing: the thread that stepped each unit in the current step */
    double *tcpu;        /* timing: per thread, CPU seconds of the units it stepped in the current step */
    double seq_busy;     /* timing, no pool: wall seconds of the units' steps */
    double critical;     /* timing: sum_N max_thread tcpu: the units' CPU time on the critical path (threads) */
    int timing;          /* the current macro step is timed */
    /* arguments of the current macro step for the pool's task */
    cs_step_ctx *x;
    double T, H;
} jacobi_content;

static double thread_cpu(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)) return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int timed_step(jacobi_content *j, cs_step_ctx *x, int i, double T, double H, cs_err *err) {
    if (!j->timing) return cs_scheme_step_unit(x, i, T, H, err);
    cs_unit_stats s0, s1;
    cs_unit_get_stats(x->units[i], &s0);
    double c0 = thread_cpu();
    int rc = cs_scheme_step_unit(x, i, T, H, err);
    j->cstep[i] = thread_cpu() - c0;
    cs_unit_get_stats(x->units[i], &s1);
    j->rstep[i] = s1.rhs_calls - s0.rhs_calls;
    return rc;
}

static void step_task(void *arg, int i, int worker) {
    jacobi_content *j = arg;
    j->errs[i].code = 0;
    j->rc[i] = timed_step(j, j->x, i, j->T, j->H, &j->errs[i]);
    if (j->timing) j->ran_by[i] = worker;   /* only timing reads it */
}

static void account_idle(jacobi_content *j, cs_step_ctx *x) {
    double mx = 0.0;
    for (int i = 0; i < x->nsub; i++) {
        double d = x->units[i]->wall - j->w0[i];
        if (d > mx) mx = d;
    }
    for (int i = 0; i < x->nsub; i++) x->units[i]->idle += mx - (x->units[i]->wall - j->w0[i]);
    double cm = 0.0;
    for (int i = 0; i < x->nsub; i++)
        if (j->cstep[i] > cm) cm = j->cstep[i];
    long rm = 0;
    for (int i = 0; i < x->nsub; i++)
        if (j->rstep[i] > rm) rm = j->rstep[i];
    for (int i = 0; i < x->nsub; i++) {
        j->cpu[i] += j->cstep[i];
        j->cidle[i] += cm - j->cstep[i];
        j->rhs[i] += (double)j->rstep[i];
        j->ridle[i] += (double)(rm - j->rstep[i]);
    }
    /* the step's length were every thread alone on a core: the most CPU time one thread spent on its units */
    const int nth = j->pool ? cs_pool_threads(j->pool) : 1;
    for (int k = 0; k < nth; k++) j->tcpu[k] = 0.0;
    /* by the plan's lists, not by who ran a unit: a thread preempted on a shared machine has its units taken by
     * the others, which would count the machine's load as imbalance */
    const int *own = j->pool && x->nsub == j->nsub ? cs_pool_plan_owner(j->plan) : j->ran_by;
    for (int i = 0; i < x->nsub; i++) j->tcpu[j->pool ? own[i] : 0] += j->cstep[i];
    double tm = 0.0;
    for (int k = 0; k < nth; k++)
        if (j->tcpu[k] > tm) tm = j->tcpu[k];
    j->critical += tm;
}

static int jacobi_step_units(cs_scheme *s, cs_step_ctx *x, double T, double H, cs_err *err) {
    jacobi_content *j = s->content;
    if (!j) { /* created without a unit count (cs_jacobi_create): the plain sequential loop */
        for (int i = 0; i < x->nsub; i++) CS_TRY(cs_scheme_step_unit(x, i, T, H, err));
        return CS_OK;
    }
    const int timing = x->nsub > 0 && x->units[0]->timing && x->nsub <= j->nsub;
    if (!timing && !j->pool) { /* the plain sequential loop */
        j->timing = 0;
        for (int i = 0; i < x->nsub; i++) CS_TRY(cs_scheme_step_unit(x, i, T, H, err));
        return CS_OK;
    }
    if (timing)
        for (int i = 0; i < x->nsub; i++) j->w0[i] = x->units[i]->wall;
    j->timing = timing;
    int rc = CS_OK;
    if (!j->pool) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < x->nsub && !rc; i++) rc = timed_step(j, x, i, T, H, err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        j->seq_busy += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    } else {
        j->x = x;
        j->T = T;
        j->H = H;
        cs_pool_set_timing(j->pool, timing);
        if (x->nsub == j->nsub) cs_pool_run_plan(j->pool, j->plan, step_task, j);
        else cs_pool_run(j->pool, x->nsub, step_task, j);
        for (int i = 0; i < x->nsub; i++)
            if (j->rc[i]) {                 /* the lowest failing unit, whatever thread ran it */
                *err = j->errs[i];
                rc = j->rc[i];
                break;
            }
    }
    if (timing && !rc) account_idle(j, x);
    return rc;
}

/* Units distributed over processes (x->share): each steps its own, then one exchange of the states at T + H. */
static int jacobi_step(cs_scheme *s, cs_step_ctx *x, double T, double H, cs_err *err) {
    int rc = jacobi_step_units(s, x, T, H, err);
    return x->share ? cs_scheme_share_states(x, 0, x->nsub, T + H, rc, err) : rc;
}

static void jacobi_destroy(cs_scheme *s) {
    jacobi_content *j = s->content;
    if (!j) return;
    cs_pool_plan_destroy(j->plan);
    cs_pool_destroy(j->pool);
    free(j->errs); free(j->rc); free(j->w0);
    free(j->cstep); free(j->cpu); free(j->cidle); free(j->ran_by); free(j->tcpu);
    free(j->rstep); free(j->rhs); free(j->ridle);
    free(j);
    s->content = NULL;
}

static const cs_scheme_ops JACOBI_OPS = {.macro_step = jacobi_step, .destroy = jacobi_destroy};

int cs_jacobi_create_parallel(int nsub, int nthreads, cs_scheme **out, cs_err *err) {
    *out = NULL;
    if (nsub < 1) return cs_fail(err, CS_ERR_ARG, "scheme: need at least one unit");
    if (nthreads < 1) return cs_fail(err, CS_ERR_ARG, "threads: must be >= 1, got %d", nthreads);
    cs_scheme *s = calloc(1, sizeof *s);
    jacobi_content *j = calloc(1, sizeof *j);
    if (j) {
        j->errs = calloc((size_t)nsub, sizeof(cs_err));
        j->rc = calloc((size_t)nsub, sizeof(int));
        j->w0 = calloc((size_t)nsub, sizeof(double));
        j->cstep = calloc((size_t)nsub, sizeof(double));
        j->cpu = calloc((size_t)nsub, sizeof(double));
        j->cidle = calloc((size_t)nsub, sizeof(double));
        j->ran_by = calloc((size_t)nsub, sizeof(int));
        j->tcpu = calloc((size_t)nthreads, sizeof(double));
        j->rstep = calloc((size_t)nsub, sizeof(long));
        j->rhs = calloc((size_t)nsub, sizeof(double));
        j->ridle = calloc((size_t)nsub, sizeof(double));
    }
    if (!s || !j || !j->errs || !j->rc || !j->w0 || !j->cstep || !j->cpu || !j->cidle || !j->ran_by || !j->tcpu ||
        !j->rstep || !j->rhs || !j->ridle) {
        if (j) {
            free(j->errs); free(j->rc); free(j->w0); free(j->cstep); free(j->cpu); free(j->cidle);
            free(j->ran_by); free(j->tcpu); free(j->rstep); free(j->rhs); free(j->ridle);
        }
        free(j); free(s);
        return cs_fail(err, CS_ERR_NOMEM, "scheme: out of memory");
    }
    j->nsub = nsub;
    s->ops = &JACOBI_OPS;
    s->content = j;
    s->kind = CS_SCHEME_JACOBI;
    if (nthreads > 1) {
        int rc = cs_pool_create(nthreads < nsub ? nthreads : nsub, &j->pool, err);
        if (!rc) rc = cs_pool_plan_create(j->pool, nsub, &j->plan, err);
        if (rc) { cs_scheme_destroy(s); return rc; }
    }
    *out = s;
    return CS_OK;
}

int cs_jacobi_create(cs_scheme **out, cs_err *err) {
    *out = NULL;
    cs_scheme *s = calloc(1, sizeof *s);
    if (!s) return cs_fail(err, CS_ERR_NOMEM, "scheme: out of memory");
    s->ops = &JACOBI_OPS;
    s->kind = CS_SCHEME_JACOBI;
    *out = s;
    return CS_OK;
}

int cs_jacobi_threads(const cs_scheme *s, double *idle) {
    const jacobi_content *j = s && s->kind == CS_SCHEME_JACOBI ? s->content : NULL;
    if (!j || !j->pool) {
        if (idle) idle[0] = 0.0;
        return 1;
    }
    if (idle) cs_pool_idle(j->pool, idle);
    return cs_pool_threads(j->pool);
}

int cs_jacobi_cpu_times(const cs_scheme *s, int n, double *cpu, double *idle, double *rhs, double *rhs_idle) {
    const jacobi_content *j = s && s->kind == CS_SCHEME_JACOBI ? s->content : NULL;
    if (!j || n != j->nsub) return 0;
    for (int i = 0; i < n; i++) {
        cpu[i] = j->cpu[i];
        idle[i] = j->cidle[i];
        rhs[i] = j->rhs[i];
        rhs_idle[i] = j->ridle[i];
    }
    return 1;
}

int cs_jacobi_thread_work(const cs_scheme *s, double *busy, long *stolen, int *units, double *critical) {
    const jacobi_content *j = s && s->kind == CS_SCHEME_JACOBI ? s->content : NULL;
    if (!j) return 0;
    *critical = j->critical;
    if (j->pool) {
        cs_pool_busy(j->pool, busy, stolen);
        const int nth = cs_pool_threads(j->pool), *own = cs_pool_plan_owner(j->plan);
        for (int k = 0; k < nth; k++) units[k] = 0;
        for (int i = 0; i < j->nsub; i++) units[own[i]]++;
    } else {
        busy[0] = j->seq_busy;
        stolen[0] = 0;
        units[0] = j->nsub;
    }
    return 1;
}

cs_pool *cs_jacobi_pool(const cs_scheme *s) {
    const jacobi_content *j = s && s->kind == CS_SCHEME_JACOBI ? s->content : NULL;
    return j ? j->pool : NULL;
}

static int jacobi_kind_create(const void *spec, const cs_scheme_env *e, cs_scheme **out, cs_err *err) {
    return cs_jacobi_create_parallel(e->nunits, e->threads > 1 ? e->threads : 1, out, err);
}

const cs_kind cs_scheme_jacobi_kind = {"jacobi", NULL, 0, 0, NULL, {.scheme = jacobi_kind_create}, NULL};
