#include "schemes/iter_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void cs_iter_note_time(cs_iter_record *r, long N, double T) {
    if (N == 0) for (int q = 0; q < CS_ITER_HIST; q++) r->Nhist[q] = -1;
    r->Thist[N % CS_ITER_HIST] = T;
    r->Nhist[N % CS_ITER_HIST] = N;
}

double cs_iter_time(const cs_iter_record *r, long N, int k) {
    if (k >= CS_ITER_HIST || N - k < 0) return NAN;
    long M = N - k;
    return r->Nhist[M % CS_ITER_HIST] == M ? r->Thist[M % CS_ITER_HIST] : NAN;
}

int cs_iter_store(cs_iter_record *r, long N, int iterations, cs_err *err) {
    if (N >= r->cap) { /* doubling: amortised, no allocation on most steps */
        long c = r->cap ? 2 * r->cap : 1024;
        while (c <= N) c *= 2;
        int *p = realloc(r->n, sizeof(int) * (size_t)c);
        if (!p) return cs_fail(err, CS_ERR_NOMEM, "scheme: out of memory (iteration record)");
        memset(p + r->cap, 0, sizeof(int) * (size_t)(c - r->cap));
        r->n = p;
        r->cap = c;
    }
    r->n[N] += iterations; /* a restored and repeated step N adds its attempts: all iterations done for N */
    return CS_OK;
}

void cs_iter_free(cs_iter_record *r) { free(r->n); r->n = NULL; r->cap = 0; }

void cs_iter_stats(const cs_iter_record *r, long n, const int **per_step, long *total) {
    *per_step = r->n;
    if (n > r->cap) { n = r->cap; *per_step = NULL; } /* not every step recorded: only the total */
    long t = 0;
    for (long k = 0; k < n; k++) t += r->n[k];
    *total = t;
}

void cs_iter_publish_inputs(cs_step_ctx *x, const cs_network *net, int nsub, cs_input *in, double T1,
                            const double *uend) {
    if (uend) memcpy(x->uend, uend, sizeof(double) * net->nu);
    for (int i = 0; i < nsub; i++) {
        x->used[i] = &in[i];
        if (!uend) cs_input_eval(&in[i], T1, x->uend + net->uoff[i]);
        if (x->need_udot) cs_input_eval_dt(&in[i], T1, x->udot + net->uoff[i]);
    }
}
