/* See py/params.h. */
#include "py/params.h"

#include <stdlib.h>
#include <string.h>

static int keep_object(cs_py_keep *k, PyObject *o) {
    if (k->nobjects == k->cap_objects) {
        int cap = k->cap_objects ? 2 * k->cap_objects : 8;
        PyObject **p = realloc(k->objects, sizeof *p * (size_t)cap);
        if (!p) { Py_DECREF(o); PyErr_NoMemory(); return -1; }
        k->objects = p;
        k->cap_objects = cap;
    }
    k->objects[k->nobjects++] = o;
    return 0;
}

static void *keep_block(cs_py_keep *k, void *b) {
    if (!b) { PyErr_NoMemory(); return NULL; }
    if (k->nblocks == k->cap_blocks) {
        int cap = k->cap_blocks ? 2 * k->cap_blocks : 8;
        void **p = realloc(k->blocks, sizeof *p * (size_t)cap);
        if (!p) { free(b); PyErr_NoMemory(); return NULL; }
        k->blocks = p;
        k->cap_blocks = cap;
    }
    k->blocks[k->nblocks++] = b;
    return b;
}

int cs_py_keep_object(cs_py_keep *k, PyObject *o) { return keep_object(k, o); }

void cs_py_keep_free(cs_py_keep *k) {
    for (int q = 0; q < k->nobjects; q++) Py_DECREF(k->objects[q]);
    for (int q = 0; q < k->nblocks; q++) free(k->blocks[q]);
    free(k->objects);
    free(k->blocks);
    memset(k, 0, sizeof *k);
}

int *cs_py_int_vector(PyObject *o, const char *name, int indices, npy_intp *n) {
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, NPY_INT64, 1, 1, NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST);
    if (!a) return NULL;
    *n = PyArray_DIM(a, 0);
    int *out = malloc(sizeof(int) * (size_t)(*n + 1));
    if (!out) { Py_DECREF(a); PyErr_NoMemory(); return NULL; }
    const long long lo = indices ? 0 : -2147483647LL;
    for (npy_intp k = 0; k < *n; k++) {
        long long v = ((long long *)PyArray_DATA(a))[k];
        if (v < lo || v > 2147483647LL) {
            free(out); Py_DECREF(a);
            PyErr_Format(PyExc_ValueError, "%s: %s %lld out of range", name, indices ? "index" : "value", v);
            return NULL;
        }
        out[k] = (int)v;
    }
    Py_DECREF(a);
    return out;
}

static int to_long(PyObject *v, const char *key, long lo, long hi, long *out) {
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (x < lo || x > hi) { PyErr_Format(PyExc_OverflowError, "%s: out of range", key); return -1; }
    *out = x;
    return 0;
}

/* One value into its field; *len gets a vector's length (else -1). */
static int read_param(PyObject *v, const cs_param *p, char *spec, cs_py_keep *keep, npy_intp *len) {
    void *field = spec + p->offset;
    long x;
    *len = -1;
    switch (p->type) {
    case CS_PARAM_INT:
        if (to_long(v, p->name, -2147483647L, 2147483647L, &x)) return -1;
        *(int *)field = (int)x;
        return 0;
    case CS_PARAM_LONG: return to_long(v, p->name, -2147483647L - 1, 0x7fffffffffffffffL, (long *)field);
    case CS_PARAM_DOUBLE: {
        double d = PyFloat_AsDouble(v);
        if (d == -1.0 && PyErr_Occurred()) return -1;
        *(double *)field = d;
        return 0;
    }
    case CS_PARAM_FLAG: {
        int t = PyObject_IsTrue(v);
        if (t < 0) return -1;
        *(int *)field = t;
        return 0;
    }
    case CS_PARAM_DOUBLES: {
        if (v == Py_None) { *(const double **)field = NULL; *len = 0; return 0; }
        npy_intp d1[1] = {-1};
        PyArrayObject *a = cs_py_darray(v, p->name, 1, d1, 1);
        if (!a || keep_object(keep, (PyObject *)a)) return -1;
        *(const double **)field = PyArray_DATA(a);
        *len = PyArray_DIM(a, 0);
        return 0;
    }
    case CS_PARAM_INTS:
    case CS_PARAM_INDICES: {
        int *b = cs_py_int_vector(v, p->name, p->type == CS_PARAM_INDICES, len);
        if (!b || !keep_block(keep, b)) return -1;
        *(const int **)field = b;
        return 0;
    }
    default: PyErr_Format(PyExc_SystemError, "%s: unknown parameter type %d", p->name, p->type); return -1;
    }
}

