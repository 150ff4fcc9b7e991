/* Binding of the co-simulation engine: converts Python arguments into a cs_run_config (master/setup.h), runs it
 * with the GIL released and hands the records over as NumPy arrays (written in place, no copy). Argument validation
 * with user-facing messages happens in cosim/simulate.py; the checks here guard the C core. */
#include "py/pyutil.h"

#include <stdlib.h>
#include <string.h>

#include "master/setup.h"
#include "py/coupling_opts.h"
#include "py/energy.h"
#include "py/fmu.h"
#include "py/pymodel.h"
#include "py/specs.h"

/* Python-side state of one run: the user hook, the record arrays, the first exception raised in a callback. */
typedef struct run_ctx {
    PyObject *hook;             /* step_finished(t, n, T, X, Y, U) -> False to stop, or NULL */
    PyObject *arrays[4];        /* t, x, y, u */
    cs_observer *recorder;
    PyObject *exc;              /* exception raised in the hook or by the interrupt check */
    int growing;                /* adaptive run: the recorder owns growing buffers (arrays made at the end) */
    int nx, ny, nu;
} run_ctx;

static int *int_array(PyObject *o, const char *name, npy_intp *n);

/* Copy of the first n rows of a growing recorder's buffer (the hook may keep it; the buffer may move). */
static PyObject *rows_copy(const double *b, long n, int w, int two_d) {
    npy_intp d[2] = {n, w};
    PyObject *a = PyArray_SimpleNew(two_d ? 2 : 1, d, NPY_DOUBLE);
    if (a && n > 0) memcpy(PyArray_DATA((PyArrayObject *)a), b, sizeof(double) * (size_t)n * (size_t)(two_d ? w : 1));
    return a;
}

static void free_capsule(PyObject *cap) { free(PyCapsule_GetPointer(cap, "cosim.buffer")); }

/* An array over n rows of a malloc'ed buffer it then owns (freed with the array). */
static PyObject *owned_array(double *b, long n, int w, int two_d) {
    npy_intp d[2] = {n, w};
    PyObject *a = PyArray_SimpleNewFromData(two_d ? 2 : 1, d, NPY_DOUBLE, b);
    if (!a) { free(b); return NULL; }
    PyObject *cap = PyCapsule_New(b, "cosim.buffer", free_capsule);
    if (!cap) { free(b); Py_DECREF(a); return NULL; }
    if (PyArray_SetBaseObject((PyArrayObject *)a, cap) < 0) { Py_DECREF(a); return NULL; }
    return a;
}

/* A C-contiguous view of nd dimensions into block's data at offset (doubles); the view keeps block alive. */
static PyObject *block_view(PyObject *block, npy_intp offset, int nd, npy_intp *dims) {
    double *data = (double *)PyArray_DATA((PyArrayObject *)block) + offset;
    PyObject *v = PyArray_NewFromDescr(&PyArray_Type, PyArray_DescrFromType(NPY_DOUBLE), nd, dims, NULL, data,
                                       NPY_ARRAY_CARRAY, NULL);
    if (!v) return NULL;
    Py_INCREF(block);
    if (PyArray_SetBaseObject((PyArrayObject *)v, block) < 0) { Py_DECREF(v); return NULL; }
    return v;
}

/* The record arrays t (cap), X, Y, U (cap x n) as views into one allocation: one large block is backed by huge
 * pages where NumPy can (>= 4 MB), four separate ones fault in page by page (2 ms of a 1e5-step run of two units). */
static int record_arrays(PyObject *out[4], npy_intp *dt, npy_intp *dx, npy_intp *dy, npy_intp *du) {
    npy_intp n = dt[0] * (1 + dx[1] + dy[1] + du[1]);
    PyObject *block = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (!block) return -1;
    npy_intp off = 0;
    out[0] = block_view(block, off, 1, dt); off += dt[0];
    out[1] = out[0] ? block_view(block, off, 2, dx) : NULL; off += dx[0] * dx[1];
    out[2] = out[1] ? block_view(block, off, 2, dy) : NULL; off += dy[0] * dy[1];
    out[3] = out[2] ? block_view(block, off, 2, du) : NULL;
    Py_DECREF(block);
    return out[3] ? 0 : -1;
}

