/* Conversion of the Python-side model and solver specs (tuples built by cosim/simulate.py) into C objects. */
#include "py/specs.h"

#include <stdint.h>
#include <string.h>

#include "py/params.h"
#include "py/pymodel.h"
#include "models/builtin.h"

/* A pointer given as a Python int: negative values, values that do not fit in a pointer and (unless allowed) 0
 * are rejected with a ValueError naming the argument ("K" would wrap them silently). */
static int address(PyObject *o, const char *name, int allow_null, uintptr_t *out) {
    if (!PyLong_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: expected an int address, got %s", name, Py_TYPE(o)->tp_name);
        return -1;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(o);   /* OverflowError for negative or too large values */
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: address out of range for a pointer (negative or >= 2**%d)", name,
                     (int)(8 * sizeof(void *)));
        return -1;
    }
    if (v > (unsigned long long)UINTPTR_MAX) {
        PyErr_Format(PyExc_ValueError, "%s: address out of range for a pointer", name);
        return -1;
    }
    if (v == 0 && !allow_null) {
        PyErr_Format(PyExc_ValueError, "%s: NULL function pointer", name);
        return -1;
    }
    *out = (uintptr_t)v;
    return 0;
}

/* Sizes of one subsystem given as numbers (cfunc and python models): 0 <= n <= MAX_DIM, so that every size the C
 * core derives from them fits in an int and a scratch vector of n doubles stays allocatable (128 MiB). */
#define MAX_DIM (1 << 24)

static int dims(Py_ssize_t nx, Py_ssize_t nu, Py_ssize_t ny, int *out) {
    const Py_ssize_t v[3] = {nx, nu, ny};
    static const char *const names[3] = {"nx", "nu", "ny"};
    for (int i = 0; i < 3; i++) {
        if (v[i] < 0 || v[i] > MAX_DIM) {
            PyErr_Format(PyExc_ValueError, "%s: must be in 0..%d, got %zd", names[i], MAX_DIM, v[i]);
            return -1;
        }
        out[i] = (int)v[i];
    }
    return 0;
}

/* One parser per model spec kind: the tuple -> *out (CS_OK), or -1 with a Python exception set (also for the C
 * constructors' errors, raised from err). */
typedef int (*model_parse_fn)(PyObject *spec, cs_model **out, cs_err *err);

static int parse_lti(PyObject *spec, cs_model **out, cs_err *err) {
    const char *kind, *name;
    PyObject *oA, *oB, *oC, *oD;
    if (!PyArg_ParseTuple(spec, "ssOOOO", &kind, &name, &oA, &oB, &oC, &oD)) return -1;
    npy_intp d[2] = {-1, -1};
    PyArrayObject *A = cs_py_darray(oA, "A", 2, d, 1);
    if (!A) return -1;
    int nx = (int)PyArray_DIM(A, 0);
    npy_intp dB[2] = {nx, -1};
    PyArrayObject *B = cs_py_darray(oB, "B", 2, dB, 1);
    npy_intp dC[2] = {-1, nx};
    PyArrayObject *C = B ? cs_py_darray(oC, "C", 2, dC, 1) : NULL;
    PyArrayObject *D = NULL;
    if (C) {
        npy_intp dD[2] = {PyArray_DIM(C, 0), PyArray_DIM(B, 1)};
        D = cs_py_darray(oD, "D", 2, dD, 1);
    }
    int rc = -1;
    if (D && PyArray_DIM(A, 1) == nx)
        rc = cs_lti_create(nx, (int)PyArray_DIM(B, 1), (int)PyArray_DIM(C, 0), PyArray_DATA(A), PyArray_DATA(B),
                           PyArray_DATA(C), PyArray_DATA(D), name, out, err);
    else if (D) PyErr_SetString(PyExc_ValueError, "A: must be square");
    Py_XDECREF(A); Py_XDECREF(B); Py_XDECREF(C); Py_XDECREF(D);
    return rc;
}

