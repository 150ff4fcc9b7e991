#include "analysis/companion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/dense.h"
#include "linalg/expm.h"

void cs_amp_plan_destroy(cs_amp_plan *p) {
    if (!p) return;
    free(p->nx); free(p->nu); free(p->ny); free(p->xoff); free(p->uoff); free(p->yoff);
    free(p->order); free(p->pos); free(p->ysrc); free(p->mask); free(p->deg);
    free(p->offA); free(p->offB); free(p->offC); free(p->offD);
    free(p);
}

/* Does subsystem i interpolate output signal j (Gauss-Seidel: its source was stepped earlier in this macro step)? */
static inline int interpolates(const cs_amp_plan *p, int i, int j) {
    return cs_scheme_interpolates(p->scheme, p->pos, p->ysrc[j], i);
}

cs_amp_plan *cs_amp_plan_create(int nsub, const int *nx, const int *nu, const int *ny, const unsigned char *mask,
                                cs_approx_spec spec, int scheme, const int *order, int update, cs_err *err) {
    if (nsub < 1) { cs_fail(err, CS_ERR_ARG, "system: need at least one subsystem"); return NULL; }
    if (scheme != CS_SCHEME_JACOBI && scheme != CS_SCHEME_GAUSS_SEIDEL) {
        cs_fail(err, CS_ERR_ARG, "scheme: unknown scheme code %d", scheme);
        return NULL;
    }
    if (update != CS_UPDATE_CONSISTENT && update != CS_UPDATE_SIMPLIFIED) {
        cs_fail(err, CS_ERR_ARG, "update: unknown update code %d", update);
        return NULL;
    }
    if (cs_approx_check(&spec, err)) return NULL;
    if (spec.kind == CS_APPROX_HERMITE) {
        cs_fail(err, CS_ERR_ARG, "approximation: Hermite needs output derivatives; the stability analysis supports "
                                 "Lagrange/ZOH and EXTRIPOL-C0/C1");
        return NULL;
    }
    if (cs_approx_is_acc(spec.kind)) {
        cs_fail(err, CS_ERR_ARG, "approximation: acc/accRel read output derivatives and position/velocity pairs; the "
                                 "stability analysis supports Lagrange/ZOH, EXTRIPOL-C0/C1 and LSQ");
        return NULL;
    }
    for (int i = 0; i < nsub; i++)
        if (nx[i] < 0 || nu[i] < 0 || ny[i] < 0) {
            cs_fail(err, CS_ERR_ARG, "system: negative size in subsystem %d", i);
            return NULL;
        }
    cs_amp_plan *p = calloc(1, sizeof *p);
    if (!p) { cs_fail(err, CS_ERR_NOMEM, "out of memory"); return NULL; }
    p->nsub = nsub;
    p->scheme = scheme;
    p->update = update;
    p->spec = spec;
    size_t n = (size_t)nsub;
    p->nx = malloc(n * sizeof(int)); p->nu = malloc(n * sizeof(int)); p->ny = malloc(n * sizeof(int));
    p->xoff = malloc(n * sizeof(int)); p->uoff = malloc(n * sizeof(int)); p->yoff = malloc(n * sizeof(int));
    p->order = malloc(n * sizeof(int)); p->pos = malloc(n * sizeof(int)); p->deg = malloc(n * sizeof(int));
    p->offA = malloc(n * sizeof(size_t)); p->offB = malloc(n * sizeof(size_t));
    p->offC = malloc(n * sizeof(size_t)); p->offD = malloc(n * sizeof(size_t));
    if (!p->nx || !p->nu || !p->ny || !p->xoff || !p->uoff || !p->yoff || !p->order || !p->pos || !p->deg ||
        !p->offA || !p->offB || !p->offC || !p->offD)
        goto nomem;
    size_t off = 0;
    for (int i = 0; i < nsub; i++) {
        p->nx[i] = nx[i]; p->nu[i] = nu[i]; p->ny[i] = ny[i];
        p->xoff[i] = p->nxt; p->uoff[i] = p->nut; p->yoff[i] = p->nyt;
        p->nxt += nx[i]; p->nut += nu[i]; p->nyt += ny[i];
        p->offA[i] = off; off += (size_t)nx[i] * nx[i];
        p->offB[i] = off; off += (size_t)nx[i] * nu[i];
        p->offC[i] = off; off += (size_t)ny[i] * nx[i];
        p->offD[i] = off; off += (size_t)ny[i] * nu[i];
        if (nx[i] > p->maxnx) p->maxnx = nx[i];
        if (nu[i] > p->maxnu) p->maxnu = nu[i];
    }
    p->offL = off; off += (size_t)p->nut * p->nyt;
    p->offr = off; off += (size_t)p->nut;
    p->pack_size = off;
    /* stepping order: validate a permutation */
    for (int i = 0; i < nsub; i++) p->pos[i] = -1;
    for (int q = 0; q < nsub; q++) {
        int i = order ? order[q] : q;
        if (i < 0 || i >= nsub || p->pos[i] >= 0) {
            cs_fail(err, CS_ERR_ARG, "order: must be a permutation of the %d subsystems", nsub);
            cs_amp_plan_destroy(p);
            return NULL;
        }
        p->order[q] = i;
        p->pos[i] = q;
    }
    p->ysrc = malloc(((size_t)p->nyt + 1) * sizeof(int));
    p->mask = malloc((size_t)p->nut * p->nyt + 1);
    if (!p->ysrc || !p->mask) goto nomem;
    for (int i = 0; i < nsub; i++)
        for (int j = 0; j < ny[i]; j++) p->ysrc[p->yoff[i] + j] = i;
    for (size_t q = 0; q < (size_t)p->nut * p->nyt; q++) p->mask[q] = mask ? (mask[q] != 0) : 1;

    /* Approximation weights on the equidistant grid, in s = (t - T_N)/H: they do not depend on H. */
    if (cs_approx_uniform_weights(&spec, 0, CS_MAXHIST, 1.0, &p->wext, err) ||
        cs_approx_uniform_weights(&spec, 1, CS_MAXHIST, 1.0, &p->wint, err)) {
        cs_amp_plan_destroy(p);
        return NULL;
    }
    /* Depth P of the history (busch2016 eq. 22, here derived from the samples actually read) and input degrees. */
    p->depth = 1;
    for (int i = 0; i < nsub; i++) {
        p->deg[i] = 0;
        for (int a = 0; a < nu[i]; a++)
            for (int j = 0; j < p->nyt; j++) {
                if (!p->mask[(size_t)(p->uoff[i] + a) * p->nyt + j]) continue;
                const cs_approx_weights *w = interpolates(p, i, j) ? &p->wint : &p->wext;
                int need = interpolates(p, i, j) ? w->npts - 1 : w->npts;
                if (need > p->depth) p->depth = need;
                if (w->deg > p->deg[i]) p->deg[i] = w->deg;
            }
        if (p->deg[i] > p->maxdeg) p->maxdeg = p->deg[i];
    }
    p->dim = p->nxt + p->depth * p->nyt;
    return p;
nomem:
    cs_fail(err, CS_ERR_NOMEM, "out of memory");
    cs_amp_plan_destroy(p);
    return NULL;
}

