/* Bindings for a single stepper (model + integrator) with exact save/restore: cosim.Stepper. */
#include "py/pyutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "py/specs.h"

typedef struct py_stepper {
    cs_model *model;
    cs_stepper *st;
    double *coef; /* (CS_MAXDEG + 1) * nu */
} py_stepper;

static void stepper_capsule_free(PyObject *cap) {
    py_stepper *p = PyCapsule_GetPointer(cap, "cosim.stepper");
    if (!p) return;
    cs_stepper_destroy(p->st);
    cs_model_destroy(p->model);
    free(p->coef);
    free(p);
}

/* A snapshot remembers the sizes of the stepper it was taken from: restoring it into a stepper of another size
 * would read past (or leave unset) part of the state vector. */
typedef struct py_state {
    int nx, nu;
    cs_stepper_state s;
} py_state;

#define CAP_STEPPER "cosim.stepper"
#define CAP_STATE "cosim.stepper_state"

static void state_capsule_free(PyObject *cap) {
    py_state *s = PyCapsule_GetPointer(cap, CAP_STATE);
    if (!s) return;
    cs_stepper_state_free(&s->s);
    free(s);
}

static py_stepper *get(PyObject *cap) {
    if (!PyCapsule_IsValid(cap, CAP_STEPPER)) {
        PyErr_Format(PyExc_TypeError, "stepper: expected a cosim stepper handle, got %s", Py_TYPE(cap)->tp_name);
        return NULL;
    }
    return PyCapsule_GetPointer(cap, CAP_STEPPER);
}

static PyObject *py_stepper_new(PyObject *self, PyObject *args) {
    PyObject *mspec, *sspec, *ox0;
    double t0;
    if (!PyArg_ParseTuple(args, "OOOd:stepper_new", &mspec, &sspec, &ox0, &t0)) return NULL;
    if (!isfinite(t0)) return cs_py_errorf(PyExc_ValueError, "t0: must be finite, got %g", t0);
    py_stepper *p = calloc(1, sizeof *p);
    if (!p) return PyErr_NoMemory();
    cs_solver_opts so;
    cs_err err = {0};
    PyArrayObject *x0 = NULL;
    if (!(p->model = cs_py_model_from_spec(mspec, 0))) goto fail;
    if (cs_py_solver_from_spec(sspec, &so)) goto fail;
    npy_intp d[1] = {p->model->nx};
    if (!(x0 = cs_py_darray(ox0, "x0", 1, d, 1))) goto fail;
    if (cs_stepper_create(p->model, &so, &p->st, &err)) { cs_py_raise(&err); goto fail; }
    if (!(p->coef = calloc((size_t)(CS_MAXDEG + 1) * p->model->nu + 1, sizeof(double)))) { PyErr_NoMemory(); goto fail; }
    cs_stepper_set_state(p->st, t0, PyArray_DATA(x0));
    Py_DECREF(x0);
    PyObject *cap = PyCapsule_New(p, CAP_STEPPER, stepper_capsule_free);
    if (!cap) { cs_stepper_destroy(p->st); cs_model_destroy(p->model); free(p->coef); free(p); }
    return cap;
fail:
    Py_XDECREF(x0);
    cs_stepper_destroy(p->st);
    cs_model_destroy(p->model);
    free(p->coef);
    free(p);
    return NULL;
}

