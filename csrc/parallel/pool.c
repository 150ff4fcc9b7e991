/* Thread pool of pool.h: POSIX threads; per-worker lists claimed with one atomic word each; spin, then a condition
 * variable, to start a run and to finish it. */
#include "parallel/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interrupt.h"
#include "parallel/assign.h"

enum {
    CACHE_LINE = 64,
    BALANCE_EVERY = 64,    /* re-balance before runs 1, 2, 4, ..., BALANCE_EVERY, then every BALANCE_EVERY runs */
    MEASURE_RUNS = 8       /* the items' costs are measured in (at most) this many runs before each re-balance */
};
#define BALANCE_GAIN 0.97  /* new lists only when their largest load is below this share of the current one's */
/* Spinning before sleeping (a worker for the next run, the caller for the last worker): adaptive, as the waits
 * are. A wait the spin caught doubles the spin (up to SPIN_MAX seconds); a sleep shorter than SPIN_MAX starts or
 * keeps it (at least SPIN_MIN); a longer sleep stops it. Short macro steps on idle cores spin and skip a
 * sleep/wake-up round trip; long steps, and a machine with more threads than free cores (where a spinning thread
 * takes the core from the one it waits for), sleep at once. */
#define SPIN_MAX 20e-6
#define SPIN_MIN 2e-6

/* The list of worker k in the current run: positions [lo, hi) of the run's order, packed as lo | hi << 32 in one
 * atomic word: the owner takes from the front, others take from the back, each with one compare-and-swap. */
typedef struct worker {
    _Alignas(CACHE_LINE) _Atomic uint64_t range;
    cs_pool *pool;
    int id;
    int started;
    pthread_t thread;
    double idle;        /* barrier wait, accumulated (timing on) */
    double busy;        /* running items, accumulated (timing on) */
    long stolen;        /* items taken from other workers' lists (timing on) */
    double t_done;      /* when it finished its last item of the current run */
    double spin;        /* seconds it spins for the next run before sleeping */
} worker;

struct cs_pool_plan {
    int count, n;
    int *owner, *order, *start;   /* current lists (assign.h) */
    int *cand;                    /* candidate owners of a re-balance */
    double *pcost;                /* thread CPU seconds per position of order, summed over the measured runs */
    double *icost, *load;         /* per item / per worker, at a re-balance */
    void *scratch;                /* cs_assign_balanced's */
    long runs, next_balance, balances;
};

struct cs_pool {
    /* written by the caller once per run, read by the workers */
    _Alignas(CACHE_LINE) _Atomic long generation;   /* incremented per run */
    int n;
    worker *w;
    int count;
    const int *order;   /* positions -> items (NULL: the identity) */
    double *pcost;      /* the plan's per-position costs to add to (NULL: not measured in this run) */
    cs_pool_task task;
    void *arg;
    int watch;          /* the caller obeys Ctrl-C (interrupt.h): so do the workers of this run */
    int timing;
    int *start0;        /* cs_pool_run's lists: contiguous blocks */
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    int sleepers;       /* workers waiting on start (under mu) */
    int caller_waits;   /* the caller waits on done (under mu) */
    int shutdown;       /* under mu */
    double spin;        /* seconds the caller spins for the last worker before sleeping */
    /* written by every worker at the end of a run */
    _Alignas(CACHE_LINE) _Atomic long active;        /* workers (other than 0) still in the current run */
};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline uint64_t pack(uint32_t lo, uint32_t hi) { return (uint64_t)lo | (uint64_t)hi << 32; }

/* The next position of list w: from the front (its owner) or the back (another worker); -1 when it is empty. */
static inline int take(worker *w, int front) {
    uint64_t r = atomic_load_explicit(&w->range, memory_order_relaxed);
    for (;;) {
        uint32_t lo = (uint32_t)r, hi = (uint32_t)(r >> 32);
        if (lo >= hi) return -1;
        uint64_t nr = front ? pack(lo + 1, hi) : pack(lo, hi - 1);
        if (atomic_compare_exchange_weak_explicit(&w->range, &r, nr, memory_order_relaxed, memory_order_relaxed))
            return (int)(front ? lo : hi - 1);
    }
}

/* CPU seconds of the calling thread: an item's cost that a preemption on a shared machine does not inflate */
static double thread_cpu(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)) return 0.0;
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static inline void run_pos(cs_pool *p, worker *me, int pos) {
    const int item = p->order ? p->order[pos] : pos;
    if (!p->pcost && !p->timing) {
        p->task(p->arg, item, me->id);
        return;
    }
    const double t0 = p->timing ? now() : 0.0, c0 = p->pcost ? thread_cpu() : 0.0;
    p->task(p->arg, item, me->id);
    if (p->pcost) p->pcost[pos] += thread_cpu() - c0;   /* a position is run by one worker per run */
    if (p->timing) me->busy += now() - t0;
}

