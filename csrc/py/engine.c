/* Binding of the co-simulation engine: converts Python arguments into a cs_run_config (master/setup.h), runs it
 * with the GIL released and hands the records over as NumPy arrays (written in place, no copy). Argument validation
 * with user-facing messages happens in cosim/simulate.py; the checks here guard the C core. */
#include "py/pyutil.h"

#include "interrupt.h"

#include <stdlib.h>
#include <string.h>

#include "master/setup.h"
#include "py/energy.h"
#include "py/fields.h"
#include "py/fmu.h"
#include "py/params.h"
#include "py/pycoupling.h"
#include "py/pymodel.h"
#include "py/specs.h"

/* Python-side state of one run: the user hook, the record arrays, the first exception raised in a callback. */
typedef struct run_ctx {
    PyObject *hook;             /* step_finished(t, n, T, X, Y, U) -> False to stop, or NULL */
    PyObject *arrays[4];        /* t, x, y, u */
    cs_observer *recorder;
    PyObject *exc;              /* exception raised in the hook or by the interrupt check */
    Py_buffer cancel;           /* opts["cancel"]: a byte another thread sets to stop the run (a study's stop) */
    int has_cancel, check_signals;
    int growing;                /* adaptive run: the recorder owns growing buffers (arrays made at the end) */
    int nx, ny, nu;
} run_ctx;

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
static PyObject *step_control_dict(const cs_run_report *rep) {
    if (!rep->has_step_records) Py_RETURN_NONE;
    const cs_kraft_records r = rep->step_records;
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

static void keep_exception(run_ctx *k) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb) PyException_SetTraceback(value, tb);
    if (type && PyErr_GivenExceptionMatches(type, PyExc_KeyboardInterrupt)) cs_interrupt_seen = 1;  /* acted on */
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

/* The run stops with CS_ERR_INTERRUPTED (KeyboardInterrupt in Python) when its cancel byte is set (read without
 * the GIL: runs in a thread pool stay parallel) or, in the main thread, when Python has a pending SIGINT. */
static int interrupt_cb(void *ctx) {
    run_ctx *k = ctx;
    if (k->has_cancel && *(volatile const unsigned char *)k->cancel.buf) return 1;
    if (!k->check_signals) return 0;
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = PyErr_CheckSignals();
    if (rc < 0) keep_exception(k);
    PyGILState_Release(g);
    return rc < 0;
}

