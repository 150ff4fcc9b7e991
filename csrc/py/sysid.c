/* Bindings for csrc/sysid (MOESP, recursive least squares, Gilbert realization, IJ conversions, eps_SI).
 * Argument conversion and error mapping only; the numerics live in csrc/sysid. The objects (MOESP window, RLS) are
 * PyCapsules whose destructor frees the C object; cosim/sysid.py wraps them in classes. An object must not be
 * used from two threads at once (the GIL is released during long calls). */
#include "py/pyutil.h"

#include <math.h>
#include <stdlib.h>

#include "linalg/dense.h"
#include "sysid/gilbert.h"
#include "sysid/ij.h"
#include "sysid/moesp.h"
#include "sysid/qa.h"
#include "sysid/rls.h"

#define CAP_MOESP "cosim.sysid.moesp"
/* Size caps of the bindings (mirrored in cosim/sysid.py): Hankel rows and entries of MOESP, the resampling ratio
 * (cs_ij_resample converts floor(ratio) to int and loops that often). */
#define MOESP_MAX_ROWS 4096
#define MOESP_MAX_HANKEL (1LL << 27)
#define RESAMPLE_MAX_RATIO 1e6
#define CAP_RLS "cosim.sysid.rls"

/* ---------------------------------------------------------------- MOESP */

/* The Hankel sizes in 64-bit arithmetic, before cs_moesp_create forms them in int: rows = r (nu + ny) (twice for
 * PO-MOESP) <= MOESP_MAX_ROWS and rows x W <= MOESP_MAX_HANKEL (W Hankel columns). */
static int moesp_caps(int nu, int ny, int r, long long W, int method) {
    const long long rows = (method == CS_MOESP_PO ? 2LL : 1LL) * r * ((long long)nu + ny);
    if (rows > MOESP_MAX_ROWS) {
        PyErr_Format(PyExc_ValueError, "block_rows: the Hankel matrix would have %lld rows (block_rows = %d, nu = %d, "
                     "ny = %d), more than the cap of %d", rows, r, nu, ny, MOESP_MAX_ROWS);
        return -1;
    }
    if (rows > 0 && W > 0 && rows * W > MOESP_MAX_HANKEL) {
        PyErr_Format(PyExc_ValueError, "window: the Hankel matrix would have %lld x %lld entries, more than the cap "
                     "of %lld", rows, W, (long long)MOESP_MAX_HANKEL);
        return -1;
    }
    return 0;
}

static PyObject *moesp_result_dict(const cs_moesp_result *r) {
    return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:i,s:i,s:O,s:i}",
                         "A", cs_py_mat(r->n, r->n, r->A), "B", cs_py_mat(r->n, r->nu, r->B),
                         "C", cs_py_mat(r->ny, r->n, r->C), "D", cs_py_mat(r->ny, r->nu, r->D),
                         "sv", cs_py_vec(r->nsv, r->sv), "rank_u", r->rank_u, "rank_bd", r->rank_bd,
                         "reliable", r->reliable ? Py_True : Py_False, "ncols", r->ncols);
}

/* The samples u (N x nu) and y (N x ny, the same N) as arrays (nu, ny: -1 accepts any); 0, or -1 with the exception
 * set and nothing to release. */
static int samples(PyObject *ou, PyObject *oy, int nu, int ny, PyArrayObject **U, PyArrayObject **Y) {
    npy_intp du[2] = {-1, nu};
    if (!(*U = cs_py_darray(ou, "u", 2, du, 1))) return -1;
    npy_intp dy[2] = {PyArray_DIM(*U, 0), ny};
    if (!(*Y = cs_py_darray(oy, "y", 2, dy, 1))) { Py_CLEAR(*U); return -1; }
    return 0;
}