static void work(cs_pool *p, int id) {
    worker *me = &p->w[id];
    for (int pos; (pos = take(me, 1)) >= 0;) run_pos(p, me, pos);
    for (int v = 1; v < p->n; v++) {    /* own list done: help the others, from the back of their lists */
        worker *o = &p->w[(id + v) % p->n];
        for (int pos; (pos = take(o, 0)) >= 0;) {
            run_pos(p, me, pos);
            me->stolen++;
        }
    }
    if (p->timing) me->t_done = now();
}

/* Spins until (*v == value) == equal, for at most spin seconds since t0; 1 when that came. */
static int spin_until(const _Atomic long *v, long value, int equal, double t0, double spin) {
    if (spin <= 0.0) return 0;
    for (unsigned s = 1;; s++) {
        if ((atomic_load_explicit(v, memory_order_acquire) == value) == equal) return 1;
        if (!(s & 63) && now() - t0 > spin) return 0;
        relax();
    }
}

/* The next spin after a wait of `waited` seconds that the spin caught or not (see SPIN_MAX). */
static double adapt(double spin, int caught, double waited) {
    if (caught) return spin * 2 > SPIN_MAX ? SPIN_MAX : spin * 2;
    if (waited <= SPIN_MAX) return spin < SPIN_MIN ? SPIN_MIN : spin;   /* a short sleep: spinning would have done */
    return 0.0;
}

