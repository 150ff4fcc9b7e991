/* Input function of one subsystem on the current macro step [T, T+H] (DESIGN.md §2 "Input function"):
 *     u(t) = sum_{m=0..deg} c[m][.] s^m,   s = (t - T)/H.
 * Built by the master from the coupling approximations and the connections u = L y + r; evaluated by the
 * integrators at every micro step, so it is a plain polynomial (Horner, no allocation). */
#ifndef COSIM_INPUT_H
#define COSIM_INPUT_H

#include "coupling/approx.h"

typedef struct cs_input {
    int nu, deg;
    double T, H;
    double *c; /* (CS_MAXDEG + 1) x nu, row m holds the coefficients of s^m */
} cs_input;

static inline void cs_input_eval(const cs_input *in, double t, double *u) {
    double s = (t - in->T) / in->H;
    for (int j = 0; j < in->nu; j++) {
        double v = in->c[(size_t)in->deg * in->nu + j];
        for (int m = in->deg - 1; m >= 0; m--) v = v * s + in->c[(size_t)m * in->nu + j];
        u[j] = v;
    }
}

/* du/dt */
static inline void cs_input_eval_dt(const cs_input *in, double t, double *udot) {
    double s = (t - in->T) / in->H;
    for (int j = 0; j < in->nu; j++) {
        double v = 0.0;
        for (int m = in->deg; m >= 1; m--) v = v * s + m * in->c[(size_t)m * in->nu + j];
        udot[j] = v / in->H;
    }
}

#endif