static PyObject *py_sysid_moesp(PyObject *self, PyObject *args) {
    PyObject *ou, *oy;
    int r, order, method = CS_MOESP_PLAIN;
    double thr;
    if (!PyArg_ParseTuple(args, "OOiid|i:sysid_moesp", &ou, &oy, &r, &order, &thr, &method)) return NULL;
    PyArrayObject *U, *Y;
    if (samples(ou, oy, -1, -1, &U, &Y)) return NULL;
    int N = (int)PyArray_DIM(U, 0), nu = (int)PyArray_DIM(U, 1), ny = (int)PyArray_DIM(Y, 1);
    if (r < 2) PyErr_Format(PyExc_ValueError, "block_rows: must be >= 2, got %d", r);
    else if (PyArray_DIM(U, 0) > 2147483647) PyErr_SetString(PyExc_ValueError, "u: more than 2**31 - 1 samples");
    else moesp_caps(nu, ny, r, PyArray_DIM(U, 0), method);
    if (PyErr_Occurred()) { Py_DECREF(U); Py_DECREF(Y); return NULL; }
    cs_err err = {0};
    cs_moesp *m = NULL;
    PyObject *out = NULL;
    /* workspace for exactly this record: W = N - span + 1 columns (span = r plain, 2 r PO), at least the rows */
    int span = method == CS_MOESP_PO ? 2 * r : r, rows = (span / r) * r * (nu + ny);
    int rc = cs_moesp_create(nu, ny, r, N - span + 1 > rows ? N - span + 1 : rows, method, &m, &err);
    if (rc == CS_OK) {
        cs_moesp_result res;
        CS_PY_RELEASED(rc = cs_moesp_fit(m, N, PyArray_DATA(U), PyArray_DATA(Y), order, thr, &res, &err));
        if (rc == CS_OK) out = moesp_result_dict(&res);
    }
    if (rc != CS_OK) cs_py_raise(&err);
    cs_moesp_destroy(m);
    Py_DECREF(U); Py_DECREF(Y);
    return out;
}

static void moesp_capsule_free(PyObject *cap) { cs_moesp_destroy(PyCapsule_GetPointer(cap, CAP_MOESP)); }

static cs_moesp *get_moesp(PyObject *cap) { return PyCapsule_GetPointer(cap, CAP_MOESP); }

static PyObject *py_sysid_moesp_window_new(PyObject *self, PyObject *args) {
    int nu, ny, r, W, method = CS_MOESP_PLAIN;
    if (!PyArg_ParseTuple(args, "iiii|i:sysid_moesp_window_new", &nu, &ny, &r, &W, &method)) return NULL;
    /* sizes in 64-bit arithmetic before cs_moesp_create forms them in int (caps as in cosim/sysid.py) */
    if (moesp_caps(nu, ny, r, W, method)) return NULL;
    cs_err err = {0};
    cs_moesp *m = NULL;
    if (cs_moesp_create(nu, ny, r, W, method, &m, &err)) return cs_py_raise(&err);
    PyObject *cap = PyCapsule_New(m, CAP_MOESP, moesp_capsule_free);
    if (!cap) cs_moesp_destroy(m);
    return cap;
}

static PyObject *py_sysid_moesp_window_push(PyObject *self, PyObject *args) {
    PyObject *cap, *ou, *oy;
    int nu, ny, r;
    if (!PyArg_ParseTuple(args, "OOO:sysid_moesp_window_push", &cap, &ou, &oy)) return NULL;
    cs_moesp *m = get_moesp(cap);
    if (!m) return NULL;
    cs_moesp_dims(m, &nu, &ny, &r);
    PyArrayObject *U, *Y;
    if (samples(ou, oy, nu, ny, &U, &Y)) return NULL;
    const double *u = PyArray_DATA(U), *y = PyArray_DATA(Y);
    for (npy_intp k = 0; k < PyArray_DIM(U, 0); k++) cs_moesp_push(m, u + k * nu, y + k * ny);
    Py_DECREF(U); Py_DECREF(Y);
    return PyLong_FromLong(cs_moesp_count(m));
}

static PyObject *py_sysid_moesp_window_fit(PyObject *self, PyObject *args) {
    PyObject *cap;
    int order;
    double thr;
    if (!PyArg_ParseTuple(args, "Oid:sysid_moesp_window_fit", &cap, &order, &thr)) return NULL;
    cs_moesp *m = get_moesp(cap);
    if (!m) return NULL;
    cs_err err = {0};
    cs_moesp_result res;
    int rc;
    CS_PY_RELEASED(rc = cs_moesp_fit_window(m, order, thr, &res, &err));
    if (rc) return cs_py_raise(&err);
    return moesp_result_dict(&res);
}

static PyObject *py_sysid_moesp_window_info(PyObject *self, PyObject *args) {
    PyObject *cap;
    int clear = 0;
    if (!PyArg_ParseTuple(args, "O|p:sysid_moesp_window_info", &cap, &clear)) return NULL;
    cs_moesp *m = get_moesp(cap);
    if (!m) return NULL;
    if (clear) cs_moesp_clear(m);
    return Py_BuildValue("(iii)", cs_moesp_count(m), cs_moesp_min_samples(m), cs_moesp_max_order(m));
}

