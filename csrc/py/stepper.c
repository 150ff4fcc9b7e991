/* Bindings for a single stepper (model + integrator) with exact save/restore: cosim.Stepper.
 *
 * An FMU is stepped as its unit instead (units/fmu_unit.c: a co-simulation FMU's own doStep, a model-exchange FMU
 * integrated with its events), whose snapshots hold the FMU's state (fmiGetFMUstate/fmiSetFMUstate); such a
 * snapshot belongs to the instance it was taken from and keeps its stepper alive. */
#include "py/pyutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "py/fmu.h"
#include "py/specs.h"
#include "units/fmu_unit.h"

typedef struct py_stepper {
    cs_model *model;
    cs_stepper *st;
    cs_unit *unit;    /* an FMU: its unit instead of model + stepper */
    PyObject *spec;   /* an FMU: its spec, holding the loaded binary that must outlive the unit */
    double t;         /* an FMU: the time reached */
    int nx, nu, ny;
    double *coef; /* (CS_MAXDEG + 1) * nu */
} py_stepper;

static void stepper_free(py_stepper *p) {
    if (p->unit) {
        Py_BEGIN_ALLOW_THREADS   /* freeing the instance may log (a log callback takes the GIL itself) */
        cs_unit_destroy(p->unit);
        Py_END_ALLOW_THREADS
    }
    Py_XDECREF(p->spec);
    cs_stepper_destroy(p->st);
    cs_model_destroy(p->model);
    free(p->coef);
    free(p);
}

static void stepper_capsule_free(PyObject *cap) {
    py_stepper *p = PyCapsule_GetPointer(cap, "cosim.stepper");
    if (p) stepper_free(p);
}

/* A snapshot remembers the sizes of the stepper it was taken from: restoring it into a stepper of another size
 * would read past (or leave unset) part of the state vector. An FMU's snapshot is its unit's (with the FMU state)
 * and holds a reference to its stepper, which frees the FMU state on the instance. */
typedef struct py_state {
    int nx, nu;
    cs_stepper_state s;
    py_stepper *owner;  /* an FMU: the stepper whose unit took it ... */
    PyObject *keep;     /* ... kept alive by this reference */
    void *snap;         /* the unit's snapshot */
    double t;
} py_state;

#define CAP_STEPPER "cosim.stepper"
#define CAP_STATE "cosim.stepper_state"

