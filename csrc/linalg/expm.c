#include "linalg/expm.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "linalg/balance.h"
#include "linalg/dense.h"

/* Pade coefficients b_0..b_m of the [m/m] approximant of exp and the norm bounds theta_m of Higham (2005). */
static const double PADE3[] = {120.0, 60.0, 12.0, 1.0};
static const double PADE5[] = {30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0};
static const double PADE7[] = {17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0};
static const double PADE9[] = {17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0,
                               2162160.0, 110880.0, 3960.0, 90.0, 1.0};
static const double PADE13[] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                                1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
                                33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0};
static const double THETA[] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                               2.097847961257068e0, 5.371920351148152e0};

size_t cs_expm_work_size(int n) { return (size_t)10 * n * n + 2 * (size_t)n; }

int cs_expm(int n, const double *A, double *E, double *work, int *ipiv, cs_err *err) {
    if (n == 0) return CS_OK;
    size_t nn = (size_t)n * n;
    double *As = work, *A2 = work + nn, *A4 = work + 2 * nn, *A6 = work + 3 * nn, *U = work + 4 * nn,
           *V = work + 5 * nn, *T = work + 6 * nn, *S = work + 7 * nn, /* S: 2 nn for cs_solve */
           *d = work + 10 * nn, *dinv = d + n;
    if (!cs_all_finite(nn, A)) return cs_fail(err, CS_ERR_LINALG, "matrix exponential of a matrix with non-finite entries");
    /* exp(A) = D exp(D^-1 A D) D^-1: balancing first (exact, powers of two) shrinks the norm of badly scaled
     * matrices such as Van Loan's [[A H, B H], [0, N]] with stiff A, so fewer squarings (and a lower Pade degree)
     * are needed, which is both faster and more accurate. */
    memcpy(As, A, sizeof(double) * nn);
    cs_balance(n, As, d, dinv);
    double nrm = cs_norm1(n, As);
    if (!(nrm <= DBL_MAX)) nrm = DBL_MAX; /* the column sums of finite entries can overflow: keep s defined */

    int s = 0, m = 13;
    const double *b = PADE13;
    if (nrm <= THETA[0]) { m = 3; b = PADE3; }
    else if (nrm <= THETA[1]) { m = 5; b = PADE5; }
    else if (nrm <= THETA[2]) { m = 7; b = PADE7; }
    else if (nrm <= THETA[3]) { m = 9; b = PADE9; }
    else {
        s = (int)ceil(log2(nrm / THETA[4]));
        if (s < 0) s = 0;
    }
    double scale = ldexp(1.0, -s);
    if (s > 0)
        for (size_t i = 0; i < nn; i++) As[i] *= scale;

    cs_matmul(n, n, n, 1.0, As, As, 0.0, A2);
    if (m == 13) {
        cs_matmul(n, n, n, 1.0, A2, A2, 0.0, A4);
        cs_matmul(n, n, n, 1.0, A4, A2, 0.0, A6);
        /* U = A [A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I] */
        for (size_t i = 0; i < nn; i++) T[i] = b[13] * A6[i] + b[11] * A4[i] + b[9] * A2[i];
        cs_matmul(n, n, n, 1.0, A6, T, 0.0, S);
        for (size_t i = 0; i < nn; i++) S[i] += b[7] * A6[i] + b[5] * A4[i] + b[3] * A2[i];
        for (int i = 0; i < n; i++) S[(size_t)i * n + i] += b[1];
        cs_matmul(n, n, n, 1.0, As, S, 0.0, U);
        /* V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I */
        for (size_t i = 0; i < nn; i++) T[i] = b[12] * A6[i] + b[10] * A4[i] + b[8] * A2[i];
        cs_matmul(n, n, n, 1.0, A6, T, 0.0, V);
        for (size_t i = 0; i < nn; i++) V[i] += b[6] * A6[i] + b[4] * A4[i] + b[2] * A2[i];
        for (int i = 0; i < n; i++) V[(size_t)i * n + i] += b[0];
    } else {
        /* Odd part U = A sum_j b_{2j+1} A^{2j}, even part V = sum_j b_{2j} A^{2j}, powers by repeated A2. */
        double *P = A4; /* current even power */
        cs_eye(n, P);
        memset(T, 0, sizeof(double) * nn);
        memset(V, 0, sizeof(double) * nn);
        for (int j = 0; 2 * j <= m; j++) {
            if (j > 0) { cs_matmul(n, n, n, 1.0, P, A2, 0.0, A6); memcpy(P, A6, sizeof(double) * nn); }
            for (size_t i = 0; i < nn; i++) { V[i] += b[2 * j] * P[i]; if (2 * j + 1 <= m) T[i] += b[2 * j + 1] * P[i]; }
        }
        cs_matmul(n, n, n, 1.0, As, T, 0.0, U);
    }
    /* Solve (V - U) E = (V + U). */
    for (size_t i = 0; i < nn; i++) { T[i] = V[i] - U[i]; E[i] = V[i] + U[i]; }
    CS_TRY(cs_solve(n, n, T, E, S, ipiv, err));
    for (int k = 0; k < s; k++) {
        cs_matmul(n, n, n, 1.0, E, E, 0.0, T);
        memcpy(E, T, sizeof(double) * nn);
    }
    for (int i = 0; i < n; i++) /* undo the balancing */
        for (int j = 0; j < n; j++)
            if (d[i] != d[j]) E[(size_t)i * n + j] *= d[i] * dinv[j];
    return CS_OK;
}

