#include "analysis/local_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/dense.h"
#include "linalg/expm.h"
#include "interrupt.h"

/* Exact (z, y)(t) of the monolithic affine system from z(0) = z0: aug = [[A_m, b_m], [0, 0]] (n = nxt + 1). */
static int exact_at(const cs_amp_plan *p, const double *aug, const double *Ay, const double *by, const double *z0,
                    double t, double *zy, double *M, double *E, double *work, int *ipiv, cs_err *err) {
    const int n = p->nxt + 1, nxt = p->nxt;
    for (int q = 0; q < n * n; q++) M[q] = aug[q] * t;
    CS_TRY(cs_expm(n, M, E, work, ipiv, err));
    for (int a = 0; a < nxt; a++) {
        double v = E[(size_t)a * n + nxt];
        for (int b = 0; b < nxt; b++) v += E[(size_t)a * n + b] * z0[b];
        zy[a] = v;
    }
    for (int a = 0; a < p->nyt; a++) {
        double v = by[a];
        for (int b = 0; b < nxt; b++) v += Ay[(size_t)a * nxt + b] * zy[b];
        zy[nxt + a] = v;
    }
    return CS_OK;
}

int cs_local_error(const cs_amp_plan *p, const double *pack, const double *z0, double tN, long nH, const double *H,
                   double *eps, double *exact, cs_err *err) {
    const int nxt = p->nxt, nyt = p->nyt, nut = p->nut, dim = p->dim, n = nxt + 1, nz = nxt + nyt;
    const double *L = pack + p->offL, *r = pack + p->offr;
    int rc = CS_OK;
    size_t sz = (size_t)nyt * nyt + (size_t)nyt * (nxt + 1) + ((size_t)nyt * nyt + (size_t)nyt * (nxt + 1)) +
                (size_t)n * n * 3 + cs_expm_work_size(n) + (size_t)dim * dim + 2 * (size_t)dim + (size_t)nut * nxt +
                (size_t)nut + (size_t)nz + (size_t)nyt * nxt + nyt + (size_t)nxt + 16;
    double *buf = calloc(sz, sizeof(double));
    int *ipiv = malloc(sizeof(int) * ((size_t)n + nyt + 1));
    cs_amp_work *w = cs_amp_work_create(p);
    if (!buf || !ipiv || !w) { rc = cs_fail(err, CS_ERR_NOMEM, "out of memory"); goto done; }
    double *ImDL = buf, *Y = ImDL + (size_t)nyt * nyt, *sw = Y + (size_t)nyt * (nxt + 1);
    double *aug = sw + (size_t)nyt * nyt + (size_t)nyt * (nxt + 1), *M = aug + (size_t)n * n, *E = M + (size_t)n * n;
    double *xw = E + (size_t)n * n, *Omega = xw + cs_expm_work_size(n), *X = Omega + (size_t)dim * dim,
           *g = X + dim, *LY = g + dim, *Lb = LY + (size_t)nut * nxt, *zy = Lb + nut, *AyS = zy + nz,
           *byS = AyS + (size_t)nyt * nxt, *zT = byS + nyt;

    /* Y = [Ay | by] = (I - D L)^{-1} [C | D r] */
    cs_eye(nyt, ImDL);
    for (int i = 0; i < p->nsub; i++) {
        const double *C = pack + p->offC[i], *D = pack + p->offD[i];
        for (int a = 0; a < p->ny[i]; a++) {
            const int ga = p->yoff[i] + a;
            double *row = Y + (size_t)ga * (nxt + 1);
            for (int b = 0; b < p->nx[i]; b++) row[p->xoff[i] + b] = C[(size_t)a * p->nx[i] + b];
            for (int b = 0; b < p->nu[i]; b++) {
                const double d = D[(size_t)a * p->nu[i] + b];
                const int gb = p->uoff[i] + b;
                row[nxt] += d * r[gb];
                for (int j = 0; j < nyt; j++) ImDL[(size_t)ga * nyt + j] -= d * L[(size_t)gb * nyt + j];
            }
        }
    }
    if (cs_solve(nyt, nxt + 1, ImDL, Y, sw, ipiv, err)) {
        rc = cs_fail(err, CS_ERR_ARG, "system: the algebraic loop I - D L is singular (ill-posed coupling)");
        goto done;
    }
    /* u = L y + r = (L Ay) z + (L by + r);  ż = A z + B u  ->  aug = [[A + B L Ay, B (L by + r)], [0, 0]] */
    for (int a = 0; a < nut; a++) {
        for (int b = 0; b <= nxt; b++) {
            double v = b == nxt ? r[a] : 0.0;
            for (int j = 0; j < nyt; j++) v += L[(size_t)a * nyt + j] * Y[(size_t)j * (nxt + 1) + b];
            if (b < nxt) LY[(size_t)a * nxt + b] = v; else Lb[a] = v;
        }
    }
    for (int i = 0; i < p->nsub; i++) {
        const double *A = pack + p->offA[i], *B = pack + p->offB[i];
        const int nx = p->nx[i], nu = p->nu[i];
        for (int a = 0; a < nx; a++) {
            double *row = aug + (size_t)(p->xoff[i] + a) * n;
            for (int b = 0; b < nx; b++) row[p->xoff[i] + b] += A[(size_t)a * nx + b];
            for (int c = 0; c < nu; c++) {
                const double bb = B[(size_t)a * nu + c];
                if (bb == 0.0) continue;
                const int gc = p->uoff[i] + c;
                for (int b = 0; b < nxt; b++) row[b] += bb * LY[(size_t)gc * nxt + b];
                row[nxt] += bb * Lb[gc];
            }
        }
    }
    /* split Y into y = Ay z + by */
    for (int a = 0; a < nyt; a++) {
        for (int b = 0; b < nxt; b++) AyS[(size_t)a * nxt + b] = Y[(size_t)a * (nxt + 1) + b];
        byS[a] = Y[(size_t)a * (nxt + 1) + nxt];
    }
    /* z(T_N) from z(0) once; the history and the value at T_{N+1} are then propagated from z(T_N) over the short
     * times -sH and +H, so that they are consistent to round-off (independent long propagations would leave a
     * floor of ~1e-12 relative error in ε for stiff systems). */
    if ((rc = exact_at(p, aug, AyS, byS, z0, tN, zy, M, E, xw, ipiv, err))) goto done;
    memcpy(zT, zy, sizeof(double) * nxt);
    for (long ih = 0; ih < nH && rc == CS_OK; ih++) {
        if (cs_interrupted()) { rc = cs_interrupt_fail(err, -1.0); break; }   /* Ctrl-C between step sizes */
        const double h = H[ih];
        if ((rc = cs_amp_matrix(p, pack, h, Omega, g, w, err))) break;
        /* exact history X(T_N) = (z(T_N); y(T_N); ...; y(T_{N-P+1})) */
        for (int s = 0; s < p->depth && rc == CS_OK; s++) {
            rc = exact_at(p, aug, AyS, byS, zT, -s * h, zy, M, E, xw, ipiv, err);
            if (s == 0) memcpy(X, zy, sizeof(double) * nxt);
            memcpy(X + nxt + (size_t)s * nyt, zy + nxt, sizeof(double) * nyt);
        }
        if (rc) break;
        rc = exact_at(p, aug, AyS, byS, zT, h, zy, M, E, xw, ipiv, err);
        if (rc) break;
        for (int a = 0; a < nz; a++) {
            double v = g[a];
            for (int b = 0; b < dim; b++) v += Omega[(size_t)a * dim + b] * X[b];
            eps[(size_t)ih * nz + a] = v - zy[a];
            if (exact) exact[(size_t)ih * nz + a] = zy[a];
        }
    }
done:
    free(buf);
    free(ipiv);
    cs_amp_work_destroy(w);
    return rc;
}