static void state_capsule_free(PyObject *cap) {
    py_state *s = PyCapsule_GetPointer(cap, CAP_STATE);
    if (!s) return;
    if (s->snap) cs_unit_snapshot_destroy(s->owner->unit, s->snap);
    Py_XDECREF(s->keep);
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
    p->nx = p->model->nx;
    p->nu = p->model->nu;
    p->ny = p->model->ny;
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

/* stepper_new_fmu(fmu_spec, solver_spec, x0 or None, t0): the FMU's unit, instantiated and initialised at t0;
 * x0 (model exchange) replaces the FMU's own initial states */
static PyObject *py_stepper_new_fmu(PyObject *self, PyObject *args) {
    PyObject *mspec, *sspec, *ox0;
    double t0;
    if (!PyArg_ParseTuple(args, "OOOd:stepper_new_fmu", &mspec, &sspec, &ox0, &t0)) return NULL;
    if (!isfinite(t0)) return cs_py_errorf(PyExc_ValueError, "t0: must be finite, got %g", t0);
    if (!cs_py_is_fmu_spec(mspec)) return PyErr_Format(PyExc_TypeError, "subsystem: expected an FMU spec");
    cs_solver_opts so;
    if (cs_py_solver_from_spec(sspec, &so)) return NULL;
    py_stepper *p = calloc(1, sizeof *p);
    if (!p) return PyErr_NoMemory();
    Py_INCREF(mspec);
    p->spec = mspec;
    PyArrayObject *x0 = NULL;
    cs_err err = {0};
    int rc = 0;
    if (!(p->unit = cs_py_fmu_unit_from_spec(mspec, &so, t0, 0))) goto fail;
    p->nx = p->unit->nx;
    p->nu = p->unit->nu;
    p->ny = p->unit->ny;
    p->t = t0;
    if (!(p->coef = calloc((size_t)(CS_MAXDEG + 1) * p->nu + 1, sizeof(double)))) { PyErr_NoMemory(); goto fail; }
    /* the integrator starts from x0, or from the FMU's own states after its initialisation at t0 */
    double *x = NULL;
    if (ox0 != Py_None) {
        npy_intp d[1] = {p->nx};
        if (!(x0 = cs_py_darray(ox0, "x0", 1, d, 1))) goto fail;
        x = PyArray_DATA(x0);
    } else if (p->nx) {
        if (!(x = calloc((size_t)p->nx, sizeof(double)))) { PyErr_NoMemory(); goto fail; }
        if ((rc = cs_fmu_unit_initial_states(p->unit, x, &err))) { free(x); cs_py_raise(&err); goto fail; }
    }
    if (p->nx) CS_PY_RELEASED(rc = cs_unit_set_state(p->unit, t0, x, &err));
    if (x0) Py_CLEAR(x0);
    else free(x);
    if (rc) { cs_py_raise(&err); goto fail; }
    PyObject *cap = PyCapsule_New(p, CAP_STEPPER, stepper_capsule_free);
    if (!cap) stepper_free(p);
    return cap;
fail:
    Py_XDECREF(x0);
    stepper_free(p);
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
    npy_intp d[2] = {-1, p->nu};
    PyArrayObject *c = cs_py_darray(oc, "u", 2, d, 1);
    if (!c) return NULL;
    int deg = (int)PyArray_DIM(c, 0) - 1;
    if (deg < 0 || deg > CS_MAXDEG) {
        Py_DECREF(c);
        return PyErr_Format(PyExc_ValueError, "u: polynomial degree must be 0..%d", CS_MAXDEG);
    }
    memcpy(p->coef, PyArray_DATA(c), sizeof(double) * (deg + 1) * p->nu);
    Py_DECREF(c);
    cs_input in = {p->nu, deg, T, H, p->coef};
    cs_err err = {0};
    int rc;
    if (p->unit) {
        CS_PY_RELEASED(rc = cs_unit_do_step(p->unit, T, H, &in, CS_RESTART, &err));
        if (rc) return cs_py_raise(&err);
        p->t = T + H;
        Py_RETURN_NONE;
    }
    CS_PY_RELEASED(rc = cs_stepper_step(p->st, T, H, &in, CS_RESTART, &err);
                   if (!rc) rc = cs_stepper_check_finite(p->st, T, H, &err));
    if (rc) return cs_py_raise_model(&err, p->model);
    Py_RETURN_NONE;
}

static PyObject *py_stepper_get(PyObject *self, PyObject *args) {
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O:stepper_get", &cap)) return NULL;
    py_stepper *p = get(cap);
    if (!p) return NULL;
    if (p->unit) {
        cs_unit_stats us;
        cs_unit_get_stats(p->unit, &us);
        const double *x = cs_unit_states(p->unit);
        return Py_BuildValue("(dN{s:l,s:l,s:l,s:l,s:l})", p->t, x ? cs_py_vec(p->nx, x) : cs_py_vec(0, NULL), "steps",
                             us.steps, "failures", us.failures, "jac_evals", us.jac_evals, "restarts", us.restarts,
                             "rhs_calls", us.rhs_calls);
    }
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
    npy_intp d[1] = {p->nu};
    PyArrayObject *u = cs_py_darray(ou, "u", 1, d, 1);
    if (!u) return NULL;
    double *y = calloc((size_t)p->ny + 1, sizeof(double));
    cs_err err = {0};
    PyObject *out = NULL;
    int rc = 0;
    if (y) {
        if (p->unit) CS_PY_RELEASED(rc = cs_unit_get_outputs(p->unit, p->t, PyArray_DATA(u), y, &err));
        else rc = cs_model_output(p->model, p->st->t, p->st->x, PyArray_DATA(u), y, &err);
    }
    if (!y) PyErr_NoMemory();
    else if (rc) cs_py_raise_model(&err, p->model);
    else out = cs_py_vec(p->ny, y);
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
    if (!s) return PyErr_NoMemory();
    s->nx = p->nx;
    s->nu = p->nu;
    if (p->unit) {
        if (!(s->snap = cs_unit_snapshot_create(p->unit))) { free(s); return PyErr_NoMemory(); }
        /* saved and restored at once: the steps after save() start from exactly the state a restore() gives (an
         * integrator's history, which a snapshot does not hold, restarts in both), so they repeat bit for bit;
         * a failure is reported by the next step */
        CS_PY_RELEASED(cs_unit_save_state(p->unit, s->snap); cs_unit_restore_state(p->unit, s->snap));
        s->owner = p;
        s->t = p->t;
        Py_INCREF(cap);
        s->keep = cap;
    } else {
        if (cs_stepper_state_alloc(p->st, &s->s)) { free(s); return PyErr_NoMemory(); }
        cs_stepper_save(p->st, &s->s);
    }
    PyObject *c = PyCapsule_New(s, CAP_STATE, state_capsule_free);
    if (!c) {
        if (s->snap) cs_unit_snapshot_destroy(p->unit, s->snap);
        Py_XDECREF(s->keep);
        cs_stepper_state_free(&s->s);
        free(s);
    }
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
    if ((p->unit != NULL) != (s->snap != NULL) || (p->unit && s->owner != p))
        return PyErr_Format(PyExc_ValueError, "state: a snapshot of another FMU stepper (an FMU state belongs to the "
                            "instance that saved it)");
    if (s->nx != p->nx || s->nu != p->nu)
        return PyErr_Format(PyExc_ValueError,
                            "state: snapshot of a stepper with nx = %d, nu = %d; this stepper has nx = %d, nu = %d",
                            s->nx, s->nu, p->nx, p->nu);
    if (p->unit) {
        CS_PY_RELEASED(cs_unit_restore_state(p->unit, s->snap));   /* a failure is reported by the next step */
        p->t = s->t;
        Py_RETURN_NONE;
    }
    cs_stepper_restore(p->st, &s->s);
    Py_RETURN_NONE;
}

PyMethodDef cs_py_stepper_methods[] = {
    CS_PY_FN(stepper_new, "(model_spec, solver_spec, x0, t0) -> capsule"),
    CS_PY_FN(stepper_new_fmu, "(fmu_spec, solver_spec, x0 or None, t0) -> capsule (the FMU's unit, initialised at t0)"),
    CS_PY_FN(stepper_step, "(cap, T, H, coef[deg+1, nu])"),
    CS_PY_FN(stepper_get, "(cap) -> (t, x, stats)"),
    CS_PY_FN(stepper_output, "(cap, u) -> y at the current state"),
    CS_PY_FN(stepper_save, "(cap) -> state capsule"),
    CS_PY_FN(stepper_restore, "(cap, state)"),
    {NULL, NULL, 0, NULL},
};
