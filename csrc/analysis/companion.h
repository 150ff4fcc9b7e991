/* Companion (amplification) matrix Ω of one macro step of an explicit co-simulation of coupled LTI subsystems
 * integrated exactly (busch2016 eqs. 15-24; kraft2021 §15.5).
 *
 * Subsystem i: x_i' = A_i x_i + B_i u_i, y_i = C_i x_i + D_i u_i; coupling u = L y + r over the stacked inputs and
 * outputs. On [T_N, T_{N+1}] every output signal y_j is replaced by a polynomial ỹ_j(s), s = (t - T_N)/H, whose
 * coefficients are fixed linear combinations of history samples (coupling/approx.h: the very weights the master
 * uses), and u_i(s) = L_i ỹ(s) + r_i. Exact integration of the polynomial input (busch2016 eq. 20, Van Loan via
 * cs_poly_propagator) gives x_i(T_{N+1}) = Φ_i x_i(T_N) + Σ_m Γ_i[m] c_{i,m}, the integrals K of eq. 20.
 *
 * Recurrence state (busch2016 eq. 23, with the zero columns of older z dropped; that removes only zero eigenvalues):
 *     X_N = ( x(T_N); y(T_N); y(T_{N-1}); ...; y(T_{N-P+1}) ),   dim = n_x + P n_y,
 * and one macro step is X_{N+1} = Ω X_N + g (g: contribution of the constant offset r). Numerically stable iff
 * ρ(Ω) < 1 (eq. 25).
 *
 * Schemes:
 *   Jacobi: every signal is extrapolated from y(T_N), y(T_{N-1}), ... (busch2016 eq. 11/12/14).
 *   Gauss-Seidel with a stepping order: a subsystem stepped later *interpolates* the outputs of subsystems already
 *     stepped in this macro step through y*(T_{N+1}), y(T_N), ... (eq. 13), where y*_j(T_{N+1}) = C_j x_j(T_{N+1}) +
 *     D_j ũ_j(T_{N+1}) is the output the source produced with its own approximated input at the end of its step;
 *     signals of itself or of later subsystems are extrapolated.
 * Output update at T_{N+1}:
 *   CS_UPDATE_CONSISTENT (kraft2021 eq. 2.22): y = C x + D u with u = L y + r solved, y = (I - D L)^{-1}(C x + D r).
 *   CS_UPDATE_SIMPLIFIED (busch2016 eq. 19): y_i = C_i x_i + D_i ũ_i(T_{N+1}), the approximated input at h = H.
 * Both are identical without feed-through.
 *
 * Parameter sets are "packed": for each subsystem A_i (nx*nx), B_i (nx*nu), C_i (ny*nx), D_i (ny*nu) row-major, then
 * L (n_u x n_y), then r (n_u). A plan holds everything that does not change between parameter sets (sizes,
 * approximation weights, scheme); the workspace holds the scratch for one parameter set (one per thread). */
#ifndef COSIM_ANALYSIS_COMPANION_H
#define COSIM_ANALYSIS_COMPANION_H

#include "common.h"
#include "coupling/approx.h"
#include "network/network.h"  /* CS_UPDATE_*: the same update as the engine */
#include "schemes/scheme.h"   /* CS_SCHEME_* and the Gauss-Seidel interpolation rule */

