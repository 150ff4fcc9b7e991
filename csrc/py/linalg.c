/* Bindings for the linear-algebra kernels (used by tests and by the Python analysis layer). */
#include "py/pyutil.h"

#include <stdlib.h>

#include "linalg/dense.h"
#include "linalg/eig_small.h"
#include "linalg/expm.h"

static PyObject *py_expm(PyObject *self, PyObject *args) {
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "O:expm", &obj)) return NULL;
    PyArrayObject *A = cs_py_square(obj, "A");
    if (!A) return NULL;
    const int n = (int)PyArray_DIM(A, 0);
    double *work = malloc(sizeof(double) * (cs_expm_work_size(n) + (size_t)n * n + 1));
    int *ipiv = malloc(sizeof(int) * (n + 1));
    PyObject *out = NULL;
    cs_err err = {0};
    if (!work || !ipiv) { PyErr_NoMemory(); goto done; }
    double *E = work + cs_expm_work_size(n);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = cs_expm(n, PyArray_DATA(A), E, work, ipiv, &err);
    Py_END_ALLOW_THREADS
    if (rc) cs_py_raise(&err);
    else out = cs_py_mat(n, n, E);
done:
    free(work); free(ipiv); Py_DECREF(A);
    return out;
}

static PyObject *py_poly_propagator(PyObject *self, PyObject *args) {
    PyObject *oA, *oB;
    double H;
    int deg;
    if (!PyArg_ParseTuple(args, "OOdi:poly_propagator", &oA, &oB, &H, &deg)) return NULL;
    if (deg < 0 || deg > 10) return PyErr_Format(PyExc_ValueError, "deg: must be in 0..10, got %d", deg);
    npy_intp dA[2] = {-1, -1};
    PyArrayObject *A = cs_py_darray(oA, "A", 2, dA, 1);
    if (!A) return NULL;
    int nx = (int)PyArray_DIM(A, 0);
    npy_intp dB[2] = {nx, -1};
    PyArrayObject *B = cs_py_darray(oB, "B", 2, dB, 1);
    if (!B) { Py_DECREF(A); return NULL; }
    int nu = (int)PyArray_DIM(B, 1), N = nx + nu * (deg + 1);
    size_t ws = cs_poly_propagator_work_size(nx, nu, deg);
    double *work = malloc(sizeof(double) * (ws + (size_t)nx * nx + (size_t)nx * nu * (deg + 1) + 1));
    int *ipiv = malloc(sizeof(int) * (N + 1));
    PyObject *out = NULL;
    cs_err err = {0};
    if (!work || !ipiv) { PyErr_NoMemory(); goto done; }
    double *Phi = work + ws, *Gam = Phi + (size_t)nx * nx;
    if (cs_poly_propagator(nx, nu, deg, PyArray_DATA(A), PyArray_DATA(B), H, Phi, Gam, work, ipiv, &err)) {
        cs_py_raise(&err);
        goto done;
    }
    npy_intp d3[3] = {deg + 1, nx, nu};
    PyObject *G = PyArray_SimpleNew(3, d3, NPY_DOUBLE);
    if (!G) goto done;
    memcpy(PyArray_DATA((PyArrayObject *)G), Gam, sizeof(double) * nx * nu * (deg + 1));
    out = Py_BuildValue("(NN)", cs_py_mat(nx, nx, Phi), G);
done:
    free(work); free(ipiv); Py_DECREF(A); Py_DECREF(B);
    return out;
}

/* absmax_segments(V, bounds) -> (len(bounds) - 1, m): max |V| per column over the rows [bounds[s], bounds[s+1]).
 * V: any 2-D float64 array (strided views are read in place, no copy); bounds: non-decreasing row indices. */
