/* Bindings for csrc/analysis (stability and local-error analysis). Argument conversion and error mapping only.
 *
 * Every function takes the coupled-system structure first:
 *     nx, nu, ny      int sequences (sizes of the subsystems)
 *     mask            uint8 array (n_u x n_y), structural non-zeros of L, or None
 *     approx          approximation spec (kind, k, nsp) (coupling/approx.h)
 *     scheme          0 Jacobi, 1 Gauss-Seidel
 *     order           int sequence (stepping order) or None
 *     update          0 consistent (kraft2021 eq. 2.22), 1 simplified: approximated input (busch2016 eq. 19)
 * and packed parameter sets (analysis/companion.h). */
#include "py/pyutil.h"

#include <stdlib.h>

#include "analysis/companion.h"
#include "analysis/growth.h"
#include "analysis/local_error.h"
#include "analysis/rhomap.h"

#define PLAN_FMT "OOOOO&iOi"
#define PLAN_ARGS &onx, &onu, &ony, &omask, cs_py_approx_spec, &spec, &scheme, &oorder, &update
#define PLAN_DECL PyObject *onx, *onu, *ony, *omask, *oorder; cs_approx_spec spec; int scheme, update

static PyArrayObject *int_array(PyObject *o, const char *name) {
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_INT, 1, 1, NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST);
    if (!a) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: expected a 1-D sequence of ints", name);
    }
    return a;
}

/* Build a plan from the structure arguments; NULL with a Python exception set on failure. */
static cs_amp_plan *make_plan(PyObject *onx, PyObject *onu, PyObject *ony, PyObject *omask, cs_approx_spec spec,
                              int scheme, PyObject *oorder, int update) {
    cs_amp_plan *plan = NULL;
    PyArrayObject *nx = int_array(onx, "nx"), *nu = NULL, *ny = NULL, *mask = NULL, *order = NULL;
    if (!nx) return NULL;
    if (!(nu = int_array(onu, "nu")) || !(ny = int_array(ony, "ny"))) goto done;
    int nsub = (int)PyArray_DIM(nx, 0);
    if (PyArray_DIM(nu, 0) != nsub || PyArray_DIM(ny, 0) != nsub) {
        PyErr_SetString(PyExc_ValueError, "nx, nu, ny: must have one entry per subsystem");
        goto done;
    }
    long nut = 0, nyt = 0;
    for (int i = 0; i < nsub; i++) {
        nut += ((int *)PyArray_DATA(nu))[i];
        nyt += ((int *)PyArray_DATA(ny))[i];
    }
    if (omask != Py_None) {
        mask = (PyArrayObject *)PyArray_FROMANY(omask, NPY_UINT8, 2, 2, NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST);
        if (!mask) { PyErr_Clear(); PyErr_SetString(PyExc_TypeError, "mask: expected a 2-D array"); goto done; }
        if (PyArray_DIM(mask, 0) != nut || PyArray_DIM(mask, 1) != nyt) {
            PyErr_Format(PyExc_ValueError, "mask: expected shape (%ld, %ld)", nut, nyt);
            goto done;
        }
    }
    if (oorder != Py_None) {
        if (!(order = int_array(oorder, "order"))) goto done;
        if (PyArray_DIM(order, 0) != nsub) {
            PyErr_Format(PyExc_ValueError, "order: expected %d entries", nsub);
            goto done;
        }
    }
    cs_err err = {0};
    plan = cs_amp_plan_create(nsub, PyArray_DATA(nx), PyArray_DATA(nu), PyArray_DATA(ny),
                              mask ? PyArray_DATA(mask) : NULL, spec, scheme, order ? PyArray_DATA(order) : NULL,
                              update, &err);
    if (!plan) cs_py_raise(&err);
done:
    Py_XDECREF(nx); Py_XDECREF(nu); Py_XDECREF(ny); Py_XDECREF(mask); Py_XDECREF(order);
    return plan;
}

static PyArrayObject *pack_array(PyObject *o, const cs_amp_plan *plan, int ndim) {
    npy_intp d[2] = {-1, (npy_intp)plan->pack_size};
    npy_intp d1[1] = {(npy_intp)plan->pack_size};
    return cs_py_darray(o, ndim == 1 ? "pack" : "packs", ndim, ndim == 1 ? d1 : d, 1);
}

static PyObject *py_amp_info(PyObject *self, PyObject *args) {
    PLAN_DECL;
    if (!PyArg_ParseTuple(args, PLAN_FMT ":amp_info", PLAN_ARGS)) return NULL;
    cs_amp_plan *plan = make_plan(onx, onu, ony, omask, spec, scheme, oorder, update);
    if (!plan) return NULL;
    PyObject *deg = PyList_New(plan->nsub);
    if (deg)
        for (int i = 0; i < plan->nsub; i++) PyList_SET_ITEM(deg, i, PyLong_FromLong(plan->deg[i]));
    PyObject *out = deg ? Py_BuildValue("{s:i,s:i,s:n,s:N}", "depth", plan->depth, "dim", plan->dim, "pack_size",
                                        (Py_ssize_t)plan->pack_size, "deg", deg)
                        : NULL;
    cs_amp_plan_destroy(plan);
    return out;
}