void cs_amp_work_destroy(cs_amp_work *w) {
    if (!w) return;
    free(w->Phi); free(w->Gam); free(w->prop); free(w->Xn); free(w->Ys); free(w->Yn); free(w->Crow);
    free(w->Uend); free(w->ImDL); free(w->solve); free(w->eig); free(w->ipiv);
    free(w->red); free(w->Yx); free(w->defl);
    for (int i = 0; i < w->ncache; i++) {
        if (w->cPhi) free(w->cPhi[i]);
        if (w->cGam) free(w->cGam[i]);
        if (w->cAB) free(w->cAB[i]);
    }
    free(w->cPhi); free(w->cGam); free(w->cAB); free(w->cH);
    free(w);
}

cs_amp_work *cs_amp_work_create(const cs_amp_plan *p) {
    cs_amp_work *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    size_t cols = (size_t)p->dim + 1, prop = 1, Nmax = 1;
    for (int i = 0; i < p->nsub; i++) {
        size_t s = cs_poly_propagator_work_size(p->nx[i], p->nu[i], p->deg[i]);
        size_t N = (size_t)p->nx[i] + (size_t)p->nu[i] * (p->deg[i] + 1);
        if (s > prop) prop = s;
        if (N > Nmax) Nmax = N;
    }
    if ((size_t)p->nyt > Nmax) Nmax = p->nyt;
    size_t nx = p->maxnx, nu = p->maxnu, dg = (size_t)p->maxdeg + 1, ny = p->nyt;
    w->Phi = malloc(sizeof(double) * (nx * nx + 1));
    w->Gam = malloc(sizeof(double) * (nx * nu * dg + 1));
    w->prop = malloc(sizeof(double) * prop);
    w->Xn = malloc(sizeof(double) * ((size_t)p->nxt * cols + 1));
    w->Ys = malloc(sizeof(double) * (ny * cols + 1));
    w->Yn = malloc(sizeof(double) * (ny * cols + 1));
    w->Crow = malloc(sizeof(double) * (nu * dg * cols + 1));
    w->Uend = malloc(sizeof(double) * (nu * cols + 1));
    w->ImDL = malloc(sizeof(double) * (ny * ny + 1));
    w->solve = malloc(sizeof(double) * (ny * ny + ny * cols + 1));
    w->eig = malloc(sizeof(double) * (2 * (size_t)p->dim + (size_t)cs_eig_work_size(p->dim) + 1));
    w->ipiv = malloc(sizeof(int) * (Nmax + 1));
    w->red = malloc(sizeof(double) * ((size_t)p->dim * p->dim + 1));
    w->Yx = malloc(sizeof(double) * (ny * (size_t)p->nxt + 1));
    w->defl = malloc(sizeof(int) * (3 * (size_t)p->dim + 1));
    w->ncache = p->nsub;
    w->cPhi = calloc((size_t)p->nsub + 1, sizeof(double *));
    w->cGam = calloc((size_t)p->nsub + 1, sizeof(double *));
    w->cAB = calloc((size_t)p->nsub + 1, sizeof(double *));
    w->cH = malloc(sizeof(double) * ((size_t)p->nsub + 1));
    if (!w->cPhi || !w->cGam || !w->cAB || !w->cH) { cs_amp_work_destroy(w); return NULL; }
    for (int i = 0; i < p->nsub; i++) {
        size_t nxi = p->nx[i], nui = p->nu[i];
        w->cPhi[i] = malloc(sizeof(double) * (nxi * nxi + 1));
        w->cGam[i] = malloc(sizeof(double) * (nxi * nui * ((size_t)p->deg[i] + 1) + 1));
        w->cAB[i] = malloc(sizeof(double) * (nxi * nxi + nxi * nui + 1));
        w->cH[i] = NAN;
        if (!w->cPhi[i] || !w->cGam[i] || !w->cAB[i]) { cs_amp_work_destroy(w); return NULL; }
    }
    if (!w->Phi || !w->Gam || !w->prop || !w->Xn || !w->Ys || !w->Yn || !w->Crow || !w->Uend || !w->ImDL ||
        !w->solve || !w->eig || !w->ipiv || !w->red || !w->Yx || !w->defl) {
        cs_amp_work_destroy(w);
        return NULL;
    }
    return w;
}

