/* Iterative schemes (DESIGN.md §2 "Scheme"): every macro step [T_N, T_{N+1}] is iterated until the coupling
 * conditions hold at the end of the window.
 *
 *   Implicit (schemes/implicit.c, kraft2021 §6): predictor j = 0 with p^pre (2.23)/(2.24), then Newton on the
 *     coupling residual g(u_{N+1}) = u_{N+1} - L y_{N+1}(u_{N+1}) - r (2.27); the interface Jacobian dy/du by finite
 *     differences (perturbed integrations from the saved state, the Δλ rules of §6.3), "sap" (App. A) or exact
 *     (the units' sensitivity op); convergence test (2.31)-(2.33).
 *   Waveform relaxation (schemes/waveform.c, kraft2021 §7; preCICE's waveform iteration): fixed-point iteration over
 *     whole windows in Jacobi or Gauss-Seidel order, relaxed by ω or accelerated (schemes/acceleration.h: Aitken,
 *     IQN-ILS). Waveforms: the coupling polynomial with iterated end values (kraft's (2.34)/(2.35)), or the units'
 *     own micro-step values (unit trace) interpolated by not-a-knot cubic splines.
 * Both need the units' snapshot ops (every iteration restarts from T_N) and the Lagrange-type input polynomials of
 * the signal coupling: p^j(t) = p^pre(t) + (u^j - u^pre) ℓ(s), ℓ the Lagrange basis polynomial of the node T_{N+1}
 * among the step's interpolation nodes (kraft2021 eq. 2.24 with the end value replaced). */
#ifndef COSIM_ITERATIVE_H
#define COSIM_ITERATIVE_H

#include "kind.h"
#include "schemes/scheme.h"

enum { CS_JAC_FD = 0, CS_JAC_SAP = 1, CS_JAC_EXACT = 2, CS_JAC_SAP2 = 3 };
/* The units' sensitivity mode (units/unit.h CS_SENS_*) of an interface Jacobian choice other than fd. */
static inline int cs_jacobian_sensitivity_mode(int jacobian) {
    return jacobian == CS_JAC_SAP ? CS_SENS_SAP : jacobian == CS_JAC_SAP2 ? CS_SENS_SAP2 : CS_SENS_EXACT;
}
enum { CS_ACCEL_NONE = 0, CS_ACCEL_AITKEN = 1, CS_ACCEL_IQN_ILS = 2 };
enum { CS_WAVE_POLYNOMIAL = 0, CS_WAVE_SUBSTEPS = 1 };
enum { CS_ONFAIL_RAISE = 0, CS_ONFAIL_CONTINUE = 1 };

typedef struct cs_iter_opts {
    double tol;          /* WRMS weights W = 1/(atol + tol |v|) (kraft2021 eq. 2.32) */
    double atol;         /* absolute part (<= 0: atol = tol) */
    int max_iter;        /* corrector iterations (implicit) / iterations per window (waveform relaxation) */
    int on_failure;      /* CS_ONFAIL_*: raise CS_ERR_CONVERGENCE, or go on with the last iterate (kraft §5.1) */
    /* implicit */
    int jacobian;        /* CS_JAC_* */
    double tau;          /* τ of the convergence test (2.31), kraft's default 0.33 */
    int conv_y;          /* test δ_y of the outputs instead of δ_u of the inputs */
    double perturbation; /* Δλ_min of §6.3 (fd) */
    /* waveform relaxation */
    double omega;        /* relaxation ω (preCICE convention: ω = 1 plain; kraft's ω_K = 1 - ω) */
    int accel;           /* CS_ACCEL_* */
    int waveform;        /* CS_WAVE_* */
    int gauss_seidel;    /* sweep order: 0 Jacobi, 1 Gauss-Seidel in `order` */
    int reuse;           /* IQN-ILS: windows whose columns are reused */
    double filter;       /* IQN-ILS: QR filter threshold (columns with |R_ii| < filter ||v_i|| are dropped) */
    int kappa;           /* degree of the first iterate's extrapolation of the output waveforms (substeps);
                          * -1: the coupling's degree of the step, set by the adaptive controller (kraft2021 §19) */
    int threads;         /* waveform relaxation, Jacobi order: the units of a sweep on a pool of this many threads
                          * (<= 1 sequential; filled from the run's threads=) */
} cs_iter_opts;

int cs_implicit_create(int nsub, const cs_iter_opts *o, cs_scheme **out, cs_err *err);
/* threads=n: the corrector's and the fd Jacobian's unit integrations on a pool of n threads (1: sequential). */
int cs_implicit_use_threads(cs_scheme *s, int nthreads, cs_err *err);
int cs_waveform_create(int nsub, const int *order, const cs_iter_opts *o, cs_scheme **out, cs_err *err);
/* threads=n: the units of every Jacobi-order sweep on a pool of n threads (bit-identical results for every n);
 * Gauss-Seidel order stays sequential. cs_waveform_create calls it when o->threads > 1. */
int cs_waveform_use_threads(cs_scheme *s, int nthreads, cs_err *err);

/* fd interface Jacobian of one unit (kraft2021 §6.3): from the state saved in snap (at T), the base input `in`
 * (a polynomial; modified and restored) and its end value uend, one perturbed integration per input with
 * Δ_a = delta[a]: G[:, a] = (y(T+H; p + Δ_a ℓ e_a) - y(T+H; p)) / Δ_a. The unit ends in the state of the last
 * perturbed run (restore it). work: 2 ny + nu doubles. */
int cs_unit_window_jacobian_fd(cs_unit *u, const void *snap, double T, double H, cs_input *in, const double *ell,
                               int deg, const double *uend, const double *delta, double *G, double *work,
                               cs_err *err);

/* The kinds (master/registry.c) and their common parameter table (cs_iter_opts; iter_common.c). */
extern const cs_kind cs_scheme_implicit_kind, cs_scheme_waveform_kind;
#define CS_ITER_NPARAMS 15
extern const cs_param cs_iter_params[];

#endif