static PyObject *py_amp_matrix(PyObject *self, PyObject *args) {
    PLAN_DECL;
    PyObject *opack;
    double H;
    if (!PyArg_ParseTuple(args, PLAN_FMT "Od:amp_matrix", PLAN_ARGS, &opack, &H)) return NULL;
    cs_amp_plan *plan = make_plan(onx, onu, ony, omask, spec, scheme, oorder, update);
    if (!plan) return NULL;
    PyObject *out = NULL, *Om = NULL, *g = NULL;
    cs_amp_work *w = NULL;
    PyArrayObject *pack = pack_array(opack, plan, 1);
    if (!pack) goto done;
    npy_intp d2[2] = {plan->dim, plan->dim}, d1[1] = {plan->dim};
    Om = PyArray_ZEROS(2, d2, NPY_DOUBLE, 0);
    g = PyArray_ZEROS(1, d1, NPY_DOUBLE, 0);
    w = cs_amp_work_create(plan);
    if (!Om || !g || !w) { if (!PyErr_Occurred()) PyErr_NoMemory(); goto done; }
    cs_err err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = cs_amp_matrix(plan, PyArray_DATA(pack), H, PyArray_DATA((PyArrayObject *)Om), PyArray_DATA((PyArrayObject *)g),
                       w, &err);
    Py_END_ALLOW_THREADS
    if (rc) { cs_py_raise(&err); goto done; }
    out = Py_BuildValue("(OOi)", Om, g, plan->depth);
done:
    Py_XDECREF(Om); Py_XDECREF(g); Py_XDECREF(pack);
    cs_amp_work_destroy(w);
    cs_amp_plan_destroy(plan);
    return out;
}

static PyObject *py_rho_map(PyObject *self, PyObject *args) {
    PLAN_DECL;
    PyObject *opacks, *oH;
    int nthreads;
    if (!PyArg_ParseTuple(args, PLAN_FMT "OOi:rho_map", PLAN_ARGS, &opacks, &oH, &nthreads)) return NULL;
    if (nthreads < 1) return PyErr_Format(PyExc_ValueError, "threads: must be >= 1, got %d", nthreads);
    cs_amp_plan *plan = make_plan(onx, onu, ony, omask, spec, scheme, oorder, update);
    if (!plan) return NULL;
    PyObject *out = NULL, *rho = NULL;
    PyArrayObject *H = NULL, *packs = pack_array(opacks, plan, 2);
    if (!packs) goto done;
    npy_intp dH[1] = {-1};
    if (!(H = cs_py_darray(oH, "H", 1, dH, 1))) goto done;
    long nsys = (long)PyArray_DIM(packs, 0), nH = (long)PyArray_DIM(H, 0);
    if (nsys < 1 || nH < 1) { PyErr_SetString(PyExc_ValueError, "grid: empty parameter grid"); goto done; }
    const double *Hv = PyArray_DATA(H);
    for (long i = 0; i < nH; i++)
        if (!(Hv[i] > 0.0)) { cs_py_errorf(PyExc_ValueError, "H: must be positive, got %g", Hv[i]); goto done; }
    npy_intp d2[2] = {nsys, nH};
    rho = PyArray_ZEROS(2, d2, NPY_DOUBLE, 0);
    if (!rho) goto done;
    cs_err err = {0};
    cs_rhomap_result res = {0};
    int rc;
    CS_PY_RELEASED(rc = cs_rhomap(plan, nsys, PyArray_DATA(packs), nH, Hv, PyArray_DATA((PyArrayObject *)rho),
                                  nthreads, &res, &err));
    if (rc) { cs_py_raise(&err); goto done; }
    out = Py_BuildValue("(Ols)", rho, res.nfail, res.nfail ? res.first.msg : "");
done:
    Py_XDECREF(rho); Py_XDECREF(packs); Py_XDECREF(H);
    cs_amp_plan_destroy(plan);
    return out;
}

