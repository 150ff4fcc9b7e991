#include "analysis/rhomap.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "interrupt.h"

#define CHUNK 8

typedef struct job {
    const cs_amp_plan *plan;
    long nsys, nH, npts;
    const double *packs, *H;
    const double *Ytab;         /* per system: Y = (I - D L)^{-1} C (n_y x n_x), or NULL */
    const unsigned char *ybad;  /* per system: 1 if Y could not be formed (singular loop) */
    double *rho;
    atomic_long next;
    int watch;                  /* the caller obeys Ctrl-C (interrupt.h): so do the workers */
    atomic_int stop;            /* one of them noticed it: no more chunks */
} job;

typedef struct worker {
    job *jb;
    cs_amp_work *w;
    double *Omega;
    long nfail;
    cs_err first;
} worker;

static void *run(void *arg) {
    worker *wk = arg;
    job *jb = wk->jb;
    const cs_amp_plan *p = jb->plan;
    cs_interrupt_watch(jb->watch);
    for (;;) {
        if (cs_interrupted()) atomic_store(&jb->stop, 1);
        if (atomic_load_explicit(&jb->stop, memory_order_relaxed)) break;
        long start = atomic_fetch_add(&jb->next, CHUNK);
        if (start >= jb->npts) break;
        long stop = start + CHUNK < jb->npts ? start + CHUNK : jb->npts;
        for (long q = start; q < stop; q++) {
            /* H-major order: neighbouring points share H, so subsystems that do not vary over the grid reuse their
             * propagator (cs_amp_work cache). */
            long ih = q / jb->nsys, isys = q % jb->nsys;
            cs_err e = {0};
            double r = NAN;
            if (jb->ybad && jb->ybad[isys]) {
                wk->nfail++; /* already reported when Y was formed */
            } else if (cs_amp_spectral_radius(p, jb->packs + (size_t)isys * p->pack_size, jb->H[ih],
                                              jb->Ytab ? jb->Ytab + (size_t)isys * p->nyt * p->nxt : NULL, wk->Omega,
                                              &r, wk->w, &e)) {
                r = NAN;
                if (wk->nfail++ == 0) wk->first = e;
            }
            jb->rho[isys * jb->nH + ih] = r;
        }
    }
    return NULL;
}

int cs_rhomap(const cs_amp_plan *plan, long nsys, const double *packs, long nH, const double *H, double *rho,
              int nthreads, cs_rhomap_result *res, cs_err *err) {
    if (nsys < 1 || nH < 1) return cs_fail(err, CS_ERR_ARG, "grid: empty parameter grid");
    if (nthreads < 1) return cs_fail(err, CS_ERR_ARG, "threads: must be >= 1, got %d", nthreads);
    long npts = nsys * nH;
    if (nthreads > npts) nthreads = (int)npts;
    job jb = {plan, nsys, nH, npts, packs, H, NULL, NULL, rho, 0, cs_interrupt_watched(), 0};
    atomic_init(&jb.next, 0);
    atomic_init(&jb.stop, 0);
    worker *wk = calloc((size_t)nthreads, sizeof *wk);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    int rc = CS_OK, started = 0;
    double *Ytab = NULL;        /* freed at done: declared before the first goto */
    unsigned char *ybad = NULL;
    if (!wk || !th) { rc = cs_fail(err, CS_ERR_NOMEM, "out of memory"); goto done; }
    for (int t = 0; t < nthreads; t++) {
        wk[t].jb = &jb;
        wk[t].w = cs_amp_work_create(plan);
        wk[t].Omega = malloc(sizeof(double) * ((size_t)plan->dim * plan->dim + 1));
        if (!wk[t].w || !wk[t].Omega) { rc = cs_fail(err, CS_ERR_NOMEM, "out of memory"); goto done; }
    }
    /* Y = (I - D L)^{-1} C does not depend on H: form it once per system (if the table is of reasonable size). */
    cs_err yfirst = {0};
    long ybad_count = 0;
    const size_t ysize = (size_t)plan->nyt * plan->nxt;
    if (plan->update == CS_UPDATE_CONSISTENT && ysize > 0 && nH > 1 && (size_t)nsys * ysize <= ((size_t)1 << 22)) {
        Ytab = malloc(sizeof(double) * (size_t)nsys * ysize);
        ybad = calloc((size_t)nsys, 1);
        if (!Ytab || !ybad) { rc = cs_fail(err, CS_ERR_NOMEM, "out of memory"); goto done; }
        for (long i = 0; i < nsys; i++) {
            if (!(i & 1023) && cs_interrupted()) { rc = cs_interrupt_fail(err, -1.0); goto done; }
            cs_err e = {0};
            if (cs_amp_output_map(plan, packs + (size_t)i * plan->pack_size, Ytab + (size_t)i * ysize, wk[0].w, &e)) {
                ybad[i] = 1;
                if (ybad_count++ == 0) yfirst = e;
            }
        }
        jb.Ytab = Ytab;
        jb.ybad = ybad;
    }
    /* thread 0 is the calling thread */
    for (int t = 1; t < nthreads; t++) {
        if (pthread_create(&th[t], NULL, run, &wk[t]) != 0) break;
        started = t;
    }
    const int watch = cs_interrupt_watched();
    run(&wk[0]);
    cs_interrupt_watch(watch);
    for (int t = 1; t <= started; t++) pthread_join(th[t], NULL);
    if (atomic_load(&jb.stop)) { rc = cs_interrupt_fail(err, -1.0); goto done; }
    res->nfail = 0;
    res->first.code = 0;
    res->first.msg[0] = 0;
    if (ybad_count) res->first = yfirst;
    for (int t = 0; t < nthreads; t++) {
        if (wk[t].nfail && !res->nfail && !ybad_count) res->first = wk[t].first;
        res->nfail += wk[t].nfail;
    }
done:
    if (wk)
        for (int t = 0; t < nthreads; t++) { cs_amp_work_destroy(wk[t].w); free(wk[t].Omega); }
    free(wk);
    free(th);
    free(Ytab);
    free(ybad);
    return rc;
}
