/* Polynomial approximation of one scalar coupling signal on a macro step [T_N, T_N + H].
 *
 * Every approximation of the papers is a polynomial in the scaled time s = (t - T_N)/H in [0, 1]:
 *   - Lagrange of degree k (busch2016 eq. 11; kraft2021 eq. 2.23/2.24): extrapolation through the k+1 newest
 *     samples T_N, T_{N-1}, ..., or (Gauss-Seidel, busch2016 eq. 13) interpolation through T_{N+1}, T_N, ...;
 *     ZOH is Lagrange with k = 0.
 *   - EXTRIPOL-C0 / -C1 (busch2016 eq. 12a/12b): Phi_N = P_prev(T_N), Phi_{N+1} = P_cur(T_{N+1}) of the degree-k
 *     Lagrange extrapolants of the previous and current window, joined linearly (C0) or by a cubic Hermite
 *     polynomial with the slopes Phi'_N, Phi'_{N+1} (C1). Uses k+2 samples.
 *   - Hermite of degree k from values and time derivatives of the outputs (moshagen.md §2.2, eq. 90; k = 1 is the
 *     Taylor polynomial y_N + y'_N (t - T_N)).
 *   - LSQ (kraft2021 §2.4.1, §5.1): the predicted value y^pre_{N+1} is the ordinary least-squares polynomial of
 *     degree k through the nsp newest samples, evaluated at T_{N+1}; the input polynomial interpolates the k newest
 *     samples and (T_{N+1}, y^pre_{N+1}) (eq. 2.24). With nsp = k + 1 it is Lagrange extrapolation.
 *   - ACC (kraft2021 App. C, [LLSS17]): the derivative samples (the accelerations of a velocity output) are
 *     extrapolated with degree k = κ_a and integrated once from the value at T_N: p(s) = y_N + H ∫_0^s P_κa(σ) dσ;
 *     Interpolating (Gauss-Seidel; our reading of the thesis's GS variants, which it does not spell out) P_κa
 *     passes through the source's derivative at T_{N+1}, T_N, ..., T_{N-κa+1} and the polynomial ends at the
 *     source's exchanged value there: p(s) = y_{N+1} - H ∫_s^1 P_κa; accRel then relaxes that value against the
 *     classic extrapolant through T_N, ... as in the Jacobi case.
 *     A position output is the integral of its velocity's polynomial; the signal coupling does that step, since
 *     it reads another signal (cs_signal_coupling_create: integral_of).
 *   - ACC_REL (kraft2021 App. C, [LYL+20]; the relaxation formula is our reconstruction, spec §15.1/§22 item 7):
 *     the end value is relaxed between the ACC value and the classic extrapolant of degree k2 = κ_λ,
 *     ũ_{N+1} = (1 - ω) p_acc(1) + ω P_κλ(T_{N+1}; T_N, ..., T_{N-κλ}), and the polynomial of degree κ_λ
 *     interpolates the κ_λ newest samples and (T_{N+1}, ũ_{N+1}) (as eq. 2.24).
 * The polynomial is a linear function of the history data, so it is returned as weights: with v the data vector
 * (v[j] = value at the j-th newest sample, v[CS_MAXHIST + j] = its time derivative dy/dt),
 *     p(s) = sum_m c_m s^m,   c_m = sum_j W[m * CS_APPROX_NV + j] v[j].
 * The same weights serve every signal that shares the macro grid, so the master computes them once per step;
 * the stability analysis uses them to assemble Busch's recurrence (eq. 21).
 * Non-equidistant grids are supported; during start-up, when fewer samples exist, the degree is reduced. */
#ifndef COSIM_APPROX_H
#define COSIM_APPROX_H

#include "common.h"
#include "input/input.h" /* CS_MAXDEG */

#define CS_MAXHIST 8
#define CS_APPROX_NV (2 * CS_MAXHIST)

enum {
    CS_APPROX_LAGRANGE = 0,
    CS_APPROX_EXTRIPOL_C0 = 1,
    CS_APPROX_EXTRIPOL_C1 = 2,
    CS_APPROX_HERMITE = 3,
    CS_APPROX_LSQ = 4,
    CS_APPROX_ACC = 5,
    CS_APPROX_ACC_REL = 6
};

typedef struct cs_approx_spec {
    int kind; /* CS_APPROX_* */
    int k;    /* polynomial degree of the underlying Lagrange/Hermite polynomial, 0..CS_MAXDEG */
    int nsp;  /* LSQ: samples of the least-squares fit, k+1..CS_MAXHIST (Kraft's N_sp); ignored by the others */
    int k2;   /* ACC_REL: degree κ_λ of the relaxed polynomial (k is κ_a); ignored by the others */
    double omega; /* ACC_REL: relaxation parameter ω in [0, 1]; ignored by the others */
} cs_approx_spec;

/* Does the approximation integrate extrapolated derivatives (ACC, ACC_REL)? */
static inline int cs_approx_is_acc(int kind) { return kind == CS_APPROX_ACC || kind == CS_APPROX_ACC_REL; }

typedef struct cs_approx_weights {
    int deg;         /* degree of p(s) actually used (reduced during start-up) */
    int npts;        /* number of history samples it reads (newest first) */
    int uses_deriv;  /* reads derivative data v[CS_MAXHIST + j] */
    double W[(CS_MAXDEG + 1) * CS_APPROX_NV];
} cs_approx_weights;