static PyObject *py_local_error(PyObject *self, PyObject *args) {
    PLAN_DECL;
    PyObject *opack, *oz0, *oH;
    double tN;
    if (!PyArg_ParseTuple(args, PLAN_FMT "OOdO:local_error", PLAN_ARGS, &opack, &oz0, &tN, &oH)) return NULL;
    cs_amp_plan *plan = make_plan(onx, onu, ony, omask, spec, scheme, oorder, update);
    if (!plan) return NULL;
    PyObject *out = NULL, *eps = NULL, *ex = NULL;
    PyArrayObject *H = NULL, *z0 = NULL, *pack = pack_array(opack, plan, 1);
    npy_intp dz[1] = {plan->nxt}, dH[1] = {-1};
    if (!pack || !(z0 = cs_py_darray(oz0, "x0", 1, dz, 1)) || !(H = cs_py_darray(oH, "H", 1, dH, 1))) goto done;
    long nH = (long)PyArray_DIM(H, 0);
    if (nH < 1) { PyErr_SetString(PyExc_ValueError, "H: empty"); goto done; }
    const double *Hv = PyArray_DATA(H);
    for (long i = 0; i < nH; i++)
        if (!(Hv[i] > 0.0)) { cs_py_errorf(PyExc_ValueError, "H: must be positive, got %g", Hv[i]); goto done; }
    npy_intp d2[2] = {nH, plan->nxt + plan->nyt};
    eps = PyArray_ZEROS(2, d2, NPY_DOUBLE, 0);
    ex = PyArray_ZEROS(2, d2, NPY_DOUBLE, 0);
    if (!eps || !ex) goto done;
    cs_err err = {0};
    int rc;
    CS_PY_RELEASED(rc = cs_local_error(plan, PyArray_DATA(pack), PyArray_DATA(z0), tN, nH, Hv,
                                       PyArray_DATA((PyArrayObject *)eps), PyArray_DATA((PyArrayObject *)ex), &err));
    if (rc) { cs_py_raise(&err); goto done; }
    out = Py_BuildValue("(OOi)", eps, ex, plan->depth);
done:
    Py_XDECREF(eps); Py_XDECREF(ex); Py_XDECREF(pack); Py_XDECREF(z0); Py_XDECREF(H);
    cs_amp_plan_destroy(plan);
    return out;
}

/* growth_worst(t, V, limit, window, floor, rest, growing, min_points) -> None or (column, factor, t_bad, ref, peak):
 * the worst signal of one group under the relative divergence criterion (cosim.metrics checks the arguments;
 * here only what memory safety needs: V has len(t) rows). */
static PyObject *py_growth_worst(PyObject *self, PyObject *args) {
    PyObject *ot, *oV;
    cs_growth_rule rule;
    if (!PyArg_ParseTuple(args, "OOdddddl:growth_worst", &ot, &oV, &rule.limit, &rule.window, &rule.floor, &rule.rest,
                          &rule.growing, &rule.min_points))
        return NULL;
    PyArrayObject *t = (PyArrayObject *)PyArray_FROMANY(ot, NPY_DOUBLE, 1, 1, NPY_ARRAY_IN_ARRAY);
    if (!t) return NULL;
    PyArrayObject *V = (PyArrayObject *)PyArray_FROMANY(oV, NPY_DOUBLE, 2, 2, NPY_ARRAY_ALIGNED);
    if (!V) { Py_DECREF(t); return NULL; }
    PyObject *out = NULL;
    const long n = (long)PyArray_DIM(t, 0);
    const int m = (int)PyArray_DIM(V, 1);
    double *work = NULL;
    if ((long)PyArray_DIM(V, 0) != n) {
        PyErr_Format(PyExc_ValueError, "V: expected %ld rows (one per time point), got %ld", n, (long)PyArray_DIM(V, 0));
        goto done;
    }
    if (!(work = malloc(sizeof(double) * (5 * (size_t)m + 1)))) { PyErr_NoMemory(); goto done; }
    const long rs = (long)(PyArray_STRIDE(V, 0) / (npy_intp)sizeof(double));
    const long cs = (long)(PyArray_STRIDE(V, 1) / (npy_intp)sizeof(double));
    cs_growth_verdict v;
    Py_BEGIN_ALLOW_THREADS
    cs_growth_worst(PyArray_DATA(t), n, PyArray_DATA(V), rs, cs, m, &rule, work, &v);
    Py_END_ALLOW_THREADS
    if (v.column < 0) { Py_INCREF(Py_None); out = Py_None; }
    else out = Py_BuildValue("(idddd)", v.column, v.factor, v.t_bad, v.ref, v.peak);
done:
    free(work);
    Py_DECREF(t); Py_DECREF(V);
    return out;
}

PyMethodDef cs_py_analysis_methods[] = {
    {"growth_worst", py_growth_worst, METH_VARARGS,
     "growth_worst(t, V, limit, window, floor, rest, growing, min_points) -> None or (column, factor, t_bad, ref, "
     "peak): the worst signal of V under the relative divergence criterion (cosim.metrics.divergence)"},
    {"amp_info", py_amp_info, METH_VARARGS,
     "amp_info(nx, nu, ny, mask, (kind, k, nsp), scheme, order, update) -> {depth, dim, pack_size, deg}"},
    {"amp_matrix", py_amp_matrix, METH_VARARGS,
     "amp_matrix(<structure>, pack, H) -> (Omega, g, depth): one macro step X_{N+1} = Omega X_N + g "
     "(busch2016 eq. 23)."},
    {"rho_map", py_rho_map, METH_VARARGS,
     "rho_map(<structure>, packs[nsys, pack_size], H[nH], threads) -> (rho[nsys, nH], nfail, first_error)"},
    {"local_error", py_local_error, METH_VARARGS,
     "local_error(<structure>, pack, x0, tN, H[nH]) -> (eps[nH, nx+ny], exact[nH, nx+ny], depth) (busch2016 eq. 26)"},
    {NULL, NULL, 0, NULL},
};