static PyObject *py_absmax_segments(PyObject *self, PyObject *args) {
    PyObject *oV, *ob;
    if (!PyArg_ParseTuple(args, "OO:absmax_segments", &oV, &ob)) return NULL;
    PyArrayObject *V = (PyArrayObject *)PyArray_FROMANY(oV, NPY_DOUBLE, 2, 2, NPY_ARRAY_ALIGNED);
    if (!V) return NULL;
    PyArrayObject *B = (PyArrayObject *)PyArray_FROMANY(ob, NPY_LONG, 1, 1, NPY_ARRAY_IN_ARRAY);
    if (!B) { Py_DECREF(V); return NULL; }
    const long n = (long)PyArray_DIM(V, 0), nb = (long)PyArray_DIM(B, 0);
    const int m = (int)PyArray_DIM(V, 1);
    const long *b = PyArray_DATA(B);
    PyObject *out = NULL;
    if (nb < 1) {
        PyErr_SetString(PyExc_ValueError, "bounds: need at least one row index");
        goto done;
    }
    for (long g = 0; g < nb; g++)
        if (b[g] < 0 || b[g] > n || (g && b[g] < b[g - 1])) {
            PyErr_Format(PyExc_ValueError, "bounds: must be non-decreasing row indices in 0..%ld, got %ld at %ld", n,
                         b[g], g);
            goto done;
        }
    npy_intp d[2] = {nb - 1, m};
    out = PyArray_SimpleNew(2, d, NPY_DOUBLE);
    if (!out) goto done;
    const long rs = (long)(PyArray_STRIDE(V, 0) / (npy_intp)sizeof(double));
    const long cs = (long)(PyArray_STRIDE(V, 1) / (npy_intp)sizeof(double));
    Py_BEGIN_ALLOW_THREADS
    cs_absmax_segments(n, m, PyArray_DATA(V), rs, cs, b, (int)(nb - 1), PyArray_DATA((PyArrayObject *)out));
    Py_END_ALLOW_THREADS
done:
    Py_DECREF(V); Py_DECREF(B);
    return out;
}

/* eigvals(A, method="auto", maxit=0): method "small" runs only the plain-C kernel (maxit caps its QR sweeps per
 * deflation; non-convergence raises ArithmeticError instead of falling back), "lapack" only the LAPACK path. For
 * tests and benchmarks; the library itself always goes through cs_eigvals ("auto"). */
static PyObject *py_eigvals(PyObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"A", "method", "maxit", NULL};
    PyObject *obj;
    const char *method = "auto";
    int maxit = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|si:eigvals", kwlist, &obj, &method, &maxit)) return NULL;
    const int m = !strcmp(method, "auto") ? 0 : !strcmp(method, "small") ? 1 : !strcmp(method, "lapack") ? 2 : -1;
    if (m < 0) return PyErr_Format(PyExc_ValueError, "method: expected 'auto', 'small' or 'lapack', got '%s'", method);
    PyArrayObject *A = cs_py_square(obj, "A");
    if (!A) return NULL;
    const int n = (int)PyArray_DIM(A, 0);
    double *work = malloc(sizeof(double) * (2 * (size_t)n + (size_t)cs_eig_work_size(n) + 1));
    PyObject *out = NULL;
    cs_err err = {0};
    if (!work) { Py_DECREF(A); return PyErr_NoMemory(); }
    double *wr = work, *wi = work + n, *ws = work + 2 * n;
    int rc;
    if (m == 0) rc = cs_eigvals(n, PyArray_DATA(A), wr, wi, ws, &err);
    else if (m == 2) rc = cs_eigvals_lapack(n, PyArray_DATA(A), wr, wi, ws, &err);
    else {
        rc = cs_eigvals_small(n, PyArray_DATA(A), wr, wi, ws, maxit, &err);
        if (rc == CS_EIG_NOCONV) rc = cs_fail(&err, CS_ERR_LINALG, "eigenvalues: QR iteration did not converge");
    }
    if (rc) cs_py_raise(&err);
    else {
        npy_intp d = n;
        out = PyArray_SimpleNew(1, &d, NPY_CDOUBLE);
        if (out) {
            double *z = PyArray_DATA((PyArrayObject *)out);
            for (int i = 0; i < n; i++) { z[2 * i] = wr[i]; z[2 * i + 1] = wi[i]; }
        }
    }
    free(work);
    Py_DECREF(A);
    return out;
}

