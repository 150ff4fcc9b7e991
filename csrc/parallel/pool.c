/* Thread pool of pool.h: POSIX threads, one mutex, a condition variable to start a run and one to finish it. */
#include "parallel/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "interrupt.h"

typedef struct worker {
    cs_pool *pool;
    int id;
    pthread_t thread;
    int started;
    double idle;        /* barrier wait, accumulated (timing on) */
    double t_done;      /* when it finished its last item of the current run */
} worker;

struct cs_pool {
    int n;
    worker *w;
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    long generation;    /* incremented per run */
    int shutdown;
    int active;         /* workers (other than 0) still running the current run */
    int count;
    cs_pool_task task;
    void *arg;
    atomic_int next;    /* next item to hand out */
    int watch;          /* the caller obeys Ctrl-C (interrupt.h): so do the workers of this run */
    int timing;
};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void work(cs_pool *p, int id) {
    for (;;) {
        int i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (i >= p->count) break;
        p->task(p->arg, i, id);
    }
    if (p->timing) p->w[id].t_done = now();
}

static void *worker_main(void *arg) {
    worker *me = arg;
    cs_pool *p = me->pool;
    long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->generation == seen && !p->shutdown) pthread_cond_wait(&p->start, &p->mu);
        if (p->shutdown) break;
        seen = p->generation;
        cs_interrupt_watch(p->watch);
        pthread_mutex_unlock(&p->mu);
        work(p, me->id);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0) pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void cs_pool_destroy(cs_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->shutdown = 1;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    for (int k = 1; k < p->n; k++)
        if (p->w[k].started) pthread_join(p->w[k].thread, NULL);
    pthread_cond_destroy(&p->start);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->w);
    free(p);
}

int cs_pool_create(int nthreads, cs_pool **out, cs_err *err) {
    *out = NULL;
    if (nthreads < 1 || nthreads > 1024) return cs_fail(err, CS_ERR_ARG, "threads: must be in 1..1024, got %d", nthreads);
    cs_pool *p = calloc(1, sizeof *p);
    if (!p) return cs_fail(err, CS_ERR_NOMEM, "threads: out of memory");
    p->w = calloc((size_t)nthreads, sizeof(worker));
    if (!p->w) { free(p); return cs_fail(err, CS_ERR_NOMEM, "threads: out of memory"); }
    p->n = nthreads;
    atomic_init(&p->next, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int k = 0; k < nthreads; k++) { p->w[k].pool = p; p->w[k].id = k; }
    for (int k = 1; k < nthreads; k++) {
        if (pthread_create(&p->w[k].thread, NULL, worker_main, &p->w[k])) {
            cs_pool_destroy(p);
            return cs_fail(err, CS_ERR_NOMEM, "threads: could not start thread %d of %d", k + 1, nthreads);
        }
        p->w[k].started = 1;
    }
    *out = p;
    return CS_OK;
}

void cs_pool_run(cs_pool *p, int count, cs_pool_task task, void *arg) {
    if (p->n == 1 || count <= 1) {
        for (int i = 0; i < count; i++) task(arg, i, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->task = task;
    p->arg = arg;
    p->count = count;
    p->watch = cs_interrupt_watched();
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->active = p->n - 1;
    p->generation++;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    work(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->active > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    if (p->timing) {
        double t = now();
        for (int k = 0; k < p->n; k++) p->w[k].idle += t - p->w[k].t_done;
    }
}

int cs_pool_threads(const cs_pool *p) { return p->n; }
void cs_pool_set_timing(cs_pool *p, int on) { p->timing = on; }

void cs_pool_idle(const cs_pool *p, double *idle) {
    for (int k = 0; k < p->n; k++) idle[k] = p->w[k].idle;
}
