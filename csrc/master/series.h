/* Series recorder: an observer that copies n values from a stable source (a coupling's or an estimator's own
 * array: the balance correction's cumulative imbalance, ECCO's energy residuals) at the initial point and after
 * every accepted macro step, with the time, into caller-owned buffers t (cap) and v (cap x n). */
#ifndef COSIM_SERIES_H
#define COSIM_SERIES_H

#include "master/observer.h"

int cs_series_recorder_create(long cap, const double *src, int n, double *t, double *v, cs_observer **out,
                              cs_err *err);
long cs_series_count(const cs_observer *o);

#endif
