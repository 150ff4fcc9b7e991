/* Shared helpers of the iterative schemes (implicit.c, waveform.c): the macro-time history, the per-step iteration
 * record and WRMS norms (the Lagrange bases are coupling/approx.h's). Internal to schemes/. */
#ifndef COSIM_ITER_COMMON_H
#define COSIM_ITER_COMMON_H

#include "coupling/approx.h"
#include "schemes/iterative.h"

#define CS_ITER_HIST (CS_MAXDEG + 2) /* > CS_MAXDEG + 1 past macro points */

typedef struct cs_iter_record {
    int *n;          /* iterations done for step N: every attempt (corrector failures and rejected steps too) */
    long cap;
    double Thist[CS_ITER_HIST];  /* T_N of step N at [N % CS_ITER_HIST] */
    long Nhist[CS_ITER_HIST];
} cs_iter_record;

/* Remember T_N of step N (a retried step stores the same). */
void cs_iter_note_time(cs_iter_record *r, long N, double T);
/* T_{N-k} if known (k < CS_ITER_HIST), else NAN. */
double cs_iter_time(const cs_iter_record *r, long N, int k);
/* Adds the iterations of one attempt at step N (a retried or rejected step is stored again: the counts add up). */
int cs_iter_store(cs_iter_record *r, long N, int iterations, cs_err *err);
void cs_iter_free(cs_iter_record *r);
void cs_iter_stats(const cs_iter_record *r, long n, const int **per_step, long *total);
/* The scheme op `iterations` (cs_iter_stats) of an iterative scheme whose content starts with its record. */
void cs_iter_scheme_iterations(const cs_scheme *sc, long n, const int **per_step, long *total);

/* End of an iterative step: the final input polynomials in[0..nsub-1] become the step's inputs (x->used), with
 * their end values x->uend (copied from uend, or evaluated at T1 where uend is NULL) and, where the master asks,
 * their time derivatives at T1. */
void cs_iter_publish_inputs(cs_step_ctx *x, const cs_network *net, int nsub, cs_input *in, double T1,
                            const double *uend);
/* End of iterative step N = x->step on [T, T1] after `iterations`: they join the record; then a step that failed
 * (did not converge, on_failure 'raise') returns CS_ERR_CONVERGENCE with "<what> did not converge in macro step N
 * [T, T1] after k iterations <detail>" (detail: printf-style), any other publishes its inputs as above. */
int cs_iter_end_step(cs_iter_record *r, cs_step_ctx *x, const cs_network *net, int nsub, cs_input *in, double T,
                     double T1, const double *uend, int iterations, int failed, cs_err *err, const char *what,
                     const char *detail, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 13, 14)))
#endif
    ;
/* Destroys the units' snapshots (snap may be NULL, so may its entries) and frees the array. */
void cs_iter_free_snapshots(cs_unit **units, int nsub, void **snap);

#endif
