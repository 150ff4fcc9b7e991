#include "sysid/gilbert.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/dense.h"
#include "linalg/lapack.h"

struct cs_gilbert {
    int ny, nu, na, nb, no, nxmax;
    double complex *roots;   /* ny x no poles of each output row */
    double complex *res;     /* (ny no) x nu residue rows: res[(i no + p) nu + j] */
    int *cluster;            /* ny x no: distinct-pole index of each root (-1: conjugate of another root) */
    double complex *dpole;   /* distinct poles (representatives, Im >= 0) */
    double *comp, *eigw, *wr, *wi;
    double *Rr, *U, *VT, *s, *work, *rwork;   /* SVD workspace; complex arrays as interleaved doubles */
    int lwork;
    double *A, *B, *C, *D;
};

static int imax(int a, int b) { return a > b ? a : b; }
static int imin(int a, int b) { return a < b ? a : b; }

void cs_gilbert_destroy(cs_gilbert *g) {
    if (!g) return;
    free(g->roots); free(g->res); free(g->cluster); free(g->dpole); free(g->comp); free(g->eigw); free(g->wr);
    free(g->wi); free(g->Rr); free(g->U); free(g->VT); free(g->s); free(g->work); free(g->rwork);
    free(g->A); free(g->B); free(g->C); free(g->D);
    free(g);
}

int cs_gilbert_max_states(const cs_gilbert *g) { return g->nxmax; }

int cs_gilbert_create(int ny, int nu, int na, int nb, cs_gilbert **out, cs_err *err) {
    *out = NULL;
    if (ny < 1 || nu < 1) return cs_fail(err, CS_ERR_ARG, "Gilbert realization needs ny, nu >= 1 (got %d, %d)", ny, nu);
    if (na < 0 || nb < 0) return cs_fail(err, CS_ERR_ARG, "orders: na, nb must be >= 0 (got %d, %d)", na, nb);
    cs_gilbert *g = calloc(1, sizeof *g);
    if (!g) return cs_fail(err, CS_ERR_NOMEM, "Gilbert: out of memory");
    g->ny = ny; g->nu = nu; g->na = na; g->nb = nb; g->no = imax(na, nb); g->nxmax = ny * g->no;
    const int no = g->no, nr = ny * no + 1, mn = imin(ny, nu);
    g->roots = calloc((size_t)nr, sizeof(double complex));
    g->res = calloc((size_t)nr * nu, sizeof(double complex));
    g->cluster = calloc((size_t)nr, sizeof(int));
    g->dpole = calloc((size_t)nr, sizeof(double complex));
    g->comp = calloc((size_t)na * na + 1, sizeof(double));
    g->eigw = calloc((size_t)cs_eig_work_size(na) + 1, sizeof(double));
    g->wr = calloc((size_t)na + 1, sizeof(double));
    g->wi = calloc((size_t)na + 1, sizeof(double));
    g->Rr = calloc((size_t)2 * ny * nu, sizeof(double));
    g->U = calloc((size_t)2 * ny * ny, sizeof(double));
    g->VT = calloc((size_t)2 * nu * nu, sizeof(double));
    g->s = calloc((size_t)mn + 1, sizeof(double));
    g->rwork = calloc((size_t)5 * mn + 8, sizeof(double));
    int lw = -1, info = 0, lwork = 1;
    double wq[2] = {0, 0}, dummy[2] = {0, 0};
    const char ja = 'A';
    dgesvd_(&ja, &ja, &ny, &nu, dummy, &ny, dummy, dummy, &ny, dummy, &nu, wq, &lw, &info);
    lwork = imax(lwork, (int)wq[0] + 1);
    zgesvd_(&ja, &ja, &ny, &nu, dummy, &ny, dummy, dummy, &ny, dummy, &nu, wq, &lw, dummy, &info);
    lwork = imax(lwork, (int)wq[0] + 1);
    g->lwork = lwork;
    g->work = calloc((size_t)2 * lwork, sizeof(double));   /* complex work: 2 doubles per entry */
    size_t nx = (size_t)g->nxmax;
    g->A = calloc(nx * nx + 1, sizeof(double));
    g->B = calloc(nx * nu + 1, sizeof(double));
    g->C = calloc((size_t)ny * nx + 1, sizeof(double));
    g->D = calloc((size_t)ny * nu, sizeof(double));
    if (!g->roots || !g->res || !g->cluster || !g->dpole || !g->comp || !g->eigw || !g->wr || !g->wi || !g->Rr ||
        !g->U || !g->VT || !g->s || !g->rwork || !g->work || !g->A || !g->B || !g->C || !g->D) {
        cs_gilbert_destroy(g);
        return cs_fail(err, CS_ERR_NOMEM, "Gilbert: out of memory");
    }
    *out = g;
    return CS_OK;
}

