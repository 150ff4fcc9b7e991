/* Bindings for the distribution of units over workers (parallel/assign.h) and a check of the thread pool's
 * hand-out (parallel/pool.h): used by tests, and by a backend that distributes units itself. */
#include "py/pyutil.h"

#include <stdlib.h>
#include <time.h>

#include "parallel/assign.h"
#include "parallel/pool.h"

static PyObject *py_assign_units(PyObject *self, PyObject *args) {
    PyObject *oc;
    int n;
    if (!PyArg_ParseTuple(args, "Oi:assign_units", &oc, &n)) return NULL;
    if (n < 1 || n > 1 << 20) return PyErr_Format(PyExc_ValueError, "workers: must be in 1..%d, got %d", 1 << 20, n);
    npy_intp d[1] = {-1};
    PyArrayObject *c = cs_py_darray(oc, "cost", 1, d, 1);
    if (!c) return NULL;
    const int count = (int)PyArray_DIM(c, 0);
    const double *cost = PyArray_DATA(c);
    for (int i = 0; i < count; i++)
        if (cost[i] < 0.0) {
            Py_DECREF(c);
            return cs_py_errorf(PyExc_ValueError, "cost: must be >= 0, got cost[%d] = %g", i, cost[i]);
        }
    npy_intp dn[1] = {count};
    PyObject *owner = PyArray_SimpleNew(1, dn, NPY_INT);
    void *scratch = malloc(cs_assign_scratch_bytes(count, n));
    if (!owner || !scratch) {
        Py_XDECREF(owner); free(scratch); Py_DECREF(c);
        return owner ? PyErr_NoMemory() : NULL;
    }
    cs_assign_balanced(count, cost, n, PyArray_DATA((PyArrayObject *)owner), scratch);
    free(scratch);
    Py_DECREF(c);
    return owner;
}

typedef struct check_task {
    long *ran;      /* per item: how often it ran */
    double *spin;   /* per item: its cost in seconds (busy wait) */
} check_task;

static void check_item(void *arg, int item, int worker) {
    check_task *t = arg;
    t->ran[item]++;   /* one worker per item and run */
    if (!(t->spin[item] > 0.0)) return;
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    while ((b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec) < t->spin[item]);
}

static PyObject *py_pool_check(PyObject *self, PyObject *args) {
    PyObject *oc;
    int threads, runs;
    if (!PyArg_ParseTuple(args, "Oii:pool_check", &oc, &threads, &runs)) return NULL;
    if (threads < 1 || threads > 64)
        return PyErr_Format(PyExc_ValueError, "threads: must be in 1..64, got %d", threads);
    if (runs < 0 || runs > 100000) return PyErr_Format(PyExc_ValueError, "runs: must be in 0..100000, got %d", runs);
    npy_intp d[1] = {-1};
    PyArrayObject *c = cs_py_darray(oc, "cost", 1, d, 1);
    if (!c) return NULL;
    const int count = (int)PyArray_DIM(c, 0);
    npy_intp dn[1] = {count}, dt[1] = {threads};
    PyObject *ran = PyArray_ZEROS(1, dn, NPY_LONG, 0), *owner = PyArray_ZEROS(1, dn, NPY_INT, 0);
    PyObject *stolen = PyArray_ZEROS(1, dt, NPY_LONG, 0), *out = NULL;
    cs_pool *pool = NULL;
    cs_pool_plan *plan = NULL;
    cs_err err = {0};
    if (!ran || !owner || !stolen) goto done;
    for (int i = 0; i < count; i++)
        if (((double *)PyArray_DATA(c))[i] < 0.0 || ((double *)PyArray_DATA(c))[i] > 0.01) {
            cs_py_errorf(PyExc_ValueError, "cost: must be in [0, 0.01] s, got cost[%d] = %g", i,
                         ((double *)PyArray_DATA(c))[i]);
            goto done;
        }
    if (cs_pool_create(threads, &pool, &err) || cs_pool_plan_create(pool, count, &plan, &err)) {
        cs_py_raise(&err);
        goto done;
    }
    check_task t = {PyArray_DATA((PyArrayObject *)ran), PyArray_DATA(c)};
    long balances;
    cs_pool_set_timing(pool, 1);
    Py_BEGIN_ALLOW_THREADS
    for (int r = 0; r < runs; r++) cs_pool_run_plan(pool, plan, check_item, &t);
    Py_END_ALLOW_THREADS
    balances = cs_pool_plan_balances(plan);
    for (int i = 0; i < count; i++) ((int *)PyArray_DATA((PyArrayObject *)owner))[i] = cs_pool_plan_owner(plan)[i];
    cs_pool_busy(pool, NULL, PyArray_DATA((PyArrayObject *)stolen));
    out = Py_BuildValue("{s:O,s:O,s:l,s:O}", "ran", ran, "owner", owner, "balances", balances, "stolen", stolen);
done:
    cs_pool_plan_destroy(plan);
    cs_pool_destroy(pool);
    Py_XDECREF(ran); Py_XDECREF(owner); Py_XDECREF(stolen); Py_DECREF(c);
    return out;
}

PyMethodDef cs_py_parallel_methods[] = {
    {"assign_units", py_assign_units, METH_VARARGS,
     "assign_units(cost, workers) -> owner[i], the worker of unit i: longest processing time first (deterministic; "
     "parallel/assign.h), the rule the thread pool's plans use."},
    {"pool_check", py_pool_check, METH_VARARGS,
     "pool_check(cost, threads, runs) -> {'ran', 'owner', 'balances', 'stolen'}: runs a pool plan over items that "
     "busy-wait cost[i] CPU seconds; ran[i] counts how often item i ran (tests: exactly runs times)."},
    {NULL, NULL, 0, NULL},
};
