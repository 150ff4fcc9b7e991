/* Spectral-radius maps ρ(Ω) over parameter grids (busch2016 Figs. 9-14), threaded over grid points.
 *
 * A map evaluates nsys packed parameter sets (see companion.h) at nH macro-step sizes: rho[isys * nH + ih].
 * The points are shared among `nthreads` POSIX threads by an atomic chunk counter; every thread allocates its
 * workspace once before its loop, so the per-point loop does not allocate. A point whose Ω cannot be formed (singular
 * algebraic loop, non-finite matrices, eigenvalue failure) gets NaN; the number of such points and the first message
 * are reported. */
#ifndef COSIM_ANALYSIS_RHOMAP_H
#define COSIM_ANALYSIS_RHOMAP_H

#include "analysis/companion.h"

typedef struct cs_rhomap_result {
    long nfail;   /* points set to NaN */
    cs_err first; /* message of the first failure (code 0 if none) */
} cs_rhomap_result;

/* Returns CS_OK unless setting up the threads failed (CS_ERR_NOMEM / CS_ERR_ARG). */
int cs_rhomap(const cs_amp_plan *plan, long nsys, const double *packs, long nH, const double *H, double *rho,
              int nthreads, cs_rhomap_result *res, cs_err *err);

#endif
