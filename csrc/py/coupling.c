/* Bindings for csrc/coupling (approximation weights; used by tests and cosim.analysis). */
#include "py/pyutil.h"

#include "coupling/approx.h"

static PyObject *py_approx_weights(PyObject *self, PyObject *args) {
    int kind, k, interpolate;
    PyObject *oT;
    double TN, H;
    if (!PyArg_ParseTuple(args, "iipOdd:approx_weights", &kind, &k, &interpolate, &oT, &TN, &H)) return NULL;
    npy_intp d[1] = {-1};
    PyArrayObject *T = cs_py_darray(oT, "T", 1, d, 1);
    if (!T) return NULL;
    int n = (int)PyArray_DIM(T, 0);
    if (n < 1 || n > CS_MAXHIST) {
        Py_DECREF(T);
        return PyErr_Format(PyExc_ValueError, "T: need 1..%d sample times, got %d", CS_MAXHIST, n);
    }
    cs_approx_spec spec = {kind, k};
    cs_approx_weights w;
    cs_err err = {0};
    int rc = cs_approx_weights_compute(&spec, interpolate, n, PyArray_DATA(T), TN, H, &w, &err);
    Py_DECREF(T);
    if (rc) return cs_py_raise(&err);
    /* Return W as (deg+1, 2, CS_MAXHIST): [m, 0, j] value weights, [m, 1, j] derivative weights. */
    npy_intp d3[3] = {w.deg + 1, 2, CS_MAXHIST};
    PyObject *W = PyArray_SimpleNew(3, d3, NPY_DOUBLE);
    if (!W) return NULL;
    memcpy(PyArray_DATA((PyArrayObject *)W), w.W, sizeof(double) * (w.deg + 1) * CS_APPROX_NV);
    return Py_BuildValue("(Nii)", W, w.deg, w.npts);
}

PyMethodDef cs_py_coupling_methods[] = {
    {"approx_weights", py_approx_weights, METH_VARARGS,
     "approx_weights(kind, k, interpolate, T, TN, H) -> (W[deg+1, 2, MAXHIST], deg, npts).\n"
     "Polynomial p(s) = sum_m c_m s^m, s = (t-TN)/H, with c_m = W[m,0,:] @ values + W[m,1,:] @ derivatives of the\n"
     "samples at T (newest first)."},
    {NULL, NULL, 0, NULL},
};