/* The next generation after seen (spin, then sleep), or seen when the pool shuts down. */
static long wait_start(cs_pool *p, worker *me, long seen) {
    const double t0 = now();
    if (spin_until(&p->generation, seen, 0, t0, me->spin)) {
        me->spin = adapt(me->spin, 1, 0.0);
        return atomic_load_explicit(&p->generation, memory_order_acquire);
    }
    pthread_mutex_lock(&p->mu);
    p->sleepers++;
    long g;
    while ((g = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen && !p->shutdown)
        pthread_cond_wait(&p->start, &p->mu);
    p->sleepers--;
    if (p->shutdown) g = seen;
    pthread_mutex_unlock(&p->mu);
    me->spin = adapt(me->spin, 0, now() - t0);
    return g;
}

static void *worker_main(void *arg) {
    worker *me = arg;
    cs_pool *p = me->pool;
    long seen = 0;
    for (;;) {
        long g = wait_start(p, me, seen);
        if (g == seen) break;     /* shutdown */
        seen = g;
        cs_interrupt_watch(p->watch);
        work(p, me->id);
        if (atomic_fetch_sub_explicit(&p->active, 1, memory_order_acq_rel) == 1) {   /* the last one */
            pthread_mutex_lock(&p->mu);
            if (p->caller_waits) pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
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
    free(p->start0);
    free(p);
}

static void *zalloc_aligned(size_t bytes) {
    void *m = NULL;
    if (posix_memalign(&m, CACHE_LINE, bytes)) return NULL;
    memset(m, 0, bytes);
    return m;
}

int cs_pool_create(int nthreads, cs_pool **out, cs_err *err) {
    *out = NULL;
    if (nthreads < 1 || nthreads > 1024) return cs_fail(err, CS_ERR_ARG, "threads: must be in 1..1024, got %d", nthreads);
    cs_pool *p = zalloc_aligned(sizeof *p);
    if (!p) return cs_fail(err, CS_ERR_NOMEM, "threads: out of memory");
    p->w = zalloc_aligned(sizeof(worker) * (size_t)nthreads);
    p->start0 = malloc(sizeof(int) * ((size_t)nthreads + 1));
    if (!p->w || !p->start0) {
        free(p->w); free(p->start0); free(p);
        return cs_fail(err, CS_ERR_NOMEM, "threads: out of memory");
    }
    p->n = nthreads;
    atomic_init(&p->generation, 0);
    atomic_init(&p->active, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int k = 0; k < nthreads; k++) {
        p->w[k].pool = p;
        p->w[k].id = k;
        atomic_init(&p->w[k].range, 0);
    }
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

/* One run over count positions with the lists start[] of order (NULL: identity); pcost: per-position costs to add
 * the measured wall times to (NULL: none). */
static void run_lists(cs_pool *p, int count, const int *order, const int *start, double *pcost, cs_pool_task task,
                      void *arg) {
    p->task = task;
    p->arg = arg;
    p->count = count;
    p->order = order;
    p->pcost = pcost;
    p->watch = cs_interrupt_watched();
    for (int k = 0; k < p->n; k++)
        atomic_store_explicit(&p->w[k].range, pack((uint32_t)start[k], (uint32_t)start[k + 1]), memory_order_relaxed);
    atomic_store_explicit(&p->active, p->n - 1, memory_order_relaxed);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);   /* publishes the stores above */
    if (p->sleepers) pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    work(p, 0);
    if (atomic_load_explicit(&p->active, memory_order_acquire) > 0) {
        const double t0 = now();
        const int caught = spin_until(&p->active, 0, 1, t0, p->spin);
        if (!caught) {
            pthread_mutex_lock(&p->mu);
            p->caller_waits = 1;
            while (atomic_load_explicit(&p->active, memory_order_acquire) > 0) pthread_cond_wait(&p->done, &p->mu);
            p->caller_waits = 0;
            pthread_mutex_unlock(&p->mu);
        }
        p->spin = adapt(p->spin, caught, caught ? 0.0 : now() - t0);
    }
    if (p->timing) {
        double t = now();
        for (int k = 0; k < p->n; k++) p->w[k].idle += t - p->w[k].t_done;
    }
}

void cs_pool_run(cs_pool *p, int count, cs_pool_task task, void *arg) {
    if (p->n == 1 || count <= 1) {
        for (int i = 0; i < count; i++) task(arg, i, 0);
        return;
    }
    for (int k = 0; k <= p->n; k++) p->start0[k] = (int)((long)k * count / p->n);   /* contiguous blocks */
    run_lists(p, count, NULL, p->start0, NULL, task, arg);
}

void cs_pool_plan_destroy(cs_pool_plan *q) {
    if (!q) return;
    free(q->owner); free(q->order); free(q->start); free(q->cand);
    free(q->pcost); free(q->icost); free(q->load); free(q->scratch);
    free(q);
}

int cs_pool_plan_create(const cs_pool *p, int count, cs_pool_plan **out, cs_err *err) {
    *out = NULL;
    if (count < 0) return cs_fail(err, CS_ERR_ARG, "threads: negative item count %d", count);
    cs_pool_plan *q = calloc(1, sizeof *q);
    if (!q) return cs_fail(err, CS_ERR_NOMEM, "threads: out of memory");
    const size_t c = (size_t)(count > 0 ? count : 1), n = (size_t)p->n;
    q->count = count;
    q->n = p->n;
    q->owner = malloc(sizeof(int) * c);
    q->cand = malloc(sizeof(int) * c);
    q->order = malloc(sizeof(int) * c);
    q->start = malloc(sizeof(int) * (n + 1));
    q->pcost = calloc(c, sizeof(double));
    q->icost = calloc(c, sizeof(double));
    q->load = calloc(n, sizeof(double));
    q->scratch = malloc(cs_assign_scratch_bytes(count, p->n));
    if (!q->owner || !q->cand || !q->order || !q->start || !q->pcost || !q->icost || !q->load || !q->scratch) {
        cs_pool_plan_destroy(q);
        return cs_fail(err, CS_ERR_NOMEM, "threads: out of memory");
    }
    cs_assign_blocks(count, q->n, q->owner);
    cs_assign_lists(count, q->owner, q->n, q->order, q->start);
    q->next_balance = 1;
    *out = q;
    return CS_OK;
}

/* Lists by the costs measured before this re-balance, when they lower the largest load (assign.h). */
static void rebalance(cs_pool_plan *q) {
    for (int pos = 0; pos < q->count; pos++) {
        q->icost[q->order[pos]] = q->pcost[pos];
        q->pcost[pos] = 0.0;
    }
    const double cur = cs_assign_max_load(q->count, q->icost, q->n, q->owner, q->load);
    const double best = cs_assign_balanced(q->count, q->icost, q->n, q->cand, q->scratch);
    if (!(best < BALANCE_GAIN * cur)) return;
    int *t = q->owner; q->owner = q->cand; q->cand = t;
    cs_assign_lists(q->count, q->owner, q->n, q->order, q->start);
    q->balances++;
}

void cs_pool_run_plan(cs_pool *p, cs_pool_plan *q, cs_pool_task task, void *arg) {
    if (p->n == 1 || q->count <= 1 || q->n != p->n) {
        for (int i = 0; i < q->count; i++) task(arg, i, 0);
        return;
    }
    if (q->runs == q->next_balance) {   /* before the run: the owners stay those of the last run until the next */
        rebalance(q);
        q->next_balance = q->runs < BALANCE_EVERY ? 2 * q->runs : q->runs + BALANCE_EVERY;
    }
    const int measure = q->next_balance - q->runs <= MEASURE_RUNS;
    run_lists(p, q->count, q->order, q->start, measure ? q->pcost : NULL, task, arg);
    q->runs++;
}

const int *cs_pool_plan_owner(const cs_pool_plan *q) { return q->owner; }
long cs_pool_plan_balances(const cs_pool_plan *q) { return q->balances; }

int cs_pool_threads(const cs_pool *p) { return p->n; }
void cs_pool_set_timing(cs_pool *p, int on) { p->timing = on; }

void cs_pool_idle(const cs_pool *p, double *idle) {
    for (int k = 0; k < p->n; k++) idle[k] = p->w[k].idle;
}

void cs_pool_busy(const cs_pool *p, double *busy, long *stolen) {
    for (int k = 0; k < p->n; k++) {
        if (busy) busy[k] = p->w[k].busy;
        if (stolen) stolen[k] = p->w[k].stolen;
    }
}