/* sysid_moesp_window_refresh(cap, every) -> (n_refactor, n_downdate_fail, since); every < 0 leaves it unchanged */
static PyObject *py_sysid_moesp_window_refresh(PyObject *self, PyObject *args) {
    PyObject *cap;
    int every = -1;
    if (!PyArg_ParseTuple(args, "O|i:sysid_moesp_window_refresh", &cap, &every)) return NULL;
    cs_moesp *m = get_moesp(cap);
    if (!m) return NULL;
    if (every >= 0) cs_moesp_set_refresh(m, every);
    long a, b, c;
    cs_moesp_stats(m, &a, &b, &c);
    return Py_BuildValue("(lll)", a, b, c);
}

/* ---------------------------------------------------------------- RLS */

static void rls_capsule_free(PyObject *cap) { cs_rls_destroy(PyCapsule_GetPointer(cap, CAP_RLS)); }
static cs_rls *get_rls(PyObject *cap) { return PyCapsule_GetPointer(cap, CAP_RLS); }

static PyObject *py_sysid_rls_new(PyObject *self, PyObject *args) {
    int ny, nu, na, nb;
    double lam, P0, tmax;
    if (!PyArg_ParseTuple(args, "iiiiddd:sysid_rls_new", &ny, &nu, &na, &nb, &lam, &P0, &tmax)) return NULL;
    cs_err err = {0};
    cs_rls *r = NULL;
    if (cs_rls_create(ny, nu, na, nb, lam, P0, tmax, &r, &err)) return cs_py_raise(&err);
    PyObject *cap = PyCapsule_New(r, CAP_RLS, rls_capsule_free);
    if (!cap) cs_rls_destroy(r);
    return cap;
}

/* sysid_rls_update(cap, u, y) -> a-priori errors (ny,) */
static PyObject *py_sysid_rls_update(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) return PyErr_Format(PyExc_TypeError, "sysid_rls_update: expected 3 arguments");
    cs_rls *r = get_rls(args[0]);
    if (!r) return NULL;
    int ny, nu, na, nb;
    cs_rls_dims(r, &ny, &nu, &na, &nb);
    npy_intp du[1] = {nu}, dy[1] = {ny};
    PyArrayObject *U = cs_py_darray(args[1], "u", 1, du, 1);
    if (!U) return NULL;
    PyArrayObject *Y = cs_py_darray(args[2], "y", 1, dy, 1);
    if (!Y) { Py_DECREF(U); return NULL; }
    npy_intp n = ny;
    PyObject *E = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    cs_err err = {0};
    if (E && cs_rls_update(r, PyArray_DATA(U), PyArray_DATA(Y), PyArray_DATA((PyArrayObject *)E), &err)) {
        Py_CLEAR(E);
        cs_py_raise(&err);
    }
    Py_DECREF(U); Py_DECREF(Y);
    return E;
}

static PyObject *py_sysid_rls_update_many(PyObject *self, PyObject *args) {
    PyObject *cap, *ou, *oy;
    int ny, nu, na, nb;
    if (!PyArg_ParseTuple(args, "OOO:sysid_rls_update_many", &cap, &ou, &oy)) return NULL;
    cs_rls *r = get_rls(cap);
    if (!r) return NULL;
    cs_rls_dims(r, &ny, &nu, &na, &nb);
    PyArrayObject *U, *Y;
    if (samples(ou, oy, nu, ny, &U, &Y)) return NULL;
    if (PyArray_DIM(U, 0) > 2147483647) {
        Py_DECREF(U); Py_DECREF(Y);
        return PyErr_Format(PyExc_ValueError, "u: too many samples for one call");
    }
    int N = (int)PyArray_DIM(U, 0);
    npy_intp de[2] = {N, ny};
    PyObject *E = PyArray_SimpleNew(2, de, NPY_DOUBLE);
    if (E) {
        cs_err err = {0};
        int rc;
        double *e = PyArray_DATA((PyArrayObject *)E);
        CS_PY_RELEASED(rc = cs_rls_update_many(r, N, PyArray_DATA(U), PyArray_DATA(Y), e, &err));
        if (rc) { Py_CLEAR(E); cs_py_raise(&err); }
    }
    Py_DECREF(U); Py_DECREF(Y);
    return E;
}

