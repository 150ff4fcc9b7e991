/* Bindings for the co-simulation engine: build models and steppers from Python specs, run the master, return
 * NumPy arrays. Argument validation with user-facing messages happens in cosim/simulate.py; checks here guard
 * the C core against anything that slips through. */
#include "py/pyutil.h"

#include <stdlib.h>
#include <string.h>

#include "master/master.h"
#include "models/composite.h"
#include "py/specs.h"

typedef struct run_objects {
    int n;
    cs_model **models;
    cs_stepper **steppers;
    cs_model *composite;
} run_objects;

static void objects_free(run_objects *o) {
    for (int i = 0; i < o->n; i++) {
        if (o->steppers) cs_stepper_free(o->steppers[i]);
    }
    if (o->composite) cs_model_free(o->composite);
    for (int i = 0; i < o->n; i++)
        if (o->models) cs_model_free(o->models[i]);
    free(o->models);
    free(o->steppers);
}

static PyObject *stats_list(int n, cs_stepper **st, cs_model **models) {
    PyObject *lst = PyList_New(n);
    if (!lst) return NULL;
    for (int i = 0; i < n; i++) {
        cs_model *m = models[i];
        PyObject *d = Py_BuildValue("{s:l,s:l,s:l,s:d,s:l,s:l}", "steps", st[i]->stats.steps, "failures",
                                    st[i]->stats.failures, "jac_evals", st[i]->stats.jac_evals, "wall_time",
                                    st[i]->stats.wall, "rhs_calls", m->nrhs, "output_calls", m->nout);
        if (!d) { Py_DECREF(lst); return NULL; }
        PyList_SET_ITEM(lst, i, d);
    }
    return lst;
}