static PyObject *py_spectral_radius(PyObject *self, PyObject *args) {
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "O:spectral_radius", &obj)) return NULL;
    PyArrayObject *A = cs_py_square(obj, "A");
    if (!A) return NULL;
    const int n = (int)PyArray_DIM(A, 0);
    double *work = malloc(sizeof(double) * (2 * (size_t)n + (size_t)cs_eig_work_size(n) + 1));
    double rho = 0.0;
    PyObject *out = NULL;
    cs_err err = {0};
    if (!work) { Py_DECREF(A); return PyErr_NoMemory(); }
    if (cs_spectral_radius(n, PyArray_DATA(A), &rho, work, &err)) cs_py_raise(&err);
    else out = PyFloat_FromDouble(rho);
    free(work);
    Py_DECREF(A);
    return out;
}

static PyObject *py_solve(PyObject *self, PyObject *args) {
    PyObject *oA, *oB;
    if (!PyArg_ParseTuple(args, "OO:solve", &oA, &oB)) return NULL;
    npy_intp dA[2] = {-1, -1};
    PyArrayObject *A = cs_py_darray(oA, "A", 2, dA, 1);
    if (!A) return NULL;
    int n = (int)PyArray_DIM(A, 0);
    npy_intp dB[2] = {n, -1};
    PyArrayObject *B = PyArray_DIM(A, 1) == n ? cs_py_darray(oB, "B", 2, dB, 1) : NULL;
    if (!B) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "A: must be square");
        Py_DECREF(A);
        return NULL;
    }
    int nrhs = (int)PyArray_DIM(B, 1);
    PyObject *X = cs_py_mat(n, nrhs, PyArray_DATA(B));
    double *work = malloc(sizeof(double) * ((size_t)n * n + (size_t)n * nrhs + 1));
    int *ipiv = malloc(sizeof(int) * ((size_t)n + 1));
    cs_err err = {0};
    if (!X || !work || !ipiv) { Py_XDECREF(X); X = PyErr_NoMemory(); }
    else if (cs_solve(n, nrhs, PyArray_DATA(A), PyArray_DATA((PyArrayObject *)X), work, ipiv, &err)) {
        Py_DECREF(X);
        X = cs_py_raise(&err);
    }
    free(work); free(ipiv); Py_DECREF(A); Py_DECREF(B);
    return X;
}

PyMethodDef cs_py_linalg_methods[] = {
    {"solve", py_solve, METH_VARARGS, "solve(A, B) -> A^{-1} B (partial-pivoting LU; LAPACK dgesv above n = 16)."},
    {"eigvals", (PyCFunction)(void (*)(void))py_eigvals, METH_VARARGS | METH_KEYWORDS,
     "eigvals(A, method='auto', maxit=0) -> complex eigenvalues (balanced Hessenberg QR).\n"
     "method 'small': plain-C kernel only (maxit: QR sweeps per deflation, 0 = default; raises ArithmeticError if\n"
     "it does not converge); 'lapack': LAPACK path only; 'auto': what the library uses."},
    {"spectral_radius", py_spectral_radius, METH_VARARGS, "spectral_radius(A) -> max |lambda_i| (cs_spectral_radius)."},
    {"absmax_segments", py_absmax_segments, METH_VARARGS,
     "absmax_segments(V, bounds) -> max |V| per column over the row segments [bounds[s], bounds[s+1]) (NaN "
     "propagates, empty segments -inf)."},
    {"expm", py_expm, METH_VARARGS, "expm(A) -> exp(A) (balancing, Pade 3..13, scaling and squaring)."},
    {"poly_propagator", py_poly_propagator, METH_VARARGS,
     "poly_propagator(A, B, H, deg) -> (Phi, Gam[deg+1, nx, nu]): exact step of x' = Ax + Bu with polynomial u."},
    {NULL, NULL, 0, NULL},
};