/* Step-control records as a dict (kraft2021 §19: what the controller decided). */
static PyObject *step_control_dict(const cs_run *run) {
    cs_kraft_records r;
    if (!cs_kraft_control_records(run->controller, &r)) Py_RETURN_NONE;
    PyObject *T = rows_copy(r.T, r.n, 1, 0), *H = rows_copy(r.H, r.n, 1, 0), *eps = rows_copy(r.eps, r.n, 1, 0);
    PyObject *Tr = rows_copy(r.Trej, r.nrej, 1, 0), *Hr = rows_copy(r.Hrej, r.nrej, 1, 0);
    npy_intp d[1] = {r.n};
    PyObject *k = PyArray_SimpleNew(1, d, NPY_INT64);
    if (k) for (long q = 0; q < r.n; q++) ((long long *)PyArray_DATA((PyArrayObject *)k))[q] = r.k[q];
    if (!T || !H || !eps || !Tr || !Hr || !k) {
        Py_XDECREF(T); Py_XDECREF(H); Py_XDECREF(eps); Py_XDECREF(Tr); Py_XDECREF(Hr); Py_XDECREF(k);
        return NULL;
    }
    return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N,s:l,s:i,s:l}", "T", T, "H", H, "k", k, "eps", eps, "T_rejected", Tr,
                         "H_rejected", Hr, "comparative_steps", r.comparative_steps, "h_min_failed", r.hmin_failed,
                         "corrector_failures", r.conv_fail);
}