/* run(models, solvers, x0, conn_in, conn_out, conn_gain, r, opts, monolithic) -> dict */
static PyObject *py_run(PyObject *self, PyObject *args) {
    PyObject *omodels, *osolvers, *ox0, *oci, *oco, *ocg, *or_, *oopts;
    int monolithic = 0;
    if (!PyArg_ParseTuple(args, "O!O!OOOOOO!p:run", &PyList_Type, &omodels, &PyList_Type, &osolvers, &ox0, &oci, &oco,
                          &ocg, &or_, &PyTuple_Type, &oopts, &monolithic))
        return NULL;
    int n = (int)PyList_GET_SIZE(omodels);
    if (n < 1) return PyErr_Format(PyExc_ValueError, "subsystems: need at least one");
    if (PyList_GET_SIZE(osolvers) != (monolithic ? 1 : n))
        return PyErr_Format(PyExc_ValueError, "solver: one solver spec per stepper expected");

    int scheme, approx_kind, approx_k, deriv_mode, update, startup, restart;
    double t0, t_end, H, startup_factor, bound;
    PyObject *oorder, *ogrid = Py_None;
    if (!PyArg_ParseTuple(oopts, "iOiiiidddidd|O:opts", &scheme, &oorder, &approx_kind, &approx_k, &deriv_mode,
                          &update, &t0, &t_end, &H, &startup, &startup_factor, &bound, &ogrid))
        return NULL;
    restart = !monolithic;

    run_objects ob = {0};
    PyArrayObject *x0 = NULL, *ci = NULL, *co = NULL, *cg = NULL, *r = NULL, *order = NULL, *grid = NULL;
    int *iorder = NULL, *cin = NULL, *cout = NULL;
    cs_network net;
    int net_ok = 0;
    cs_master_result res;
    memset(&res, 0, sizeof res);
    PyObject *out = NULL;

    ob.n = n;
    ob.models = calloc(n, sizeof(cs_model *));
    ob.steppers = calloc(n, sizeof(cs_stepper *));
    if (!ob.models || !ob.steppers) { PyErr_NoMemory(); goto done; }
    for (int i = 0; i < n; i++)
        if (!(ob.models[i] = cs_py_model_from_spec(PyList_GET_ITEM(omodels, i), i))) goto done;

    npy_intp d1[1] = {-1};
    x0 = cs_py_darray(ox0, "x0", 1, d1, 1);
    ci = (PyArrayObject *)PyArray_FROMANY(oci, NPY_INT64, 1, 1, NPY_ARRAY_CARRAY);
    co = (PyArrayObject *)PyArray_FROMANY(oco, NPY_INT64, 1, 1, NPY_ARRAY_CARRAY);
    cg = cs_py_darray(ocg, "gain", 1, d1, 1);
    r = cs_py_darray(or_, "r", 1, d1, 1);
    if (!x0 || !ci || !co || !cg || !r) goto done;
    npy_intp nconn = PyArray_DIM(ci, 0);
    if (PyArray_DIM(co, 0) != nconn || PyArray_DIM(cg, 0) != nconn) {
        PyErr_SetString(PyExc_ValueError, "connections: index and gain arrays differ in length");
        goto done;
    }
    cin = malloc(sizeof(int) * (nconn + 1));
    cout = malloc(sizeof(int) * (nconn + 1));
    if (!cin || !cout) { PyErr_NoMemory(); goto done; }
    for (npy_intp k = 0; k < nconn; k++) {
        cin[k] = (int)((long long *)PyArray_DATA(ci))[k];
        cout[k] = (int)((long long *)PyArray_DATA(co))[k];
    }
    cs_err err = {0};
    if (cs_network_init(&net, n, ob.models, (int)nconn, cin, cout, PyArray_DATA(cg), NULL, &err)) {
        cs_py_raise(&err);
        goto done;
    }
    net_ok = 1;
    if (PyArray_DIM(r, 0) != net.nu || PyArray_DIM(x0, 0) != net.nx) {
        PyErr_Format(PyExc_ValueError, "x0/r: expected %d states and %d inputs in total", net.nx, net.nu);
        goto done;
    }
    memcpy(net.r, PyArray_DATA(r), sizeof(double) * net.nu);
    if (oorder != Py_None) {
        order = (PyArrayObject *)PyArray_FROMANY(oorder, NPY_INT64, 1, 1, NPY_ARRAY_CARRAY);
        if (!order) goto done;
        if (PyArray_DIM(order, 0) != n) { PyErr_SetString(PyExc_ValueError, "order: wrong length"); goto done; }
        iorder = malloc(sizeof(int) * n);
        if (!iorder) { PyErr_NoMemory(); goto done; }
        for (int p = 0; p < n; p++) iorder[p] = (int)((long long *)PyArray_DATA(order))[p];
    }

    cs_master_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cs_network mono_net;
    int mono_ok = 0;
    cs_model *step_models[1];
    if (monolithic) {
        /* One stepper integrates the strongly coupled composite (inputs solved at every rhs call). */
        ob.composite = cs_composite_new(&net, "monolithic", &err);
        if (!ob.composite) { cs_py_raise(&err); goto done; }
        cs_solver_opts so;
        if (cs_py_solver_from_spec(PyList_GET_ITEM(osolvers, 0), &so)) goto done;
        ob.steppers[0] = cs_stepper_new(ob.composite, &so, &err);
        if (!ob.steppers[0]) { cs_py_raise(&err); goto done; }
        step_models[0] = ob.composite;
        int zero = 0;
        double g = 0.0;
        if (cs_network_init(&mono_net, 1, step_models, 0, &zero, &zero, &g, NULL, &err)) { cs_py_raise(&err); goto done; }
        mono_ok = 1;
        cfg.nsub = 1;
        cfg.net = &mono_net;
    } else {
        for (int i = 0; i < n; i++) {
            cs_solver_opts so;
            if (cs_py_solver_from_spec(PyList_GET_ITEM(osolvers, i), &so)) goto done;
            ob.steppers[i] = cs_stepper_new(ob.models[i], &so, &err);
            if (!ob.steppers[i]) { cs_py_raise(&err); goto done; }
        }
        cfg.nsub = n;
        cfg.net = &net;
    }
    cfg.steppers = ob.steppers;
    cfg.x0 = PyArray_DATA(x0);
    cfg.scheme = scheme;
    cfg.order = iorder;
    cfg.approx.kind = approx_kind;
    cfg.approx.k = approx_k;
    cfg.deriv_mode = deriv_mode;
    cfg.update = update;
    cfg.t0 = t0;
    cfg.t_end = t_end;
    cfg.H = H;
    cfg.startup = startup;
    cfg.startup_factor = startup_factor;
    cfg.divergence_bound = bound;
    cfg.restart_each_step = restart;
    if (ogrid != Py_None) {
        npy_intp dg[1] = {-1};
        if (!(grid = cs_py_darray(ogrid, "grid", 1, dg, 1))) goto mono_done;
        cfg.grid = PyArray_DATA(grid);
        cfg.ngrid = PyArray_DIM(grid, 0);
    }
    if (!(H > 0.0) || !(t_end >= t0)) { PyErr_SetString(PyExc_ValueError, "H/t_end: invalid"); goto mono_done; }
    long cap = cs_master_capacity(&cfg);
    if (cap > 200000000L) { PyErr_SetString(PyExc_ValueError, "t_end/H: too many macro steps"); goto mono_done; }
    if (cs_master_result_alloc(&res, cap, cfg.net->nx, cfg.net->ny, cfg.net->nu)) { PyErr_NoMemory(); goto mono_done; }

    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = cs_master_run(&cfg, &res, &err);
    Py_END_ALLOW_THREADS

    {
        /* Monolithic: report states only (the composite's outputs are the stacked subsystem outputs). */
        PyObject *stats = stats_list(cfg.nsub, ob.steppers, monolithic ? step_models : ob.models);
        out = Py_BuildValue("{s:N,s:N,s:N,s:N,s:i,s:s,s:l,s:l,s:N}", "t", cs_py_vec(res.n, res.t), "x",
                            cs_py_mat(res.n, cfg.net->nx, res.x), "y", cs_py_mat(res.n, cfg.net->ny, res.y), "u",
                            cs_py_mat(res.n, cfg.net->nu, res.u), "status", rc, "message", rc ? err.msg : "",
                            "macro_steps", res.macro_steps, "newton_iterations", res.newton_iterations, "stats",
                            stats ? stats : (Py_INCREF(Py_None), Py_None));
    }
mono_done:
    if (mono_ok) cs_network_free(&mono_net);
done:
    cs_master_result_free(&res);
    if (net_ok) cs_network_free(&net);
    objects_free(&ob);
    free(iorder); free(cin); free(cout);
    Py_XDECREF(x0); Py_XDECREF(ci); Py_XDECREF(co); Py_XDECREF(cg); Py_XDECREF(r); Py_XDECREF(order); Py_XDECREF(grid);
    return out;
}

PyMethodDef cs_py_engine_methods[] = {
    {"run", py_run, METH_VARARGS,
     "run(models, solvers, x0, conn_in, conn_out, conn_gain, r, opts, monolithic) -> dict of results.\n"
     "Low-level entry of cosim.simulate / cosim.simulate_monolithic."},
    {NULL, NULL, 0, NULL},
};