/* Validate a spec (kind known, 0 <= k <= CS_MAXDEG, EXTRIPOL k <= CS_MAXHIST - 2, LSQ k + 1 <= nsp <= CS_MAXHIST,
 * ACC/ACC_REL κ_a <= CS_MAXDEG - 2 (a position's polynomial has degree κ_a + 2), κ_λ <= CS_MAXHIST - 1, ω in [0, 1]). */
int cs_approx_check(const cs_approx_spec *spec, cs_err *err);

/* Samples the approximation needs for its full degree (k+1, k+2 for EXTRIPOL, ceil((k+1)/2) for Hermite, nsp for
 * LSQ, max(κ_a, κ_λ) + 1 for ACC_REL). */
int cs_approx_points_needed(const cs_approx_spec *spec);

/* Weights for the step [TN, TN+H].
 * T: the navail >= 1 newest sample times, newest first. For extrapolation T[0] == TN; with `interpolate` set the
 * newest sample is T[0] == TN + H (Gauss-Seidel: the source subsystem has already reached T_{N+1}); EXTRIPOL and LSQ
 * then fall back to Lagrange interpolation of degree k (busch2016 eq. 13). */
int cs_approx_weights_compute(const cs_approx_spec *spec, int interpolate, int navail, const double *T, double TN,
                              double H, cs_approx_weights *w, cs_err *err);

/* Weights on the uniform grid of nominal step H: samples at s = 0, -1, -2, ... (extrapolation) or s = 1, 0, -1, ...
 * (interpolation). The value weights do not depend on H, the derivative weights (Hermite) scale with H. The engine
 * caches these for regular steps and the stability analysis builds its recurrence from them: one definition for
 * both. navail: samples available (1..CS_MAXHIST). */
int cs_approx_uniform_weights(const cs_approx_spec *spec, int interpolate, int navail, double H, cs_approx_weights *w,
                              cs_err *err);

/* ACC_REL (extrapolating): the weights of the ACC polynomial alone (degree κ_a + 1) and the Lagrange basis
 * polynomial ell[0..deg] of the relaxed end node s = 1 of `w` (deg = w->deg, the κ_λ in use): a position output's
 * relaxed polynomial is its own one plus (1 - ω) (its integrated ACC end value - its own ACC end value) ell(s). */
int cs_approx_acc_parts(const cs_approx_spec *spec, int navail, const double *T, double TN, double H, int deg,
                        cs_approx_weights *wacc, double *ell, cs_err *err);

/* Polynomial coefficients c[0..W->deg] of one signal from its data vector v (CS_APPROX_NV entries). */
static inline void cs_approx_coefs(const cs_approx_weights *W, const double *v, double *c) {
    for (int m = 0; m <= W->deg; m++) {
        const double *w = W->W + (size_t)m * CS_APPROX_NV;
        double s = 0.0;
        for (int q = 0; q < W->npts; q++) s += w[q] * v[q];
        if (W->uses_deriv)
            for (int q = 0; q < W->npts; q++) s += w[CS_MAXHIST + q] * v[CS_MAXHIST + q];
        c[m] = s;
    }
}

/* acc/accRel positions (kraft2021 App. C): given the velocity-level coefficients c (ny x (CS_MAXDEG + 1), degree dv,
 * from the weights of `spec` with step H) of all ny signals and their data hv (ny x CS_APPROX_NV), output j in
 * [j0, j1) with integral_of[j] = p >= 0 gets x̃(s) = x_N + H ∫_0^s ṽ_p (ACC, degree dv + 1), or for ACC_REL its
 * relaxed polynomial shifted by (1 - ω) (integrated - own ACC end value) ell(s) (wacc, ell from
 * cs_approx_acc_parts). With `interpolate` (Gauss-Seidel: the data's slot 0 is the source's T_{N+1}) the ACC
 * position ends at x_{N+1}, x̃(s) = x_{N+1} - H ∫_s^1 ṽ_p, and accRel positions need no shift (both ACC end values
 * are x_{N+1}). Returns the degree of the step's polynomials. */
int cs_approx_acc_positions(const cs_approx_spec *spec, int interpolate, const int *integral_of, int j0, int j1,
                            const double *hv, double *c, int dv, double H, const cs_approx_weights *wacc,
                            const double *ell);

/* Coefficients B[q * nn + m] of s^m in the Lagrange basis polynomials of the nn distinct nodes s_q (product form):
 * the iterative schemes' extrapolants and end bases. */
void cs_lagrange_basis(int nn, const double *s, double *B);

/* The Lagrange basis polynomial of the node s = 1 among the nodes 1, z[0], ..., z[deg-1] (kraft2021 eq. 3.11 L^κ):
 * coefficients ell[0..deg] of s^m; the same arithmetic as row 0 of cs_lagrange_basis. */
void cs_lagrange_end_basis(int deg, const double *z, double *ell);

/* Evaluate p(s) and dp/dt at time t from polynomial coefficients c[0..deg] on [TN, TN+H]. */
static inline double cs_poly_eval(int deg, const double *c, double s) {
    double v = c[deg];
    for (int m = deg - 1; m >= 0; m--) v = v * s + c[m];
    return v;
}

#endif