static PyObject *stats_list(const cs_run_report *rep) {
    PyObject *lst = PyList_New(rep->nunits);
    if (!lst) return NULL;
    for (int i = 0; i < rep->nunits; i++) {
        const cs_unit_report *ur = &rep->units[i];
        const cs_unit_stats s = ur->stats;
        PyObject *d = Py_BuildValue("{s:l,s:l,s:l,s:l,s:l,s:l}", "steps", s.steps, "failures", s.failures,
                                    "jac_evals", s.jac_evals, "restarts", s.restarts, "rhs_calls", s.rhs_calls,
                                    "output_calls", s.output_calls);
        if (d && ur->timed) {
            PyObject *w = PyFloat_FromDouble(s.wall);
            if (!w || PyDict_SetItemString(d, "wall_time", w)) { Py_CLEAR(d); }
            Py_XDECREF(w);
        }
        if (d && ur->timed) { /* kraft2021 §16.3: idle at the macro barrier (4.5), snapshot time */
            PyObject *w = PyFloat_FromDouble(ur->idle), *v = PyFloat_FromDouble(ur->save_wall);
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

/* What py_run parsed: the run's config and everything it points into. */
typedef struct run_args {
    cs_run_config cfg;
    cs_py_keep keep;            /* the kinds' specs and their vectors */
    int n, monolithic, models_given;
    cs_model **models;
    cs_solver_opts *solvers;
    cs_unit **units;            /* FMU subsystems: prebuilt units (cfg.units) */
    PyArrayObject *x0, *cg, *r, *grid, *tout;
    int *cin, *cout, *order, *share_first, *integral_of;
    long *reject;
    long record_every, hook_every;
    double interrupt_interval, max_bytes;
    cs_py_energy energy;
} run_args;

static const char RUN[] = "run options";

/* The subsystems: models (or FMU models of the composite), FMU units, and one solver per unit. */
static int parse_subsystems(PyObject *omodels, PyObject *osolvers, PyObject *opts, run_args *a) {
    const int n = a->n, nsolvers = a->monolithic ? 1 : n;
    if (PyList_GET_SIZE(osolvers) != nsolvers) { PyErr_SetString(PyExc_ValueError, "solver: one spec per unit expected"); return -1; }
    a->models = calloc((size_t)n, sizeof(cs_model *));
    a->solvers = calloc((size_t)nsolvers, sizeof(cs_solver_opts));
    if (!a->models || !a->solvers) { PyErr_NoMemory(); return -1; }
    for (int i = 0; i < n; i++)
        if (!cs_py_is_fmu_spec(PyList_GET_ITEM(omodels, i)) &&
            !(a->models[i] = cs_py_model_from_spec(PyList_GET_ITEM(omodels, i), i)))
            return -1;
    for (int i = 0; i < nsolvers; i++)
        if (cs_py_solver_from_spec(PyList_GET_ITEM(osolvers, i), &a->solvers[i])) return -1;
    for (int i = 0; i < n; i++) {
        PyObject *spec = PyList_GET_ITEM(omodels, i);
        if (!cs_py_is_fmu_spec(spec)) continue;
        double ft0;
        if (cs_py_get_double(opts, RUN, "t0", &ft0)) return -1;
        if (a->monolithic) { /* a model-exchange FMU as a model of the composite (py/fmu.c) */
            if (!(a->models[i] = cs_py_fmu_model_from_spec(spec, ft0, i))) return -1;
            continue;
        }
        if (!a->units && !(a->units = calloc((size_t)n, sizeof(cs_unit *)))) { PyErr_NoMemory(); return -1; }
        if (!(a->units[i] = cs_py_fmu_unit_from_spec(spec, &a->solvers[i], ft0, i))) return -1;
    }
    return 0;
}

/* The network: connections, gains, r, and the stacked x0. */
static int parse_network(PyObject *ox0, PyObject *oci, PyObject *oco, PyObject *ocg, PyObject *or_, run_args *a) {
    npy_intp d1[1] = {-1}, nconn = 0, nco = 0;
    if (!(a->x0 = cs_py_darray(ox0, "x0", 1, d1, 1)) || !(a->cg = cs_py_darray(ocg, "gain", 1, d1, 1)) ||
        !(a->r = cs_py_darray(or_, "r", 1, d1, 1)))
        return -1;
    if (!(a->cin = cs_py_int_vector(oci, "connections", 1, &nconn)) ||
        !(a->cout = cs_py_int_vector(oco, "connections", 1, &nco)))
        return -1;
    if (nco != nconn || PyArray_DIM(a->cg, 0) != nconn) {
        PyErr_SetString(PyExc_ValueError, "connections: index and gain arrays differ in length");
        return -1;
    }
    int nx = 0, nu = 0;
    for (int i = 0; i < a->n; i++) {
        if (a->units && a->units[i]) { nx += a->units[i]->nx; nu += a->units[i]->nu; continue; }
        nx += a->models[i]->nx; nu += a->models[i]->nu;
    }
    if (PyArray_DIM(a->x0, 0) != nx || PyArray_DIM(a->r, 0) != nu) {
        PyErr_Format(PyExc_ValueError, "x0/r: expected %d states and %d inputs in total", nx, nu);
        return -1;
    }
    cs_run_config *c = &a->cfg;
    c->nconn = (int)nconn;
    c->conn_in = a->cin;
    c->conn_out = a->cout;
    c->conn_gain = PyArray_DATA(a->cg);
    c->r = PyArray_DATA(a->r);
    c->x0 = PyArray_DATA(a->x0);
    return nu;
}

/* A registry kind from opts[key] (absent or None: the run's default). */
static int parse_choice(PyObject *opts, const char *key, cs_choice *out, cs_py_keep *keep) {
    PyObject *d = PyDict_GetItemString(opts, key);
    out->kind = NULL;
    return d && d != Py_None ? cs_py_choice_read(d, key, out, keep) : 0;
}

/* Units distributed over processes (optional): opts["share"], the capsule of cosim._mpi.backend (the backend lives
 * while the caller keeps the capsule, for the whole run), and opts["share_first"], the first unit of each process. */
static int parse_share(PyObject *opts, run_args *a) {
    PyObject *cap = PyDict_GetItemString(opts, "share");
    if (!cap || cap == Py_None) return 0;
    const cs_share_backend *b = PyCapsule_GetPointer(cap, "cosim.share_backend");
    if (!b) return -1;
    PyObject *ofirst = PyDict_GetItemString(opts, "share_first");
    npy_intp n = 0;
    if (!ofirst) { PyErr_SetString(PyExc_TypeError, "run options: share without share_first"); return -1; }
    if (!(a->share_first = cs_py_int_vector(ofirst, "share_first", 1, &n))) return -1;
    if (n != (npy_intp)b->size + 1) {
        PyErr_SetString(PyExc_ValueError, "share_first: one entry per process and one more expected");
        return -1;
    }
    a->cfg.share = b;
    a->cfg.share_first = a->share_first;
    return 0;
}

/* The run-level options, the chosen kinds (scheme, coupling, step control) and the recording options. */
static int parse_options(PyObject *opts, int nu, run_args *a, run_ctx *k) {
    cs_run_config *c = &a->cfg;
    if (cs_py_get_int(opts, RUN, "approx_kind", &c->approx.kind) || cs_py_get_int(opts, RUN, "approx_k", &c->approx.k) ||
        cs_py_get_int(opts, RUN, "approx_nsp", &c->approx.nsp) ||
        cs_py_get_int(opts, RUN, "rates_lagged", &c->rates_lagged) || cs_py_get_int(opts, RUN, "update", &c->update) ||
        cs_py_get_double(opts, RUN, "t0", &c->t0) || cs_py_get_double(opts, RUN, "t_end", &c->t_end) ||
        cs_py_get_double(opts, RUN, "H", &c->H) || cs_py_get_int(opts, RUN, "startup", &c->startup) ||
        cs_py_get_double(opts, RUN, "startup_factor", &c->startup_factor) ||
        cs_py_get_double(opts, RUN, "divergence_bound", &c->divergence_bound) ||
        cs_py_get_int(opts, RUN, "timing", &c->timing) ||
        cs_py_get_long(opts, RUN, "record_every", &a->record_every) ||
        cs_py_get_long(opts, RUN, "step_finished_every", &a->hook_every) ||
        cs_py_get_double(opts, RUN, "interrupt_interval", &a->interrupt_interval) ||
        cs_py_get_double(opts, RUN, "max_record_bytes", &a->max_bytes))
        return -1;
    /* optional: acc/accRel (kraft2021 App. C) */
    if (PyDict_GetItemString(opts, "approx_k2") && cs_py_get_int(opts, RUN, "approx_k2", &c->approx.k2)) return -1;
    if (PyDict_GetItemString(opts, "approx_omega") && cs_py_get_double(opts, RUN, "approx_omega", &c->approx.omega))
        return -1;
    PyObject *ointeg = PyDict_GetItemString(opts, "approx_integral_of");
    if (ointeg && ointeg != Py_None) {
        npy_intp n = 0;
        if (!(a->integral_of = cs_py_int_vector(ointeg, "approx_integral_of", 0, &n))) return -1;
        c->integral_of = a->integral_of;
        c->integral_of_n = (int)n;
    }
    c->threads = 1;   /* optional: default sequential */
    if (PyDict_GetItemString(opts, "threads") && cs_py_get_int(opts, RUN, "threads", &c->threads)) return -1;
    if (parse_share(opts, a)) return -1;
    PyObject *ocoupling = PyDict_GetItemString(opts, "coupling");
    c->coupling.kind = NULL;
    if (parse_choice(opts, "scheme", &c->scheme, &a->keep) ||
        (ocoupling && ocoupling != Py_None && cs_py_coupling_read(ocoupling, &c->coupling, &a->keep, &k->exc)) ||
        parse_choice(opts, "step_control", &c->step_control, &a->keep))
        return -1;
    PyObject *oorder = PyDict_GetItemString(opts, "order"), *ogrid = PyDict_GetItemString(opts, "grid"),
             *oreject = PyDict_GetItemString(opts, "reject"), *otout = PyDict_GetItemString(opts, "t_out");
    k->hook = PyDict_GetItemString(opts, "step_finished");
    if (!oorder || !ogrid || !oreject || !otout || !k->hook) {
        PyErr_SetString(PyExc_TypeError, "run options: missing order, grid, reject, t_out or step_finished");
        return -1;
    }
    npy_intp d1[1] = {-1};
    if (otout != Py_None) {
        if (!(a->tout = cs_py_darray(otout, "t_eval", 1, d1, 1))) return -1;
        c->t_out = PyArray_DATA(a->tout);
        c->nout = PyArray_DIM(a->tout, 0);
    }
    PyObject *ocancel = PyDict_GetItemString(opts, "cancel");
    if (ocancel && ocancel != Py_None) {
        if (PyObject_GetBuffer(ocancel, &k->cancel, PyBUF_SIMPLE)) return -1;
        k->has_cancel = 1;
        if (k->cancel.len < 1) { PyErr_SetString(PyExc_ValueError, "cancel: expected a buffer of at least one byte"); return -1; }
    }
    if (k->hook == Py_None) k->hook = NULL;
    else if (!PyCallable_Check(k->hook)) { PyErr_SetString(PyExc_TypeError, "step_finished: must be callable"); return -1; }
    if (oorder != Py_None) {
        npy_intp nord = 0;
        if (!(a->order = cs_py_int_vector(oorder, "order", 1, &nord))) return -1;
        if (nord != a->n) { PyErr_SetString(PyExc_ValueError, "order: wrong length"); return -1; }
        c->order = a->order;
    }
    if (ogrid != Py_None) {
        if (!(a->grid = cs_py_darray(ogrid, "grid", 1, d1, 1))) return -1;
        c->grid = PyArray_DATA(a->grid);
        c->ngrid = PyArray_DIM(a->grid, 0);
    }
    if (oreject != Py_None) {
        npy_intp nrej = 0;
        int *rj = cs_py_int_vector(oreject, "reject", 1, &nrej);
        if (!rj) return -1;
        a->reject = malloc(sizeof(long) * (size_t)(nrej + 1));
        if (!a->reject) { free(rj); PyErr_NoMemory(); return -1; }
        for (npy_intp q = 0; q < nrej; q++) a->reject[q] = rj[q];
        free(rj);
        c->reject = a->reject;
        c->nreject = (int)nrej;
    }
    return a->monolithic ? 0 : cs_py_energy_options(opts, nu, c, &a->energy);
}

/* args of run(...) into a (and the hook into k); 0 or -1 with an exception set. */
static int parse_run(PyObject *args, run_args *a, run_ctx *k) {
    PyObject *omodels, *osolvers, *ox0, *oci, *oco, *ocg, *or_, *opts;
    if (!PyArg_ParseTuple(args, "O!O!OOOOOO!p:run", &PyList_Type, &omodels, &PyList_Type, &osolvers, &ox0, &oci, &oco,
                          &ocg, &or_, &PyDict_Type, &opts, &a->monolithic))
        return -1;
    a->n = (int)PyList_GET_SIZE(omodels);
    if (a->n < 1) { PyErr_SetString(PyExc_ValueError, "subsystems: need at least one"); return -1; }
    int nu;
    if (parse_subsystems(omodels, osolvers, opts, a) || (nu = parse_network(ox0, oci, oco, ocg, or_, a)) < 0 ||
        parse_options(opts, nu, a, k))
        return -1;
    cs_run_config *c = &a->cfg;
    c->nsub = a->n;
    c->models = a->models;
    c->solvers = a->solvers;
    c->monolithic = a->monolithic;
    c->units = a->units;
    return 0;
}

static void free_run_args(run_args *a) {
    cs_py_energy_free(&a->energy);
    cs_py_keep_free(&a->keep);
    if (!a->models_given) {
        if (a->models)
            for (int i = 0; i < a->n; i++) cs_model_destroy(a->models[i]);
        if (a->units)
            for (int i = 0; i < a->n; i++) cs_unit_destroy(a->units[i]);
    }
    free(a->units); free(a->models); free(a->solvers); free(a->cin); free(a->cout); free(a->order); free(a->share_first); free(a->integral_of); free(a->reject);
    Py_XDECREF(a->x0); Py_XDECREF(a->cg); Py_XDECREF(a->r); Py_XDECREF(a->grid); Py_XDECREF(a->tout);
}

/* The observers (records, energy series, hook, Ctrl-C check) of a created run. 0 or -1 with an exception. */
static int add_observers(cs_run *run, run_args *a, run_ctx *k) {
    const cs_run_config *c = &a->cfg;
    cs_err err = {0};
    long cap = c->nout > 0 ? c->nout : cs_run_capacity(run);
    if (!c->nout && a->record_every > 1 && cap > 0) cap = (cap - 1) / a->record_every + 2;
    double bytes = (double)cap * (1.0 + run->nx + run->ny + run->nu) * sizeof(double);
    k->growing = run->adaptive && !c->nout;
    k->nx = run->nx; k->ny = run->ny; k->nu = run->nu;
    if (k->growing) bytes = 0.0;
    if (cap < 0 || bytes > a->max_bytes) {
        /* cs_py_errorf formats with vsnprintf: PyErr_Format knows no float conversions (%g fails on 3.12) */
        cs_py_errorf(PyExc_MemoryError,
                     "t_end/H: recording all %.3g points of this run needs %.3g GB (limit %.3g GB): record on a "
                     "coarser grid (output_interval=...) or use a coarser H", (double)cap, bytes / 1e9,
                     a->max_bytes / 1e9);
        return -1;
    }
    cs_observer *o;
    if (k->growing) {
        if (cs_growing_recorder_create(cap, run->nx, run->ny, run->nu, &o, &err) || cs_run_add_recorder(run, o, &err))
            return cs_py_raise(&err), -1;
    } else {
        npy_intp dt[1] = {cap}, dx[2] = {cap, run->nx}, dy[2] = {cap, run->ny}, du[2] = {cap, run->nu};
        if (record_arrays(k->arrays, dt, dx, dy, du) < 0) return -1;
        double *bt = PyArray_DATA((PyArrayObject *)k->arrays[0]), *bx = PyArray_DATA((PyArrayObject *)k->arrays[1]),
               *by = PyArray_DATA((PyArrayObject *)k->arrays[2]), *bu = PyArray_DATA((PyArrayObject *)k->arrays[3]);
        if ((c->nout > 0 ? cs_dense_recorder_create(cap, bt, bx, by, bu, &o, &err)
                         : cs_recorder_create(cap, bt, bx, by, bu, a->record_every, &o, &err)) ||
            cs_run_add_recorder(run, o, &err))
            return cs_py_raise(&err), -1;
    }
    k->recorder = o;
    if (cs_py_energy_observers(run, cs_run_capacity(run), &a->energy)) return -1;
    if (k->hook && (cs_hook_observer_create(hook_cb, k, a->hook_every, &o, &err) || cs_run_add_observer(run, o, &err)))
        return cs_py_raise(&err), -1;
    /* a cancel byte alone (a run in a worker thread) is checked every 5 ms: one clock read and one load per check.
     * The checks are counted in steps from the last interval's step time, so a run whose steps turn slower stops
     * late by that factor: a decaying oscillator whose states became subnormal slowed 4x and, checked every 50 ms,
     * stopped 0.2-0.8 s after its flag was set */
    const double interval = a->interrupt_interval > 0 ? a->interrupt_interval : k->has_cancel ? 0.005 : 0.0;
    k->check_signals = a->interrupt_interval > 0;
    if (interval > 0 &&
        (cs_interrupt_observer_create(interrupt_cb, k, interval, &o, &err) ||
         cs_run_add_observer(run, o, &err)))
        return cs_py_raise(&err), -1;
    return 0;
}

/* d[key] = a list of the n values of whichever array is given (doubles, longs or ints). 0 or -1. */
static int put_list(PyObject *d, const char *key, int n, const double *dv, const long *lv, const int *iv) {
    PyObject *l = PyList_New(n);
    for (int q = 0; l && q < n; q++)
        PyList_SET_ITEM(l, q, dv ? PyFloat_FromDouble(dv[q]) : PyLong_FromLong(lv ? lv[q] : iv[q]));
    int rc = l ? PyDict_SetItemString(d, key, l) : -1;
    Py_XDECREF(l);
    return rc;
}

/* Run-level timing (scheme, interface, snapshots, per-thread barrier waits; Jacobi: per unit thread-CPU solver time
 * and CPU idle at the barrier, issue 11, T25) as a dict, or NULL (no exception) where it is not available. */
static PyObject *timing_dict(const cs_run_report *rep) {
    const cs_algorithm_timing at = rep->timing;
    const int nth = rep->threads;
    PyObject *lst = PyList_New(nth), *timing = NULL;
    if (lst) {
        for (int q = 0; q < nth; q++) PyList_SET_ITEM(lst, q, PyFloat_FromDouble(rep->thread_idle[q]));
        timing = Py_BuildValue("{s:d,s:d,s:d,s:d,s:i,s:N}", "scheme_time", at.scheme, "interface_time",
                               at.interface, "save_time", at.save, "run_time", at.run, "threads", nth,
                               "thread_idle_time", lst);
    }
    if (!timing) { PyErr_Clear(); return NULL; }
    if (rep->has_thread_work) {
        PyObject *cc = PyFloat_FromDouble(rep->cpu_critical);
        if (!cc || put_list(timing, "thread_busy_time", nth, rep->thread_busy, NULL, NULL) ||
            put_list(timing, "thread_stolen_units", nth, NULL, rep->thread_stolen, NULL) ||
            put_list(timing, "thread_units", nth, NULL, NULL, rep->thread_units) ||
            PyDict_SetItemString(timing, "cpu_critical_time", cc))
            PyErr_Clear();
        Py_XDECREF(cc);
    }
    if (rep->unit_cpu && (put_list(timing, "unit_cpu_time", rep->nunits, rep->unit_cpu, NULL, NULL) ||
                          put_list(timing, "unit_cpu_idle_time", rep->nunits, rep->unit_cpu_idle, NULL, NULL) ||
                          put_list(timing, "unit_rhs_work", rep->nunits, rep->unit_rhs, NULL, NULL) ||
                          put_list(timing, "unit_rhs_idle", rep->nunits, rep->unit_rhs_idle, NULL, NULL)))
        PyErr_Clear();
    return timing;
}

/* Iterative schemes: "iterations_per_step" and "iterations" into out; 0 or -1. */
static int iterations_into(PyObject *out, const cs_run_report *rep) {
    if (!rep->iterative) return 0;
    const long nst = rep->macro_steps, total = rep->iterations;
    const int *per = rep->iterations_per_step;
    npy_intp dn[1] = {nst};
    PyObject *arr = PyArray_SimpleNew(1, dn, NPY_INT64);
    if (arr) {
        long long *pa = PyArray_DATA((PyArrayObject *)arr);
        for (long q = 0; q < nst; q++) pa[q] = per && q < nst ? per[q] : 0;
    }
    PyObject *tot = PyLong_FromLong(total);
    int rc = !arr || !tot || PyDict_SetItemString(out, "iterations_per_step", arr) ||
             PyDict_SetItemString(out, "iterations", tot) ? -1 : 0;
    Py_XDECREF(arr);
    Py_XDECREF(tot);
    return rc;
}

/* A growing recorder's buffers, handed over in the report, as the record arrays (which then own them). */
static int take_records(run_ctx *k, cs_run_report *rep) {
    const long n = rep->records;
    k->arrays[0] = owned_array(rep->records_t, n, 1, 0);
    k->arrays[1] = owned_array(rep->records_x, n, rep->nx, 1);
    k->arrays[2] = owned_array(rep->records_y, n, rep->ny, 1);
    k->arrays[3] = owned_array(rep->records_u, n, rep->nu, 1);
    rep->records_t = rep->records_x = rep->records_y = rep->records_u = NULL;
    return k->arrays[0] && k->arrays[1] && k->arrays[2] && k->arrays[3] ? 0 : -1;
}

/* The result dict of a finished run (status rc, message in err) from its report. NULL with an exception on failure. */
static PyObject *report_run(cs_run *run, run_args *a, run_ctx *k, int rc, const cs_err *err) {
    PyObject *out = NULL, *scd = NULL;
    cs_run_report rep = {0};
    cs_err rerr = {0};
    int got = cs_run_get_report(run, &rep, &rerr);
    /* Exceptions from Python callbacks (the hook, the interrupt check, then the models'): KeyboardInterrupt and
     * SystemExit propagate as themselves; any other becomes the __cause__ of the SolverError raised in Python. */
    PyObject *cause = k->exc, *model_cause = rep.model_cause;
    k->exc = NULL;
    if (cause) Py_XDECREF(model_cause);
    else cause = model_cause;
    if (got) { cs_py_raise(&rerr); goto done; }
    /* Ctrl-C: the KeyboardInterrupt goes out with the partial result (simulate attaches it as .result) */
    const int interrupted = rc == CS_ERR_INTERRUPTED || (cause && PyObject_IsInstance(cause, PyExc_KeyboardInterrupt));
    if (!interrupted && cs_py_raise_if_base(cause)) goto done;
    if (interrupted && !cause) { /* the flag stopped the run (interrupt.h): Python's handler raises now */
        if (PyErr_CheckSignals() < 0) keep_exception(k);
        cause = k->exc ? k->exc : PyObject_CallFunction(PyExc_KeyboardInterrupt, "s", err->msg);
        k->exc = NULL;
        if (!cause) goto done;
    }
    if (interrupted) rc = CS_ERR_INTERRUPTED;
    const long nrec = rep.records;
    if (rep.records_t && take_records(k, &rep)) goto done;
    if (!(scd = step_control_dict(&rep))) goto done;
    PyObject *stats = stats_list(&rep);
    PyObject *timing = a->cfg.timing && stats ? timing_dict(&rep) : NULL;
    const char *status = rc == CS_OK ? "" : rc == CS_STOPPED ? "stopped" : rc == CS_TERMINATED ? "terminated"
                       : interrupted ? "interrupted" : "error";
    out = Py_BuildValue("{s:N,s:N,s:N,s:N,s:i,s:s,s:s,s:l,s:l,s:l,s:N,s:O,s:O}", "t", rows(k->arrays[0], nrec), "x",
                        rows(k->arrays[1], nrec), "y", rows(k->arrays[2], nrec), "u", rows(k->arrays[3], nrec),
                        "status", rc, "state", status, "message", rc ? err->msg : "", "macro_steps",
                        rep.macro_steps, "rejected_steps", rep.rejected_steps, "newton_iterations",
                        rep.newton_iterations,
                        "stats", stats ? stats : (Py_INCREF(Py_None), Py_None), "cause", cause ? cause : Py_None,
                        "step_control", scd);
    if (out && cs_py_energy_results(out, &a->energy)) Py_CLEAR(out);
    if (out && a->cfg.coupling.kind && !a->monolithic) {
        PyObject *clog = cs_py_fields_dict(&rep.coupling_log);
        if (!clog || PyDict_SetItemString(out, "coupling_log", clog)) Py_CLEAR(out);
        Py_XDECREF(clog);
    }
    if (out && timing && PyDict_SetItemString(out, "timing", timing)) Py_CLEAR(out);
    Py_XDECREF(timing);
    if (out && iterations_into(out, &rep)) Py_CLEAR(out);
done:
    cs_run_report_free(&rep);
    Py_XDECREF(scd);
    Py_XDECREF(cause);
    return out;
}

/* run(models, solvers, x0, conn_in, conn_out, conn_gain, r, opts: dict, monolithic) -> dict: parse, execute with
 * the GIL released, report. */
static PyObject *py_run(PyObject *self, PyObject *args) {
    run_args a;
    memset(&a, 0, sizeof a);
    run_ctx k;
    memset(&k, 0, sizeof k);
    cs_run *run = NULL;
    cs_err err = {0};
    PyObject *out = NULL;
    if (parse_run(args, &a, &k)) goto done;
    a.models_given = 1; /* cs_run_create owns the models and units from here on */
    if (cs_run_create(&a.cfg, &run, &err)) { cs_py_raise(&err); goto done; }
    if (add_observers(run, &a, &k)) goto done;
    int rc;
    CS_PY_RELEASED(rc = cs_run_execute(run, &err));
    out = report_run(run, &a, &k, rc, &err);
done:
    Py_XDECREF(k.exc);
    if (k.has_cancel) PyBuffer_Release(&k.cancel);
    for (int q = 0; q < 4; q++) Py_XDECREF(k.arrays[q]);
    if (run) cs_run_destroy(run);
    free_run_args(&a);
    return out;
}

PyMethodDef cs_py_engine_methods[] = {
    {"run", py_run, METH_VARARGS,
     "run(models, solvers, x0, conn_in, conn_out, conn_gain, r, opts, monolithic) -> dict of results.\n"
     "Low-level entry of cosim.simulate / cosim.simulate_monolithic."},
    {NULL, NULL, 0, NULL},
};