static PyObject *py_sysid_rls_predict(PyObject *self, PyObject *args) {
    PyObject *cap, *ou;
    int ny, nu, na, nb;
    if (!PyArg_ParseTuple(args, "OO:sysid_rls_predict", &cap, &ou)) return NULL;
    cs_rls *r = get_rls(cap);
    if (!r) return NULL;
    cs_rls_dims(r, &ny, &nu, &na, &nb);
    npy_intp du[1] = {nu};
    PyArrayObject *U = cs_py_darray(ou, "u_next", 1, du, 1);
    if (!U) return NULL;
    npy_intp n = ny;
    PyObject *Yh = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (Yh) cs_rls_predict(r, PyArray_DATA(U), PyArray_DATA((PyArrayObject *)Yh));
    Py_DECREF(U);
    return Yh;
}

/* sysid_rls_get(cap, what): what = "params" -> (a, b) flat, "cov" -> flat, "state" -> flat, "samples" -> int */
static PyObject *py_sysid_rls_get(PyObject *self, PyObject *args) {
    PyObject *cap;
    const char *what;
    int ny, nu, na, nb;
    if (!PyArg_ParseTuple(args, "Os:sysid_rls_get", &cap, &what)) return NULL;
    cs_rls *r = get_rls(cap);
    if (!r) return NULL;
    cs_rls_dims(r, &ny, &nu, &na, &nb);
    int np = cs_rls_nparams(r);
    if (!strcmp(what, "params")) {
        npy_intp da[2] = {ny, na}, db[3] = {ny, nu, nb};
        PyObject *a = PyArray_SimpleNew(2, da, NPY_DOUBLE), *b = PyArray_SimpleNew(3, db, NPY_DOUBLE);
        if (!a || !b) { Py_XDECREF(a); Py_XDECREF(b); return NULL; }
        cs_rls_get_params(r, PyArray_DATA((PyArrayObject *)a), PyArray_DATA((PyArrayObject *)b));
        return Py_BuildValue("(NN)", a, b);
    }
    if (!strcmp(what, "cov")) {
        npy_intp d[3] = {ny, np, np};
        PyObject *P = PyArray_SimpleNew(3, d, NPY_DOUBLE);
        if (P) cs_rls_get_cov(r, PyArray_DATA((PyArrayObject *)P));
        return P;
    }
    if (!strcmp(what, "state")) {
        npy_intp d = cs_rls_state_size(r);
        PyObject *s = PyArray_SimpleNew(1, &d, NPY_DOUBLE);
        if (s) cs_rls_get_state(r, PyArray_DATA((PyArrayObject *)s));
        return s;
    }
    if (!strcmp(what, "samples")) return PyLong_FromLong(cs_rls_samples(r));
    return PyErr_Format(PyExc_ValueError, "what: unknown field '%s'", what);
}

/* sysid_rls_set(cap, what, x[, x2]) */
static PyObject *py_sysid_rls_set(PyObject *self, PyObject *args) {
    PyObject *cap, *o1, *o2 = NULL;
    const char *what;
    int ny, nu, na, nb;
    if (!PyArg_ParseTuple(args, "OsO|O:sysid_rls_set", &cap, &what, &o1, &o2)) return NULL;
    cs_rls *r = get_rls(cap);
    if (!r) return NULL;
    cs_rls_dims(r, &ny, &nu, &na, &nb);
    int np = cs_rls_nparams(r);
    cs_err err = {0};
    if (!strcmp(what, "params")) {
        npy_intp da[2] = {ny, na}, db[3] = {ny, nu, nb};
        PyArrayObject *a = cs_py_darray(o1, "a", 2, da, 1);
        if (!a) return NULL;
        PyArrayObject *b = cs_py_darray(o2, "b", 3, db, 1);
        if (!b) { Py_DECREF(a); return NULL; }
        cs_rls_set_params(r, PyArray_DATA(a), PyArray_DATA(b));
        Py_DECREF(a); Py_DECREF(b);
        Py_RETURN_NONE;
    }
    if (!strcmp(what, "cov")) {
        npy_intp d[3] = {ny, np, np};
        PyArrayObject *P = cs_py_darray(o1, "P", 3, d, 1);
        if (!P) return NULL;
        cs_rls_set_cov(r, PyArray_DATA(P));
        Py_DECREF(P);
        Py_RETURN_NONE;
    }
    if (!strcmp(what, "state")) {
        npy_intp d = cs_rls_state_size(r);
        PyArrayObject *s = cs_py_darray(o1, "state", 1, &d, 1);
        if (!s) return NULL;
        int rc = cs_rls_set_state(r, PyArray_DATA(s), &err);
        Py_DECREF(s);
        if (rc) return cs_py_raise(&err);
        Py_RETURN_NONE;
    }
    if (!strcmp(what, "reset")) {
        double P0 = PyFloat_AsDouble(o1);
        if (PyErr_Occurred()) return NULL;
        if (!(P0 > 0.0 && isfinite(P0))) return cs_py_errorf(PyExc_ValueError, "P0: must be finite and > 0, got %g", P0);
        cs_rls_reset(r, P0);
        Py_RETURN_NONE;
    }
    return PyErr_Format(PyExc_ValueError, "what: unknown field '%s'", what);
}

