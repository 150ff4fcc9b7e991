/* Binding of the co-simulation engine: converts Python arguments into a cs_run_config (master/setup.h), runs it
 * with the GIL released and hands the records over as NumPy arrays (written in place, no copy). Argument validation
 * with user-facing messages happens in cosim/simulate.py; the checks here guard the C core. */
#include "py/pyutil.h"

#include <stdlib.h>
#include <string.h>

#include "master/setup.h"
#include "py/fmu.h"
#include "py/pymodel.h"
#include "py/specs.h"

/* Python-side state of one run: the user hook, the record arrays, the first exception raised in a callback. */
typedef struct run_ctx {
    PyObject *hook;             /* step_finished(t, n, T, X, Y, U) -> False to stop, or NULL */
    PyObject *arrays[4];        /* t, x, y, u */
    cs_observer *recorder;
    PyObject *exc;              /* exception raised in the hook or by the interrupt check */
} run_ctx;

static void keep_exception(run_ctx *k) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb) PyException_SetTraceback(value, tb);
    if (!k->exc && value) { Py_INCREF(value); k->exc = value; }
    Py_XDECREF(type); Py_XDECREF(value); Py_XDECREF(tb);
}

static int hook_cb(void *ctx, const cs_run_view *v, cs_err *err) {
    run_ctx *k = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = CS_OK;
    long n = cs_recorder_count(k->recorder);
    PyObject *r = PyObject_CallFunction(k->hook, "dlOOOO", v->t, n, k->arrays[0], k->arrays[1], k->arrays[2],
                                        k->arrays[3]);
    if (!r) {
        keep_exception(k);
        rc = cs_fail(err, CS_ERR_CALLBACK, "step_finished raised an exception at t = %.10g", v->t);
    } else {
        if (r != Py_None) {
            int truth = PyObject_IsTrue(r);
            if (truth < 0) {
                keep_exception(k);
                rc = cs_fail(err, CS_ERR_CALLBACK, "step_finished returned a value without truth value");
            } else if (!truth) {
                rc = cs_fail(err, CS_STOPPED, "stopped by step_finished at t = %.10g", v->t);
            }
        }
        Py_DECREF(r);
    }
    PyGILState_Release(g);
    return rc;
}

static int interrupt_cb(void *ctx) {
    run_ctx *k = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = PyErr_CheckSignals();
    if (rc < 0) keep_exception(k);
    PyGILState_Release(g);
    return rc < 0;
}

