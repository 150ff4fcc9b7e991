#include "linalg/expm.h"

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

size_t cs_expm_work_size(int n) { return (size_t)10 * n * n + n; }

int cs_expm(int n, const double *A, double *E, double *work, int *ipiv, cs_err *err) {
    if (n == 0) return CS_OK;
    size_t nn = (size_t)n * n;
    double *As = work, *A2 = work + nn, *A4 = work + 2 * nn, *A6 = work + 3 * nn, *U = work + 4 * nn,
           *V = work + 5 * nn, *T = work + 6 * nn, *S = work + 7 * nn, /* S: 2 nn for cs_solve */
           *d = work + 10 * nn;
    if (!cs_all_finite(nn, A)) return cs_fail(err, CS_ERR_LINALG, "matrix exponential of a matrix with non-finite entries");
    /* exp(A) = D exp(D^-1 A D) D^-1: balancing first (exact, powers of two) shrinks the norm of badly scaled
     * matrices such as Van Loan's [[A H, B H], [0, N]] with stiff A, so fewer squarings (and a lower Pade degree)
     * are needed, which is both faster and more accurate. */
    memcpy(As, A, sizeof(double) * nn);
    cs_balance(n, As, d);
    double nrm = cs_norm1(n, As);

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
            if (d[i] != d[j]) E[(size_t)i * n + j] *= d[i] / d[j];
    return CS_OK;
}

size_t cs_poly_propagator_work_size(int nx, int nu, int deg) {
    size_t N = (size_t)nx + (size_t)nu * (deg + 1);
    return 2 * N * N + cs_expm_work_size((int)N);
}

int cs_poly_propagator(int nx, int nu, int deg, const double *A, const double *B, double H, double *Phi, double *Gam,
                       double *work, int *ipiv, cs_err *err) {
    int N = nx + nu * (deg + 1);
    size_t NN = (size_t)N * N;
    double *M = work, *E = work + NN, *w = work + 2 * NN;
    memset(M, 0, sizeof(double) * NN);
    /* In the scaled time s = tau/H in [0, 1]: dx/ds = H A x + H B z_0 with the input chain
     * z_0' = z_1, ..., z_{deg-1}' = z_deg, z_deg' = 0 and z_j(0) = j! c_j, so that z_0(s) = sum_j c_j s^j.
     * Hence Gam[m] = m! * (block x <- z_m of exp(M)). */
    for (int i = 0; i < nx; i++) {
        for (int j = 0; j < nx; j++) M[(size_t)i * N + j] = A[(size_t)i * nx + j] * H;
        for (int j = 0; j < nu; j++) M[(size_t)i * N + nx + j] = B[(size_t)i * nu + j] * H;
    }
    for (int m = 0; m < deg; m++)
        for (int j = 0; j < nu; j++) M[(size_t)(nx + m * nu + j) * N + nx + (m + 1) * nu + j] = 1.0;
    CS_TRY(cs_expm(N, M, E, w, ipiv, err));
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < nx; j++) Phi[(size_t)i * nx + j] = E[(size_t)i * N + j];
    double fact = 1.0;
    for (int m = 0; m <= deg; m++) {
        if (m > 0) fact *= m;
        double *G = Gam + (size_t)m * nx * nu;
        for (int i = 0; i < nx; i++)
            for (int j = 0; j < nu; j++) G[(size_t)i * nu + j] = fact * E[(size_t)i * N + nx + m * nu + j];
    }
    return CS_OK;
}
