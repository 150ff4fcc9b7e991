/* See py/coupling_opts.h. */
#include "py/coupling_opts.h"

#include <string.h>

#include "coupling/nepce.h"
#include "coupling/prestep.h"

static PyObject *imat(npy_intp m, npy_intp n, const int *src) {
    npy_intp d[2] = {m, n};
    PyObject *a = PyArray_SimpleNew(2, d, NPY_INT32);
    if (a && (m * n) > 0) memcpy(PyArray_DATA((PyArrayObject *)a), src, sizeof(int) * (size_t)(m * n));
    return a;
}

PyObject *cs_py_coupling_log(const cs_run *run, const cs_kind *chosen) {
    const cs_capability *couplings = cs_registry_capability("coupling");
    const int kind = chosen ? (int)(chosen - couplings->kinds) : CS_COUPLING_SIGNAL;
    cs_err err = {0};
    if (kind == CS_COUPLING_NEPCE) {
        long traced = 0, fallback = 0;
        if (cs_nepce_counts(run->coupling, &traced, &fallback, &err)) return cs_py_raise(&err);
        return Py_BuildValue("{s:l,s:l}", "traced_steps", traced, "macro_point_steps", fallback);
    }
    if (kind != CS_COUPLING_PRESTEP) Py_RETURN_NONE;
    cs_prestep_log lg;
    if (cs_prestep_get_log(run->coupling, &lg, &err)) return cs_py_raise(&err);
    npy_intp d1[1] = {lg.n};
    PyObject *ph = PyArray_SimpleNew(1, d1, NPY_UINT8);
    if (ph && lg.n) memcpy(PyArray_DATA((PyArrayObject *)ph), lg.phase, (size_t)lg.n);
    PyObject *eps = cs_py_vec(lg.n, lg.eps);
    PyObject *par = cs_py_mat(lg.n, lg.nparams, lg.params);
    PyObject *del = cs_py_mat(lg.n, lg.ny, lg.delta);
    PyObject *u = cs_py_mat(lg.n, lg.nu, lg.u);
    PyObject *rk = imat(lg.n, lg.nsub, lg.rank);
    if (!ph || !eps || !par || !del || !u || !rk) {
        Py_XDECREF(ph); Py_XDECREF(eps); Py_XDECREF(par); Py_XDECREF(del); Py_XDECREF(u); Py_XDECREF(rk);
        return NULL;
    }
    PyObject *out = Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N}", "phase", ph, "eps_si", eps, "params", par, "delta",
                                  del, "u", u, "rank", rk);
    if (out && lg.eps_cor) {
        /* intermediate-value correction: eps_cor per step and the trace / macro-point fallback counts */
        PyObject *ec = cs_py_mat(lg.n, lg.nu, lg.eps_cor);
        PyObject *tc = PyLong_FromLong(lg.traced), *fc = PyLong_FromLong(lg.fallback);
        if (!ec || !tc || !fc || PyDict_SetItemString(out, "eps_cor", ec) ||
            PyDict_SetItemString(out, "traced_steps", tc) || PyDict_SetItemString(out, "macro_point_steps", fc)) {
            Py_XDECREF(ec); Py_XDECREF(tc); Py_XDECREF(fc); Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(ec); Py_DECREF(tc); Py_DECREF(fc);
    }
    return out;
}
