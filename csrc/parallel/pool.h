/* A small thread pool for the units of one macro step (kraft2021 §16: subsystems integrate in parallel between
 * macro points and synchronise there).
 *
 * Created once per run with n threads (the calling thread is worker 0, so n - 1 threads are started); every run
 * hands out the items 0..count-1 and returns when all are done: a barrier at the end of the macro step.
 *
 * Who runs what: each worker has a list of items (parallel/assign.h). cs_pool_run splits the items into contiguous
 * blocks; cs_pool_run_plan uses a plan that measures each item's cost now and then and re-balances the lists by it
 * (LPT). A unit stays on the same thread from step to step (its workspace stays in that core's
 * cache). A worker done with its list takes items from the end of other workers' lists (a preempted thread on a
 * shared machine does not hold up the step). Every item runs exactly once per run.
 *
 * Between runs workers spin for a short while (a short macro step does not pay a sleep/wake-up round trip per
 * worker), then sleep on a condition variable; the spin adapts to how long the waits are (none when they are long
 * or the machine has no free core). Per-worker data lie on cache lines of their own. No allocation after
 * create. The pool holds no results: tasks write into per-item slots of their own, so a result never depends on
 * which thread ran an item. */
#ifndef COSIM_POOL_H
#define COSIM_POOL_H

#include "common.h"

typedef struct cs_pool cs_pool;
typedef struct cs_pool_plan cs_pool_plan;

/* task(arg, item, worker): worker in 0..n-1 is the thread running it (for per-thread scratch). */
typedef void (*cs_pool_task)(void *arg, int item, int worker);

int cs_pool_create(int nthreads, cs_pool **out, cs_err *err);
/* Runs task for the items 0..count-1 (contiguous blocks per worker) and waits for all of them. Not reentrant (one
 * run at a time per pool). */
void cs_pool_run(cs_pool *p, int count, cs_pool_task task, void *arg);
/* A plan for count items on pool p: lists balanced by the items' measured cost, the CPU time of the thread that ran
 * them (not inflated by a preemption) over the (at most) 8 runs before each re-balance; re-balanced before runs 1,
 * 2, 4, ..., 64 and then every 64 runs, when that lowers the largest load by more than 3 %. */
int cs_pool_plan_create(const cs_pool *p, int count, cs_pool_plan **out, cs_err *err);
void cs_pool_plan_destroy(cs_pool_plan *plan);
/* cs_pool_run over the plan's items with its lists. */
void cs_pool_run_plan(cs_pool *p, cs_pool_plan *plan, cs_pool_task task, void *arg);
/* The plan's worker of each item (count entries; the lists of the last run) and how often its lists changed. */
const int *cs_pool_plan_owner(const cs_pool_plan *plan);
long cs_pool_plan_balances(const cs_pool_plan *plan);
int cs_pool_threads(const cs_pool *p);
/* Timing (cs_pool_set_timing): per worker the seconds spent waiting at the end-of-run barrier (after its last item,
 * before the run returned) and the seconds spent running items, summed over runs; and the items each worker took
 * from other workers' lists. Each array must have room for cs_pool_threads values (NULL: not wanted). */
void cs_pool_set_timing(cs_pool *p, int on);
void cs_pool_idle(const cs_pool *p, double *idle);
void cs_pool_busy(const cs_pool *p, double *busy, long *stolen);
void cs_pool_destroy(cs_pool *p);

#endif
