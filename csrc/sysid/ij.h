/* Interface-Jacobian (IJ) representations of a subsystem (Genser 2020, section 2.1; spec genser2020.md sections
 * 1.3, 2, 6.4, 6.5).
 *
 * Continuous (2.8):  y' = dS/dy y + dS/du u + dS/du' u'
 *     dS/dy = C A C^+,  dS/du = C B - C A C^+ D,  dS/du' = D                                   (2.12-2.14)
 * Discrete (2.15):   y^{k+1} = Sy y^k + Su^- u^k + Su^+ u^{k+1}       (index convention of spec section 1.3)
 *   thesis form (2.16/2.17), x^{k+1} = PhiA x^k + PhiB u^{k+1}, y^{k+1} = C^k x^{k+1} + D^k u^{k+1}:
 *     Sy = C^k PhiA (C^{k-1})^+,  Su^- = -Sy D^{k-1},  Su^+ = C^k PhiB + D^k                  (2.18-2.20)
 *   standard form, x_{j+1} = PhiA x_j + PhiB w_j, z_j = C x_j + D w_j fitted on aligned (w_j, z_j) = (u^j, y^j)
 *   (e.g. MOESP output):
 *     Sy = C PhiA C^+,  Su^- = C PhiB - Sy D,  Su^+ = D                                          (spec 2.2 [EXT])
 * C^+ is the SVD pseudo-inverse (spec 2.1: equals C^-1 for square regular C), by the one-sided Jacobi SVD of jsvd.h. */
#ifndef COSIM_SYSID_IJ_H
#define COSIM_SYSID_IJ_H

#include "common.h"

enum { CS_IJ_THESIS = 0, CS_IJ_STANDARD = 1 };

/* doubles of workspace for the conversions below */
size_t cs_ij_work_size(int nx, int nu, int ny);

/* Continuous IJs (2.12-2.14). dSdy: ny x ny, dSdu: ny x nu, dSdud: ny x nu. */
int cs_ij_continuous(int nx, int nu, int ny, const double *A, const double *B, const double *C, const double *D,
                     double rtol, double *dSdy, double *dSdu, double *dSdud, double *work, cs_err *err);

/* Discrete IJs of a thesis-form (Cprev, Dprev: the previous identification, time shift of 2.18/2.19; pass C, D for a
 * time-invariant model) or standard-form model (Cprev, Dprev ignored). Sy: ny x ny, Sum, Sup: ny x nu. */
int cs_ij_discrete(int form, int nx, int nu, int ny, const double *PhiA, const double *PhiB, const double *C,
                   const double *D, const double *Cprev, const double *Dprev, double rtol, double *Sy, double *Sum,
                   double *Sup, double *work, cs_err *err);

/* Exact zero-order-hold discretization PhiA = e^{A dt}, PhiB = int_0^dt e^{A s} B ds (Van Loan, linalg/expm). */
size_t cs_discretize_work_size(int nx, int nu);
int cs_discretize(int nx, int nu, const double *A, const double *B, double dt, double *PhiA, double *PhiB,
                  double *work, int *ipiv, cs_err *err);

/* One-step IJ predictions over a record (Y: K x ny, U: K x nu, u^k = row k in the section 1.3 convention):
 *     Ybar[k] = Sy y^{k-1} + Su^- u^{k-1} + Su^+ u^k  for k >= 1;  Ybar[0] = Y[0]. */
void cs_ij_predict(int K, int ny, int nu, const double *Sy, const double *Sum, const double *Sup, const double *Y,
                   const double *U, double *Ybar);

/* Resampling of n_a = n_b = 1 parameters (a_i, b_ij) identified at step H to step ratio H~/H (Genser eq. 4.13,
 * 4.14, spec 6.5 with erratum E29): q = floor(ratio), f = ratio - q,
 *     a~ = (1 - f) a^q + f a^(q+1),  b~ = b [(1 - f) sum_{i<q} a^i + f sum_{i<=q} a^i].
 * a: ny, b: ny x nu. ratio > 0. */
void cs_ij_resample(int ny, int nu, const double *a, const double *b, double ratio, double *at, double *bt);

#endif
