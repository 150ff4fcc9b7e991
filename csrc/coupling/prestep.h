/* Model-based pre-step stabilization (Genser 2020; spec genser2020.md sections 3-5 and 8) as a coupling
 * (DESIGN.md section 2 "Coupling"). At every communication point T^k:
 *   Step 1  error differential (difference) equation: delta, the gap monolithic - co-simulated output (2.34/2.57);
 *   Step 2  model-based extrapolation of the global IJ surrogate from ytilde = y^k + delta to yhat(T^{k+1})
 *           (2.37/2.63, global assembly of section 5.1);
 *   Step 3  per unit, the input whose IJ prediction reaches yhat(T^{k+1}) (2.50/2.65; least squares, square, or the
 *           Lagrange minimum-extrapolation-error solution of section 5.3, all as s = s* + A^+ (rhs - A s*)).
 * IJs: exact continuous (given), exact discrete (given), identified online by MIMO RLS with n_a = n_b = 1
 * (spec 6.2/6.4: Sy = diag(a), Su^- = 0, Su^+ = B), or by a recursive MOESP window per unit (spec 6.1; standard-form
 * conversion Sy = C PhiA C^+, Su^- = C PhiB - Sy D, Su^+ = D of one window's LTI model), with the learning phase, the error-based phase check and the
 * tanh switch phase of section 8. All per-step numerics use workspace allocated at creation. */
#ifndef COSIM_PRESTEP_H
#define COSIM_PRESTEP_H

#include "kind.h"
#include "coupling/coupling.h"
#include "network/network.h"
#include "unit_access.h"

enum { CS_PRESTEP_CONTINUOUS = 0, CS_PRESTEP_DISCRETE = 1 };
enum { CS_PRESTEP_IJ_GIVEN = 0, CS_PRESTEP_IJ_RLS = 1, CS_PRESTEP_IJ_MOESP = 2 };
/* Phase codes of the log (section 8.2): the reason of a signal-based step is kept apart. */
enum { CS_PHASE_LEARNING = 0, CS_PHASE_SBC = 1, CS_PHASE_MOD = 2, CS_PHASE_MBC = 3, CS_PHASE_FALLBACK = 4 };

typedef struct cs_prestep_spec {
    int variant;          /* CS_PRESTEP_CONTINUOUS (continuous IJs, RAMP inputs) or CS_PRESTEP_DISCRETE */
    int ij_source;        /* CS_PRESTEP_IJ_GIVEN or CS_PRESTEP_IJ_RLS (discrete only) */
    int modified;         /* 1: the modified method (u = L yhat + r, Step 3 skipped; section 4.4) in every MBC step */
    int hold;             /* input semantics: 1 HOLD (constant over the step), 0 RAMP (u_0 + s (t - T^k)) */
    int sbc_foh;          /* signal-based coupling of the learning / SBC phase: 0 ZOH, 1 FOH */
    /* Given IJs, per unit i stacked one unit after another: continuous dS/dy (ny_i x ny_i), dS/du (ny_i x nu_i),
     * dS/du' (ny_i x nu_i); discrete Sy_d, Su^-, Su^+ of the same sizes. */
    const double *Sy, *Su, *Sd;
    int nSy, nSu, nSd;    /* their lengths: sum of ny_i^2, of ny_i nu_i, of ny_i nu_i */
    int use_ede;          /* useErrDiffEqu */
    int ede_exact;        /* optionErrDiffEqu: 1 exact, 0 explicit Euler with ede_steps (stepsErrDiffEqu) */
    int ede_steps;
    int extrap_exact;     /* optionExtrapolation: 1 exact, 0 explicit Euler with extrap_steps (stepsExtrapolation) */
    int extrap_steps;
    int dsm_steps;        /* stepsDiscreteSystemMatrices: 0 exact phi matrices, n > 0 trapezoidal rule, n intervals */
    double time_learning, time_switch;        /* timeLearning, timeSwitchphase [s] (0: none) */
    double th_sbc, th_mod;                    /* thresholdMbc2sbcCoupling, thresholdMbcNoInputOpt */
    double rls_lambda, rls_P0;                /* forgetting factor, P(0) = P0 I */
    int rls_na, rls_nb;                       /* RLS orders (thesis N, M); beyond 1 the IJs come from the Gilbert
                                               * realization of every unit's model (spec 6.3/6.4) */
    const double *rls_a0, *rls_b0;            /* initial parameters per unit: a (ny_i x na), b (ny_i x nu_i x nb), or
                                               * NULL */
    int na0, nb0;                             /* their lengths */
    double rtol;                              /* pseudo-inverse cut-off */
    /* CS_PRESTEP_IJ_MOESP: per unit 4 values (window W, block rows r, order (< 0: by threshold), method
     * CS_MOESP_PLAIN/PO) of a recursive MOESP window (sysid/moesp.h) fed with the aligned samples (u^k, y^k), k >= 1;
     * each step's fit gives the IJs by the standard-form conversion (sysid/ij.h, spec 2.2 [EXT]). */
    const double *moesp_cfg;
    int nmoesp_cfg;                           /* its length: 4 per unit */
    double moesp_threshold;                   /* relative singular-value threshold of the automatic order */
    int moesp_refresh;                        /* re-factor the window every this many pushes (0: never) */
    long log_capacity;                        /* steps the log keeps (later steps are not logged) */
    int intermediate_correction;              /* discrete version: the intermediate-value correction (2.58-2.60) of
                                               * eps^{k-1}, eps^k in Step 1 from the units' micro-step traces */
} cs_prestep_spec;

