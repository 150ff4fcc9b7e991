#include "py/pyutil.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "interrupt.h"
#include "models/model.h"

/* cosim.errors.<name> (new reference), imported lazily: the extension is imported by cosim/__init__.py before
 * cosim.errors may be, and a failed import falls back to RuntimeError (the base class of cosim.CosimError). */
static PyObject *cosim_error_type(const char *name) {
    PyObject *mod = PyImport_ImportModule("cosim.errors");
    PyObject *type = mod ? PyObject_GetAttrString(mod, name) : NULL;
    Py_XDECREF(mod);
    if (!type || !PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, (PyTypeObject *)PyExc_Exception)) {
        Py_XDECREF(type);
        PyErr_Clear();
        Py_INCREF(PyExc_RuntimeError);
        return PyExc_RuntimeError;
    }
    return type;
}

/* The single C -> Python error mapping:
 *   CS_ERR_ARG -> ValueError, CS_ERR_NOMEM -> MemoryError, CS_ERR_LINALG -> ArithmeticError,
 *   CS_ERR_SOLVER / CS_ERR_CALLBACK -> cosim.SolverError, CS_ERR_DIVERGED -> cosim.DivergenceError,
 *   CS_ERR_CONVERGENCE -> cosim.ConvergenceError, CS_ERR_INTERRUPTED -> KeyboardInterrupt, anything else -> RuntimeError. New reference. */
PyObject *cs_py_error_type(int code) {
    PyObject *type;
    switch (code) {
    case CS_ERR_ARG: type = PyExc_ValueError; break;
    case CS_ERR_NOMEM: type = PyExc_MemoryError; break;
    case CS_ERR_LINALG: type = PyExc_ArithmeticError; break;
    case CS_ERR_SOLVER:
    case CS_ERR_CALLBACK: return cosim_error_type("SolverError");
    case CS_ERR_DIVERGED: return cosim_error_type("DivergenceError");
    case CS_ERR_CONVERGENCE: return cosim_error_type("ConvergenceError");
    case CS_ERR_INTERRUPTED: type = PyExc_KeyboardInterrupt; break;
    default: type = PyExc_RuntimeError; break;
    }
    Py_INCREF(type);
    return type;
}

PyObject *cs_py_raise(const cs_err *err) {
    const char *msg = err->msg[0] ? err->msg : "cosim: unknown error";
    if (err->code == CS_ERR_NOMEM && !err->msg[0]) return PyErr_NoMemory();
    /* Ctrl-C: Python's handler raises its KeyboardInterrupt (once, here) */
    if (err->code == CS_ERR_INTERRUPTED && (PyErr_CheckSignals() < 0 || PyErr_Occurred())) return NULL;
    PyObject *type = cs_py_error_type(err->code);
    PyErr_SetString(type, msg);
    Py_DECREF(type);
    return NULL;
}

int cs_py_raise_if_base(PyObject *cause) {
    if (!cause || PyObject_IsInstance(cause, PyExc_Exception)) return 0;
    PyErr_SetObject((PyObject *)Py_TYPE(cause), cause);
    return 1;
}

PyObject *cs_py_raise_model(const cs_err *err, cs_model *m) {
    PyObject *cause = m ? cs_model_take_cause(m) : NULL;
    if (cs_py_raise_if_base(cause)) {
        Py_DECREF(cause);
        return NULL;
    }
    cs_py_raise(err);
    if (cause) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (value) PyException_SetCause(value, cause); /* steals cause */
        else Py_DECREF(cause);
        PyErr_Restore(type, value, tb);
    }
    return NULL;
}

/* signal.getsignal and signal.default_int_handler, looked up once at import (borrowed for the module's lifetime).
 * Not lazily in cs_py_interrupt_arm: the lookup runs Python code (threading.main_thread), which would raise a
 * pending SIGINT there, and arm could only swallow it: a Ctrl-C just before the first long call was lost. */
static PyObject *getsignal, *default_int_handler;
static unsigned long main_thread;

int cs_py_interrupt_init(void) {
    PyObject *mod = PyImport_ImportModule("_signal"), *threading = mod ? PyImport_ImportModule("threading") : NULL;
    PyObject *mt = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
    PyObject *ident = mt ? PyObject_GetAttrString(mt, "ident") : NULL;
    if (ident) {
        getsignal = PyObject_GetAttrString(mod, "getsignal");
        default_int_handler = getsignal ? PyObject_GetAttrString(mod, "default_int_handler") : NULL;
        main_thread = PyLong_AsUnsignedLong(ident);
    }
    Py_XDECREF(mod); Py_XDECREF(threading); Py_XDECREF(mt); Py_XDECREF(ident);
    if (!getsignal || !default_int_handler) { Py_CLEAR(getsignal); Py_CLEAR(default_int_handler); return -1; }
    return 0;
}

int cs_py_interrupt_arm(void) {
    if (!getsignal) return -1;
    if (PyThread_get_thread_ident() != main_thread) return -1;
    PyObject *h = PyObject_CallFunction(getsignal, "i", SIGINT);
    if (!h) { PyErr_Clear(); return -1; }
    int ours = h == default_int_handler;
    Py_DECREF(h);
    if (!ours) return -1;
    int token = cs_interrupt_arm();
    /* A SIGINT that came before the flag's handler was in place (or while this call prepared its arguments) is
     * Python's, not yet raised: hand it to the flag (the call then stops at once and raises KeyboardInterrupt). */
    if (token >= 0 && PyOS_InterruptOccurred()) cs_interrupt_pending = 1;
    return token;
}

