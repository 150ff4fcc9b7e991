#include "schemes/iter_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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

void cs_iter_scheme_iterations(const cs_scheme *sc, long n, const int **per_step, long *total) {
    cs_iter_stats((const cs_iter_record *)sc->content, n, per_step, total);
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

int cs_iter_end_step(cs_iter_record *r, cs_step_ctx *x, const cs_network *net, int nsub, cs_input *in, double T,
                     double T1, const double *uend, int iterations, int failed, cs_err *err, const char *what,
                     const char *detail, ...) {
    CS_TRY(cs_iter_store(r, x->step, iterations, err));
    if (failed) {
        char d[CS_ERRMSG_LEN];
        va_list ap;
        va_start(ap, detail);
        vsnprintf(d, sizeof d, detail, ap);
        va_end(ap);
        return cs_fail(err, CS_ERR_CONVERGENCE, "%s did not converge in macro step %ld [%.10g, %.10g] after %d "
                       "iterations %s", what, x->step, T, T1, iterations, d);
    }
    cs_iter_publish_inputs(x, net, nsub, in, T1, uend);
    return CS_OK;
}

void cs_iter_free_snapshots(cs_unit **units, int nsub, void **snap) {
    if (snap)
        for (int i = 0; i < nsub; i++) cs_unit_snapshot_destroy(units[i], snap[i]);
    free(snap);
}

/* The parameters of cs_iter_opts (the implicit and the waveform kind). */
#define P(name, type) CS_PARAM_FIELD(cs_iter_opts, #name, type, name)
const cs_param cs_iter_params[] = {
    P(tol, CS_PARAM_DOUBLE), P(atol, CS_PARAM_DOUBLE), P(max_iter, CS_PARAM_INT), P(on_failure, CS_PARAM_INT),
    P(jacobian, CS_PARAM_INT), P(tau, CS_PARAM_DOUBLE), P(conv_y, CS_PARAM_INT), P(perturbation, CS_PARAM_DOUBLE),
    P(omega, CS_PARAM_DOUBLE), P(accel, CS_PARAM_INT), P(waveform, CS_PARAM_INT), P(gauss_seidel, CS_PARAM_INT),
    P(reuse, CS_PARAM_INT), P(filter, CS_PARAM_DOUBLE), P(kappa, CS_PARAM_INT),
};
#undef P

_Static_assert(CS_NPARAMS(cs_iter_params) == CS_ITER_NPARAMS, "CS_ITER_NPARAMS: the table's length");
