/* Bindings of csrc/control/kraft.h (cosim.control): argument conversion only; validation messages in cosim/control.py. */
#include "py/pyutil.h"

#include "control/kraft.h"

static PyObject *py_kraft_error_constants(PyObject *self, PyObject *args) {
    int kappa;
    PyObject *oa;
    if (!PyArg_ParseTuple(args, "iO:error_constants", &kappa, &oa)) return NULL;
    npy_intp d[1] = {-1};
    PyArrayObject *a = cs_py_darray(oa, "a", 1, d, 1);
    if (!a) return NULL;
    if (kappa >= 1 && PyArray_DIM(a, 0) != kappa - 1) {
        Py_DECREF(a);
        return PyErr_Format(PyExc_ValueError, "a: expected the %d ratios a_2..a_kappa", kappa - 1);
    }
    double cp, cv;
    cs_err err = {0};
    int rc = cs_kraft_error_constants(kappa, PyArray_DATA(a), &cp, &cv, &err);
    Py_DECREF(a);
    if (rc) return cs_py_raise(&err);
    return Py_BuildValue("(dd)", cp, cv);
}

/* (T, u) -> divided difference; (T, u, kappa, t) -> Newton predictor difference (3.26) */
static PyObject *py_kraft_divided_difference(PyObject *self, PyObject *args) {
    PyObject *oT, *ou;
    int kappa = -1;
    double t = 0.0;
    if (!PyArg_ParseTuple(args, "OO|id:divided_difference", &oT, &ou, &kappa, &t)) return NULL;
    npy_intp d[1] = {-1};
    PyArrayObject *T = cs_py_darray(oT, "T", 1, d, 1), *u = T ? cs_py_darray(ou, "u", 1, d, 1) : NULL;
    if (!T || !u) { Py_XDECREF(T); return NULL; }
    int n = (int)PyArray_DIM(T, 0);
    PyObject *out = NULL;
    if (PyArray_DIM(u, 0) != n || n < 1 || n > CS_KRAFT_KMAX + 4)
        PyErr_Format(PyExc_ValueError, "T/u: need equal lengths 1..%d", CS_KRAFT_KMAX + 4);
    else if (kappa >= 0 && n < kappa + 2)
        PyErr_Format(PyExc_ValueError, "T: kappa = %d needs %d samples", kappa, kappa + 2);
    else
        out = PyFloat_FromDouble(kappa < 0 ? cs_kraft_divided_difference(n, PyArray_DATA(T), PyArray_DATA(u))
                                           : cs_kraft_newton_difference(kappa, PyArray_DATA(T), PyArray_DATA(u), t));
    Py_DECREF(T); Py_DECREF(u);
    return out;
}

static PyObject *py_kraft_wrms(PyObject *self, PyObject *args) {
    PyObject *oe, *ow;
    if (!PyArg_ParseTuple(args, "OO:wrms", &oe, &ow)) return NULL;
    npy_intp d[1] = {-1};
    PyArrayObject *e = cs_py_darray(oe, "eps", 1, d, 0), *w = e ? cs_py_darray(ow, "weights", 1, d, 0) : NULL;
    if (!e || !w) { Py_XDECREF(e); return NULL; }
    PyObject *out = NULL;
    if (PyArray_DIM(e, 0) != PyArray_DIM(w, 0)) PyErr_SetString(PyExc_ValueError, "weights: length differs from eps");
    else out = PyFloat_FromDouble(cs_kraft_wrms((int)PyArray_DIM(e, 0), PyArray_DATA(e), PyArray_DATA(w)));
    Py_DECREF(e); Py_DECREF(w);
    return out;
}

static PyObject *py_kraft_select_order(PyObject *self, PyObject *args) {
    int kappa, n_succ, n_fail, k_max, strategy;
    PyObject *os;
    if (!PyArg_ParseTuple(args, "iOiiii:select_order", &kappa, &os, &n_succ, &n_fail, &k_max, &strategy)) return NULL;
    npy_intp d[1] = {-1};
    PyArrayObject *s = cs_py_darray(os, "sdn", 1, d, 0);
    if (!s) return NULL;
    int k = cs_kraft_select_order(kappa, PyArray_DATA(s), (int)PyArray_DIM(s, 0), n_succ, n_fail, k_max, strategy);
    Py_DECREF(s);
    return PyLong_FromLong(k);
}

static PyObject *py_kraft_limit_step_ratio(PyObject *self, PyObject *args) {
    double r, rmin, rmax;
    int n_fail, dz, cf;
    if (!PyArg_ParseTuple(args, "diddpp:limit_step_ratio", &r, &n_fail, &rmin, &rmax, &dz, &cf)) return NULL;
    return PyFloat_FromDouble(cs_kraft_limit_step_ratio(r, n_fail, rmin, rmax, dz, cf));
}

static PyObject *py_kraft_land_micro_step(PyObject *self, PyObject *args) {
    double h, rem;
    if (!PyArg_ParseTuple(args, "dd:land_micro_step", &h, &rem)) return NULL;
    return PyFloat_FromDouble(cs_kraft_land_micro_step(h, rem));
}

static PyObject *py_kraft_nrmse(PyObject *self, PyObject *args) {
    PyObject *oz, *or;
    if (!PyArg_ParseTuple(args, "OO:nrmse", &oz, &or)) return NULL;
    npy_intp d[2] = {-1, -1};
    PyArrayObject *z = cs_py_darray(oz, "x", 2, d, 1), *r = z ? cs_py_darray(or, "ref", 2, d, 1) : NULL;
    if (!z || !r) { Py_XDECREF(z); return NULL; }
    PyObject *out = NULL;
    if (PyArray_DIM(z, 0) != PyArray_DIM(r, 0) || PyArray_DIM(z, 1) != PyArray_DIM(r, 1))
        PyErr_SetString(PyExc_ValueError, "ref: shape differs from x");
    else
        out = PyFloat_FromDouble(cs_kraft_nrmse((long)PyArray_DIM(z, 0), (int)PyArray_DIM(z, 1), PyArray_DATA(z),
                                                PyArray_DATA(r)));
    Py_DECREF(z); Py_DECREF(r);
    return out;
}

PyMethodDef cs_py_control_methods[] = {
    CS_PY_FN(kraft_error_constants, "(kappa, a[2..kappa]) -> (C_pos, C_vel)"),
    CS_PY_FN(kraft_divided_difference,
             "(T, u[, kappa, t]) -> u[T_0..T_n-1], or the Newton predictor difference (3.26)"),
    CS_PY_FN(kraft_wrms, "(eps, weights) -> WRMS norm (3.21)"),
    CS_PY_FN(kraft_select_order, "(kappa, sdn, n_succ, n_fail, k_max, strategy) -> kappa_new (Listing 3.2 / 3.1)"),
    CS_PY_FN(kraft_limit_step_ratio, "(r, n_fail, r_min, r_max, dead_zone, corrector_failed) -> r (Listing 3.3)"),
    CS_PY_FN(kraft_land_micro_step, "(h, remaining) -> h (Listing 4.1)"),
    CS_PY_FN(kraft_nrmse, "(x, ref) -> NRMSE (5.1/5.2)"),
    {NULL, NULL, 0, NULL},
};
