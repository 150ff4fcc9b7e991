/* See py/fields.h. */
#include "py/fields.h"

#include <string.h>

static PyObject *field_value(const cs_field *f) {
    if (f->type == CS_FIELD_COUNT) return PyLong_FromLong(f->count);
    static const int npy[] = {[CS_FIELD_DOUBLE] = NPY_DOUBLE, [CS_FIELD_INT] = NPY_INT32, [CS_FIELD_BYTE] = NPY_UINT8};
    static const size_t size[] = {[CS_FIELD_DOUBLE] = sizeof(double), [CS_FIELD_INT] = sizeof(int),
                                  [CS_FIELD_BYTE] = 1};
    npy_intp d[2] = {f->rows, f->cols};
    PyObject *a = PyArray_SimpleNew(f->cols ? 2 : 1, d, npy[f->type]);
    size_t n = (size_t)f->rows * (size_t)(f->cols ? f->cols : 1);
    if (a && n) memcpy(PyArray_DATA((PyArrayObject *)a), f->data, size[f->type] * n);
    return a;
}

PyObject *cs_py_fields_dict(const cs_fields *f) {
    if (f->n < 0) Py_RETURN_NONE;
    PyObject *out = PyDict_New();
    for (int q = 0; out && q < f->n; q++) {
        PyObject *v = field_value(&f->f[q]);
        if (!v || PyDict_SetItemString(out, f->f[q].name, v)) Py_CLEAR(out);
        Py_XDECREF(v);
    }
    return out;
}