/* ---------------------------------------------------------------- Gilbert, IJ, QA */

static PyObject *py_sysid_gilbert(PyObject *self, PyObject *args) {
    PyObject *oa, *ob;
    double rtol, ptol;
    if (!PyArg_ParseTuple(args, "OOdd:sysid_gilbert", &oa, &ob, &rtol, &ptol)) return NULL;
    npy_intp da[2] = {-1, -1};
    PyArrayObject *a = cs_py_darray(oa, "a", 2, da, 1);
    if (!a) return NULL;
    npy_intp db[3] = {PyArray_DIM(a, 0), -1, -1};
    PyArrayObject *b = cs_py_darray(ob, "b", 3, db, 1);
    if (!b) { Py_DECREF(a); return NULL; }
    int ny = (int)PyArray_DIM(a, 0), na = (int)PyArray_DIM(a, 1), nu = (int)PyArray_DIM(b, 1),
        nb = (int)PyArray_DIM(b, 2);
    cs_err err = {0};
    cs_gilbert *g = NULL;
    PyObject *out = NULL;
    int rc = cs_gilbert_create(ny, nu, na, nb, &g, &err);
    if (rc == CS_OK) {
        cs_gilbert_result res;
        rc = cs_gilbert_realize(g, PyArray_DATA(a), PyArray_DATA(b), rtol, ptol, &res, &err);
        if (rc == CS_OK)
            out = Py_BuildValue("{s:N,s:N,s:N,s:N,s:O,s:i}", "A", cs_py_mat(res.nx, res.nx, res.A),
                                "B", cs_py_mat(res.nx, nu, res.B), "C", cs_py_mat(ny, res.nx, res.C),
                                "D", cs_py_mat(ny, nu, res.D), "minimal", res.minimal ? Py_True : Py_False,
                                "npoles", res.npoles);
    }
    if (rc) cs_py_raise(&err);
    cs_gilbert_destroy(g);
    Py_DECREF(a); Py_DECREF(b);
    return out;
}

/* Convert the four state-space matrices with consistent sizes (names for the error messages). */
static int get_ss(PyObject *oA, PyObject *oB, PyObject *oC, PyObject *oD, const char *const names[4],
                  PyArrayObject *arr[4], int *nx, int *nu, int *ny) {
    arr[0] = arr[1] = arr[2] = arr[3] = NULL;
    npy_intp dA[2] = {-1, -1};
    if (!(arr[0] = cs_py_darray(oA, names[0], 2, dA, 1))) return -1;
    *nx = (int)PyArray_DIM(arr[0], 0);
    if (PyArray_DIM(arr[0], 1) != *nx) { PyErr_Format(PyExc_ValueError, "%s: must be square", names[0]); return -1; }
    npy_intp dB[2] = {*nx, -1};
    if (!(arr[1] = cs_py_darray(oB, names[1], 2, dB, 1))) return -1;
    *nu = (int)PyArray_DIM(arr[1], 1);
    npy_intp dC[2] = {-1, *nx};
    if (!(arr[2] = cs_py_darray(oC, names[2], 2, dC, 1))) return -1;
    *ny = (int)PyArray_DIM(arr[2], 0);
    npy_intp dD[2] = {*ny, *nu};
    if (!(arr[3] = cs_py_darray(oD, names[3], 2, dD, 1))) return -1;
    return 0;
}

static void release(PyArrayObject **arr, int n) { for (int i = 0; i < n; i++) Py_XDECREF(arr[i]); }

/* The interface Jacobians (Sy, Su^-, Su^+) of a continuous (A, B, C, D) or a discrete state-space model of the given
 * form (PhiA, PhiB, C, D with the previous C_prev, D_prev or None): cs_ij_continuous / cs_ij_discrete. */