/* stepper_step(cap, T, H, coef[deg+1, nu]) */
static PyObject *py_stepper_step(PyObject *self, PyObject *args) {
    PyObject *cap, *oc;
    double T, H;
    if (!PyArg_ParseTuple(args, "OddO:stepper_step", &cap, &T, &H, &oc)) return NULL;
    py_stepper *p = get(cap);
    if (!p) return NULL;
    if (!isfinite(T)) return cs_py_errorf(PyExc_ValueError, "T: must be finite, got %g", T);
    if (!(H > 0.0) || !isfinite(H)) return cs_py_errorf(PyExc_ValueError, "H: must be positive and finite, got %g", H);
    if (!isfinite(T + H)) return cs_py_errorf(PyExc_ValueError, "H: T + H = %g + %g is not finite", T, H);
    npy_intp d[2] = {-1, p->model->nu};
    PyArrayObject *c = cs_py_darray(oc, "u", 2, d, 1);
    if (!c) return NULL;
    int deg = (int)PyArray_DIM(c, 0) - 1;
    if (deg < 0 || deg > CS_MAXDEG) {
        Py_DECREF(c);
        return PyErr_Format(PyExc_ValueError, "u: polynomial degree must be 0..%d", CS_MAXDEG);
    }
    memcpy(p->coef, PyArray_DATA(c), sizeof(double) * (deg + 1) * p->model->nu);
    Py_DECREF(c);
    cs_input in = {p->model->nu, deg, T, H, p->coef};
    cs_err err = {0};
    int rc;
    CS_PY_RELEASED(rc = cs_stepper_step(p->st, T, H, &in, CS_RESTART, &err);
                   if (!rc) rc = cs_stepper_check_finite(p->st, T, H, &err));
    if (rc) return cs_py_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *py_stepper_get(PyObject *self, PyObject *args) {
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O:stepper_get", &cap)) return NULL;
    py_stepper *p = get(cap);
    if (!p) return NULL;
    cs_stepper_stats *s = &p->st->stats;
    return Py_BuildValue("(dN{s:l,s:l,s:l,s:l,s:l})", p->st->t, cs_py_vec(p->model->nx, p->st->x), "steps", s->steps,
                         "failures", s->failures, "jac_evals", s->jac_evals, "restarts", s->restarts, "rhs_calls",
                         p->model->nrhs);
}

static PyObject *py_stepper_output(PyObject *self, PyObject *args) {
    PyObject *cap, *ou;
    if (!PyArg_ParseTuple(args, "OO:stepper_output", &cap, &ou)) return NULL;
    py_stepper *p = get(cap);
    if (!p) return NULL;
    npy_intp d[1] = {p->model->nu};
    PyArrayObject *u = cs_py_darray(ou, "u", 1, d, 1);
    if (!u) return NULL;
    double *y = calloc((size_t)p->model->ny + 1, sizeof(double));
    cs_err err = {0};
    PyObject *out = NULL;
    if (!y) PyErr_NoMemory();
    else if (cs_model_output(p->model, p->st->t, p->st->x, PyArray_DATA(u), y, &err)) cs_py_raise(&err);
    else out = cs_py_vec(p->model->ny, y);
    free(y);
    Py_DECREF(u);
    return out;
}

static PyObject *py_stepper_save(PyObject *self, PyObject *args) {
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O:stepper_save", &cap)) return NULL;
    py_stepper *p = get(cap);
    if (!p) return NULL;
    py_state *s = calloc(1, sizeof *s);
    if (!s || cs_stepper_state_alloc(p->st, &s->s)) { free(s); return PyErr_NoMemory(); }
    s->nx = p->model->nx;
    s->nu = p->model->nu;
    cs_stepper_save(p->st, &s->s);
    PyObject *c = PyCapsule_New(s, CAP_STATE, state_capsule_free);
    if (!c) { cs_stepper_state_free(&s->s); free(s); }
    return c;
}

static PyObject *py_stepper_restore(PyObject *self, PyObject *args) {
    PyObject *cap, *scap;
    if (!PyArg_ParseTuple(args, "OO:stepper_restore", &cap, &scap)) return NULL;
    py_stepper *p = get(cap);
    if (!p) return NULL;
    if (!PyCapsule_IsValid(scap, CAP_STATE))
        return PyErr_Format(PyExc_TypeError, "state: expected a snapshot returned by Stepper.save(), got %s",
                            Py_TYPE(scap)->tp_name);
    py_state *s = PyCapsule_GetPointer(scap, CAP_STATE);
    if (!s) return NULL;
    if (s->nx != p->model->nx || s->nu != p->model->nu)
        return PyErr_Format(PyExc_ValueError,
                            "state: snapshot of a stepper with nx = %d, nu = %d; this stepper has nx = %d, nu = %d",
                            s->nx, s->nu, p->model->nx, p->model->nu);
    cs_stepper_restore(p->st, &s->s);
    Py_RETURN_NONE;
}

PyMethodDef cs_py_stepper_methods[] = {
    CS_PY_FN(stepper_new, "(model_spec, solver_spec, x0, t0) -> capsule"),
    CS_PY_FN(stepper_step, "(cap, T, H, coef[deg+1, nu])"),
    CS_PY_FN(stepper_get, "(cap) -> (t, x, stats)"),
    CS_PY_FN(stepper_output, "(cap, u) -> y at the current state"),
    CS_PY_FN(stepper_save, "(cap) -> state capsule"),
    CS_PY_FN(stepper_restore, "(cap, state)"),
    {NULL, NULL, 0, NULL},
};
