/* Bindings for csrc/coupling (approximation weights; used by tests and cosim.analysis). */
#include "py/pyutil.h"
#include "py/params.h"

#include "coupling/approx.h"
#include "coupling/prestep.h"

#include <stdlib.h>

int cs_py_approx_spec(PyObject *obj, void *out) {
    cs_approx_spec *spec = out;
    if (!PyTuple_Check(obj) || !PyArg_ParseTuple(obj, "iii", &spec->kind, &spec->k, &spec->nsp)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "approximation: expected the spec tuple (kind, k, nsp)");
        return 0;
    }
    return 1;
}

static PyObject *py_approx_weights(PyObject *self, PyObject *args) {
    int interpolate;
    cs_approx_spec spec = {0};
    PyObject *oT;
    double TN, H;
    if (!PyArg_ParseTuple(args, "iipOdd|iid:approx_weights", &spec.kind, &spec.k, &interpolate, &oT, &TN, &H, &spec.nsp,
                          &spec.k2, &spec.omega))
        return NULL;
    npy_intp d[1] = {-1};
    PyArrayObject *T = cs_py_darray(oT, "T", 1, d, 1);
    if (!T) return NULL;
    int n = (int)PyArray_DIM(T, 0);
    if (n < 1 || n > CS_MAXHIST) {
        Py_DECREF(T);
        return PyErr_Format(PyExc_ValueError, "T: need 1..%d sample times, got %d", CS_MAXHIST, n);
    }
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

/* acc_coefficients(kind, k, k2, omega, T, TN, H, data, integral_of, interpolate=0) -> (c[ncol, ny, deg+1], deg):
 * the input polynomials of acc/accRel for every column of data[ncol, ny, 2 * MAXHIST] (values newest first, then
 * derivatives; the coefficients are linear in the data, so the stability analysis passes a basis), as the signal
 * coupling forms them (velocity-level weights, then the positions of integral_of). interpolate: T[0] = TN + H is
 * the source's T_{N+1} (Gauss-Seidel). */
static PyObject *py_acc_coefficients(PyObject *self, PyObject *args) {
    cs_approx_spec spec = {0};
    PyObject *oT, *odata, *oint;
    double TN, H;
    int interp = 0;
    if (!PyArg_ParseTuple(args, "iiidOddOO|p:acc_coefficients", &spec.kind, &spec.k, &spec.k2, &spec.omega, &oT, &TN,
                          &H, &odata, &oint, &interp))
        return NULL;
    if (!cs_approx_is_acc(spec.kind)) return PyErr_Format(PyExc_ValueError, "kind: not acc or acc-rel (%d)", spec.kind);
    npy_intp d1[1] = {-1}, d3[3] = {-1, -1, CS_APPROX_NV}, nint = 0;
    PyArrayObject *T = cs_py_darray(oT, "T", 1, d1, 1);
    if (!T) return NULL;
    PyArrayObject *data = cs_py_darray(odata, "data", 3, d3, 1);
    if (!data) { Py_DECREF(T); return NULL; }
    int *integ = cs_py_int_vector(oint, "integral_of", 0, &nint);
    PyObject *out = NULL;
    const int n = (int)PyArray_DIM(T, 0), ny = (int)PyArray_DIM(data, 1);
    const npy_intp ncol = PyArray_DIM(data, 0);
    const int need = cs_approx_points_needed(&spec) + (interp ? 1 : 0);
    cs_approx_weights w, wacc = {0};
    double ell[CS_MAXDEG + 1] = {0};
    cs_err err = {0};
    int rc = CS_OK;
    if (!integ) goto done;
    if (n < 1 || n > CS_MAXHIST || nint != ny) {
        PyErr_Format(PyExc_ValueError, "T: need 1..%d sample times and integral_of one entry per output (%d), got %d "
                     "and %ld", CS_MAXHIST, ny, n, (long)nint);
        goto done;
    }
    for (int j = 0; j < ny; j++)
        if (integ[j] < -1 || integ[j] >= ny || integ[j] == j || (integ[j] >= 0 && integ[integ[j]] >= 0)) {
            PyErr_Format(PyExc_ValueError, "integral_of: output %d cannot integrate output %d", j, integ[j]);
            goto done;
        }
    const int navail = n < need ? n : need;
    rc = cs_approx_weights_compute(&spec, interp, navail, PyArray_DATA(T), TN, H, &w, &err);
    if (!rc && spec.kind == CS_APPROX_ACC_REL)
        rc = interp ? CS_OK : cs_approx_acc_parts(&spec, navail, PyArray_DATA(T), TN, H, w.deg, &wacc, ell, &err);
    if (rc) { cs_py_raise(&err); goto done; }
    const int deg = spec.kind == CS_APPROX_ACC ? w.deg + 1 : w.deg;
    npy_intp dc[3] = {ncol, ny, deg + 1};
    out = PyArray_ZEROS(3, dc, NPY_DOUBLE, 0);
    double *c = malloc(sizeof(double) * ((size_t)ny * (CS_MAXDEG + 1) + 1));
    if (!out || !c) { free(c); Py_XDECREF(out); out = c ? NULL : PyErr_NoMemory(); goto done; }
    const double *dv = PyArray_DATA(data);
    double *co = PyArray_DATA((PyArrayObject *)out);
    for (npy_intp q = 0; q < ncol; q++) {
        const double *hv = dv + (size_t)q * ny * CS_APPROX_NV;
        memset(c, 0, sizeof(double) * (size_t)ny * (CS_MAXDEG + 1));
        for (int j = 0; j < ny; j++) cs_approx_coefs(&w, hv + (size_t)j * CS_APPROX_NV, c + (size_t)j * (CS_MAXDEG + 1));
        cs_approx_acc_positions(&spec, interp, integ, 0, ny, hv, c, w.deg, H, &wacc, ell);
        for (int j = 0; j < ny; j++)
            memcpy(co + ((size_t)q * ny + j) * (deg + 1), c + (size_t)j * (CS_MAXDEG + 1), sizeof(double) * (deg + 1));
    }
    free(c);
    out = Py_BuildValue("(Ni)", out, deg);
done:
    free(integ);
    Py_DECREF(T);
    Py_DECREF(data);
    return out;
}

/* prestep_phi(Sy, Su, Sd, H, steps) -> (phiA, phiB, phiC + phiD) */
static PyObject *py_prestep_phi(PyObject *self, PyObject *args) {
    PyObject *oy, *ou, *od;
    double H;
    int steps;
    if (!PyArg_ParseTuple(args, "OOOdi:prestep_phi", &oy, &ou, &od, &H, &steps)) return NULL;
    PyArrayObject *Sy = cs_py_square(oy, "dSdy");
    if (!Sy) return NULL;
    npy_intp n = PyArray_DIM(Sy, 0), d2[2] = {n, -1};
    PyArrayObject *Su = cs_py_darray(ou, "dSdu", 2, d2, 1);
    if (!Su) { Py_DECREF(Sy); return NULL; }
    npy_intp d3[2] = {n, PyArray_DIM(Su, 1)};
    PyArrayObject *Sd = cs_py_darray(od, "dSdud", 2, d3, 1);
    if (!Sd) { Py_DECREF(Sy); Py_DECREF(Su); return NULL; }
    int ni = (int)n, mi = (int)d3[1];
    PyObject *out = NULL;
    double *w = malloc(sizeof(double) * (cs_prestep_phi_work_size(ni, mi) + 2 * (size_t)ni * ni + 2 * (size_t)ni * mi));
    int *ipiv = malloc(sizeof(int) * ((size_t)ni + 1));
    if (!w || !ipiv || !(H > 0) || steps < 0 || ni < 1 || mi < 1) {
        if (!w || !ipiv) PyErr_NoMemory();
        else PyErr_SetString(PyExc_ValueError, "prestep_phi: need H > 0, steps >= 0 and non-empty matrices");
    } else {
        double *phA = w + cs_prestep_phi_work_size(ni, mi), *phB = phA + (size_t)ni * ni, *phCD = phB + (size_t)ni * mi;
        cs_err err = {0};
        if (cs_prestep_phi(ni, mi, PyArray_DATA(Sy), PyArray_DATA(Su), PyArray_DATA(Sd), H, steps, phA, phB, phCD, w,
                           ipiv, &err))
            cs_py_raise(&err);
        else
            out = Py_BuildValue("(NNN)", cs_py_mat(ni, ni, phA), cs_py_mat(ni, mi, phB), cs_py_mat(ni, mi, phCD));
    }
    free(w); free(ipiv);
    Py_DECREF(Sy); Py_DECREF(Su); Py_DECREF(Sd);
    return out;
}

/* prestep_step3(A, rhs, target, rtol) -> (x, rank) */
static PyObject *py_prestep_step3(PyObject *self, PyObject *args) {
    PyObject *oa, *orhs, *ot;
    double rtol;
    if (!PyArg_ParseTuple(args, "OOOd:prestep_step3", &oa, &orhs, &ot, &rtol)) return NULL;
    npy_intp d2[2] = {-1, -1};
    PyArrayObject *A = cs_py_darray(oa, "A", 2, d2, 1);
    if (!A) return NULL;
    npy_intp dn[1] = {PyArray_DIM(A, 0)}, dm[1] = {PyArray_DIM(A, 1)};
    PyArrayObject *rhs = cs_py_darray(orhs, "rhs", 1, dn, 1);
    PyArrayObject *tg = rhs ? cs_py_darray(ot, "target", 1, dm, 1) : NULL;
    PyObject *out = NULL;
    if (tg) {
        int ni = (int)dn[0], mi = (int)dm[0], rank = 0;
        double *w = malloc(sizeof(double) * (cs_prestep_step3_work_size(ni, mi) + (size_t)mi + 1));
        if (!w) PyErr_NoMemory();
        else {
            double *x = w + cs_prestep_step3_work_size(ni, mi);
            cs_err err = {0};
            if (cs_prestep_step3(ni, mi, PyArray_DATA(A), PyArray_DATA(rhs), PyArray_DATA(tg), rtol, x, &rank, w, &err))
                cs_py_raise(&err);
            else out = Py_BuildValue("(Ni)", cs_py_vec(mi, x), rank);
            free(w);
        }
    }
    Py_DECREF(A); Py_XDECREF(rhs); Py_XDECREF(tg);
    return out;
}

/* lagrange_end_basis(z) -> ell: coefficients of s^m of the Lagrange basis polynomial of the node 1 among 1, z[0..deg-1]
 * (cs_lagrange_end_basis, the iterative schemes' end basis) */
static PyObject *py_lagrange_end_basis(PyObject *self, PyObject *args) {
    PyObject *oz;
    if (!PyArg_ParseTuple(args, "O:lagrange_end_basis", &oz)) return NULL;
    npy_intp d[1] = {-1};
    PyArrayObject *z = cs_py_darray(oz, "z", 1, d, 1);
    if (!z) return NULL;
    const int deg = (int)PyArray_DIM(z, 0);
    if (deg > CS_MAXDEG) {
        Py_DECREF(z);
        return PyErr_Format(PyExc_ValueError, "z: at most %d nodes besides 1, got %d", CS_MAXDEG, deg);
    }
    npy_intp dn[1] = {deg + 1};
    PyObject *ell = PyArray_ZEROS(1, dn, NPY_DOUBLE, 0);
    if (ell) cs_lagrange_end_basis(deg, PyArray_DATA(z), PyArray_DATA((PyArrayObject *)ell));
    Py_DECREF(z);
    return ell;
}

PyMethodDef cs_py_coupling_methods[] = {
    {"lagrange_end_basis", py_lagrange_end_basis, METH_VARARGS,
     "lagrange_end_basis(z) -> coefficients of s^m of the Lagrange basis polynomial of the node 1 among 1, z."},
    {"prestep_phi", py_prestep_phi, METH_VARARGS,
     "prestep_phi(dSdy, dSdu, dSdud, H, steps) -> (phiA, phiB, phiC + phiD) of genser eq. 2.44-2.47 (steps = 0: exact)."},
    {"prestep_step3", py_prestep_step3, METH_VARARGS,
     "prestep_step3(A, rhs, target, rtol) -> (x, rank): x = target + pinv(A) (rhs - A target) (genser section 5.3)."},
    {"acc_coefficients", py_acc_coefficients, METH_VARARGS,
     "acc_coefficients(kind, k, k2, omega, T, TN, H, data, integral_of, interpolate=0) -> (c[ncol, ny, deg+1], deg): "
     "acc/accRel\n"
     "input polynomials (coefficients of s^m, s = (t-TN)/H) of every column of data[ncol, ny, 2*MAXHIST]."},
    {"approx_weights", py_approx_weights, METH_VARARGS,
     "approx_weights(kind, k, interpolate, T, TN, H, nsp=0, k2=0, omega=0) -> (W[deg+1, 2, MAXHIST], deg, npts).\n"
     "Polynomial p(s) = sum_m c_m s^m, s = (t-TN)/H, with c_m = W[m,0,:] @ values + W[m,1,:] @ derivatives of the\n"
     "samples at T (newest first)."},
    {NULL, NULL, 0, NULL},
};