typedef struct cs_amp_plan {
    int nsub;
    int *nx, *nu, *ny;          /* sizes per subsystem */
    int *xoff, *uoff, *yoff;    /* offsets into the stacked x, u, y */
    int *order;                 /* stepping order (subsystem indices) */
    int *pos;                   /* pos[i]: position of subsystem i in `order` */
    int *ysrc;                  /* ysrc[j]: subsystem that owns output j */
    unsigned char *mask;        /* structural non-zeros of L (n_u x n_y): which signals feed which inputs */
    int nxt, nut, nyt;
    int scheme, update;
    cs_approx_spec spec;
    cs_approx_weights wext;     /* extrapolation through T_N, T_{N-1}, ... */
    cs_approx_weights wint;     /* Gauss-Seidel interpolation through T_{N+1}, T_N, ... */
    int *deg;                   /* polynomial degree of the inputs of subsystem i */
    int depth;                  /* P: output samples in the recurrence state */
    int dim;                    /* n_x + P n_y */
    size_t *offA, *offB, *offC, *offD;
    size_t offL, offr, pack_size;
    /* workspace sizes */
    int maxnx, maxnu, maxdeg;
} cs_amp_plan;

typedef struct cs_amp_work {
    double *Phi, *Gam, *prop, *Xn, *Ys, *Yn, *Crow, *Uend, *ImDL, *solve, *eig;
    int *ipiv;
    double *red, *Yx;           /* spectral radius: reduced matrix (dim x dim), output map Y (n_y x n_x) */
    int *defl;                  /* 3 dim: row and column non-zero counts and flags of the deflation */
    /* per-subsystem cache of the last (A_i, B_i, H) -> (Φ_i, Γ_i): over a parameter grid most subsystems do not
     * change between neighbouring points (e.g. S1 of the two-mass oscillator depends only on H) */
    double **cPhi, **cGam, **cAB, *cH;
    int ncache;
} cs_amp_work;

/* Create a plan. nx/nu/ny: sizes of the nsub >= 1 subsystems. mask: n_u x n_y structural pattern of L (NULL: all
 * signals may feed all inputs). order: stepping order for Gauss-Seidel (NULL: 0..nsub-1; ignored for Jacobi).
 * Hermite approximations need output derivatives and are rejected. Returns NULL (err set) on bad input. */
cs_amp_plan *cs_amp_plan_create(int nsub, const int *nx, const int *nu, const int *ny, const unsigned char *mask,
                                cs_approx_spec spec, int scheme, const int *order, int update, cs_err *err);
void cs_amp_plan_destroy(cs_amp_plan *plan);

/* Scratch for one parameter set at a time; allocate once per thread. */
cs_amp_work *cs_amp_work_create(const cs_amp_plan *plan);
void cs_amp_work_destroy(cs_amp_work *w);

/* Ω (dim x dim, row-major) and g (dim) of one macro step of size H > 0 for the packed parameter set `pack`.
 * Fails with CS_ERR_ARG if the algebraic loop I - D L is singular (consistent update), CS_ERR_LINALG on expm
 * failure. No allocation. */
int cs_amp_matrix(const cs_amp_plan *plan, const double *pack, double H, double *Omega, double *g, cs_amp_work *w,
                  cs_err *err);

/* ρ(Ω) (busch2016 eq. 25); Omega is scratch of dim*dim doubles. No allocation.
 * The eigenvalue problem is first reduced without changing the non-zero eigenvalues: with the consistent update,
 * y(T_{N+1}) = Y x(T_{N+1}) + c, Y = (I - D L)^{-1} C, so the range of Ω lies in {y_N = Y x_N} and Ω restricted to it
 * acts on (x_N, y_{N-1}, ...) alone; then indices whose row or column is zero (history never read, eigenvalue 0)
 * are deflated. For Busch's F/D Gauss-Seidel k = 1 this takes dim 10 to 5. */
int cs_amp_spectral_radius(const cs_amp_plan *plan, const double *pack, double H, const double *Yx, double *Omega,
                           double *rho, cs_amp_work *w, cs_err *err);

/* Y = (I - D L)^{-1} C (n_y x n_x): the consistent outputs y = Y x of the system `pack`. It does not depend on H,
 * so a map over H computes it once per system and passes it to cs_amp_spectral_radius as Yx (NULL: computed there). */
int cs_amp_output_map(const cs_amp_plan *plan, const double *pack, double *Yx, cs_amp_work *w, cs_err *err);

#endif