/* row += c * src (length n) */
static inline void axpy(int n, double c, const double *restrict src, double *restrict row) {
    for (int q = 0; q < n; q++) row[q] += c * src[q];
}

/* I - D L (n_y x n_y) of the algebraic coupling loop y = C x + D (L y + r); returns 1 if any D is non-zero. */
static int loop_matrix(const cs_amp_plan *p, const double *pack, double *ImDL) {
    const int nyt = p->nyt;
    const double *L = pack + p->offL;
    int feedthrough = 0;
    cs_eye(nyt, ImDL);
    for (int i = 0; i < p->nsub; i++) {
        const double *D = pack + p->offD[i];
        for (int a = 0; a < p->ny[i]; a++)
            for (int b = 0; b < p->nu[i]; b++) {
                const double d = D[(size_t)a * p->nu[i] + b];
                if (d == 0.0) continue;
                feedthrough = 1;
                const int ga = p->yoff[i] + a, gb = p->uoff[i] + b;
                for (int j = 0; j < nyt; j++) ImDL[(size_t)ga * nyt + j] -= d * L[(size_t)gb * nyt + j];
            }
    }
    return feedthrough;
}

/* New outputs y(T_{N+1}) as rows over (X_N; 1) into w->Yn, from the new states in w->Xn and y* in w->Ys. */
static int output_update(const cs_amp_plan *p, const double *pack, cs_amp_work *w, cs_err *err) {
    const int dim = p->dim, cols = dim + 1, nyt = p->nyt;
    const double *r = pack + p->offr;
    int feedthrough = 0;
    if (p->update == CS_UPDATE_CONSISTENT) {
        for (int i = 0; i < p->nsub && !feedthrough; i++) {
            const double *D = pack + p->offD[i];
            for (int q = 0; q < p->ny[i] * p->nu[i]; q++)
                if (D[q] != 0.0) { feedthrough = 1; break; }
        }
    }
    if (p->update == CS_UPDATE_CONSISTENT && feedthrough) {
        /* (I - D L) y = C x(T_{N+1}) + D r   (kraft2021 eq. 2.22: the algebraic loop solved at T_{N+1}) */
        memset(w->Yn, 0, sizeof(double) * (size_t)nyt * cols);
        loop_matrix(p, pack, w->ImDL);
        for (int i = 0; i < p->nsub; i++) {
            const double *C = pack + p->offC[i], *D = pack + p->offD[i];
            const int nx = p->nx[i], nu = p->nu[i];
            for (int a = 0; a < p->ny[i]; a++) {
                const int ga = p->yoff[i] + a;
                double *row = w->Yn + (size_t)ga * cols;
                for (int b = 0; b < nx; b++) {
                    const double c = C[(size_t)a * nx + b];
                    if (c != 0.0) axpy(cols, c, w->Xn + (size_t)(p->xoff[i] + b) * cols, row);
                }
                for (int b = 0; b < nu; b++) {
                    const double d = D[(size_t)a * nu + b];
                    if (d == 0.0) continue;
                    row[dim] += d * r[p->uoff[i] + b];
                }
            }
        }
        if (cs_solve(nyt, cols, w->ImDL, w->Yn, w->solve, w->ipiv, err))
            return cs_fail(err, CS_ERR_ARG, "system: the algebraic loop I - D L is singular (ill-posed coupling)");
    } else {
        /* CS_UPDATE_SIMPLIFIED, or no feed-through (then y = C x(T_{N+1}) = y*) */
        memcpy(w->Yn, w->Ys, sizeof(double) * (size_t)nyt * cols);
    }
    return CS_OK;
}

