/* MIMO recursive least squares with exponential forgetting (Genser 2020, section 2.3.2, eq. 2.86-2.87;
 * spec genser2020.md section 6.2, with the corrected covariance update, erratum E7).
 *
 * One independent MISO filter per output i = 1..ny, parameters
 *     p_i = [a_i1 .. a_i,na, b_i11 .. b_i1,nb, .., b_i,nu,1 .. b_i,nu,nb]        (np = na + nu nb)
 * of the difference equation
 *     y_i^k = sum_l a_il y_i^{k-l} + sum_j sum_l b_ijl w_j^{k-l}
 * where w^{k-1} is the input applied during the step (T^{k-1}, T^k] that produced y^k, i.e. u^k in the index
 * convention of spec section 1.3 (otherwise Su^+ = 0, see spec section 6.2). Update per output:
 *     g = P phi / (lambda + phi^T P phi);  p += g (y - phi^T p);  P = (P - g phi^T P) / lambda
 * The update keeps P exactly symmetric (only the upper triangle is computed and mirrored) and optionally bounds
 * trace(P) (covariance wind-up under poor excitation with lambda < 1).
 *
 * All memory is allocated in cs_rls_create; cs_rls_update does not allocate. */
#ifndef COSIM_SYSID_RLS_H
#define COSIM_SYSID_RLS_H

#include "common.h"

typedef struct cs_rls cs_rls;

/* Size caps (checked with overflow-safe arithmetic in cs_rls_create, mirrored in cosim/sysid.py):
 * np = na + nu nb <= CS_RLS_MAX_PARAMS and ny np^2 <= CS_RLS_MAX_COV covariance entries (256 MiB). Every size
 * derived from them, including cs_rls_state_size, then fits in an int. */
#define CS_RLS_MAX_PARAMS 4096
#define CS_RLS_MAX_COV (1L << 25)

/* ny, nu >= 1; na, nb >= 0 with na + nb >= 1; lambda in (0, 1]; P0 > 0 (P(0) = P0 I);
 * trace_max > 0 bounds trace(P) per output, <= 0 or inf disables the bound. */
int cs_rls_create(int ny, int nu, int na, int nb, double lambda, double P0, double trace_max, cs_rls **out,
                  cs_err *err);
void cs_rls_destroy(cs_rls *r);

int cs_rls_nparams(const cs_rls *r);
void cs_rls_dims(const cs_rls *r, int *ny, int *nu, int *na, int *nb);   /* np = na + nu nb */

/* One sample: u (nu) is the input applied during the step that ended with output y (ny).
 * Parameters change only once na past outputs and nb inputs are available (earlier samples only fill the history).
 * e (ny, may be NULL) receives the a-priori prediction errors y - phi^T p (0 while the history fills).
 * Returns CS_ERR_DIVERGED if the covariance update produces a non-positive or non-finite denominator. */
int cs_rls_update(cs_rls *r, const double *u, const double *y, double *e, cs_err *err);
/* N samples, U: N x nu, Y: N x ny, E: N x ny (may be NULL). */
int cs_rls_update_many(cs_rls *r, int N, const double *U, const double *Y, double *E, cs_err *err);

/* One-step prediction of the next output for input u_next applied during the next step. */
void cs_rls_predict(const cs_rls *r, const double *u_next, double *yhat);

/* Parameters: a (ny x na) and b (ny x nu x nb), row-major. */
void cs_rls_get_params(const cs_rls *r, double *a, double *b);
void cs_rls_set_params(cs_rls *r, const double *a, const double *b);
/* Covariance P_i of each output: ny x np x np. */
void cs_rls_get_cov(const cs_rls *r, double *P);
void cs_rls_set_cov(cs_rls *r, const double *P);
/* Reset P to P0 I, clear the history; parameters are kept. */
void cs_rls_reset(cs_rls *r, double P0);

/* Complete state (parameters, covariance, history, counters) as a flat vector, for save/load. */
int cs_rls_state_size(const cs_rls *r);
void cs_rls_get_state(const cs_rls *r, double *s);
int cs_rls_set_state(cs_rls *r, const double *s, cs_err *err);
int cs_rls_samples(const cs_rls *r);   /* outputs seen so far */

#endif