/* The per-step log: phase (CS_PHASE_*), eps_SI,global, identified parameters (per unit a then b, row-major),
 * delta^k (ny), the end-of-step input value u^{k+1} (nu) and the rank of each unit's Step-3 matrix (nsub). */
typedef struct cs_prestep_log {
    long n;
    int nparams, ny, nu, nsub;
    const unsigned char *phase;
    const double *eps, *params, *delta, *u;
    const int *rank;
    const double *eps_cor;  /* eps_cor (nu) per step with the intermediate-value correction on, else NULL */
    long traced, fallback;  /* corrected steps whose output integrals came from all unit traces / some from the
                             * trapezoidal rule on the macro points (a unit without a trace) */
} cs_prestep_log;

/* phi_A, phi_B and phi_C + phi_D of one subsystem's continuous IJs over H (2.44-2.47): exact (steps = 0, phi
 * functions, the augmented exponential of spec 3.3) or the trapezoidal rule with `steps` intervals
 * (stepsDiscreteSystemMatrices). Sy: ni x ni, Su, Sd: ni x mi. work: cs_prestep_phi_work_size doubles; ipiv: ni. */
size_t cs_prestep_phi_work_size(int ni, int mi);
int cs_prestep_phi(int ni, int mi, const double *Sy, const double *Su, const double *Sd, double H, int steps,
                   double *phA, double *phB, double *phCD, double *work, int *ipiv, cs_err *err);
/* Step 3 of one subsystem (section 5.3): x = target + A^+ (rhs - A target), A: ni x mi. More outputs than inputs:
 * the least-squares solution; more inputs than outputs: A x = rhs with minimal |x - target| (Lagrange, 2.66-2.71);
 * rank-deficient A: the pseudo-inverse (rank returned). work: cs_prestep_step3_work_size doubles. */
size_t cs_prestep_step3_work_size(int ni, int mi);
int cs_prestep_step3(int ni, int mi, const double *A, const double *rhs, const double *target, double rtol, double *x,
                     int *rank, double *work, cs_err *err);

/* units (may be NULL): the units of the network, asked for their micro-step traces when
 * spec->intermediate_correction is on (units without a trace op: the trapezoidal rule on the macro points). */
int cs_prestep_coupling_create(const cs_network *net, const cs_unit_access *units, const cs_prestep_spec *spec,
                               double H, cs_coupling **out, cs_err *err);
/* The log of a coupling made by cs_prestep_coupling_create (CS_ERR_ARG for any other coupling). */
int cs_prestep_get_log(const cs_coupling *c, cs_prestep_log *log, cs_err *err);

/* The kind (master/registry.c). */
extern const cs_kind cs_coupling_prestep_kind;

#endif
