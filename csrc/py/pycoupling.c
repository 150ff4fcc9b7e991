/* See py/pycoupling.h. */
#include "py/pycoupling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coupling/callback.h"

typedef struct py_coupling {
    PyObject *obj;
    PyObject **exc;     /* where the first exception goes (the run's) */
} py_coupling;

/* The raised exception: kept (the first one) and turned into a callback failure naming the method. */
static int raised(py_coupling *p, const char *method, cs_err *err) {
    char what[32], msg[CS_ERRMSG_LEN];
    snprintf(what, sizeof what, "coupling.%s", method);
    cs_py_take_exception(what, msg, sizeof msg, p->exc);
    return cs_fail(err, CS_ERR_CALLBACK, "%s", msg);
}

/* A returned coefficient array (deg + 1, n_u) (a vector: degree 0) into every unit's input polynomial. */
static int fill_inputs(py_coupling *p, const char *method, PyObject *r, const cs_network *net, cs_input *in,
                       cs_err *err) {
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(r, NPY_DOUBLE, 1, 2, NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST);
    if (!a) return raised(p, method, err);
    const npy_intp rows = PyArray_NDIM(a) == 1 ? 1 : PyArray_DIM(a, 0), cols = PyArray_DIM(a, PyArray_NDIM(a) - 1);
    int rc = CS_OK;
    if (cols != net->nu || rows < 1 || rows > CS_MAXDEG + 1) {
        rc = cs_fail(err, CS_ERR_CALLBACK, "coupling.%s returned shape (%ld, %ld), expected (deg + 1, %d) "
                     "coefficients of s^0..s^deg with deg <= %d", method, (long)rows, (long)cols, net->nu, CS_MAXDEG);
    } else {
        const double *c = PyArray_DATA(a);
        for (npy_intp q = 0; q < rows * cols && !rc; q++)
            if (!isfinite(c[q])) rc = cs_fail(err, CS_ERR_CALLBACK, "coupling.%s returned a non-finite coefficient",
                                               method);
        for (int i = 0; i < net->nsub && !rc; i++) {
            const int a0 = net->uoff[i], nu = in[i].nu;
            in[i].deg = (int)rows - 1;
            for (npy_intp q = 0; q < rows; q++)
                for (int b = 0; b < nu; b++) in[i].c[q * nu + b] = c[q * cols + a0 + b];
        }
    }
    Py_DECREF(a);
    return rc;
}

static int py_predict(void *user, const cs_network *net, double T, double H, double Hnom, cs_input *in,
                      cs_err *err) {
    py_coupling *p = user;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *r = PyObject_CallMethod(p->obj, "predict", "dd", T, H);
    int rc = r ? fill_inputs(p, "predict", r, net, in, err) : raised(p, "predict", err);
    Py_XDECREF(r);
    PyGILState_Release(g);
    return rc;
}

static int py_on_unit_done(void *user, const cs_network *net, int i, double T1, const double *y_i, cs_input *in,
                           int *changed, cs_err *err) {
    py_coupling *p = user;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *y = cs_py_vec(net->yoff[i + 1] - net->yoff[i], y_i);
    PyObject *r = y ? PyObject_CallMethod(p->obj, "on_unit_done", "idO", i, T1, y) : NULL;
    int rc = !r ? raised(p, "on_unit_done", err) : r == Py_None ? CS_OK : fill_inputs(p, "on_unit_done", r, net, in, err);
    *changed = r && r != Py_None;
    Py_XDECREF(r);
    Py_XDECREF(y);
    PyGILState_Release(g);
    return rc;
}

static int py_accept(void *user, const cs_network *net, double T1, const double *y, cs_err *err) {
    py_coupling *p = user;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *oy = cs_py_vec(net->ny, y);
    PyObject *r = oy ? PyObject_CallMethod(p->obj, "accept", "dO", T1, oy) : NULL;
    int rc = r ? CS_OK : raised(p, "accept", err);
    Py_XDECREF(r);
    Py_XDECREF(oy);
    PyGILState_Release(g);
    return rc;
}

static int py_save(void *user, void **token, cs_err *err) {
    py_coupling *p = user;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *r = PyObject_CallMethod(p->obj, "save", NULL);
    int rc = r ? CS_OK : raised(p, "save", err);
    *token = r;   /* the new reference is the token */
    PyGILState_Release(g);
    return rc;
}

static int py_restore(void *user, const void *token, cs_err *err) {
    py_coupling *p = user;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *r = PyObject_CallMethod(p->obj, "restore", "O", (PyObject *)token);
    int rc = r ? CS_OK : raised(p, "restore", err);
    Py_XDECREF(r);
    PyGILState_Release(g);
    return rc;
}

static void py_release(void *token) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF((PyObject *)token);
    PyGILState_Release(g);
}

static const cs_callback_ops PY_OPS = {.predict = py_predict, .on_unit_done = py_on_unit_done,
                                       .accept = py_accept, .save = py_save, .restore = py_restore,
                                       .release = py_release};

static void capsule_free(PyObject *cap) {
    py_coupling *p = PyCapsule_GetPointer(cap, "cosim.py_coupling");
    if (!p) { PyErr_Clear(); return; }
    Py_XDECREF(p->obj);
    free(p);
}

int cs_py_coupling_read(PyObject *d, cs_choice *out, cs_py_keep *keep, PyObject **exc) {
    PyObject *okind = PyDict_Check(d) ? PyDict_GetItemString(d, "kind") : NULL;
    if (!okind || !PyUnicode_Check(okind) || PyUnicode_CompareWithASCIIString(okind, "callback") != 0)
        return cs_py_choice_read(d, "coupling", out, keep);
    PyObject *obj = PyDict_GetItemString(d, "object");
    if (!obj) { PyErr_SetString(PyExc_TypeError, "coupling: a callback coupling needs its object"); return -1; }
    static const char *const methods[] = {"predict", "on_unit_done", "accept", "save", "restore"};
    for (size_t q = 0; q < sizeof methods / sizeof methods[0]; q++) {
        int has = PyObject_HasAttrString(obj, methods[q]);
        if (!has) { PyErr_Format(PyExc_TypeError, "coupling: the object has no method %s", methods[q]); return -1; }
    }
    PyObject *rest = PyDict_Copy(d);
    if (!rest) return -1;
    int rc = PyDict_DelItemString(rest, "object") || cs_py_choice_read(rest, "coupling", out, keep) ? -1 : 0;
    Py_DECREF(rest);
    if (rc) return -1;
    py_coupling *p = calloc(1, sizeof *p);
    if (!p) { PyErr_NoMemory(); return -1; }
    PyObject *cap = PyCapsule_New(p, "cosim.py_coupling", capsule_free);
    if (!cap) { free(p); return -1; }
    Py_INCREF(obj);
    p->obj = obj;
    p->exc = exc;
    if (cs_py_keep_object(keep, cap)) return -1;
    cs_callback_spec *spec = (cs_callback_spec *)out->spec;   /* allocated in keep by cs_py_choice_read */
    spec->ops = &PY_OPS;
    spec->user = p;
    return 0;
}
