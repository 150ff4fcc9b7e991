#include "sysid/ij.h"

#include <math.h>
#include <string.h>

#include "linalg/dense.h"
#include "linalg/expm.h"
#include "linalg/pinv.h"
#include "sysid/jsvd.h"

size_t cs_ij_work_size(int nx, int nu, int ny) {
    /* C^+ by the small Jacobi SVD (cs_jsvd_pinv); sized for cs_pinv too, as before */
    size_t pw = cs_pinv_work_size(ny, nx), jw = cs_jsvd_pinv_work(ny, nx);
    return (pw > jw ? pw : jw) + 2 * (size_t)nx * ny + (size_t)ny * nx + 1;
}

int cs_ij_continuous(int nx, int nu, int ny, const double *A, const double *B, const double *C, const double *D,
                     double rtol, double *dSdy, double *dSdu, double *dSdud, double *work, cs_err *err) {
    double *Cp = work, *CA = Cp + (size_t)nx * ny, *pw = CA + (size_t)ny * nx;
    CS_TRY(cs_jsvd_pinv(ny, nx, C, Cp, rtol, NULL, pw, err));
    cs_matmul(ny, nx, nx, 1.0, C, A, 0.0, CA);
    cs_matmul(ny, ny, nx, 1.0, CA, Cp, 0.0, dSdy);          /* C A C^+            (2.12) */
    cs_matmul(ny, nu, nx, 1.0, C, B, 0.0, dSdu);            /* C B                 */
    cs_matmul(ny, nu, ny, -1.0, dSdy, D, 1.0, dSdu);        /* - C A C^+ D         (2.13) */
    memcpy(dSdud, D, sizeof(double) * (size_t)ny * nu);     /* D                   (2.14) */
    return CS_OK;
}

int cs_ij_discrete(int form, int nx, int nu, int ny, const double *PhiA, const double *PhiB, const double *C,
                   const double *D, const double *Cprev, const double *Dprev, double rtol, double *Sy, double *Sum,
                   double *Sup, double *work, cs_err *err) {
    if (form != CS_IJ_THESIS && form != CS_IJ_STANDARD) return cs_fail(err, CS_ERR_ARG, "form: unknown IJ form %d", form);
    if (form == CS_IJ_STANDARD || !Cprev) { Cprev = C; Dprev = D; }
    double *Cp = work, *CA = Cp + (size_t)nx * ny, *pw = CA + (size_t)ny * nx;
    CS_TRY(cs_jsvd_pinv(ny, nx, Cprev, Cp, rtol, NULL, pw, err));
    cs_matmul(ny, nx, nx, 1.0, C, PhiA, 0.0, CA);
    cs_matmul(ny, ny, nx, 1.0, CA, Cp, 0.0, Sy);            /* C^k PhiA (C^{k-1})^+      (2.18) */
    if (form == CS_IJ_THESIS) {
        cs_matmul(ny, nu, ny, -1.0, Sy, Dprev, 0.0, Sum);   /* -Sy D^{k-1}               (2.19) */
        cs_matmul(ny, nu, nx, 1.0, C, PhiB, 0.0, Sup);      /* C^k PhiB + D^k            (2.20) */
        for (int i = 0; i < ny * nu; i++) Sup[i] += D[i];
    } else {
        cs_matmul(ny, nu, nx, 1.0, C, PhiB, 0.0, Sum);      /* C PhiB - Sy D  (standard form, spec 2.2 EXT) */
        cs_matmul(ny, nu, ny, -1.0, Sy, D, 1.0, Sum);
        memcpy(Sup, D, sizeof(double) * (size_t)ny * nu);   /* D */
    }
    return CS_OK;
}

size_t cs_discretize_work_size(int nx, int nu) { return cs_poly_propagator_work_size(nx, nu, 0); }

int cs_discretize(int nx, int nu, const double *A, const double *B, double dt, double *PhiA, double *PhiB,
                  double *work, int *ipiv, cs_err *err) {
    return cs_poly_propagator(nx, nu, 0, A, B, dt, PhiA, PhiB, work, ipiv, err);
}

void cs_ij_predict(int K, int ny, int nu, const double *Sy, const double *Sum, const double *Sup, const double *Y,
                   const double *U, double *Ybar) {
    if (K <= 0) return;
    memcpy(Ybar, Y, sizeof(double) * ny);
    for (int k = 1; k < K; k++) {
        double *yb = Ybar + (size_t)k * ny;
        cs_matvec(ny, ny, Sy, Y + (size_t)(k - 1) * ny, yb, 0);
        cs_matvec(ny, nu, Sum, U + (size_t)(k - 1) * nu, yb, 1);
        cs_matvec(ny, nu, Sup, U + (size_t)k * nu, yb, 1);
    }
}

void cs_ij_resample(int ny, int nu, const double *a, const double *b, double ratio, double *at, double *bt) {
    const int q = (int)floor(ratio);
    const double f = ratio - q;
    for (int i = 0; i < ny; i++) {
        /* pw = a^q, slo = sum_{l<q} a^l (erratum E29: bounds q-1 and q, consistent with 4.14 at f = 0) */
        double pw = 1.0, slo = 0.0;
        for (int l = 0; l < q; l++) { slo += pw; pw *= a[i]; }
        const double shi = slo + pw, pwhi = pw * a[i];
        at[i] = (1.0 - f) * pw + f * pwhi;
        const double s = (1.0 - f) * slo + f * shi;
        for (int j = 0; j < nu; j++) bt[(size_t)i * nu + j] = b[(size_t)i * nu + j] * s;
    }
}