static PyObject *opt(PyObject *d, const char *key) {
    PyObject *v = PyDict_GetItemString(d, key);
    if (!v) PyErr_Format(PyExc_TypeError, "run options: missing %s", key);
    return v;
}
static int opt_int(PyObject *d, const char *key, int *out) {
    PyObject *v = opt(d, key);
    if (!v) return -1;
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (x < -2147483647L || x > 2147483647L) { PyErr_Format(PyExc_OverflowError, "%s: out of range", key); return -1; }
    *out = (int)x;
    return 0;
}
static int opt_long(PyObject *d, const char *key, long *out) {
    PyObject *v = opt(d, key);
    if (!v) return -1;
    *out = PyLong_AsLong(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}
static int opt_double(PyObject *d, const char *key, double *out) {
    PyObject *v = opt(d, key);
    if (!v) return -1;
    *out = PyFloat_AsDouble(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* int64 array -> malloc'ed int array (NULL + exception on failure); *n gets the length. */
static int *int_array(PyObject *o, const char *name, npy_intp *n) {
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_INT64, 1, 1, NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST);
    if (!a) return NULL;
    *n = PyArray_DIM(a, 0);
    int *out = malloc(sizeof(int) * (size_t)(*n + 1));
    if (!out) { Py_DECREF(a); PyErr_NoMemory(); return NULL; }
    for (npy_intp k = 0; k < *n; k++) {
        long long v = ((long long *)PyArray_DATA(a))[k];
        if (v < 0 || v > 2147483647LL) {
            free(out); Py_DECREF(a);
            PyErr_Format(PyExc_ValueError, "%s: index %lld out of range", name, v);
            return NULL;
        }
        out[k] = (int)v;
    }
    Py_DECREF(a);
    return out;
}

static PyObject *stats_list(const cs_run *run) {
    PyObject *lst = PyList_New(run->nunits);
    if (!lst) return NULL;
    for (int i = 0; i < run->nunits; i++) {
        cs_unit_stats s;
        cs_unit_get_stats(run->units[i], &s);
        PyObject *d = Py_BuildValue("{s:l,s:l,s:l,s:l,s:l,s:l}", "steps", s.steps, "failures", s.failures,
                                    "jac_evals", s.jac_evals, "restarts", s.restarts, "rhs_calls", s.rhs_calls,
                                    "output_calls", s.output_calls);
        if (d && run->units[i]->timing) {
            PyObject *w = PyFloat_FromDouble(s.wall);
            if (!w || PyDict_SetItemString(d, "wall_time", w)) { Py_CLEAR(d); }
            Py_XDECREF(w);
        }
        if (!d) { Py_DECREF(lst); return NULL; }
        PyList_SET_ITEM(lst, i, d);
    }
    return lst;
}

/* The first n rows of a record array (a view; the array was sized for the whole run). */
static PyObject *rows(PyObject *arr, long n) {
    if (PyArray_DIM((PyArrayObject *)arr, 0) == n) { Py_INCREF(arr); return arr; }
    return PySequence_GetSlice(arr, 0, n);
}

/* run(models, solvers, x0, conn_in, conn_out, conn_gain, r, opts: dict, monolithic) -> dict */
static PyObject *py_run(PyObject *self, PyObject *args) {
    PyObject *omodels, *osolvers, *ox0, *oci, *oco, *ocg, *or_, *opts;
    int monolithic = 0;
    if (!PyArg_ParseTuple(args, "O!O!OOOOOO!p:run", &PyList_Type, &omodels, &PyList_Type, &osolvers, &ox0, &oci, &oco,
                          &ocg, &or_, &PyDict_Type, &opts, &monolithic))
        return NULL;
    int n = (int)PyList_GET_SIZE(omodels);
    if (n < 1) return PyErr_Format(PyExc_ValueError, "subsystems: need at least one");
    int nsolvers = monolithic ? 1 : n;
    if (PyList_GET_SIZE(osolvers) != nsolvers) return PyErr_Format(PyExc_ValueError, "solver: one spec per unit expected");

    cs_run_config cfg;
    memset(&cfg, 0, sizeof cfg);
    run_ctx k;
    memset(&k, 0, sizeof k);
    cs_run *run = NULL;
    cs_model **models = calloc((size_t)n, sizeof(cs_model *));
    cs_solver_opts *solvers = calloc((size_t)nsolvers, sizeof(cs_solver_opts));
    PyArrayObject *x0 = NULL, *cg = NULL, *r = NULL, *grid = NULL, *tout = NULL;
    int *cin = NULL, *cout = NULL, *order = NULL;
    long *reject = NULL;
    PyObject *out = NULL, *oorder, *ogrid, *oreject, *otout, *cause = NULL;
    cs_err err = {0};
    int models_given = 0;
    cs_unit **units = NULL;     /* FMU subsystems: prebuilt units (cfg.units) */
    if (!models || !solvers) { PyErr_NoMemory(); goto done; }
    for (int i = 0; i < n; i++)
        if (!cs_py_is_fmu_spec(PyList_GET_ITEM(omodels, i)) && !(models[i] = cs_py_model_from_spec(PyList_GET_ITEM(omodels, i), i))) goto done;
    for (int i = 0; i < nsolvers; i++)
        if (cs_py_solver_from_spec(PyList_GET_ITEM(osolvers, i), &solvers[i])) goto done;
    for (int i = 0; i < n; i++) {
        if (!cs_py_is_fmu_spec(PyList_GET_ITEM(omodels, i))) continue;
        double ft0;
        if (monolithic) { PyErr_SetString(PyExc_ValueError, "system: the monolithic reference is not available with FMU subsystems"); goto done; }
        if (!units && !(units = calloc((size_t)n, sizeof(cs_unit *)))) { PyErr_NoMemory(); goto done; }
        if (opt_double(opts, "t0", &ft0) ||
            !(units[i] = cs_py_fmu_unit_from_spec(PyList_GET_ITEM(omodels, i), &solvers[i], ft0, i)))
            goto done;
    }
    npy_intp d1[1] = {-1}, nconn = 0, nco = 0, nord = 0;
    if (!(x0 = cs_py_darray(ox0, "x0", 1, d1, 1)) || !(cg = cs_py_darray(ocg, "gain", 1, d1, 1)) ||
        !(r = cs_py_darray(or_, "r", 1, d1, 1)))
        goto done;
    if (!(cin = int_array(oci, "connections", &nconn)) || !(cout = int_array(oco, "connections", &nco))) goto done;
    if (nco != nconn || PyArray_DIM(cg, 0) != nconn) {
        PyErr_SetString(PyExc_ValueError, "connections: index and gain arrays differ in length");
        goto done;
    }
    int nx = 0, nu = 0;
    for (int i = 0; i < n; i++) {
        if (units && units[i]) { nx += units[i]->nx; nu += units[i]->nu; continue; }
        nx += models[i]->nx; nu += models[i]->nu;
    }
    if (PyArray_DIM(x0, 0) != nx || PyArray_DIM(r, 0) != nu) {
        PyErr_Format(PyExc_ValueError, "x0/r: expected %d states and %d inputs in total", nx, nu);
        goto done;
    }
    if (opt_int(opts, "scheme", &cfg.scheme) || opt_int(opts, "approx_kind", &cfg.approx.kind) ||
        opt_int(opts, "approx_k", &cfg.approx.k) || opt_int(opts, "rates_lagged", &cfg.rates_lagged) ||
        opt_int(opts, "update", &cfg.update) || opt_double(opts, "t0", &cfg.t0) ||
        opt_double(opts, "t_end", &cfg.t_end) || opt_double(opts, "H", &cfg.H) ||
        opt_int(opts, "startup", &cfg.startup) || opt_double(opts, "startup_factor", &cfg.startup_factor) ||
        opt_double(opts, "divergence_bound", &cfg.divergence_bound) || opt_int(opts, "timing", &cfg.timing))
        goto done;
    long record_every, hook_every;
    double interrupt_interval, max_bytes;
    if (opt_long(opts, "record_every", &record_every) || opt_long(opts, "step_finished_every", &hook_every) ||
        opt_double(opts, "interrupt_interval", &interrupt_interval) || opt_double(opts, "max_record_bytes", &max_bytes))
        goto done;
    if (!(oorder = opt(opts, "order")) || !(ogrid = opt(opts, "grid")) || !(oreject = opt(opts, "reject")) ||
        !(k.hook = opt(opts, "step_finished")) || !(otout = opt(opts, "t_out")))
        goto done;
    if (otout != Py_None) {
        if (!(tout = cs_py_darray(otout, "t_eval", 1, d1, 1))) goto done;
        cfg.t_out = PyArray_DATA(tout);
        cfg.nout = PyArray_DIM(tout, 0);
    }
    if (k.hook == Py_None) k.hook = NULL;
    else if (!PyCallable_Check(k.hook)) { PyErr_SetString(PyExc_TypeError, "step_finished: must be callable"); goto done; }
    if (oorder != Py_None) {
        if (!(order = int_array(oorder, "order", &nord))) goto done;
        if (nord != n) { PyErr_SetString(PyExc_ValueError, "order: wrong length"); goto done; }
    }
    if (ogrid != Py_None) {
        if (!(grid = cs_py_darray(ogrid, "grid", 1, d1, 1))) goto done;
        cfg.grid = PyArray_DATA(grid);
        cfg.ngrid = PyArray_DIM(grid, 0);
    }
    if (oreject != Py_None) {
        npy_intp nrej = 0;
        int *rj = int_array(oreject, "reject", &nrej);
        if (!rj) goto done;
        reject = malloc(sizeof(long) * (size_t)(nrej + 1));
        if (!reject) { free(rj); PyErr_NoMemory(); goto done; }
        for (npy_intp q = 0; q < nrej; q++) reject[q] = rj[q];
        free(rj);
        cfg.reject = reject;
        cfg.nreject = (int)nrej;
    }
    cfg.nsub = n;
    cfg.models = models;
    cfg.solvers = solvers;
    cfg.nconn = (int)nconn;
    cfg.conn_in = cin;
    cfg.conn_out = cout;
    cfg.conn_gain = PyArray_DATA(cg);
    cfg.r = PyArray_DATA(r);
    cfg.x0 = PyArray_DATA(x0);
    cfg.order = order;
    cfg.monolithic = monolithic;
    cfg.units = units;
    models_given = 1; /* cs_run_create owns the models from here on */
    if (cs_run_create(&cfg, &run, &err)) { cs_py_raise(&err); goto done; }

    long cap = cfg.nout > 0 ? cfg.nout : cs_run_capacity(run);
    if (!cfg.nout && record_every > 1 && cap > 0) cap = (cap - 1) / record_every + 2;
    double bytes = (double)cap * (1.0 + run->nx + run->ny + run->nu) * sizeof(double);
    if (cap < 0 || bytes > max_bytes) {
        PyErr_Format(PyExc_MemoryError,
                     "t_end/H: recording all %.3g points of this run needs %.3g GB (limit %.3g GB): record on a "
                     "coarser grid (output_interval=...) or use a coarser H", (double)cap, bytes / 1e9, max_bytes / 1e9);
        goto done;
    }
    npy_intp dt[1] = {cap}, dx[2] = {cap, run->nx}, dy[2] = {cap, run->ny}, du[2] = {cap, run->nu};
    if (!(k.arrays[0] = PyArray_SimpleNew(1, dt, NPY_DOUBLE)) || !(k.arrays[1] = PyArray_SimpleNew(2, dx, NPY_DOUBLE)) ||
        !(k.arrays[2] = PyArray_SimpleNew(2, dy, NPY_DOUBLE)) || !(k.arrays[3] = PyArray_SimpleNew(2, du, NPY_DOUBLE)))
        goto done;
    cs_observer *o;
    double *bt = PyArray_DATA((PyArrayObject *)k.arrays[0]), *bx = PyArray_DATA((PyArrayObject *)k.arrays[1]),
           *by = PyArray_DATA((PyArrayObject *)k.arrays[2]), *bu = PyArray_DATA((PyArrayObject *)k.arrays[3]);
    if ((cfg.nout > 0 ? cs_dense_recorder_create(cap, bt, bx, by, bu, &o, &err)
                      : cs_recorder_create(cap, bt, bx, by, bu, record_every, &o, &err)) ||
        cs_run_add_observer(run, o, &err)) {
        cs_py_raise(&err);
        goto done;
    }
    k.recorder = o;
    if (k.hook && (cs_hook_observer_create(hook_cb, &k, hook_every, &o, &err) || cs_run_add_observer(run, o, &err))) {
        cs_py_raise(&err);
        goto done;
    }
    if (interrupt_interval > 0 &&
        (cs_interrupt_observer_create(interrupt_cb, &k, interrupt_interval, &o, &err) || cs_run_add_observer(run, o, &err))) {
        cs_py_raise(&err);
        goto done;
    }

    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = cs_run_execute(run, &err);
    Py_END_ALLOW_THREADS

    /* Exceptions from Python callbacks: KeyboardInterrupt and SystemExit propagate as themselves; any other becomes
     * the __cause__ of the SolverError raised in Python. */
    cause = k.exc;
    k.exc = NULL;
    for (int i = 0; i < n && !cause; i++) cause = cs_py_model_take_exception(run->models[i]);
    if (cause && !PyObject_IsInstance(cause, PyExc_Exception)) {
        PyErr_SetObject((PyObject *)Py_TYPE(cause), cause);
        goto done;
    }
    if (rc == CS_ERR_INTERRUPTED) { /* a check saw the signal, but the handler did not raise: say so */
        PyErr_SetString(PyExc_KeyboardInterrupt, err.msg);
        goto done;
    }
    long nrec = cs_recorder_count(k.recorder);
    PyObject *stats = stats_list(run);
    const char *status = rc == CS_OK ? "" : rc == CS_STOPPED ? "stopped" : "error";
    out = Py_BuildValue("{s:N,s:N,s:N,s:N,s:i,s:s,s:s,s:l,s:l,s:l,s:N,s:O}", "t", rows(k.arrays[0], nrec), "x",
                        rows(k.arrays[1], nrec), "y", rows(k.arrays[2], nrec), "u", rows(k.arrays[3], nrec),
                        "status", rc, "state", status, "message", rc ? err.msg : "", "macro_steps",
                        cs_algorithm_steps(run->alg), "rejected_steps", cs_algorithm_rejected(run->alg),
                        "newton_iterations", run->net.newton_iterations,
                        "stats", stats ? stats : (Py_INCREF(Py_None), Py_None), "cause", cause ? cause : Py_None);
done:
    Py_XDECREF(cause);
    Py_XDECREF(k.exc);
    for (int q = 0; q < 4; q++) Py_XDECREF(k.arrays[q]);
    if (run) cs_run_destroy(run);
    else if (!models_given && models) {
        for (int i = 0; i < n; i++) cs_model_free(models[i]);
    }
    if (!models_given && units)
        for (int i = 0; i < n; i++) cs_unit_destroy(units[i]);
    free(units);
    free(models); free(solvers); free(cin); free(cout); free(order); free(reject);
    Py_XDECREF(x0); Py_XDECREF(cg); Py_XDECREF(r); Py_XDECREF(grid); Py_XDECREF(tout);
    return out;
}

PyMethodDef cs_py_engine_methods[] = {
    {"run", py_run, METH_VARARGS,
     "run(models, solvers, x0, conn_in, conn_out, conn_gain, r, opts, monolithic) -> dict of results.\n"
     "Low-level entry of cosim.simulate / cosim.simulate_monolithic."},
    {NULL, NULL, 0, NULL},
};