static int parse_cfunc(PyObject *spec, cs_model **out, cs_err *err) {
    const char *kind, *name;
    Py_ssize_t snx, snu, sny;
    int ft, d[3];
    PyObject *orhs, *oout, *ouser;
    uintptr_t prhs, pout, puser;
    if (!PyArg_ParseTuple(spec, "ssnnnpOOO", &kind, &name, &snx, &snu, &sny, &ft, &orhs, &oout, &ouser) ||
        dims(snx, snu, sny, d))
        return -1;
    if (address(orhs, "rhs", 0, &prhs) || address(oout, "output", 0, &pout) || address(ouser, "user_data", 1, &puser))
        return -1;
    return cs_cfunc_create(d[0], d[1], d[2], ft, (cs_c_rhs_fn)(uintptr_t)prhs, (cs_c_output_fn)(uintptr_t)pout,
                           (void *)(uintptr_t)puser, name, out, err);
}

static int parse_builtin(PyObject *spec, cs_model **out, cs_err *err) {
    const char *kind, *name, *bkind;
    PyObject *op;
    if (!PyArg_ParseTuple(spec, "sssO", &kind, &name, &bkind, &op)) return -1;
    npy_intp d[1] = {-1};
    PyArrayObject *p = cs_py_darray(op, "params", 1, d, 1);
    if (!p) return -1;
    int rc = cs_builtin_create(bkind, (int)PyArray_DIM(p, 0), PyArray_DATA(p), name, out, err);
    Py_DECREF(p);
    return rc;
}

static int parse_python(PyObject *spec, cs_model **out, cs_err *err) {
    const char *kind, *name;
    Py_ssize_t snx, snu, sny;
    int ft, d[3];
    PyObject *rhs, *output, *outdt;
    if (!PyArg_ParseTuple(spec, "ssnnnpOOO", &kind, &name, &snx, &snu, &sny, &ft, &rhs, &output, &outdt) ||
        dims(snx, snu, sny, d))
        return -1;
    if (!PyCallable_Check(rhs) || !PyCallable_Check(output)) {
        PyErr_SetString(PyExc_TypeError, "rhs/output: must be callable");
        return -1;
    }
    return cs_py_model_create(d[0], d[1], d[2], ft, rhs, output, outdt, name, out, err);
}

static const struct { const char *kind; model_parse_fn parse; } model_kinds[] = {
    {"lti", parse_lti}, {"cfunc", parse_cfunc}, {"builtin", parse_builtin}, {"python", parse_python},
};

cs_model *cs_py_model_from_spec(PyObject *spec, int index) {
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) < 2) {
        PyErr_Format(PyExc_TypeError, "models[%d]: expected a model spec tuple", index);
        return NULL;
    }
    const char *kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(spec, 0));
    if (!kind || !PyUnicode_AsUTF8(PyTuple_GET_ITEM(spec, 1))) return NULL;
    for (size_t k = 0; k < sizeof model_kinds / sizeof *model_kinds; k++) {
        if (strcmp(kind, model_kinds[k].kind) != 0) continue;
        cs_err err = {0};
        cs_model *m = NULL;
        if (model_kinds[k].parse(spec, &m, &err)) {
            if (!PyErr_Occurred()) cs_py_raise(&err);
            return NULL;
        }
        return m;
    }
    PyErr_Format(PyExc_ValueError, "models[%d]: unknown model kind %s", index, kind);
    return NULL;
}

int cs_py_solver_from_spec(PyObject *spec, cs_solver_opts *o) {
    static const cs_kind *solver;   /* the registry's parameter table of cs_solver_opts */
    if (!solver) solver = cs_registry_capability("solver")->kinds[0];
    memset(o, 0, sizeof *o);
    solver->defaults(o);
    cs_py_keep keep = {0};   /* solver specs hold no vectors: nothing is kept */
    int rc = cs_py_params_read(spec, "solver", solver->params, solver->nparams, o, &keep);
    cs_py_keep_free(&keep);
    if (rc) return -1;
    if (o->linear_solver != CS_LINSOL_DENSE && o->linear_solver != CS_LINSOL_BAND) {
        PyErr_Format(PyExc_ValueError, "linear_solver: unknown code %d", o->linear_solver);
        return -1;
    }
    return 0;
}
