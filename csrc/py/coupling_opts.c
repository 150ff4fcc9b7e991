/* See py/coupling_opts.h. */
#include "py/coupling_opts.h"

#include <string.h>

static int get_double(PyObject *d, const char *key, double *out) {
    PyObject *v = PyDict_GetItemString(d, key);
    if (!v) { PyErr_Format(PyExc_TypeError, "coupling options: missing %s", key); return -1; }
    *out = PyFloat_AsDouble(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

static int get_int(PyObject *d, const char *key, int *out) {
    PyObject *v = PyDict_GetItemString(d, key);
    if (!v) { PyErr_Format(PyExc_TypeError, "coupling options: missing %s", key); return -1; }
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (x < -2147483647L || x > 2147483647L) { PyErr_Format(PyExc_OverflowError, "%s: out of range", key); return -1; }
    *out = (int)x;
    return 0;
}

static int get_array(PyObject *d, const char *key, PyArrayObject **slot, const double **out) {
    PyObject *v = PyDict_GetItemString(d, key);
    *out = NULL;
    if (!v || v == Py_None) return 0;
    npy_intp dims[1] = {-1};
    *slot = cs_py_darray(v, key, 1, dims, 1);
    if (!*slot) return -1;
    *out = PyArray_DATA(*slot);
    return 0;
}

int cs_py_coupling_opts_read(PyObject *opts, cs_run_config *cfg, cs_py_coupling_opts *o) {
    memset(o, 0, sizeof *o);
    PyObject *d = PyDict_GetItemString(opts, "coupling");
    cfg->coupling_kind = CS_COUPLING_SIGNAL;
    if (!d || d == Py_None) return 0;
    if (!PyDict_Check(d)) { PyErr_SetString(PyExc_TypeError, "coupling options: expected a dict"); return -1; }
    int kind;
    if (get_int(d, "kind", &kind)) return -1;
    if (kind == CS_COUPLING_NEPCE) {
        if (get_double(d, "K", &o->nepce.K) || get_double(d, "tau", &o->nepce.tau)) return -1;
        cfg->nepce = &o->nepce;
    } else if (kind == CS_COUPLING_PRESTEP) {
        cs_prestep_spec *s = &o->prestep;
        double logcap;
        if (get_int(d, "variant", &s->variant) || get_int(d, "ij_source", &s->ij_source) ||
            get_int(d, "modified", &s->modified) || get_int(d, "hold", &s->hold) ||
            get_int(d, "sbc_foh", &s->sbc_foh) || get_int(d, "use_ede", &s->use_ede) ||
            get_int(d, "ede_exact", &s->ede_exact) || get_int(d, "ede_steps", &s->ede_steps) ||
            get_int(d, "extrap_exact", &s->extrap_exact) || get_int(d, "extrap_steps", &s->extrap_steps) ||
            get_int(d, "dsm_steps", &s->dsm_steps) || get_double(d, "time_learning", &s->time_learning) ||
            get_double(d, "time_switch", &s->time_switch) || get_double(d, "th_sbc", &s->th_sbc) ||
            get_double(d, "th_mod", &s->th_mod) || get_double(d, "rls_lambda", &s->rls_lambda) ||
            get_double(d, "rls_P0", &s->rls_P0) || get_double(d, "rtol", &s->rtol) ||
            get_double(d, "log_capacity", &logcap))
            return -1;
        s->log_capacity = logcap > 0 && logcap < 1e12 ? (long)logcap : 0;
        if (get_array(d, "Sy", &o->arrays[0], &s->Sy) || get_array(d, "Su", &o->arrays[1], &s->Su) ||
            get_array(d, "Sd", &o->arrays[2], &s->Sd) || get_array(d, "a0", &o->arrays[3], &s->rls_a0) ||
            get_array(d, "b0", &o->arrays[4], &s->rls_b0))
            return -1;
        /* RLS orders (optional keys, default 1) */
        s->rls_na = s->rls_nb = 1;
        if (PyDict_GetItemString(d, "rls_na") && (get_int(d, "rls_na", &s->rls_na) || get_int(d, "rls_nb", &s->rls_nb)))
            return -1;
        /* MOESP-window IJs (optional keys): per unit (window, block_rows, order, method), threshold, refresh */
        if (get_array(d, "moesp_cfg", &o->arrays[5], &s->moesp_cfg)) return -1;
        if (PyDict_GetItemString(d, "moesp_threshold") && (get_double(d, "moesp_threshold", &s->moesp_threshold) ||
                                                           get_int(d, "moesp_refresh", &s->moesp_refresh)))
            return -1;
        /* intermediate-value correction (2.58-2.60; optional key, default off) */
        if (PyDict_GetItemString(d, "intermediate_correction") &&
            get_int(d, "intermediate_correction", &s->intermediate_correction))
            return -1;
        cfg->prestep = s;
    } else if (kind != CS_COUPLING_SIGNAL) {
        PyErr_Format(PyExc_ValueError, "coupling: unknown coupling kind %d", kind);
        return -1;
    }
    cfg->coupling_kind = kind;
    return 0;
}

void cs_py_coupling_opts_free(cs_py_coupling_opts *o) {
    for (int q = 0; q < 6; q++) Py_XDECREF(o->arrays[q]);
    memset(o, 0, sizeof *o);
}

static PyObject *imat(npy_intp m, npy_intp n, const int *src) {
    npy_intp d[2] = {m, n};
    PyObject *a = PyArray_SimpleNew(2, d, NPY_INT32);
    if (a && (m * n) > 0) memcpy(PyArray_DATA((PyArrayObject *)a), src, sizeof(int) * (size_t)(m * n));
    return a;
}

PyObject *cs_py_coupling_log(const cs_run *run, int kind) {
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