/* phi functions phi_0..phi_p of a small matrix by Taylor series and scaling and squaring.
 *
 * phi_0(X) = exp(X), phi_k(X) = sum_i X^i / (i + k)!, so phi_k(X) = I/k! + X phi_{k+1}(X). The propagator of a
 * polynomial input needs only these functions of the n_x x n_x matrix X = A H (busch2016 eq. 20):
 *     Phi = phi_0(X),   Gam[m] = int_0^H exp(A (H - tau)) B (tau/H)^m dtau = H m! phi_{m+1}(X) B,
 * which is much cheaper than the exponential of Van Loan's (n_x + n_u (deg+1)) square block matrix.
 * Steps: balance X = D Xb D^-1 (phi_k(X) = D phi_k(Xb) D^-1), scale Z = Xb / 2^s with ||Z||_1 <= 1/2, sum the
 * series of phi_p(Z) by Horner until the terms fall below the unit round-off, recover phi_{p-1}..phi_0 by the
 * recurrence above, and undo the scaling s times with
 *     phi_k(2Z) = 2^-k [phi_0(Z) phi_k(Z) + sum_{j=1..k} phi_j(Z) / (k - j)!]    (functions of Z commute). */
static size_t phi_work_size(int n, int p) { return (size_t)(p + 3) * n * n + 2 * (size_t)n; }

/* C = A B (n x n); inlined so that for the small n of subsystem states the loops have constant bounds. */
static inline __attribute__((always_inline)) void prod(int n, const double *restrict A, const double *restrict B,
                                                       double *restrict C) {
    if (n > 8) { cs_matmul(n, n, n, 1.0, A, B, 0.0, C); return; }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double c = 0.0;
            for (int k = 0; k < n; k++) c += A[i * n + k] * B[k * n + j];
            C[i * n + j] = c;
        }
}

