/* Kraft's exLE/exMD comparative integrations on the Jacobi scheme's thread pool (simulate(threads=n), issue 11;
 * estimators.c). */
#ifndef COSIM_KRAFT_POOL_H
#define COSIM_KRAFT_POOL_H

#include "control/estimator.h"
#include "parallel/pool.h"

/* Run the comparative integrations of the units of a Kraft estimator (cs_kraft_control_create) on pool (not owned;
 * it must outlive the estimator's use and is not used concurrently with the scheme). Returns 1 when the pool will be
 * used, 0 when not (another estimator, no pool, or a one-thread pool): then they stay sequential. Results are the
 * same either way. */
int cs_kraft_estimator_use_pool(cs_estimator *e, cs_pool *pool);

#endif
