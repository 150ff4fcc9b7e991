/* Units distributed over processes: the exchange of share.h (packing, failure agreement); the communication is the
 * backend's. */
#include "parallel/share.h"

#include <stdlib.h>
#include <string.h>

struct cs_share {
    cs_share_backend b;
    int nunits;
    int *first;              /* size + 1 */
    int *counts, *displs;    /* size each: the current exchange */
    double *send, *recv;     /* grown to the largest exchange */
    size_t nsend, nrecv;
};

int cs_share_create(const cs_share_backend *b, int nunits, const int *first, cs_share **out, cs_err *err) {
    *out = NULL;
    if (!b || !b->allgatherv || !b->bcast || b->size < 1 || b->rank < 0 || b->rank >= b->size)
        return cs_fail(err, CS_ERR_ARG, "parallel: an incomplete communication backend");
    if (first[0] != 0 || first[b->size] != nunits)
        return cs_fail(err, CS_ERR_ARG, "parallel: the unit blocks must cover units 0..%d", nunits - 1);
    for (int p = 0; p < b->size; p++)
        if (first[p + 1] < first[p]) return cs_fail(err, CS_ERR_ARG, "parallel: unit blocks out of order");
    cs_share *s = calloc(1, sizeof *s);
    if (s) {
        s->first = malloc(sizeof(int) * ((size_t)b->size + 1));
        s->counts = malloc(sizeof(int) * (size_t)b->size);
        s->displs = malloc(sizeof(int) * (size_t)b->size);
    }
    if (!s || !s->first || !s->counts || !s->displs) {
        cs_share_destroy(s);
        return cs_fail(err, CS_ERR_NOMEM, "parallel: out of memory");
    }
    s->b = *b;
    s->nunits = nunits;
    memcpy(s->first, first, sizeof(int) * ((size_t)b->size + 1));
    *out = s;
    return CS_OK;
}

void cs_share_destroy(cs_share *s) {
    if (!s) return;
    free(s->first); free(s->counts); free(s->displs); free(s->send); free(s->recv);
    free(s);
}

int cs_share_owns(const cs_share *s, int i) {
    return !s || (i >= s->first[s->b.rank] && i < s->first[s->b.rank + 1]);
}

int cs_share_rank(const cs_share *s) { return s ? s->b.rank : 0; }
int cs_share_size(const cs_share *s) { return s ? s->b.size : 1; }

static int grow(double **buf, size_t *cap, size_t n) {
    if (n <= *cap) return 0;
    double *p = realloc(*buf, sizeof(double) * n);
    if (!p) return -1;
    *buf = p;
    *cap = n;
    return 0;
}

/* The lowest failing process's error on every process (a second collective, only after a failure). */
static int agree_failure(cs_share *s, int root, int code, cs_err *err) {
    cs_err e = *err;
    int mrc = s->b.bcast(s->b.ctx, &e, (int)sizeof e, root);
    if (mrc) return cs_fail(err, CS_ERR_ARG, "parallel: broadcast failed (MPI error %d)", mrc);
    *err = e;
    err->code = code;
    return code;
}

/* Layout: process p's part is [its units' blocks..., status] (the status as one double: exact for any int). */
int cs_share_exchange(cs_share *s, int i0, int i1, const int *off, cs_share_pack pack, cs_share_unpack unpack,
                      void *ctx, int rc, cs_err *err) {
    const int P = s->b.size, me = s->b.rank;
    size_t total = 0;
    for (int p = 0; p < P; p++) {
        const int lo = s->first[p] > i0 ? s->first[p] : i0, hi = s->first[p + 1] < i1 ? s->first[p + 1] : i1;
        s->counts[p] = 1 + (hi > lo ? off[hi] - off[lo] : 0);
        s->displs[p] = (int)total;
        total += (size_t)s->counts[p];
    }
    const int count = s->counts[me];
    if (grow(&s->send, &s->nsend, (size_t)count) || grow(&s->recv, &s->nrecv, total))
        return cs_fail(err, CS_ERR_NOMEM, "parallel: out of memory for an exchange of %zu values", total);
    if (!rc) {
        const int lo = s->first[me] > i0 ? s->first[me] : i0, hi = s->first[me + 1] < i1 ? s->first[me + 1] : i1;
        for (int i = lo; i < hi; i++) pack(ctx, i, s->send + (off[i] - off[lo]));
    } else {
        memset(s->send, 0, sizeof(double) * (size_t)count);   /* a failed process's blocks are never read */
    }
    s->send[count - 1] = (double)rc;
    int mrc = s->b.allgatherv(s->b.ctx, s->send, count, s->recv, s->counts, s->displs);
    if (mrc) return cs_fail(err, CS_ERR_ARG, "parallel: all-gather failed (MPI error %d)", mrc);
    for (int p = 0; p < P; p++) {
        const int prc = (int)s->recv[s->displs[p] + s->counts[p] - 1];
        if (prc) return agree_failure(s, p, prc, err);
    }
    for (int p = 0; p < P; p++) {
        if (p == me) continue;
        const int lo = s->first[p] > i0 ? s->first[p] : i0, hi = s->first[p + 1] < i1 ? s->first[p + 1] : i1;
        for (int i = lo; i < hi; i++) unpack(ctx, i, s->recv + s->displs[p] + (off[i] - off[lo]));
    }
    return CS_OK;
}

typedef struct stacked { double *buf; const int *off; } stacked;

static void stacked_pack(void *ctx, int i, double *dst) {
    const stacked *k = ctx;
    memcpy(dst, k->buf + k->off[i], sizeof(double) * (size_t)(k->off[i + 1] - k->off[i]));
}

static void stacked_unpack(void *ctx, int i, const double *src) {
    const stacked *k = ctx;
    memcpy(k->buf + k->off[i], src, sizeof(double) * (size_t)(k->off[i + 1] - k->off[i]));
}

int cs_share_stacked(cs_share *s, double *buf, const int *off, int i0, int i1, int rc, cs_err *err) {
    stacked k = {buf, off};
    return cs_share_exchange(s, i0, i1, off, stacked_pack, stacked_unpack, &k, rc, err);
}
