/* Model: an ODE with inputs and outputs (like an FMI model-exchange unit; DESIGN.md §2).
 *
 *     x' = f(t, x, u),   y = g(t, x, u)
 *
 * Implementations: LTI (lti.c), C function pointers (cfunc.c), built-in nonlinear models (models/builtin.h), the
 * strongly coupled monolithic composite (composite.c), Python callables (py/pymodel.c, slow path).
 * A model is immutable during a run except for its call counters. */
#ifndef COSIM_MODEL_H
#define COSIM_MODEL_H

#include "common.h"

typedef struct cs_model cs_model;

typedef int (*cs_rhs_fn)(void *content, double t, const double *x, const double *u, double *xdot);
typedef int (*cs_output_fn)(void *content, double t, const double *x, const double *u, double *y);
/* Optional exact output time derivative y' = g_x f + g_u u' (Hermite approximation). */
typedef int (*cs_output_dt_fn)(void *content, double t, const double *x, const double *u, const double *udot,
                               double *ydot);
/* Optional dense Jacobian df/dx (nx x nx, row-major) for implicit integrators. */
typedef int (*cs_jac_fn)(void *content, double t, const double *x, const double *u, double *J);

/* The matrices (row-major) of a linear time-invariant model x' = A x + B u, y = C x + D u. */
typedef struct cs_linear_data {
    const double *A, *B, *C, *D;
} cs_linear_data;

/* What a model is, for the few places that must tell (type tests read ops->kind, never compare ops or functions). */
enum { CS_MODEL_GENERIC = 0, CS_MODEL_LTI = 1, CS_MODEL_PYTHON = 2, CS_MODEL_FMU = 3 };

/* Generic object {content, ops} (SUNDIALS' shape). Required: rhs, output. Optional (NULL when absent):
 *   output_dt     exact y' (else a difference quotient, cs_model_output_dt)
 *   jac           df/dx (else the integrators use difference quotients)
 *   linear_data   the LTI matrices: the model is linear, its calls are evaluated inline and the Exact integrator
 *                 and the exact interface Jacobians can use it
 *   destroy       free `content`
 *   take_cause    what the last failing callback left for the caller (Python models: the exception object, a new
 *                 reference), handed over once; NULL when none. The core carries it without looking into it. */
typedef struct cs_model_ops {
    int kind;                  /* CS_MODEL_* */
    cs_rhs_fn rhs;
    cs_output_fn output;
    cs_output_dt_fn output_dt;
    cs_jac_fn jac;
    void (*linear_data)(const void *content, cs_linear_data *lin);
    void (*destroy)(void *content);
    void *(*take_cause)(void *content);
} cs_model_ops;

struct cs_model {
    const cs_model_ops *ops;
    void *content;
    int nx, nu, ny;
    int feedthrough;          /* y depends on u (algebraic loops need solving) */
    cs_linear_data lin;       /* linear_data's matrices, read once by cs_model_attach (all NULL: not linear): the
                               * integrators' inline fast path reads them without a call */
    long nrhs, nout;          /* call counters */
    char name[64];
    char msg[CS_ERRMSG_LEN];  /* message left by a failing callback */
};

/* A model shell (zeroed, counters 0, no ops); NULL when out of memory. An implementation allocates its content,
 * then cs_model_attach gives the shell its ops and content. */
cs_model *cs_model_new_empty(int nx, int nu, int ny, const char *name);
/* Free a shell without touching its content (failure paths before cs_model_attach). */
void cs_model_free_empty(cs_model *m);
void cs_model_attach(cs_model *m, const cs_model_ops *ops, void *content);
/* ops->destroy(content), then the shell; NULL is ignored. */
void cs_model_destroy(cs_model *m);

static inline int cs_model_kind(const cs_model *m) { return m->ops->kind; }
/* The LTI matrices, or NULL for a nonlinear model. */
static inline const cs_linear_data *cs_model_linear(const cs_model *m) { return m->lin.A ? &m->lin : NULL; }
static inline int cs_model_has_jac(const cs_model *m) { return m->ops->jac != NULL; }
static inline int cs_model_has_output_dt(const cs_model *m) { return m->ops->output_dt != NULL; }
static inline void *cs_model_take_cause(cs_model *m) {
    return m->ops->take_cause ? m->ops->take_cause(m->content) : NULL;
}

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
static inline int cs_model_rhs(cs_model *m, double t, const double *x, const double *u, double *xdot, cs_err *err) {
    m->nrhs++;
    if (m->lin.A) { cs_affine(m->nx, m->nx, m->nu, m->lin.A, x, m->lin.B, u, xdot); return CS_OK; }
    int rc = m->ops->rhs(m->content, t, x, u, xdot);
    return rc ? cs_model_callback_failed(m, "right-hand side", t, rc, err) : CS_OK;
}

static inline int cs_model_output(cs_model *m, double t, const double *x, const double *u, double *y, cs_err *err) {
    m->nout++;
    if (m->lin.C) { cs_affine(m->ny, m->nx, m->nu, m->lin.C, x, m->lin.D, u, y); return CS_OK; }
    int rc = m->ops->output(m->content, t, x, u, y);
    return rc ? cs_model_callback_failed(m, "output", t, rc, err) : CS_OK;
}
/* df/dx (nx x nx, row-major); only for models with cs_model_has_jac. Not counted (the integrator asks for it). */
static inline int cs_model_jac(cs_model *m, double t, const double *x, const double *u, double *J) {
    return m->ops->jac(m->content, t, x, u, J);
}
/* y' at (t, x, u, u'). Without output_dt: (g(t+d, x + d f, u + d u') - g(t, x, u)) / d, a one-sided difference
 * quotient along the trajectory. work: nx + ny + nu doubles. */
int cs_model_output_dt(cs_model *m, double t, const double *x, const double *u, const double *udot, double *ydot,
                       double *work, cs_err *err);
/* dy/du (ny x nu row-major): D for LTI, else forward differences. work: nu + 2 ny doubles. */
int cs_model_output_du(cs_model *m, double t, const double *x, const double *u, double *G, double *work, cs_err *err);

/* Constructors: CS_OK and the model in *out, or an error code with err filled (*out untouched). Matrices and
 * parameters are copied. */
int cs_lti_create(int nx, int nu, int ny, const double *A, const double *B, const double *C, const double *D,
                  const char *name, cs_model **out, cs_err *err);

typedef int (*cs_c_rhs_fn)(double t, const double *x, const double *u, double *xdot, void *user_data);
typedef int (*cs_c_output_fn)(double t, const double *x, const double *u, double *y, void *user_data);
int cs_cfunc_create(int nx, int nu, int ny, int feedthrough, cs_c_rhs_fn rhs, cs_c_output_fn output, void *user_data,
                    const char *name, cs_model **out, cs_err *err);

#endif