/* kraft options from the dict built by cosim/simulate.py (None: no step control). */
static int parse_step_control(PyObject *d, cs_kraft_opts *o, PyArrayObject **keep, int **ikeep) {
    memset(o, 0, sizeof *o);
    const char *ints[] = {"estimator", "dead_zone", "order", "k_max", "initial_phase"};
    int *iv[] = {&o->estimator, &o->dead_zone, &o->order, &o->k_max, &o->initial_phase};
    for (int q = 0; q < 5; q++) {
        PyObject *v = PyDict_GetItemString(d, ints[q]);
        if (!v) { PyErr_Format(PyExc_TypeError, "step_control: missing %s", ints[q]); return -1; }
        long x = PyLong_AsLong(v);
        if (x == -1 && PyErr_Occurred()) return -1;
        if (x < -1000 || x > 1000) { PyErr_Format(PyExc_ValueError, "%s: out of range", ints[q]); return -1; }
        *iv[q] = (int)x;
    }
    const char *dbl[] = {"rtol", "safety", "r_min", "r_max", "H_init", "H_min", "H_max"};
    double *dv[] = {&o->rtol, &o->safety, &o->r_min, &o->r_max, &o->H_init, &o->H_min, &o->H_max};
    for (int q = 0; q < 7; q++) {
        PyObject *v = PyDict_GetItemString(d, dbl[q]);
        if (!v) { PyErr_Format(PyExc_TypeError, "step_control: missing %s", dbl[q]); return -1; }
        *dv[q] = PyFloat_AsDouble(v);
        if (*dv[q] == -1.0 && PyErr_Occurred()) return -1;
    }
    const char *ia[] = {"state_index", "state_group", "in_index"};
    npy_intp n[3];
    for (int q = 0; q < 3; q++) {
        PyObject *v = PyDict_GetItemString(d, ia[q]);
        if (!v) { PyErr_Format(PyExc_TypeError, "step_control: missing %s", ia[q]); return -1; }
        if (!(ikeep[q] = int_array(v, "monitor", &n[q]))) return -1;
    }
    npy_intp d1[1] = {-1};
    if (!(keep[0] = cs_py_darray(PyDict_GetItemString(d, "state_atol"), "atol", 1, d1, 1)) ||
        !(keep[1] = cs_py_darray(PyDict_GetItemString(d, "in_atol"), "atol", 1, d1, 1)))
        return -1;
    if (n[0] != n[1] || PyArray_DIM(keep[0], 0) != n[0] || PyArray_DIM(keep[1], 0) != n[2]) {
        PyErr_SetString(PyExc_ValueError, "monitor: index, group and atol arrays differ in length");
        return -1;
    }
    o->nstate = (int)n[0];
    o->state_index = ikeep[0]; o->state_group = ikeep[1]; o->state_atol = PyArray_DATA(keep[0]);
    o->nin = (int)n[2];
    o->in_index = ikeep[2]; o->in_atol = PyArray_DATA(keep[1]);
    return 0;
}

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
    PyObject *r;
    if (k->growing) {
        double *bt, *bx, *by, *bu;
        cs_recorder_buffers(k->recorder, &bt, &bx, &by, &bu);
        PyObject *a0 = rows_copy(bt, n, 1, 0), *a1 = rows_copy(bx, n, k->nx, 1), *a2 = rows_copy(by, n, k->ny, 1),
                 *a3 = rows_copy(bu, n, k->nu, 1);
        r = (a0 && a1 && a2 && a3) ? PyObject_CallFunction(k->hook, "dlOOOO", v->t, n, a0, a1, a2, a3) : NULL;
        Py_XDECREF(a0); Py_XDECREF(a1); Py_XDECREF(a2); Py_XDECREF(a3);
    } else {
        r = PyObject_CallFunction(k->hook, "dlOOOO", v->t, n, k->arrays[0], k->arrays[1], k->arrays[2], k->arrays[3]);
    }
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
        if (d && run->units[i]->timing) { /* kraft2021 §16.3: idle at the macro barrier (4.5), snapshot time */
            PyObject *w = PyFloat_FromDouble(run->units[i]->idle), *v = PyFloat_FromDouble(run->units[i]->save_wall);
            if (!w || !v || PyDict_SetItemString(d, "idle_time", w) || PyDict_SetItemString(d, "save_time", v)) {
                Py_CLEAR(d);
            }
            Py_XDECREF(w); Py_XDECREF(v);
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
    cs_py_coupling_opts copts;
    memset(&copts, 0, sizeof copts);
    cs_run *run = NULL;
    cs_model **models = calloc((size_t)n, sizeof(cs_model *));
    cs_solver_opts *solvers = calloc((size_t)nsolvers, sizeof(cs_solver_opts));
    PyArrayObject *x0 = NULL, *cg = NULL, *r = NULL, *grid = NULL, *tout = NULL;
    int *cin = NULL, *cout = NULL, *order = NULL;
    long *reject = NULL;
    PyObject *out = NULL, *oorder, *ogrid, *oreject, *otout, *cause = NULL, *osc, *scd = NULL;
    cs_kraft_opts sc;
    PyArrayObject *sckeep[2] = {NULL, NULL};
    int *scikeep[3] = {NULL, NULL, NULL};
    cs_err err = {0};
    int models_given = 0;
    cs_py_energy energy;
    memset(&energy, 0, sizeof energy);
    cs_unit **units = NULL;     /* FMU subsystems: prebuilt units (cfg.units) */
    if (!models || !solvers) { PyErr_NoMemory(); goto done; }
    for (int i = 0; i < n; i++)
        if (!cs_py_is_fmu_spec(PyList_GET_ITEM(omodels, i)) && !(models[i] = cs_py_model_from_spec(PyList_GET_ITEM(omodels, i), i))) goto done;
    for (int i = 0; i < nsolvers; i++)
        if (cs_py_solver_from_spec(PyList_GET_ITEM(osolvers, i), &solvers[i])) goto done;
    for (int i = 0; i < n; i++) {
        if (!cs_py_is_fmu_spec(PyList_GET_ITEM(omodels, i))) continue;
        double ft0;
        if (monolithic) { /* a model-exchange FMU as a model of the composite (py/fmu.c) */
            if (opt_double(opts, "t0", &ft0) || !(models[i] = cs_py_fmu_model_from_spec(PyList_GET_ITEM(omodels, i), ft0, i)))
                goto done;
            continue;
        }
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
    if (cfg.scheme == CS_SCHEME_IMPLICIT || cfg.scheme == CS_SCHEME_WAVEFORM) {
        PyObject *it = opt(opts, "iter");
        if (!it) goto done;
        if (!PyDict_Check(it)) { PyErr_SetString(PyExc_TypeError, "run options: iter must be a dict"); goto done; }
        cs_iter_opts *io = &cfg.iter;
        if (opt_double(it, "tol", &io->tol) || opt_double(it, "atol", &io->atol) || opt_int(it, "max_iter", &io->max_iter) ||
            opt_int(it, "on_failure", &io->on_failure) || opt_int(it, "jacobian", &io->jacobian) ||
            opt_double(it, "tau", &io->tau) || opt_int(it, "conv_y", &io->conv_y) ||
            opt_double(it, "perturbation", &io->perturbation) || opt_double(it, "omega", &io->omega) ||
            opt_int(it, "accel", &io->accel) || opt_int(it, "waveform", &io->waveform) ||
            opt_int(it, "gauss_seidel", &io->gauss_seidel) || opt_int(it, "reuse", &io->reuse) ||
            opt_double(it, "filter", &io->filter) || opt_int(it, "kappa", &io->kappa))
            goto done;
    }
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
    if (!monolithic && cs_py_energy_options(opts, nu, &cfg, &energy)) goto done;
    if (cs_py_coupling_opts_read(opts, &cfg, &copts)) goto done;
    PyObject *othreads = PyDict_GetItemString(opts, "threads"); /* optional: default sequential */
    cfg.threads = 1;
    if (othreads && opt_int(opts, "threads", &cfg.threads)) goto done;
    cfg.iter.threads = cfg.threads; /* waveform relaxation: Jacobi sweeps on a pool (schemes/waveform.c) */
    osc = PyDict_GetItemString(opts, "step_control");
    if (osc && osc != Py_None) {
        if (!PyDict_Check(osc)) { PyErr_SetString(PyExc_TypeError, "step_control: expected a dict"); goto done; }
        if (parse_step_control(osc, &sc, sckeep, scikeep)) goto done;
        cfg.step_control = &sc;
    }
    models_given = 1; /* cs_run_create owns the models from here on */
    if (cs_run_create(&cfg, &run, &err)) { cs_py_raise(&err); goto done; }

    long cap = cfg.nout > 0 ? cfg.nout : cs_run_capacity(run);
    if (!cfg.nout && record_every > 1 && cap > 0) cap = (cap - 1) / record_every + 2;
    double bytes = (double)cap * (1.0 + run->nx + run->ny + run->nu) * sizeof(double);
    k.growing = run->adaptive && !cfg.nout;
    k.nx = run->nx; k.ny = run->ny; k.nu = run->nu;
    if (k.growing) bytes = 0.0;
    if (cap < 0 || bytes > max_bytes) {
        /* cs_py_errorf formats with vsnprintf: PyErr_Format knows no float conversions (%g fails on 3.12) */
        cs_py_errorf(PyExc_MemoryError,
                     "t_end/H: recording all %.3g points of this run needs %.3g GB (limit %.3g GB): record on a "
                     "coarser grid (output_interval=...) or use a coarser H", (double)cap, bytes / 1e9, max_bytes / 1e9);
        goto done;
    }
    npy_intp dt[1] = {cap}, dx[2] = {cap, run->nx}, dy[2] = {cap, run->ny}, du[2] = {cap, run->nu};
    cs_observer *o;
    if (k.growing) {
        if (cs_growing_recorder_create(cap, run->nx, run->ny, run->nu, &o, &err) || cs_run_add_observer(run, o, &err)) {
            cs_py_raise(&err);
            goto done;
        }
    } else {
    if (record_arrays(k.arrays, dt, dx, dy, du) < 0) goto done;
    double *bt = PyArray_DATA((PyArrayObject *)k.arrays[0]), *bx = PyArray_DATA((PyArrayObject *)k.arrays[1]),
           *by = PyArray_DATA((PyArrayObject *)k.arrays[2]), *bu = PyArray_DATA((PyArrayObject *)k.arrays[3]);
    if ((cfg.nout > 0 ? cs_dense_recorder_create(cap, bt, bx, by, bu, &o, &err)
                      : cs_recorder_create(cap, bt, bx, by, bu, record_every, &o, &err)) ||
        cs_run_add_observer(run, o, &err)) {
        cs_py_raise(&err);
        goto done;
    }
    }
    k.recorder = o;
    if (cs_py_energy_observers(run, cs_run_capacity(run), &energy)) goto done;
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
    if (k.growing) {
        double *bt, *bx, *by, *bu;
        cs_recorder_buffers(k.recorder, &bt, &bx, &by, &bu);
        cs_recorder_release(k.recorder);
        k.arrays[0] = owned_array(bt, nrec, 1, 0);
        k.arrays[1] = owned_array(bx, nrec, run->nx, 1);
        k.arrays[2] = owned_array(by, nrec, run->ny, 1);
        k.arrays[3] = owned_array(bu, nrec, run->nu, 1);
        if (!k.arrays[0] || !k.arrays[1] || !k.arrays[2] || !k.arrays[3]) goto done;
    }
    if (!(scd = step_control_dict(run))) goto done;
    PyObject *stats = stats_list(run);
    PyObject *timing = NULL;
    if (cfg.timing && stats) { /* run-level timing: scheme, interface, snapshots, per-thread barrier waits */
        cs_algorithm_timing at;
        cs_algorithm_get_timing(run->alg, &at);
        int nth = cs_jacobi_threads(run->scheme, NULL);
        double *idle = calloc((size_t)nth, sizeof(double));
        PyObject *lst = idle ? PyList_New(nth) : NULL;
        if (lst) {
            cs_jacobi_threads(run->scheme, idle);
            for (int q = 0; q < nth; q++) PyList_SET_ITEM(lst, q, PyFloat_FromDouble(idle[q]));
            timing = Py_BuildValue("{s:d,s:d,s:d,s:i,s:N}", "scheme_time", at.scheme, "interface_time", at.interface,
                                   "save_time", at.save, "threads", nth, "thread_idle_time", lst);
        }
        free(idle);
        if (!timing) PyErr_Clear();
    }
    if (timing) { /* Jacobi: per unit thread-CPU solver time and CPU idle at the barrier (issue 11, T25) */
        double *cpu = calloc((size_t)run->nunits, sizeof(double)), *cid = calloc((size_t)run->nunits, sizeof(double));
        if (cpu && cid && cs_jacobi_cpu_times(run->scheme, run->nunits, cpu, cid)) {
            PyObject *lc = PyList_New(run->nunits), *li = PyList_New(run->nunits);
            for (int q = 0; lc && li && q < run->nunits; q++) {
                PyList_SET_ITEM(lc, q, PyFloat_FromDouble(cpu[q]));
                PyList_SET_ITEM(li, q, PyFloat_FromDouble(cid[q]));
            }
            if (!lc || !li || PyDict_SetItemString(timing, "unit_cpu_time", lc) ||
                PyDict_SetItemString(timing, "unit_cpu_idle_time", li))
                PyErr_Clear();
            Py_XDECREF(lc); Py_XDECREF(li);
        }
        free(cpu); free(cid);
    }
    const char *status = rc == CS_OK ? "" : rc == CS_STOPPED ? "stopped" : "error";
    out = Py_BuildValue("{s:N,s:N,s:N,s:N,s:i,s:s,s:s,s:l,s:l,s:l,s:N,s:O,s:O}", "t", rows(k.arrays[0], nrec), "x",
                        rows(k.arrays[1], nrec), "y", rows(k.arrays[2], nrec), "u", rows(k.arrays[3], nrec),
                        "status", rc, "state", status, "message", rc ? err.msg : "", "macro_steps",
                        cs_algorithm_steps(run->alg), "rejected_steps", cs_algorithm_rejected(run->alg),
                        "newton_iterations", run->net.newton_iterations,
                        "stats", stats ? stats : (Py_INCREF(Py_None), Py_None), "cause", cause ? cause : Py_None,
                        "step_control", scd);
    if (out && cs_py_energy_results(out, &energy)) Py_CLEAR(out);
    if (out && cfg.coupling_kind && !monolithic) {
        PyObject *clog = cs_py_coupling_log(run, cfg.coupling_kind);
        if (!clog || PyDict_SetItemString(out, "coupling_log", clog)) Py_CLEAR(out);
        Py_XDECREF(clog);
    }
    if (out && timing && PyDict_SetItemString(out, "timing", timing)) Py_CLEAR(out);
    Py_XDECREF(timing);
    if (out && run->scheme->ops->iterations) { /* iterative schemes: iterations per accepted macro step */
        long nst = cs_algorithm_steps(run->alg), total = 0;
        const int *per = NULL;
        run->scheme->ops->iterations(run->scheme, nst, &per, &total);
        npy_intp dn[1] = {nst};
        PyObject *arr = PyArray_SimpleNew(1, dn, NPY_INT64);
        if (arr) {
            long long *pa = PyArray_DATA((PyArrayObject *)arr);
            for (long q = 0; q < nst; q++) pa[q] = per && q < nst ? per[q] : 0;
        }
        PyObject *tot = PyLong_FromLong(total);
        if (!arr || !tot || PyDict_SetItemString(out, "iterations_per_step", arr) ||
            PyDict_SetItemString(out, "iterations", tot))
            Py_CLEAR(out);
        Py_XDECREF(arr);
        Py_XDECREF(tot);
    }
done:
    cs_py_energy_free(&energy);
    cs_py_coupling_opts_free(&copts);
    Py_XDECREF(scd);
    Py_XDECREF(sckeep[0]); Py_XDECREF(sckeep[1]);
    free(scikeep[0]); free(scikeep[1]); free(scikeep[2]);
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
