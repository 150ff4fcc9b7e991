/* Moore-Penrose pseudo-inverse by SVD (dgesvd), row-major. Singular values <= rtol * sigma_max count as zero. */
#ifndef COSIM_PINV_H
#define COSIM_PINV_H

#include "common.h"

/* doubles of workspace cs_pinv needs for an m x n matrix. */
size_t cs_pinv_work_size(int m, int n);
/* Ap (n x m) = pinv(A (m x n)); *rank (may be NULL) receives the numerical rank. */
int cs_pinv(int m, int n, const double *A, double *Ap, double rtol, int *rank, double *work, cs_err *err);

#endif
