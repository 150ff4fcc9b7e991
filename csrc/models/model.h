/* Model: an ODE with inputs and outputs (like an FMI model-exchange unit; DESIGN.md §2).
 *
 *     x' = f(t, x, u),   y = g(t, x, u)
 *
 * Implementations: LTI (lti.c), C function pointers (cfunc.c), built-in nonlinear models (two_mass.c), the
 * strongly coupled monolithic composite (composite.c), Python callables (py/pymodel.c, slow path).
 * A model is immutable during a run except for its call counters. */
#ifndef COSIM_MODEL_H
#define COSIM_MODEL_H

#include "common.h"
#include "interrupt.h"

typedef struct cs_model cs_model;

typedef int (*cs_rhs_fn)(void *ctx, double t, const double *x, const double *u, double *xdot);
typedef int (*cs_output_fn)(void *ctx, double t, const double *x, const double *u, double *y);
/* Optional exact output time derivative y' = g_x f + g_u u' (Hermite approximation). */
typedef int (*cs_output_dt_fn)(void *ctx, double t, const double *x, const double *u, const double *udot,
                               double *ydot);
/* Optional dense Jacobian df/dx (nx x nx, row-major) for implicit integrators. */
typedef int (*cs_jac_fn)(void *ctx, double t, const double *x, const double *u, double *J);

struct cs_model {
    int nx, nu, ny;
    int feedthrough;          /* y depends on u (algebraic loops need solving) */
    void *ctx;
    cs_rhs_fn rhs;
    cs_output_fn output;
    cs_output_dt_fn output_dt; /* NULL: finite differences (cs_model_output_dt) */
    cs_jac_fn jac;             /* NULL: integrators use difference quotients */
    void (*destroy_ctx)(void *ctx);
    /* LTI data (row-major) when the model is linear time-invariant, else NULL: used by the Exact integrator. */
    const double *A, *B, *C, *D;
    long nrhs, nout;          /* call counters */
    char name[64];
    char msg[CS_ERRMSG_LEN];  /* message left by a failing callback */
};

/* Allocate a model shell (zeroed, counters 0). */
cs_model *cs_model_new(int nx, int nu, int ny, const char *name);
void cs_model_free(cs_model *m);

/* z = P v + Q w for row-major P (m x n) and Q (m x k): one pass per row, no library call (a chain's units are tiny,
 * where BLAS or a vectorised loop costs more than the arithmetic). The LTI model's products; the scalar case inline,
 * the others in cs_affine_rows. */
void cs_affine_rows(int m, int n, int k, const double *restrict P, const double *restrict v,
                    const double *restrict Q, const double *restrict w, double *restrict z);
static inline void cs_affine(int m, int n, int k, const double *restrict P, const double *restrict v,
                             const double *restrict Q, const double *restrict w, double *restrict z) {
    if (m == 1 && n == 1 && k == 1) { z[0] = P[0] * v[0] + Q[0] * w[0]; return; } /* scalar units */
    cs_affine_rows(m, n, k, P, v, Q, w, z); /* out of line: the callers' fast paths keep their frames small */
}

int cs_model_callback_failed(cs_model *m, const char *what, double t, int rc, cs_err *err);

/* Counted calls; on failure they fill err with the model's name and the callback's message. LTI models are
 * evaluated inline (the integrators call these at every micro step). */
/* Every integrator evaluates f here: the one place a long integration notices Ctrl-C (interrupt.h). */
static inline int cs_model_rhs(cs_model *m, double t, const double *x, const double *u, double *xdot, cs_err *err) {
    if (cs_interrupted()) return cs_interrupt_fail(err, t);
    m->nrhs++;
    if (m->A) { cs_affine(m->nx, m->nx, m->nu, m->A, x, m->B, u, xdot); return CS_OK; }
    int rc = m->rhs(m->ctx, t, x, u, xdot);
    return rc ? cs_model_callback_failed(m, "right-hand side", t, rc, err) : CS_OK;
}

static inline int cs_model_output(cs_model *m, double t, const double *x, const double *u, double *y, cs_err *err) {
    m->nout++;
    if (m->C) { cs_affine(m->ny, m->nx, m->nu, m->C, x, m->D, u, y); return CS_OK; }
    int rc = m->output(m->ctx, t, x, u, y);
    return rc ? cs_model_callback_failed(m, "output", t, rc, err) : CS_OK;
}
/* y' at (t, x, u, u'). Without output_dt: (g(t+d, x + d f, u + d u') - g(t, x, u)) / d, a one-sided difference
 * quotient along the trajectory. work: nx + ny + nu doubles. */
int cs_model_output_dt(cs_model *m, double t, const double *x, const double *u, const double *udot, double *ydot,
                       double *work, cs_err *err);
/* dy/du (ny x nu row-major): D for LTI, else forward differences. work: nu + 2 ny doubles. */
int cs_model_output_du(cs_model *m, double t, const double *x, const double *u, double *G, double *work, cs_err *err);

/* Constructors. Matrices are copied. */
cs_model *cs_lti_new(int nx, int nu, int ny, const double *A, const double *B, const double *C, const double *D,
                     const char *name, cs_err *err);

typedef int (*cs_c_rhs_fn)(double t, const double *x, const double *u, double *xdot, void *user_data);
typedef int (*cs_c_output_fn)(double t, const double *x, const double *u, double *y, void *user_data);
cs_model *cs_cfunc_new(int nx, int nu, int ny, int feedthrough, cs_c_rhs_fn rhs, cs_c_output_fn output,
                       void *user_data, const char *name, cs_err *err);

/* Built-in models by name (two_mass.c): "dmo_force_impulse", "dmo_base_nonlinear". */
cs_model *cs_builtin_new(const char *kind, int nparams, const double *params, const char *name, cs_err *err);
/* Oscillator chain models (chain.c): "chain_segment", "chain_element" (cs_builtin_new dispatches "chain_*"). */
cs_model *cs_chain_new(const char *kind, int nparams, const double *params, const char *name, cs_err *err);
/* kraft2021's two-mass models (models/kraft_models.c): "kraft_mass", "kraft_element". */
cs_model *cs_kraft_model_new(const char *kind, int nparams, const double *params, const char *name, cs_err *err);

#endif
