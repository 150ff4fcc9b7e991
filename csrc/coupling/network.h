/* The coupling network: subsystems' models plus connections u = L y + r (kraft2021 eq. 2.4: g := u - phi(y) = 0
 * with linear phi). Knows the global signal layout and solves the algebraic coupling conditions at a time point
 * (the "update step" of kraft2021 eq. 2.22, needed when subsystems have feed-through). Used by the master and by
 * the monolithic composite model. */
#ifndef COSIM_NETWORK_H
#define COSIM_NETWORK_H

#include "models/model.h"

typedef struct cs_network {
    int nsub;
    cs_model **models;          /* not owned */
    int *xoff, *uoff, *yoff;    /* nsub + 1 offsets into the stacked x, u, y */
    int nx, nu, ny;             /* totals */
    int *in_sub, *out_sub;      /* owner subsystem of each global input / output */
    /* L in compressed rows: input a receives sum_{k in [rowptr[a], rowptr[a+1])} gain[k] * y[col[k]] */
    int *rowptr, *col;
    double *gain;
    double *r;                  /* nu */
    int any_feedthrough;
    /* Newton workspace for the algebraic loop */
    double *J, *G, *F, *ytmp, *work;
    int *ipiv;
    long newton_iterations;
} cs_network;

/* Build from n subsystems and nconn connections (global input index, global output index, gain). */
int cs_network_init(cs_network *net, int nsub, cs_model **models, int nconn, const int *conn_in, const int *conn_out,
                    const double *conn_gain, const double *r, cs_err *err);
void cs_network_free(cs_network *net);

/* u = L y + r */
void cs_network_inputs(const cs_network *net, const double *y, double *u);

/* Consistent outputs at time t for stacked states x: solves y = g(t, x, L y + r) by Newton's method with the
 * output sensitivities dg/du (D for LTI models, exact in one iteration). u_guess (may be NULL) is used for
 * subsystems without feed-through and as the start value. Writes y and u = L y + r. */
int cs_network_consistent(cs_network *net, double t, const double *x, const double *u_guess, double *y, double *u,
                          cs_err *err);

#endif