/* A SIGINT the call did not act on goes back to Python (arm may have taken Python's own flag for it): without this
 * a Ctrl-C that lands just before a call that has no check, or after a call's last check, was lost. */
void cs_py_interrupt_disarm(int token) {
    if (cs_interrupt_disarm(token)) PyErr_SetInterrupt();
}

static PyObject *py_error_type(PyObject *self, PyObject *args) {
    int code;
    if (!PyArg_ParseTuple(args, "i:error_type", &code)) return NULL;
    return cs_py_error_type(code);
}

PyMethodDef cs_py_error_methods[] = {
    {"error_type", py_error_type, METH_VARARGS,
     "error_type(code) -> the exception class of a C status code (the one mapping the bindings use)."},
    {NULL, NULL, 0, NULL},
};

PyObject *cs_py_errorf(PyObject *type, const char *fmt, ...) {
    char buf[CS_ERRMSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    PyErr_SetString(type, buf);
    return NULL;
}

PyArrayObject *cs_py_darray(PyObject *obj, const char *name, int ndim, const npy_intp *dims, int finite) {
    if (obj == NULL || obj == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s: expected an array of numbers, got None", name);
        return NULL;
    }
    /* Infer the element type first: a forced cast to float64 would silently drop imaginary parts (only a
     * ComplexWarning) and parse strings, so only booleans, integers, reals and generic objects (each converted by
     * float(), which rejects complex numbers) are accepted. */
    PyArrayObject *raw = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
    if (!raw) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError)) return NULL;
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: expected an array of real numbers", name);
        return NULL;
    }
    const int tn = PyArray_TYPE(raw);
    if (PyTypeNum_ISCOMPLEX(tn)) {
        Py_DECREF(raw);
        PyErr_Format(PyExc_TypeError, "%s: expected real numbers, got complex values", name);
        return NULL;
    }
    if (!(PyTypeNum_ISBOOL(tn) || PyTypeNum_ISINTEGER(tn) || PyTypeNum_ISFLOAT(tn) || tn == NPY_OBJECT)) {
        Py_DECREF(raw);
        PyErr_Format(PyExc_TypeError, "%s: expected an array of real numbers", name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY((PyObject *)raw, NPY_DOUBLE, 0, 0,
                                                        NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(raw);
    if (!a) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError)) return NULL;
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: expected an array of real numbers", name);
        return NULL;
    }
    if (PyArray_NDIM(a) != ndim) {
        PyErr_Format(PyExc_ValueError, "%s: expected %d dimension(s), got %d", name, ndim, PyArray_NDIM(a));
        Py_DECREF(a);
        return NULL;
    }
    for (int i = 0; i < ndim; i++) {
        if (dims && dims[i] >= 0 && PyArray_DIM(a, i) != dims[i]) {
            PyErr_Format(PyExc_ValueError, "%s: expected size %ld along axis %d, got %ld", name, (long)dims[i], i,
                         (long)PyArray_DIM(a, i));
            Py_DECREF(a);
            return NULL;
        }
    }
    if (finite) {
        const double *p = (const double *)PyArray_DATA(a);
        npy_intp n = PyArray_SIZE(a);
        for (npy_intp i = 0; i < n; i++)
            if (!isfinite(p[i])) {
                PyErr_Format(PyExc_ValueError, "%s: contains NaN or infinite values", name);
                Py_DECREF(a);
                return NULL;
            }
    }
    return a;
}

PyArrayObject *cs_py_square(PyObject *obj, const char *name) {
    npy_intp dims[2] = {-1, -1};
    PyArrayObject *A = cs_py_darray(obj, name, 2, dims, 1);
    if (A && PyArray_DIM(A, 1) != PyArray_DIM(A, 0)) {
        Py_DECREF(A);
        PyErr_Format(PyExc_ValueError, "%s: must be square", name);
        return NULL;
    }
    return A;
}

PyObject *cs_py_vec(npy_intp n, const double *src) {
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (a && n) memcpy(PyArray_DATA((PyArrayObject *)a), src, sizeof(double) * n);
    return a;
}

PyObject *cs_py_mat(npy_intp m, npy_intp n, const double *src) {
    npy_intp d[2] = {m, n};
    PyObject *a = PyArray_SimpleNew(2, d, NPY_DOUBLE);
    if (a && (m * n) > 0) memcpy(PyArray_DATA((PyArrayObject *)a), src, sizeof(double) * m * n);
    return a;
}

void cs_py_take_exception(const char *what, char *msg, size_t size, PyObject **keep) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb) PyException_SetTraceback(value, tb);
    /* Ctrl-C raised inside a callback: the run stops on it and re-raises it (with the partial result), so the
     * armed call has acted on the SIGINT (cs_py_interrupt_disarm must not hand it back a second time). */
    if (type && PyErr_GivenExceptionMatches(type, PyExc_KeyboardInterrupt)) cs_interrupt_seen = 1;
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *txt = s ? PyUnicode_AsUTF8(s) : NULL;
    if (!txt) PyErr_Clear();
    snprintf(msg, size, "%s raised %s: %s", what, type ? ((PyTypeObject *)type)->tp_name : "error", txt ? txt : "");
    if (!*keep && value) { Py_INCREF(value); *keep = value; }
    Py_XDECREF(s);
    Py_XDECREF(type); Py_XDECREF(value); Py_XDECREF(tb);
    PyErr_Clear();
}