static PyObject *ij_convert(int discrete, int form, PyObject *oA, PyObject *oB, PyObject *oC, PyObject *oD,
                            PyObject *oCp, PyObject *oDp, double rtol) {
    static const char *const names_c[4] = {"A", "B", "C", "D"}, *const names_d[4] = {"PhiA", "PhiB", "C", "D"};
    PyArrayObject *arr[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    int nx, nu, ny;
    if (get_ss(oA, oB, oC, oD, discrete ? names_d : names_c, arr, &nx, &nu, &ny)) { release(arr, 4); return NULL; }
    npy_intp dC[2] = {ny, nx}, dD[2] = {ny, nu};
    if (oCp != Py_None && !(arr[4] = cs_py_darray(oCp, "C_prev", 2, dC, 1))) { release(arr, 6); return NULL; }
    if (oDp != Py_None && !(arr[5] = cs_py_darray(oDp, "D_prev", 2, dD, 1))) { release(arr, 6); return NULL; }
    size_t ws = cs_ij_work_size(nx, nu, ny);
    double *w = malloc(sizeof(double) * (ws + (size_t)ny * ny + 2 * (size_t)ny * nu + 1));
    PyObject *out = NULL;
    if (!w) { PyErr_NoMemory(); release(arr, 6); return NULL; }
    double *Sy = w + ws, *Sm = Sy + (size_t)ny * ny, *Sp = Sm + (size_t)ny * nu;
    const double *A = PyArray_DATA(arr[0]), *B = PyArray_DATA(arr[1]), *C = PyArray_DATA(arr[2]),
                 *D = PyArray_DATA(arr[3]);
    cs_err err = {0};
    if (!discrete ? cs_ij_continuous(nx, nu, ny, A, B, C, D, rtol, Sy, Sm, Sp, w, &err)
                 : cs_ij_discrete(form, nx, nu, ny, A, B, C, D, arr[4] ? PyArray_DATA(arr[4]) : C,
                                  arr[5] ? PyArray_DATA(arr[5]) : D, rtol, Sy, Sm, Sp, w, &err))
        cs_py_raise(&err);
    else
        out = Py_BuildValue("(NNN)", cs_py_mat(ny, ny, Sy), cs_py_mat(ny, nu, Sm), cs_py_mat(ny, nu, Sp));
    free(w);
    release(arr, 6);
    return out;
}

static PyObject *py_sysid_ij_continuous(PyObject *self, PyObject *args) {
    PyObject *oA, *oB, *oC, *oD;
    double rtol;
    if (!PyArg_ParseTuple(args, "OOOOd:sysid_ij_continuous", &oA, &oB, &oC, &oD, &rtol)) return NULL;
    return ij_convert(0, 0, oA, oB, oC, oD, Py_None, Py_None, rtol);
}

static PyObject *py_sysid_ij_discrete(PyObject *self, PyObject *args) {
    PyObject *oA, *oB, *oC, *oD, *oCp, *oDp;
    int form;
    double rtol;
    if (!PyArg_ParseTuple(args, "iOOOOOOd:sysid_ij_discrete", &form, &oA, &oB, &oC, &oD, &oCp, &oDp, &rtol))
        return NULL;
    return ij_convert(1, form, oA, oB, oC, oD, oCp, oDp, rtol);
}

static PyObject *py_sysid_discretize(PyObject *self, PyObject *args) {
    PyObject *oA, *oB;
    double dt;
    if (!PyArg_ParseTuple(args, "OOd:sysid_discretize", &oA, &oB, &dt)) return NULL;
    PyArrayObject *A = cs_py_square(oA, "A");
    if (!A) return NULL;
    int nx = (int)PyArray_DIM(A, 0);
    npy_intp dB[2] = {nx, -1};
    PyArrayObject *B = cs_py_darray(oB, "B", 2, dB, 1);
    if (!B) { Py_DECREF(A); return NULL; }
    int nu = (int)PyArray_DIM(B, 1);
    size_t ws = cs_discretize_work_size(nx, nu);
    double *w = malloc(sizeof(double) * (ws + (size_t)nx * nx + (size_t)nx * nu + 1));
    int *ipiv = malloc(sizeof(int) * (size_t)(nx + nu + 1));
    PyObject *out = NULL;
    cs_err err = {0};
    if (!w || !ipiv) PyErr_NoMemory();
    else {
        double *PA = w + ws, *PB = PA + (size_t)nx * nx;
        int rc;
        CS_PY_RELEASED(rc = cs_discretize(nx, nu, PyArray_DATA(A), PyArray_DATA(B), dt, PA, PB, w, ipiv, &err));
        if (rc) cs_py_raise(&err);
        else out = Py_BuildValue("(NN)", cs_py_mat(nx, nx, PA), cs_py_mat(nx, nu, PB));
    }
    free(w); free(ipiv);
    Py_DECREF(A); Py_DECREF(B);
    return out;
}

static PyObject *py_sysid_ij_predict(PyObject *self, PyObject *args) {
    PyObject *oSy, *oSm, *oSp, *oY, *oU;
    if (!PyArg_ParseTuple(args, "OOOOO:sysid_ij_predict", &oSy, &oSm, &oSp, &oY, &oU)) return NULL;
    npy_intp dS[2] = {-1, -1};
    PyArrayObject *arr[5] = {NULL, NULL, NULL, NULL, NULL};
    PyObject *out = NULL;
    if (!(arr[0] = cs_py_darray(oSy, "Sy", 2, dS, 1))) goto done;
    int ny = (int)PyArray_DIM(arr[0], 0);
    if (PyArray_DIM(arr[0], 1) != ny) { PyErr_Format(PyExc_ValueError, "Sy: must be square"); goto done; }
    npy_intp dm[2] = {ny, -1};
    if (!(arr[1] = cs_py_darray(oSm, "Su_minus", 2, dm, 1))) goto done;
    int nu = (int)PyArray_DIM(arr[1], 1);
    npy_intp dp[2] = {ny, nu}, dY[2] = {-1, ny};
    if (!(arr[2] = cs_py_darray(oSp, "Su_plus", 2, dp, 1))) goto done;
    if (!(arr[3] = cs_py_darray(oY, "y", 2, dY, 1))) goto done;
    npy_intp dU[2] = {PyArray_DIM(arr[3], 0), nu};
    if (!(arr[4] = cs_py_darray(oU, "u", 2, dU, 1))) goto done;
    npy_intp K = PyArray_DIM(arr[3], 0), dO[2] = {K, ny};
    out = PyArray_SimpleNew(2, dO, NPY_DOUBLE);
    if (out)
        cs_ij_predict((int)K, ny, nu, PyArray_DATA(arr[0]), PyArray_DATA(arr[1]), PyArray_DATA(arr[2]),
                      PyArray_DATA(arr[3]), PyArray_DATA(arr[4]), PyArray_DATA((PyArrayObject *)out));
done:
    release(arr, 5);
    return out;
}

static PyObject *py_sysid_resample(PyObject *self, PyObject *args) {
    PyObject *oa, *ob;
    double ratio;
    if (!PyArg_ParseTuple(args, "OOd:sysid_resample", &oa, &ob, &ratio)) return NULL;
    if (!(ratio > 0.0 && ratio <= RESAMPLE_MAX_RATIO))
        return cs_py_errorf(PyExc_ValueError, "ratio: must be in (0, %g], got %g", RESAMPLE_MAX_RATIO, ratio);
    npy_intp da[1] = {-1};
    PyArrayObject *a = cs_py_darray(oa, "a", 1, da, 1);
    if (!a) return NULL;
    npy_intp db[2] = {PyArray_DIM(a, 0), -1};
    PyArrayObject *b = cs_py_darray(ob, "b", 2, db, 1);
    if (!b) { Py_DECREF(a); return NULL; }
    int ny = (int)PyArray_DIM(a, 0), nu = (int)PyArray_DIM(b, 1);
    npy_intp d1 = ny, d2[2] = {ny, nu};
    PyObject *at = PyArray_SimpleNew(1, &d1, NPY_DOUBLE), *bt = PyArray_SimpleNew(2, d2, NPY_DOUBLE);
    PyObject *out = NULL;
    if (at && bt) {
        cs_ij_resample(ny, nu, PyArray_DATA(a), PyArray_DATA(b), ratio, PyArray_DATA((PyArrayObject *)at),
                       PyArray_DATA((PyArrayObject *)bt));
        out = Py_BuildValue("(OO)", at, bt);
    }
    Py_XDECREF(at); Py_XDECREF(bt);
    Py_DECREF(a); Py_DECREF(b);
    return out;
}

static PyObject *py_sysid_eps_si(PyObject *self, PyObject *args) {
    PyObject *oY, *oYb;
    double eps;
    if (!PyArg_ParseTuple(args, "OOd:sysid_eps_si", &oY, &oYb, &eps)) return NULL;
    npy_intp dY[2] = {-1, -1};
    PyArrayObject *Y = cs_py_darray(oY, "y", 2, dY, 1);
    if (!Y) return NULL;
    npy_intp dB[2] = {PyArray_DIM(Y, 0), PyArray_DIM(Y, 1)};
    PyArrayObject *Yb = cs_py_darray(oYb, "y_pred", 2, dB, 1);
    if (!Yb) { Py_DECREF(Y); return NULL; }
    npy_intp K = dB[0], n = dB[1];
    PyObject *out = PyArray_SimpleNew(1, &K, NPY_DOUBLE);
    double *w = malloc(sizeof(double) * (size_t)(2 * n + 1));
    if (!w) { Py_XDECREF(out); out = PyErr_NoMemory(); }
    else if (out)
        cs_eps_si_series((int)K, (int)n, PyArray_DATA(Y), PyArray_DATA(Yb), eps, PyArray_DATA((PyArrayObject *)out), w);
    free(w);
    Py_DECREF(Y); Py_DECREF(Yb);
    return out;
}

static PyObject *py_sysid_switch_factor(PyObject *self, PyObject *args) {
    PyObject *ot;
    double ts, tsw;
    if (!PyArg_ParseTuple(args, "Odd:sysid_switch_factor", &ot, &ts, &tsw)) return NULL;
    npy_intp d[1] = {-1};
    PyArrayObject *t = cs_py_darray(ot, "t", 1, d, 1);
    if (!t) return NULL;
    npy_intp n = PyArray_DIM(t, 0);
    PyObject *out = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (out) {
        const double *tp = PyArray_DATA(t);
        double *o = PyArray_DATA((PyArrayObject *)out);
        for (npy_intp k = 0; k < n; k++) o[k] = cs_switch_factor(tp[k], ts, tsw);
    }
    Py_DECREF(t);
    return out;
}

PyMethodDef cs_py_sysid_methods[] = {
    CS_PY_FN(sysid_moesp, "(u, y, r, order, threshold, method=0) -> dict (batch MOESP; method 1: PO-MOESP)."),
    CS_PY_FN(sysid_moesp_window_new, "(nu, ny, r, W) -> capsule."),
    CS_PY_FN(sysid_moesp_window_push, "(cap, U, Y) -> count."),
    CS_PY_FN(sysid_moesp_window_fit, "(cap, order, thr) -> dict."),
    CS_PY_FN(sysid_moesp_window_refresh,
             "(cap[, every]) -> (n_refactor, n_downdate_fail, pushes since the last refactor)."),
    CS_PY_FN(sysid_moesp_window_info, "(cap[, clear]) -> (count, min_samples, max_order)."),
    CS_PY_FN(sysid_rls_new, "(ny, nu, na, nb, lam, P0, trace_max) -> capsule."),
    {"sysid_rls_update", (PyCFunction)(void (*)(void))py_sysid_rls_update, METH_FASTCALL,
     "sysid_rls_update(cap, u, y) -> a-priori errors."},
    CS_PY_FN(sysid_rls_update_many, "(cap, U, Y) -> E."),
    CS_PY_FN(sysid_rls_predict, "(cap, u_next) -> yhat."),
    CS_PY_FN(sysid_rls_get, "(cap, what)."),
    CS_PY_FN(sysid_rls_set, "(cap, what, x[, x2])."),
    CS_PY_FN(sysid_gilbert, "(a, b, rank_tol, pole_tol) -> dict."),
    CS_PY_FN(sysid_ij_continuous, "(A, B, C, D, rtol)."),
    CS_PY_FN(sysid_ij_discrete, "(form, PhiA, PhiB, C, D, Cp, Dp, rtol)."),
    CS_PY_FN(sysid_discretize, "(A, B, dt) -> (PhiA, PhiB)."),
    CS_PY_FN(sysid_ij_predict, "(Sy, Sum, Sup, Y, U) -> Ybar."),
    CS_PY_FN(sysid_resample, "(a, b, ratio) -> (a~, b~)."),
    CS_PY_FN(sysid_eps_si, "(Y, Ybar, eps) -> eps_SI,rel series."),
    CS_PY_FN(sysid_switch_factor, "(t, t_start, t_switch) -> fac_MBC."),
    {NULL, NULL, 0, NULL},
};