/* One observable canonical form per output (fallback for repeated poles). */
static void observable_forms(cs_gilbert *g, const double *a, const double *b, cs_gilbert_result *res) {
    const int ny = g->ny, nu = g->nu, na = g->na, nb = g->nb, no = g->no, nx = ny * no;
    memset(g->A, 0, sizeof(double) * (size_t)nx * nx);
    memset(g->B, 0, sizeof(double) * (size_t)nx * nu);
    memset(g->C, 0, sizeof(double) * (size_t)ny * nx);
    for (int i = 0; i < ny; i++) {
        int o = i * no;
        for (int l = 0; l < no; l++) {
            if (l < na) g->A[(size_t)(o + l) * nx + o] = a[(size_t)i * na + l];
            if (l + 1 < no) g->A[(size_t)(o + l) * nx + o + l + 1] = 1.0;
            if (l < nb)
                for (int j = 0; j < nu; j++) g->B[(size_t)(o + l) * nu + j] = b[((size_t)i * nu + j) * nb + l];
        }
        if (no > 0) g->C[(size_t)i * nx + o] = 1.0;
    }
    res->nx = nx;
    res->minimal = 0;
    res->npoles = nx;
}

int cs_gilbert_realize(cs_gilbert *g, const double *a, const double *b, double rank_tol, double pole_tol,
                       cs_gilbert_result *res, cs_err *err) {
    const int ny = g->ny, nu = g->nu, na = g->na, nb = g->nb, no = g->no;
    res->ny = ny; res->nu = nu;
    res->A = g->A; res->B = g->B; res->C = g->C; res->D = g->D;
    memset(g->D, 0, sizeof(double) * (size_t)ny * nu);
    res->nx = 0; res->minimal = 1; res->npoles = 0;
    if (no == 0) return CS_OK;
    /* 1. Poles of each row: roots of z^na - a_1 z^(na-1) - .. - a_na (companion eigenvalues), plus no - na zeros. */
    int repeated = 0;
    for (int i = 0; i < ny; i++) {
        double complex *rt = g->roots + (size_t)i * no;
        if (na > 0) {
            memset(g->comp, 0, sizeof(double) * (size_t)na * na);
            for (int l = 0; l < na; l++) g->comp[l] = a[(size_t)i * na + l];
            for (int l = 1; l < na; l++) g->comp[(size_t)l * na + l - 1] = 1.0;
            CS_TRY(cs_eigvals(na, g->comp, g->wr, g->wi, g->eigw, err));
            for (int l = 0; l < na; l++) rt[l] = g->wr[l] + I * g->wi[l];
        }
        for (int l = na; l < no; l++) rt[l] = 0.0;
        for (int p = 0; p < no; p++)
            for (int q = p + 1; q < no; q++)
                if (cabs(rt[p] - rt[q]) <= pole_tol * fmax(1.0, cabs(rt[p]))) repeated = 1;
    }
    if (repeated) { observable_forms(g, a, b, res); return CS_OK; }
    /* 2. Residue rows: R_p[i, j] = N_ij(z_p) / D_i'(z_p), N_ij(z) = sum_l b_ijl z^(no-l), D_i' = prod_(q!=p)(z_p - z_q).
     *    (Erratum E9: the residue uses (z - z_p), not (z - z_p)^k.) */
    double rmax = 0.0;
    for (int i = 0; i < ny; i++) {
        const double complex *rt = g->roots + (size_t)i * no;
        for (int p = 0; p < no; p++) {
            double complex z = rt[p], dd = 1.0;
            for (int q = 0; q < no; q++) if (q != p) dd *= (z - rt[q]);
            for (int j = 0; j < nu; j++) {
                double complex num = 0.0;
                const double *bij = b + ((size_t)i * nu + j) * nb;
                for (int l = 1; l <= nb; l++) num = num * z + bij[l - 1];   /* Horner: b1 z^(nb-1) + .. + b_nb */
                for (int l = nb; l < no; l++) num *= z;                     /* times z^(no-nb) */
                double complex rv = num / dd;
                g->res[((size_t)i * no + p) * nu + j] = rv;
                rmax = fmax(rmax, cabs(rv));
            }
        }
    }
    for (int k = 0; k < ny * no * nu; k++)
        if (!isfinite(creal(g->res[k])) || !isfinite(cimag(g->res[k])))
            return cs_fail(err, CS_ERR_LINALG, "Gilbert: non-finite residue (poles too close?)");
    /* 3. Distinct poles in order of first appearance (output, root); conjugates with Im < 0 are skipped. */
    int nd = 0;
    for (int i = 0; i < ny; i++)
        for (int p = 0; p < no; p++) {
            double complex z = g->roots[(size_t)i * no + p];
            int *cl = g->cluster + (size_t)i * no + p;
            if (cimag(z) < 0.0) { *cl = -1; continue; }
            *cl = -2;
            for (int d = 0; d < nd; d++)
                if (cabs(g->dpole[d] - z) <= pole_tol * fmax(1.0, cabs(z))) { *cl = d; break; }
            if (*cl == -2) { g->dpole[nd] = z; *cl = nd++; }
        }
    /* Largest singular value over all residue matrices bounds the rank tolerance: use the largest entry as a scale
     * (within a factor sqrt(ny nu) of it). */
    const double tol = rank_tol * rmax;
    int nx = 0;
    const int nxmax = g->nxmax, mn = imin(ny, nu);
    memset(g->A, 0, sizeof(double) * (size_t)nxmax * nxmax);
    memset(g->B, 0, sizeof(double) * (size_t)nxmax * nu);
    memset(g->C, 0, sizeof(double) * (size_t)ny * nxmax);
    for (int d = 0; d < nd; d++) {
        double complex z = g->dpole[d];
        int cplx = cimag(z) > 0.0, info = 0;
        /* residue matrix R (ny x nu), column-major, rows of outputs that have this pole */
        memset(g->Rr, 0, sizeof(double) * (size_t)2 * ny * nu);
        for (int i = 0; i < ny; i++)
            for (int p = 0; p < no; p++) {
                if (g->cluster[(size_t)i * no + p] != d) continue;
                for (int j = 0; j < nu; j++) {
                    double complex rv = g->res[((size_t)i * no + p) * nu + j];
                    if (cplx) { g->Rr[2 * ((size_t)j * ny + i)] += creal(rv); g->Rr[2 * ((size_t)j * ny + i) + 1] += cimag(rv); }
                    else g->Rr[(size_t)j * ny + i] += creal(rv);
                }
            }
        const char ja = 'A';
        int nyi = ny, nui = nu;
        if (cplx)
            zgesvd_(&ja, &ja, &nyi, &nui, g->Rr, &nyi, g->s, g->U, &nyi, g->VT, &nui, g->work, &g->lwork, g->rwork, &info);
        else
            dgesvd_(&ja, &ja, &nyi, &nui, g->Rr, &nyi, g->s, g->U, &nyi, g->VT, &nui, g->work, &g->lwork, &info);
        if (info != 0) return cs_fail(err, CS_ERR_LINALG, "Gilbert: SVD of a residue matrix failed (info = %d)", info);
        int k = 0;
        while (k < mn && g->s[k] > tol && g->s[k] > 0.0) k++;
        if (k == 0) continue;   /* pole cancelled by the numerators: no state */
        if (!cplx) {
            for (int c = 0; c < k; c++) {
                /* sign: largest |entry| of column c of U positive */
                int im = 0;
                for (int i = 1; i < ny; i++) if (fabs(g->U[(size_t)c * ny + i]) > fabs(g->U[(size_t)c * ny + im])) im = i;
                double sg = g->U[(size_t)c * ny + im] < 0.0 ? -1.0 : 1.0;
                int x = nx + c;
                g->A[(size_t)x * nxmax + x] = creal(z);
                for (int i = 0; i < ny; i++) g->C[(size_t)i * nxmax + x] = sg * g->U[(size_t)c * ny + i];
                for (int j = 0; j < nu; j++) g->B[(size_t)x * nu + j] = sg * g->s[c] * g->VT[(size_t)j * nu + c];
            }
            nx += k;
            res->npoles += 1;
        } else {
            /* states [xr (k); xi (k)]: A = [sig I, -om I; om I, sig I], B = [Re Bc; Im Bc], C = [2 Re Cc, -2 Im Cc],
             * Cc = U[:, :k], Bc = S V^H[:k, :]. */
            double sig = creal(z), om = cimag(z);
            for (int c = 0; c < k; c++) {
                int xr = nx + c, xi = nx + k + c;
                g->A[(size_t)xr * nxmax + xr] = sig; g->A[(size_t)xr * nxmax + xi] = -om;
                g->A[(size_t)xi * nxmax + xr] = om;  g->A[(size_t)xi * nxmax + xi] = sig;
                for (int i = 0; i < ny; i++) {
                    g->C[(size_t)i * nxmax + xr] = 2.0 * g->U[2 * ((size_t)c * ny + i)];
                    g->C[(size_t)i * nxmax + xi] = -2.0 * g->U[2 * ((size_t)c * ny + i) + 1];
                }
                for (int j = 0; j < nu; j++) {
                    g->B[(size_t)xr * nu + j] = g->s[c] * g->VT[2 * ((size_t)j * nu + c)];
                    g->B[(size_t)xi * nu + j] = g->s[c] * g->VT[2 * ((size_t)j * nu + c) + 1];
                }
            }
            nx += 2 * k;
            res->npoles += 2;
        }
    }
    /* compact the nxmax-strided buffers to nx x nx, ny x nx (row-major with leading dimension nx) */
    for (int i = 0; i < nx; i++) memmove(g->A + (size_t)i * nx, g->A + (size_t)i * nxmax, sizeof(double) * nx);
    for (int i = 0; i < ny; i++) memmove(g->C + (size_t)i * nx, g->C + (size_t)i * nxmax, sizeof(double) * nx);
    res->nx = nx;
    return CS_OK;
}
