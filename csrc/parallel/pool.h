/* A small thread pool for the units of one macro step (kraft2021 §16: subsystems integrate in parallel between
 * macro points and synchronise there).
 *
 * Created once per run with n threads (the calling thread is worker 0, so n - 1 threads are started); every
 * cs_pool_run hands out the items 0..count-1 to the workers (dynamic: the next free worker takes the next item) and
 * returns when all are done: a barrier at the end of the macro step. Workers sleep on a condition variable between
 * runs. No allocation after create. The pool holds no results: tasks write into per-item slots of their own, so a
 * result never depends on which thread ran an item. */
#ifndef COSIM_POOL_H
#define COSIM_POOL_H

#include "common.h"

typedef struct cs_pool cs_pool;

/* task(arg, item, worker): worker in 0..n-1 is the thread running it (for per-thread scratch). */
typedef void (*cs_pool_task)(void *arg, int item, int worker);

int cs_pool_create(int nthreads, cs_pool **out, cs_err *err);
/* Runs task for the items 0..count-1 and waits for all of them. Not reentrant (one run at a time per pool). */
void cs_pool_run(cs_pool *p, int count, cs_pool_task task, void *arg);
int cs_pool_threads(const cs_pool *p);
/* Seconds each worker spent waiting at the end-of-run barrier (after its last item, before the run returned), summed
 * over runs, when timing is on (cs_pool_set_timing). idle must have room for cs_pool_threads values. */
void cs_pool_set_timing(cs_pool *p, int on);
void cs_pool_idle(const cs_pool *p, double *idle);
void cs_pool_destroy(cs_pool *p);

#endif
