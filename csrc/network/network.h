/* The coupling network: connections u = L y + r between the stacked inputs and outputs of n units (kraft2021 eq. 2.4:
 * the coupling condition g := u - phi(y) = 0 with a linear phi), and the algebraic update at a time point.
 *
 * L is stored in compressed rows (input a receives sum_k gain[k] y[col[k]]), never as a dense n_u x n_y matrix.
 *
 * Consistent update (kraft2021 eq. 2.22): units with feed-through have outputs y_i = g_i(t, u_i) that depend on their
 * inputs, so y = g(t, L y + r) is solved by Newton's method on F(y) = y - g(t, L y + r) with the sparse Jacobian
 * J = I - G L, G = blockdiag(dg_i/du_i). J is factored by KLU (SuiteSparse): its sparsity is that of the coupling
 * graph, so a chain or ring of N units costs O(N) per update. Where every feed-through unit is linear (constant
 * dg_i/du_i = D_i, e.g. LTI units), J is assembled and factored once per run.
 *
 * The network knows nothing about units or models: outputs are evaluated through a cs_outputs callback table (the
 * master passes its units, the monolithic composite model its sub-models), so it sits below both. */
#ifndef COSIM_NETWORK_H
#define COSIM_NETWORK_H

#include "common.h"

/* The update at T_{N+1}: consistent (the network solves u = L g(x, u) + r, kraft2021 eq. 2.22) or simplified (outputs
 * with the predicted inputs ũ(T_{N+1}), busch2016 eq. 19; the black-box variant). Shared by engine and analysis. */
enum { CS_UPDATE_CONSISTENT = 0, CS_UPDATE_SIMPLIFIED = 1 };

/* Outputs of unit i at its current state for the input values u_i; optional Jacobian dy_i/du_i (ny_i x nu_i,
 * row-major). Both return CS_OK or an error code with err filled. */
typedef struct cs_outputs {
    void *ctx;
    int (*eval)(void *ctx, int i, double t, const double *u_i, double *y_i, cs_err *err);
    int (*jacobian)(void *ctx, int i, double t, const double *u_i, double *G_i, cs_err *err);
} cs_outputs;

typedef struct cs_network_klu cs_network_klu; /* sparse factorisation (network.c) */

typedef struct cs_network {
    int nsub;
    int *uoff, *yoff;           /* nsub + 1 offsets into the stacked u, y */
    int nu, ny;                 /* totals */
    int *in_sub, *out_sub;      /* owner unit of each global input / output */
    int *rowptr, *col;          /* L in compressed rows */
    double *gain;
    double *r;                  /* nu */
    unsigned char *feedthrough; /* per unit: y_i depends on u_i */
    unsigned char *linear;      /* per unit: dy_i/du_i is constant (factor J once) */
    int any_feedthrough;
    int *ft_order;              /* feed-through units in dependency order when their graph has no cycle, else NULL:
                                 * the consistent update is then one pass in this order, without Newton */
    int nft;
    /* Newton workspace */
    double *F, *ytmp, *G;       /* ny, ny, max block ny_i * nu_i */
    cs_network_klu *klu;        /* NULL without feed-through */
    long newton_iterations;
} cs_network;

/* Build from n units (sizes nu[i], ny[i], feedthrough[i], linear[i]; linear may be NULL) and nconn connections
 * (global input index, global output index, gain); r: nu offsets (NULL = 0). */
int cs_network_init(cs_network *net, int nsub, const int *nu, const int *ny, const int *feedthrough,
                    const int *linear, int nconn, const int *conn_in, const int *conn_out, const double *conn_gain,
                    const double *r, cs_err *err);
void cs_network_free(cs_network *net);

/* The one definition of inputs from outputs, u = L y + r (inline: the master forms the inputs at every macro point).
 * cs_network_row: s0 + sum_k gain[k] y[col[k] * stride] over input a's connections; s0 is r[a] for an input, r[a] H
 * for its integral over a step, 0 for L y alone; stride > 1 reads one entry of per-output coefficient rows. */
static inline double cs_network_row(const cs_network *net, const double *y, size_t stride, int a, double s0) {
    double s = s0;
    for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++) s += net->gain[k] * y[(size_t)net->col[k] * stride];
    return s;
}
static inline double cs_network_input(const cs_network *net, const double *y, int a) {
    return cs_network_row(net, y, 1, a, net->r[a]);
}
static inline void cs_network_inputs(const cs_network *net, const double *y, double *u) {
    for (int a = 0; a < net->nu; a++) u[a] = cs_network_input(net, y, a);
}
/* u = L y + r (add_r) or u = L y (a difference of outputs mapped to inputs). */
static inline void cs_network_apply(const cs_network *net, const double *y, int add_r, double *u) {
    for (int a = 0; a < net->nu; a++) u[a] = cs_network_row(net, y, 1, a, add_r ? net->r[a] : 0.0);
}

/* Consistent outputs at time t: solves y = g(t, L y + r). u_guess (may be NULL = 0, may alias u) is the start value
 * and the input of units without feed-through. Writes y and u = L y + r. Fails with CS_ERR_SOLVER when I - G L is
 * singular (ill-posed coupling), CS_ERR_DIVERGED on non-finite outputs, CS_ERR_SOLVER without convergence. */
int cs_network_consistent(cs_network *net, const cs_outputs *g, double t, const double *u_guess, double *y,
                          double *u, cs_err *err);

#endif