int cs_py_params_read(PyObject *d, const char *what, const cs_param *params, int nparams, void *spec,
                      cs_py_keep *keep) {
    if (!PyDict_Check(d)) { PyErr_Format(PyExc_TypeError, "%s: expected a dict of parameters", what); return -1; }
    npy_intp lens[64];
    if (nparams > 64) { PyErr_Format(PyExc_SystemError, "%s: too many parameters", what); return -1; }
    for (int q = 0; q < nparams; q++) lens[q] = -1;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(d, &pos, &key, &value)) {
        const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (!name) { PyErr_Format(PyExc_TypeError, "%s: parameter names must be strings", what); return -1; }
        if (strcmp(name, "kind") == 0 && !PyLong_Check(value)) continue;   /* the registry kind's name */
        int q = 0;
        while (q < nparams && strcmp(params[q].name, name) != 0) q++;
        if (q == nparams) { PyErr_Format(PyExc_TypeError, "%s: unknown parameter %s", what, name); return -1; }
        if (read_param(value, &params[q], spec, keep, &lens[q])) return -1;
    }
    /* vectors sharing a length field agree; the field gets their length */
    for (int q = 0; q < nparams; q++) {
        if (params[q].length == CS_PARAM_NO_LENGTH || lens[q] < 0) continue;
        for (int o = 0; o < q; o++)
            if (params[o].length == params[q].length && lens[o] >= 0 && lens[o] != lens[q]) {
                PyErr_Format(PyExc_ValueError, "%s: %s and %s differ in length", what, params[o].name, params[q].name);
                return -1;
            }
        if (lens[q] > 2147483647) { PyErr_Format(PyExc_ValueError, "%s: %s too long", what, params[q].name); return -1; }
        *(int *)((char *)spec + params[q].length) = (int)lens[q];
    }
    return 0;
}

int cs_py_choice_read(PyObject *d, const char *capability, cs_choice *out, cs_py_keep *keep) {
    out->kind = NULL;
    out->spec = NULL;
    const cs_capability *cap = cs_registry_capability(capability);
    if (!cap) { PyErr_Format(PyExc_SystemError, "%s: no such capability", capability); return -1; }
    if (!PyDict_Check(d)) { PyErr_Format(PyExc_TypeError, "%s: expected a dict spec", capability); return -1; }
    PyObject *okind = PyDict_GetItemString(d, "kind");
    const char *name = okind && PyUnicode_Check(okind) ? PyUnicode_AsUTF8(okind) : NULL;
    if (!name) { PyErr_Format(PyExc_TypeError, "%s: spec without a kind name", capability); return -1; }
    const cs_kind *k = cs_registry_kind(cap, name);
    if (!k) { PyErr_Format(PyExc_ValueError, "%s: unknown kind %s", capability, name); return -1; }
    void *spec = NULL;
    if (k->spec_size) {
        if (!(spec = keep_block(keep, calloc(1, k->spec_size)))) return -1;
        if (k->defaults) k->defaults(spec);
    }
    if (cs_py_params_read(d, capability, k->params, k->nparams, spec, keep)) return -1;
    out->kind = k;
    out->spec = spec;
    return 0;
}

static PyObject *get(PyObject *d, const char *what, const char *key) {
    PyObject *v = PyDict_GetItemString(d, key);
    if (!v) PyErr_Format(PyExc_TypeError, "%s: missing %s", what, key);
    return v;
}

int cs_py_get_long(PyObject *d, const char *what, const char *key, long *out) {
    PyObject *v = get(d, what, key);
    return v ? to_long(v, key, -2147483647L - 1, 0x7fffffffffffffffL, out) : -1;
}

int cs_py_get_int(PyObject *d, const char *what, const char *key, int *out) {
    PyObject *v = get(d, what, key);
    long x;
    if (!v || to_long(v, key, -2147483647L, 2147483647L, &x)) return -1;
    *out = (int)x;
    return 0;
}

int cs_py_get_double(PyObject *d, const char *what, const char *key, double *out) {
    PyObject *v = get(d, what, key);
    if (!v) return -1;
    *out = PyFloat_AsDouble(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

int cs_py_add_kinds(PyObject *module) {
    PyObject *out = PyDict_New();
    if (!out) return -1;
    for (int c = 0; c < cs_registry_size; c++) {
        PyObject *kinds = PyDict_New();
        if (!kinds || PyDict_SetItemString(out, cs_registry[c].name, kinds)) { Py_XDECREF(kinds); goto fail; }
        Py_DECREF(kinds);
        for (int k = 0; k < cs_registry[c].nkinds; k++) {
            const cs_kind *kd = cs_registry[c].kinds[k];
            PyObject *names = PyTuple_New(kd->nparams);
            for (int q = 0; names && q < kd->nparams; q++) {
                PyObject *s = PyUnicode_FromString(kd->params[q].name);
                if (!s) { Py_CLEAR(names); break; }
                PyTuple_SET_ITEM(names, q, s);
            }
            if (!names || PyDict_SetItemString(kinds, kd->name, names)) { Py_XDECREF(names); goto fail; }
            Py_DECREF(names);
        }
    }
    if (PyModule_AddObject(module, "kinds", out) < 0) goto fail;
    return 0;
fail:
    Py_DECREF(out);
    return -1;
}
