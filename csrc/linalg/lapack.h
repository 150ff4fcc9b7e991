/* Prototypes of the Fortran LAPACK/BLAS routines the core calls (reference LAPACK from Debian's liblapack-dev).
 * All arrays passed here are column-major; the wrappers in dense.h convert from the row-major layout used
 * everywhere else in csrc/. Add a prototype here rather than declaring LAPACK routines locally. */
#ifndef COSIM_LAPACK_H
#define COSIM_LAPACK_H

void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc);
void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb, int *info);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda, const int *ipiv,
             double *b, const int *ldb, int *info);
void dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda, double *wr, double *wi,
            double *vl, const int *ldvl, double *vr, const int *ldvr, double *work, const int *lwork, int *info);
void dhseqr_(const char *job, const char *compz, const int *n, const int *ilo, const int *ihi, double *h,
             const int *ldh, double *wr, double *wi, double *z, const int *ldz, double *work, const int *lwork,
             int *info);
void dgehrd_(const int *n, const int *ilo, const int *ihi, double *a, const int *lda, double *tau, double *work,
             const int *lwork, int *info);
void dgebal_(const char *job, const int *n, double *a, const int *lda, int *ilo, int *ihi, double *scale, int *info);
void dgehd2_(const int *n, const int *ilo, const int *ihi, double *a, const int *lda, double *tau, double *work,
             int *info);
void dlahqr_(const int *wantt, const int *wantz, const int *n, const int *ilo, const int *ihi, double *h,
             const int *ldh, double *wr, double *wi, const int *iloz, const int *ihiz, double *z, const int *ldz,
             int *info);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
             int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
             const int *lwork, int *info);
void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a, const int *lda, double *s,
             double *u, const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork, int *info);
/* complex*16 arrays are passed as interleaved (re, im) doubles (same layout as C11 double complex). */
void zgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a, const int *lda, double *s,
             double *u, const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork, double *rwork,
             int *info);
void dgels_(const char *trans, const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b,
            const int *ldb, double *work, const int *lwork, int *info);
void dgelsd_(const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b, const int *ldb,
             double *s, const double *rcond, int *rank, double *work, const int *lwork, int *iwork, int *info);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
            const int *lwork, int *info);

#endif
