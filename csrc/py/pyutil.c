#include "py/pyutil.h"

#include <math.h>

PyObject *cs_py_raise(const cs_err *err) {
    PyObject *type = PyExc_RuntimeError;
    switch (err->code) {
    case CS_ERR_ARG: type = PyExc_ValueError; break;
    case CS_ERR_NOMEM: return PyErr_NoMemory();
    case CS_ERR_LINALG: type = PyExc_ArithmeticError; break;
    default: break;
    }
    PyErr_SetString(type, err->msg[0] ? err->msg : "cosim: unknown error");
    return NULL;
}

PyArrayObject *cs_py_darray(PyObject *obj, const char *name, int ndim, const npy_intp *dims, int finite) {
    if (obj == NULL || obj == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s: expected an array of numbers, got None", name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_DOUBLE, 0, 0, NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST);
    if (!a) {
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
