/* Model whose rhs/output are Python callables (slow path): each call re-acquires the GIL, wraps x and u in
 * fresh NumPy arrays and checks the returned shape. A Python exception becomes a callback failure whose text
 * ends up in the SolverError raised by cosim.simulate. */
#include "py/pymodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct py_ctx {
    PyObject *rhs, *output, *output_dt;
    PyObject *exc;   /* the first exception a callback raised in this run (handed to the caller) */
    cs_model *model; /* back pointer for error messages */
} py_ctx;

/* The exception becomes a callback failure; the object itself is kept, so that the binding can re-raise
 * KeyboardInterrupt/SystemExit as themselves and chain other exceptions into the SolverError (__cause__). */
static void record_exception(py_ctx *c, const char *what) {
    cs_py_take_exception(what, c->model->msg, sizeof c->model->msg, &c->exc);
}

/* Call f(t, x, u[, extra]) and copy the result (n values) to out. */
static int call(py_ctx *c, PyObject *f, const char *what, double t, const double *x, const double *u,
                const double *extra, int n, double *out) {
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = -1;
    npy_intp nx = c->model->nx, nu = c->model->nu;
    PyObject *ox = cs_py_vec(nx, x), *ou = cs_py_vec(nu, u), *oe = extra ? cs_py_vec(nu, extra) : NULL, *r = NULL;
    PyArrayObject *a = NULL;
    if (!ox || !ou || (extra && !oe)) goto fail;
    r = extra ? PyObject_CallFunction(f, "dOOO", t, ox, ou, oe) : PyObject_CallFunction(f, "dOO", t, ox, ou);
    if (!r) goto fail;
    if (r == Py_None) { /* converting None would give one NaN: "returned 1 values" misleads */
        snprintf(c->model->msg, sizeof c->model->msg, "%s returned None (missing return statement?), expected %d "
                 "values", what, n);
        rc = -2;
        goto out;
    }
    a = (PyArrayObject *)PyArray_FromAny(r, NULL, 0, 2, 0, NULL);   /* its own dtype first: complex is an error */
    if (!a) goto fail;
    if (PyArray_ISCOMPLEX(a)) {   /* a cast would drop the imaginary part with only a ComplexWarning */
        snprintf(c->model->msg, sizeof c->model->msg, "%s returned complex values (dtype %s), expected real numbers",
                 what, PyArray_DESCR(a)->typeobj->tp_name);
        rc = -2;
        goto out;
    }
    Py_SETREF(a, (PyArrayObject *)PyArray_FROMANY((PyObject *)a, NPY_DOUBLE, 0, 2,
                                                  NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST));
    if (!a) goto fail;
    if (PyArray_SIZE(a) != n) {
        snprintf(c->model->msg, sizeof c->model->msg, "%s returned %ld values, expected %d", what,
                 (long)PyArray_SIZE(a), n);
        rc = -2;
        goto out;
    }
    memcpy(out, PyArray_DATA(a), sizeof(double) * n);
    rc = 0;
    goto out;
fail:
    record_exception(c, what);
out:
    Py_XDECREF(a); Py_XDECREF(r); Py_XDECREF(ox); Py_XDECREF(ou); Py_XDECREF(oe);
    PyGILState_Release(g);
    return rc;
}

static int py_rhs(void *ctx, double t, const double *x, const double *u, double *xdot) {
    py_ctx *c = ctx;
    return call(c, c->rhs, "rhs", t, x, u, NULL, c->model->nx, xdot);
}

static int py_output(void *ctx, double t, const double *x, const double *u, double *y) {
    py_ctx *c = ctx;
    return call(c, c->output, "output", t, x, u, NULL, c->model->ny, y);
}

static int py_output_dt(void *ctx, double t, const double *x, const double *u, const double *udot, double *ydot) {
    py_ctx *c = ctx;
    return call(c, c->output_dt, "output_derivative", t, x, u, udot, c->model->ny, ydot);
}

static void py_free(void *ctx) {
    py_ctx *c = ctx;
    if (!c) return;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF(c->rhs); Py_XDECREF(c->output); Py_XDECREF(c->output_dt); Py_XDECREF(c->exc);
    PyGILState_Release(g);
    free(c);
}

/* The first exception a callback raised (a new reference, cleared): the run's report carries it to the binding. */
static void *py_take_cause(void *ctx) {
    py_ctx *c = ctx;
    PyObject *e = c->exc;
    c->exc = NULL;
    return e;
}

/* Two tables: output_dt is optional per instance. */
static const cs_model_ops PY_OPS = {CS_MODEL_PYTHON, py_rhs, py_output, NULL, NULL, NULL, py_free, py_take_cause};
static const cs_model_ops PY_DT_OPS = {CS_MODEL_PYTHON, py_rhs, py_output, py_output_dt, NULL, NULL, py_free,
                                       py_take_cause};

int cs_py_model_create(int nx, int nu, int ny, int feedthrough, PyObject *rhs, PyObject *output, PyObject *output_dt,
                       const char *name, cs_model **out, cs_err *err) {
    cs_model *m = cs_model_new_empty(nx, nu, ny, name);
    py_ctx *c = calloc(1, sizeof *c);
    if (!m || !c) { cs_model_free_empty(m); free(c); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    Py_INCREF(rhs); Py_INCREF(output);
    c->rhs = rhs; c->output = output; c->model = m;
    if (output_dt && output_dt != Py_None) { Py_INCREF(output_dt); c->output_dt = output_dt; }
    cs_model_attach(m, c->output_dt ? &PY_DT_OPS : &PY_OPS, c);
    m->feedthrough = feedthrough;
    *out = m;
    return CS_OK;
}