/* One macro step, subsystem by subsystem in stepping order: the new states x(T_{N+1}) as rows over (X_N; 1) into
 * w->Xn, and the step's outputs y* into w->Ys. Rows have `cols` entries: dim + 1 with the constant column (offset
 * g), or dim without it (the spectral radius does not need g). */
static int amp_rows(const cs_amp_plan *p, const double *pack, double H, int cols, cs_amp_work *w, cs_err *err) {
    if (!(H > 0.0) || !isfinite(H)) return cs_fail(err, CS_ERR_ARG, "H: must be a finite positive number, got %g", H);
    const int dim = p->dim, nyt = p->nyt, nxt = p->nxt, NV = CS_APPROX_NV;
    const double *L = pack + p->offL, *r = pack + p->offr;
    /* Rows over the augmented history (X_N; 1): column dim carries the constant offset r. */
    memset(w->Xn, 0, sizeof(double) * (size_t)nxt * cols);
    memset(w->Ys, 0, sizeof(double) * (size_t)nyt * cols);

    for (int q = 0; q < p->nsub; q++) {
        const int i = p->order[q], nx = p->nx[i], nu = p->nu[i], ny = p->ny[i], deg = p->deg[i];
        const double *A = pack + p->offA[i], *B = pack + p->offB[i], *C = pack + p->offC[i], *D = pack + p->offD[i];
        /* Input polynomial coefficients c_{i,m}, m = 0..deg, as rows over (X_N; 1) (busch2016 eq. 15):
         * c_{i,m}[a] = sum_j L[a,j] sum_s W[m,s] sample_s(y_j) + r_a [m == 0]. */
        double *Crow = w->Crow;
        memset(Crow, 0, sizeof(double) * (size_t)(deg + 1) * nu * cols);
        for (int a = 0; a < nu; a++) {
            const int ga = p->uoff[i] + a;
            if (cols > dim) Crow[(size_t)a * cols + dim] += r[ga];
            for (int j = 0; j < nyt; j++) {
                const double l = L[(size_t)ga * nyt + j];
                if (l == 0.0) continue;
                const int interp = interpolates(p, i, j);
                const cs_approx_weights *wt = interp ? &p->wint : &p->wext;
                for (int m = 0; m <= wt->deg; m++) {
                    double *row = Crow + ((size_t)m * nu + a) * cols;
                    for (int s = 0; s < wt->npts; s++) {
                        const double c = l * wt->W[m * NV + s];
                        if (c == 0.0) continue;
                        if (interp && s == 0) axpy(cols, c, w->Ys + (size_t)j * cols, row); /* y*_j(T_{N+1}) */
                        else {
                            const int lag = interp ? s - 1 : s;                         /* y_j(T_{N-lag}) */
                            row[nxt + lag * nyt + j] += c;
                        }
                    }
                }
            }
        }
        /* x_i(T_{N+1}) = Φ_i x_i(T_N) + Σ_m Γ_i[m] c_{i,m}   (exact integral K of busch2016 eq. 20) */
        if (nx > 0) {
            /* A_i and B_i are contiguous in the pack (offB = offA + nx*nx): one comparison with the cache. */
            const size_t nab = (size_t)nx * nx + (size_t)nx * nu;
            double *Phi = w->cPhi[i], *Gam = w->cGam[i];
            if (!(w->cH[i] == H) || memcmp(w->cAB[i], A, sizeof(double) * nab) != 0) {
                w->cH[i] = NAN;
                CS_TRY(cs_poly_propagator(nx, nu, deg, A, B, H, Phi, Gam, w->prop, w->ipiv, err));
                memcpy(w->cAB[i], A, sizeof(double) * nab);
                w->cH[i] = H;
            }
            for (int a = 0; a < nx; a++) {
                double *row = w->Xn + (size_t)(p->xoff[i] + a) * cols;
                for (int b = 0; b < nx; b++) row[p->xoff[i] + b] += Phi[(size_t)a * nx + b];
                for (int m = 0; m <= deg; m++)
                    for (int b = 0; b < nu; b++) {
                        const double gm = Gam[((size_t)m * nx + a) * nu + b];
                        if (gm != 0.0) axpy(cols, gm, Crow + ((size_t)m * nu + b) * cols, row);
                    }
            }
        }
        /* ũ_i(T_{N+1}) = Σ_m c_{i,m} (s = 1), and y*_i = C_i x_i(T_{N+1}) + D_i ũ_i(T_{N+1}) */
        int feedthrough = 0; /* ũ_i(T_{N+1}) is needed only through D_i */
        for (int q2 = 0; q2 < ny * nu && !feedthrough; q2++) feedthrough = D[q2] != 0.0;
        if (feedthrough) {
            memset(w->Uend, 0, sizeof(double) * (size_t)nu * cols);
            for (int m = 0; m <= deg; m++)
                for (int b = 0; b < nu; b++)
                    axpy(cols, 1.0, Crow + ((size_t)m * nu + b) * cols, w->Uend + (size_t)b * cols);
        }
        for (int a = 0; a < ny; a++) {
            double *row = w->Ys + (size_t)(p->yoff[i] + a) * cols;
            for (int b = 0; b < nx; b++) {
                const double c = C[(size_t)a * nx + b];
                if (c != 0.0) axpy(cols, c, w->Xn + (size_t)(p->xoff[i] + b) * cols, row);
            }
            for (int b = 0; b < nu; b++) {
                const double d = D[(size_t)a * nu + b];
                if (d != 0.0) axpy(cols, d, w->Uend + (size_t)b * cols, row);
            }
        }
    }

    return CS_OK;
}

