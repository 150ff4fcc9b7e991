/* Bindings: balance correction and ECCO options of a run, their records, and the balance kernels (A7). */
#include "py/energy.h"

#include <stdlib.h>
#include <string.h>

#include "master/series.h"

int cs_py_energy_options(PyObject *opts, int nu, cs_run_config *cfg, cs_py_energy *e) {
    memset(e, 0, sizeof *e);
    PyObject *b = PyDict_GetItemString(opts, "balance");
    if (b && b != Py_None) {
        const cs_kind *k = cs_registry_capability("balance")->kinds[0];
        if (cs_py_params_read(b, "balance", k->params, k->nparams, &e->balance, &e->keep)) return -1;
        cfg->balance = &e->balance;
        PyObject *ocorr = PyDict_GetItemString(opts, "balance_corrected");
        if (ocorr && ocorr != Py_None) {
            npy_intp n = 0;
            int *flags = cs_py_int_vector(ocorr, "connections", 0, &n);
            if (!flags) return -1;
            if (n != nu) { free(flags); PyErr_SetString(PyExc_ValueError, "connections: one flag per input"); return -1; }
            e->corrected = calloc((size_t)nu + 1, 1);
            if (!e->corrected) { free(flags); PyErr_NoMemory(); return -1; }
            for (int a = 0; a < nu; a++) e->corrected[a] = flags[a] != 0;
            free(flags);
            cfg->balance_corrected = e->corrected;
        }
    }
    if (cfg->step_control.kind && strcmp(cfg->step_control.kind->name, "ecco") == 0) {
        /* the bond table: nbonds + 1 offsets (the parser stored their count) and 4 signals per dimension */
        cs_ecco_spec *s = (cs_ecco_spec *)cfg->step_control.spec;
        PyObject *osig = PyDict_GetItemString(PyDict_GetItemString(opts, "step_control"), "sig");
        Py_ssize_t nsig = osig ? PyObject_Length(osig) : -1;
        if (nsig < 0) PyErr_Clear();
        if (!s->bond_off || !s->sig || s->nbonds < 2 || nsig != 4 * (Py_ssize_t)s->bond_off[s->nbonds - 1]) {
            PyErr_SetString(PyExc_ValueError, "power_bonds: malformed bond table");
            return -1;
        }
        s->nbonds -= 1;
        e->ecco = s;
    }
    PyObject *sm = PyDict_GetItemString(opts, "smooth");   /* quintic switch smoothing (coupling/smooth.h) */
    if (sm && sm != Py_None) {
        int on = PyObject_IsTrue(sm);
        if (on < 0) return -1;
        cfg->smooth = on;
    }
    return 0;
}

static int series(long cap, int n, const double *src, PyObject **t, PyObject **v, cs_observer **o, cs_run *run) {
    npy_intp dt[1] = {cap}, dv[2] = {cap, n};
    if (!(*t = PyArray_SimpleNew(1, dt, NPY_DOUBLE)) || !(*v = PyArray_SimpleNew(2, dv, NPY_DOUBLE))) return -1;
    cs_err err = {0};
    cs_observer *obs;
    if (cs_series_recorder_create(cap, src, n, PyArray_DATA((PyArrayObject *)*t), PyArray_DATA((PyArrayObject *)*v),
                                  &obs, &err) ||
        cs_run_add_observer(run, obs, &err)) {
        cs_py_raise(&err);
        return -1;
    }
    *o = obs;
    return 0;
}

int cs_py_energy_observers(cs_run *run, long cap, cs_py_energy *e) {
    if (run->balance_cum && series(cap, run->nu, run->balance_cum, &e->bal_t, &e->bal_v, &e->bal_rec, run)) return -1;
    if (e->ecco && run->estimator &&
        series(cap, e->ecco->nbonds, cs_ecco_residuals(run->estimator), &e->ecco_t, &e->ecco_v, &e->ecco_rec, run))
        return -1;
    return 0;
}

static int put(PyObject *out, const char *key, PyObject *arr, long n) {
    PyObject *v;
    if (!arr) { v = Py_None; Py_INCREF(v); }
    else v = PySequence_GetSlice(arr, 0, n);
    if (!v) return -1;
    int rc = PyDict_SetItemString(out, key, v);
    Py_DECREF(v);
    return rc;
}

int cs_py_energy_results(PyObject *out, cs_py_energy *e) {
    long nb = e->bal_rec ? cs_series_count(e->bal_rec) : 0, ne = e->ecco_rec ? cs_series_count(e->ecco_rec) : 0;
    if (put(out, "balance_t", e->bal_t, nb) || put(out, "balance", e->bal_v, nb) || put(out, "ecco_t", e->ecco_t, ne) ||
        put(out, "ecco", e->ecco_v, ne))
        return -1;
    return 0;
}

void cs_py_energy_free(cs_py_energy *e) {
    free(e->corrected);
    cs_py_keep_free(&e->keep);
    Py_XDECREF(e->bal_t); Py_XDECREF(e->bal_v); Py_XDECREF(e->ecco_t); Py_XDECREF(e->ecco_v);
    memset(e, 0, sizeof *e);
}

/* balance_kernel(kernel, M, l) -> coefficients c[0..4] of the kernel shape on the l-th interval (balance.h) */
static PyObject *py_balance_kernel(PyObject *self, PyObject *args) {
    int kernel, M, l;
    if (!PyArg_ParseTuple(args, "iii:balance_kernel", &kernel, &M, &l)) return NULL;
    if (kernel != CS_BALANCE_CONSTANT && kernel != CS_BALANCE_SMOOTH)
        return PyErr_Format(PyExc_ValueError, "kernel: unknown kernel code %d", kernel);
    if (M < 1 || M > CS_BALANCE_MAX_SPREAD) return PyErr_Format(PyExc_ValueError, "spread: must be in 1..4");
    if (l < 0 || l >= M) return PyErr_Format(PyExc_ValueError, "l: must be in 0..M-1");
    double c[5];
    cs_balance_kernel(kernel, M, l, c);
    return cs_py_vec(5, c);
}

PyMethodDef cs_py_energy_methods[] = {
    {"balance_kernel", py_balance_kernel, METH_VARARGS,
     "balance_kernel(kernel, M, l) -> polynomial coefficients (in the interval's scaled time) of the balance "
     "correction kernel on the l-th of M intervals (moshagen.md §2.6)."},
    {NULL, NULL, 0, NULL},
};
