/* Input function of one unit on the current macro step [T, T+H] (DESIGN.md §2 "Input function"): what the unit
 * sees between the macro points T_N and T_{N+1}.
 *
 * Fast path: a polynomial in s = (t - T)/H,  u(t) = sum_{m=0..deg} c[m][.] s^m, evaluated inline (Horner, no
 * allocation, no call). The coupling builds it from the approximations of the outputs and u = L y + r.
 * General path: `eval` is set and computes u(t) and, when asked, u'(t) (waveforms of waveform relaxation, recorded
 * signals); the coefficients are then ignored.
 * Integrators evaluate the input at every micro step, so this header is the lowest layer of the engine. */
#ifndef COSIM_INPUT_H
#define COSIM_INPUT_H

#include <stddef.h>

/* Highest degree of an input polynomial: κ <= 6 of Kraft's step control, plus one for exLE's comparative
 * polynomial (kraft2021.md §20 item 1). */
#define CS_MAXDEG 7

typedef struct cs_input cs_input;

/* How the input of a new macro step continues the previous one at T_N (integrators decide whether to restart):
 * CS_RESTART: restart (first step, new states); CS_CONTINUE: the same input function goes on (monolithic system);
 * CS_SMOOTH: a new function, but C0/C1 across T_N (EXTRIPOL, busch2016 §2); CS_JUMPS: a new function that may jump
 * or kink at T_N (an integrator may check whether its value agrees with the old one's there).
 * CS_MAY_ROLL_BACK is or'ed onto CS_SMOOTH / CS_JUMPS when the step may be rolled back (step control): a restored
 * unit restarts, so an integrator that keeps its history here gives a retried step a different start. */
enum { CS_CONTINUE = 0, CS_RESTART = 1, CS_SMOOTH = 2, CS_JUMPS = 3 };
enum { CS_MAY_ROLL_BACK = 4 };
/* Or'ed the same way when an estimator integrates the step again from T_N and compares (kraft2021 §8.2/8.3): those
 * integrations restart, so the step itself must start alike (restart) or the estimate measures the history. */
enum { CS_SIDE_RUNS = 8 };

/* u (nu values) when u != NULL and du/dt when udot != NULL, at time t. Returns 0 on success. */
typedef int (*cs_input_eval_fn)(const cs_input *in, double t, double *u, double *udot);

struct cs_input {
    int nu, deg;
    double T, H;
    double *c;                 /* (CS_MAXDEG + 1) x nu, row m holds the coefficients of s^m */
    cs_input_eval_fn eval;     /* NULL: polynomial fast path */
    void *ctx;                 /* for eval */
};

static inline void cs_input_eval(const cs_input *in, double t, double *u) {
    if (in->eval) { in->eval(in, t, u, NULL); return; }
    const int nu = in->nu, deg = in->deg;
    if (deg == 0) {
        for (int j = 0; j < nu; j++) u[j] = in->c[j];
        return;
    }
    double s = (t - in->T) / in->H;
    for (int j = 0; j < nu; j++) {
        double v = in->c[(size_t)deg * nu + j];
        for (int m = deg - 1; m >= 0; m--) v = v * s + in->c[(size_t)m * nu + j];
        u[j] = v;
    }
}

/* du/dt */
static inline void cs_input_eval_dt(const cs_input *in, double t, double *udot) {
    if (in->eval) { in->eval(in, t, NULL, udot); return; }
    double s = (t - in->T) / in->H;
    for (int j = 0; j < in->nu; j++) {
        double v = 0.0;
        for (int m = in->deg; m >= 1; m--) v = v * s + m * in->c[(size_t)m * in->nu + j];
        udot[j] = v / in->H;
    }
}

#endif