int cs_amp_matrix(const cs_amp_plan *p, const double *pack, double H, double *Omega, double *g, cs_amp_work *w,
                  cs_err *err) {
    const int dim = p->dim, nyt = p->nyt, nxt = p->nxt, cols = dim + 1;
    CS_TRY(amp_rows(p, pack, H, cols, w, err));
    CS_TRY(output_update(p, pack, w, err)); /* y(T_{N+1}) */

    /* Assemble Ω and g (busch2016 eq. 23): new x, new y, shifted history. */
    memset(Omega, 0, sizeof(double) * (size_t)dim * dim);
    for (int a = 0; a < nxt; a++) {
        memcpy(Omega + (size_t)a * dim, w->Xn + (size_t)a * cols, sizeof(double) * dim);
        g[a] = w->Xn[(size_t)a * cols + dim];
    }
    for (int a = 0; a < nyt; a++) {
        memcpy(Omega + (size_t)(nxt + a) * dim, w->Yn + (size_t)a * cols, sizeof(double) * dim);
        g[nxt + a] = w->Yn[(size_t)a * cols + dim];
    }
    for (int s = 1; s < p->depth; s++)
        for (int a = 0; a < nyt; a++) {
            const int row = nxt + s * nyt + a;
            Omega[(size_t)row * dim + nxt + (s - 1) * nyt + a] = 1.0;
            g[row] = 0.0;
        }
    return CS_OK;
}

