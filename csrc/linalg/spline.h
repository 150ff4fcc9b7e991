/* Cubic spline kernels on a strictly increasing grid t[0..n-1]: the not-a-knot spline's slopes and the evaluation
 * of the piecewise Hermite cubic through (t_k, y_k, s_k) (waveform relaxation's trace interpolation). */
#ifndef COSIM_SPLINE_H
#define COSIM_SPLINE_H

/* Slopes s[0..n-1] of the not-a-knot cubic spline through (t_k, y_k); work: 3n doubles. */
void cs_spline_slopes(long n, const double *t, const double *y, double *s, double *work);

/* Value and derivative of the Hermite cubic through (t, y, s) at tt (clamped to the end intervals); hint: the last
 * interval used, updated (start with 0). */
void cs_spline_eval(long n, const double *t, const double *y, const double *s, double tt, long *hint, double *val,
                    double *der);

#endif
