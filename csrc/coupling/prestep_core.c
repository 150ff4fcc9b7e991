#include "coupling/prestep_core.h"

#include <string.h>

#include "linalg/dense.h"
#include "linalg/pinv.h"

void cs_ps_global_mats(prestep *p, double *Mc, double *A) {
    const int n = p->n, m = p->m;
    cs_eye(n, Mc);
    cs_matmul(n, n, m, -1.0, p->Sd, p->L, 1.0, Mc);
    memcpy(A, p->Sy, sizeof(double) * (size_t)n * n);
    cs_matmul(n, n, m, 1.0, p->Su, p->L, 1.0, A);
}

/* s = s* + A^+ (rhs - A s*) with the pseudo-inverse Ap (mi x ni); scratch: ni. */
static void step3_apply(int ni, int mi, const double *A, const double *Ap, const double *rhs, const double *target,
                        double *x, double *scratch) {
    for (int a = 0; a < ni; a++) {
        double v = rhs[a];
        for (int b = 0; b < mi; b++) v -= A[(size_t)a * mi + b] * target[b];
        scratch[a] = v;
    }
    for (int b = 0; b < mi; b++) {
        double v = target[b];
        for (int a = 0; a < ni; a++) v += Ap[(size_t)b * ni + a] * scratch[a];
        x[b] = v;
    }
}

void cs_ps_solve_step3(const prestep *p, int i, const double *A, const double *rhs, const double *target, double *x,
                       double *scratch) {
    const int ni = p->yo[i + 1] - p->yo[i], mi = p->uo[i + 1] - p->uo[i];
    step3_apply(ni, mi, A, p->Ap + p->pb[i], rhs, target, x, scratch);
}

size_t cs_prestep_step3_work_size(int ni, int mi) { return cs_pinv_work_size(ni, mi) + (size_t)ni * mi + ni + 1; }

int cs_prestep_step3(int ni, int mi, const double *A, const double *rhs, const double *target, double rtol, double *x,
                     int *rank, double *work, cs_err *err) {
    double *Ap = work, *scr = Ap + (size_t)ni * mi, *w = scr + ni;
    CS_TRY(cs_pinv(ni, mi, A, Ap, rtol, rank, w, err));
    step3_apply(ni, mi, A, Ap, rhs, target, x, scr);
    return CS_OK;
}