/* Y = (I - D L)^{-1} C (n_y x n_x, row-major): consistent outputs as a function of the states. */
int cs_amp_output_map(const cs_amp_plan *p, const double *pack, double *Yx, cs_amp_work *w, cs_err *err) {
    const int nyt = p->nyt, nxt = p->nxt;
    memset(Yx, 0, sizeof(double) * (size_t)nyt * nxt);
    for (int i = 0; i < p->nsub; i++) {
        const double *C = pack + p->offC[i];
        for (int a = 0; a < p->ny[i]; a++)
            for (int b = 0; b < p->nx[i]; b++)
                Yx[(size_t)(p->yoff[i] + a) * nxt + p->xoff[i] + b] = C[(size_t)a * p->nx[i] + b];
    }
    if (loop_matrix(p, pack, w->ImDL) && cs_solve(nyt, nxt, w->ImDL, Yx, w->solve, w->ipiv, err))
        return cs_fail(err, CS_ERR_ARG, "system: the algebraic loop I - D L is singular (ill-posed coupling)");
    return CS_OK;
}

int cs_amp_spectral_radius(const cs_amp_plan *p, const double *pack, double H, const double *Yx, double *Omega,
                           double *rho, cs_amp_work *w, cs_err *err) {
    const int dim = p->dim, nxt = p->nxt, nyt = p->nyt, cols = dim;
    int m;
    double *R = w->red;
    if (p->update == CS_UPDATE_CONSISTENT && nyt > 0) {
        /* Ω restricted to {y_N = Y x_N}, built directly from the step's state rows (the output rows of Ω are never
         * needed): coordinates (x_N, y_{N-1}, ..., y_{N-P+1}), m = n_x + (P-1) n_y (see companion.h). */
        if (!Yx) {
            CS_TRY(cs_amp_output_map(p, pack, w->Yx, w, err));
            Yx = w->Yx;
        }
        CS_TRY(amp_rows(p, pack, H, cols, w, err));
        m = nxt + (p->depth - 1) * nyt;
        for (int a = 0; a < nxt; a++) { /* x_{N+1} = Xn [x_N; y_N = Y x_N; y_{N-1}; ...] */
            const double *xr = w->Xn + (size_t)a * cols;
            double *rr = R + (size_t)a * m;
            memcpy(rr, xr, sizeof(double) * nxt);
            memcpy(rr + nxt, xr + nxt + nyt, sizeof(double) * (size_t)(m - nxt));
            for (int j = 0; j < nyt; j++) {
                const double c = xr[nxt + j];
                if (c == 0.0) continue;
                const double *yr = Yx + (size_t)j * nxt;
                for (int b = 0; b < nxt; b++) rr[b] += c * yr[b];
            }
        }
        for (int s = 1; s < p->depth; s++) /* shifted history: y_N = Y x_N, then y_{N-s+1} */
            for (int a = 0; a < nyt; a++) {
                double *rr = R + (size_t)(nxt + (s - 1) * nyt + a) * m;
                memset(rr, 0, sizeof(double) * m);
                if (s == 1) memcpy(rr, Yx + (size_t)a * nxt, sizeof(double) * nxt);
                else rr[nxt + (s - 2) * nyt + a] = 1.0;
            }
    } else {
        /* g is not needed for ρ: it goes to the eigenvalue scratch (dim doubles fit), overwritten below. */
        CS_TRY(cs_amp_matrix(p, pack, H, Omega, w->eig, w, err));
        m = dim;
        memcpy(R, Omega, sizeof(double) * (size_t)dim * dim);
    }
    /* Deflate indices with a zero row or a zero column (each carries an eigenvalue 0), until none is left: count the
     * non-zeros of every row and column once; removing index a only lowers the counts of the others; compact once. */
    int *rc = w->defl, *cc = rc + m, *alive = cc + m, left = m;
    for (int a = 0; a < m; a++) { rc[a] = cc[a] = 0; alive[a] = 1; }
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++)
            if (R[(size_t)a * m + b] != 0.0) { rc[a]++; cc[b]++; }
    for (int found = 1; found && left > 0;) {
        found = 0;
        for (int a = 0; a < m; a++) {
            if (!alive[a] || (rc[a] > 0 && cc[a] > 0)) continue;
            alive[a] = 0;
            left--;
            found = 1;
            for (int b = 0; b < m; b++) {
                if (R[(size_t)b * m + a] != 0.0) rc[b]--;
                if (R[(size_t)a * m + b] != 0.0) cc[b]--;
            }
        }
    }
    if (left < m) {
        int k = 0;
        for (int i = 0; i < m; i++) {
            if (!alive[i]) continue;
            for (int j = 0; j < m; j++)
                if (alive[j]) R[k++] = R[(size_t)i * m + j];
        }
        m = left;
    }
    if (m == 0) { *rho = 0.0; return CS_OK; }
    return cs_spectral_radius(m, R, rho, w->eig, err);
}