/* On return phi + k*n*n holds phi_k(X) for k = 0..p (X n x n row-major, finite). */
static inline __attribute__((always_inline)) void phi_functions(int n, int p, const double *X, double *phi,
                                                                double *work) {
    const size_t nn = (size_t)n * n;
    double *Z = work, *T = work + nn, *nxt = work + 2 * nn, *d = work + (2 + (size_t)p + 1) * nn, *dinv = d + n;
    memcpy(Z, X, sizeof(double) * nn);
    cs_balance(n, Z, d, dinv);
    double nrm = cs_norm1(n, Z);
    if (!(nrm <= DBL_MAX)) nrm = DBL_MAX; /* the column sums of finite entries can overflow: keep s defined */
    /* log2(nrm / 0.5) = log2(nrm) + 1 where nrm / 0.5 would overflow to inf (ceil(inf) -> int is undefined) */
    int s = nrm > 0.5 ? (int)ceil(nrm <= DBL_MAX / 2 ? log2(nrm / 0.5) : log2(nrm) + 1.0) : 0;
    if (s > 0) {
        const double scale = ldexp(1.0, -s);
        for (size_t i = 0; i < nn; i++) Z[i] *= scale;
        nrm *= scale;
    }
    /* Horner for phi_p over the terms i = 0..q, with ||Z||^q / q! below 2^-56 (each term is at most 1/4 of the
     * previous one). */
    int q = 1;
    for (double t = nrm; t > 0x1p-56 && q < 40; q++) t *= nrm / (q + 1);
    double inv_fact[64]; /* 1/j! for j = 0..q+p (q <= 40, p <= 11) */
    inv_fact[0] = 1.0;
    for (int j = 1; j <= q + p && j < 64; j++) inv_fact[j] = inv_fact[j - 1] / j;
    double *P = phi + (size_t)p * nn;
    cs_eye(n, P);
    for (int i = 0; i < n; i++) P[(size_t)i * n + i] = inv_fact[q + p];
    for (int i = q - 1; i >= 0; i--) {
        prod(n, Z, P, T);
        for (int a = 0; a < n; a++) T[(size_t)a * n + a] += inv_fact[i + p];
        memcpy(P, T, sizeof(double) * nn);
    }
    for (int k = p - 1; k >= 0; k--) { /* phi_k = I/k! + Z phi_{k+1} */
        double *Pk = phi + (size_t)k * nn;
        prod(n, Z, phi + (size_t)(k + 1) * nn, Pk);
        for (int a = 0; a < n; a++) Pk[(size_t)a * n + a] += inv_fact[k];
    }
    for (int r = 0; r < s; r++) {
        for (int k = 0; k <= p; k++) {
            double *Nk = nxt + (size_t)k * nn;
            prod(n, phi, phi + (size_t)k * nn, Nk);
            if (k == 0) continue;
            for (int j = 1; j <= k; j++) {
                const double c = inv_fact[k - j];
                const double *Pj = phi + (size_t)j * nn;
                for (size_t i = 0; i < nn; i++) Nk[i] += c * Pj[i];
            }
            const double c = ldexp(1.0, -k);
            for (size_t i = 0; i < nn; i++) Nk[i] *= c;
        }
        memcpy(phi, nxt, sizeof(double) * (p + 1) * nn);
    }
    for (int k = 0; k <= p; k++) { /* undo the balancing */
        double *Pk = phi + (size_t)k * nn;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                if (d[a] != d[b]) Pk[(size_t)a * n + b] *= d[a] * dinv[b];
    }
}

size_t cs_poly_propagator_work_size(int nx, int nu, int deg) {
    return (size_t)(deg + 2) * nx * nx + phi_work_size(nx, deg + 1) + (size_t)nx * nx;
}

int cs_poly_propagator(int nx, int nu, int deg, const double *A, const double *B, double H, double *Phi, double *Gam,
                       double *work, int *ipiv, cs_err *err) {
    (void)ipiv;
    if (nx == 0) return CS_OK;
    const size_t nn = (size_t)nx * nx;
    const int p = deg + 1;
    double *phi = work, *X = work + (size_t)(p + 1) * nn, *pw = X + nn;
    for (size_t i = 0; i < nn; i++) X[i] = A[i] * H;
    if (p > 11) return cs_fail(err, CS_ERR_ARG, "input polynomial degree %d exceeds 10", deg);
    if (!cs_all_finite(nn, X) || !cs_all_finite((size_t)nx * nu, B) || !isfinite(H))
        return cs_fail(err, CS_ERR_LINALG, "matrix exponential of a matrix with non-finite entries");
    switch (nx) { /* copies with constant n for small state dimensions */
    case 1: phi_functions(1, p, X, phi, pw); break;
    case 2: phi_functions(2, p, X, phi, pw); break;
    case 3: phi_functions(3, p, X, phi, pw); break;
    case 4: phi_functions(4, p, X, phi, pw); break;
    default: phi_functions(nx, p, X, phi, pw); break;
    }
    memcpy(Phi, phi, sizeof(double) * nn);
    double fact = H; /* H m! */
    for (int m = 0; m <= deg; m++) {
        if (m > 0) fact *= m;
        double *G = Gam + (size_t)m * nx * nu;
        const double *P = phi + (size_t)(m + 1) * nn;
        if (nx > 8) { cs_matmul(nx, nu, nx, fact, P, B, 0.0, G); continue; }
        for (int i = 0; i < nx; i++) /* small: plain loops beat the call */
            for (int j = 0; j < nu; j++) {
                double c = 0.0;
                for (int k = 0; k < nx; k++) c += P[(size_t)i * nx + k] * B[(size_t)k * nu + j];
                G[(size_t)i * nu + j] = fact * c;
            }
    }
    return CS_OK;
}
