/* Binding of the interface Jacobian of one unit over one window (kraft2021 §6.3, App. A): argument conversion only;
 * the numerics are the unit's sensitivity op (exact, sap) and cs_unit_window_jacobian_fd (schemes/implicit.c). */
#include "py/pyutil.h"

#include <stdlib.h>
#include <string.h>

#include "py/specs.h"
#include "schemes/iterative.h"
#include "units/model_unit.h"

/* interface_jacobian(model_spec, solver_spec, x, T, H, ell, coefs, delta, method) -> G (ny x nu)
 * coefs: (deg+1) x nu polynomial input in s (its end value is the uend of the outputs); method 0 fd, 1 sap, 2 exact,
 * 3 sap2 (the codes of CS_JAC_*) */
static PyObject *py_interface_jacobian(PyObject *self, PyObject *args) {
    PyObject *ospec, *osolver, *ox, *oell, *ocoef, *odelta;
    double T, H;
    int method;
    if (!PyArg_ParseTuple(args, "OOOddOOOi:interface_jacobian", &ospec, &osolver, &ox, &T, &H, &oell, &ocoef, &odelta,
                          &method))
        return NULL;
    cs_solver_opts so;
    memset(&so, 0, sizeof so);
    if (cs_py_solver_from_spec(osolver, &so)) return NULL;
    cs_model *m = cs_py_model_from_spec(ospec, 0);
    if (!m) return NULL;
    PyArrayObject *x = NULL, *ell = NULL, *coef = NULL, *delta = NULL;
    PyObject *out = NULL;
    cs_unit *u = NULL;
    void *snap = NULL;
    double *work = NULL, *uend = NULL;
    cs_err err = {0};
    npy_intp d1[1] = {-1}, d2[2] = {-1, -1};
    if (!(x = cs_py_darray(ox, "x", 1, d1, 1)) || !(ell = cs_py_darray(oell, "ell", 1, d1, 1)) ||
        !(coef = cs_py_darray(ocoef, "coefs", 2, d2, 1)) || !(delta = cs_py_darray(odelta, "delta", 1, d1, 1)))
        goto done;
    int deg = (int)PyArray_DIM(ell, 0) - 1;
    if (PyArray_DIM(x, 0) != m->nx || PyArray_DIM(coef, 1) != m->nu || PyArray_DIM(delta, 0) != m->nu ||
        deg < 0 || deg > CS_MAXDEG || PyArray_DIM(coef, 0) != deg + 1) {
        PyErr_SetString(PyExc_ValueError, "interface_jacobian: sizes of x, ell, coefs or delta do not match the model");
        goto done;
    }
    if (method < CS_JAC_FD || method > CS_JAC_SAP2) {
        PyErr_SetString(PyExc_ValueError, "method: 0 (fd), 1 (sap), 2 (exact) or 3 (sap2)");
        goto done;
    }
    if (cs_model_unit_create(m, &so, &u, &err)) { cs_py_raise(&err); goto done; }
    npy_intp dg[2] = {m->ny, m->nu};
    out = PyArray_ZEROS(2, dg, NPY_DOUBLE, 0);
    work = calloc(2 * (size_t)m->ny + 2 * (size_t)m->nu + 2, sizeof(double));
    snap = cs_unit_snapshot_create(u);
    double *c = calloc((size_t)(CS_MAXDEG + 1) * m->nu + 1, sizeof(double));
    if (!out || !work || !snap || !c) { free(c); Py_CLEAR(out); PyErr_NoMemory(); goto done; }
    memcpy(c, PyArray_DATA(coef), sizeof(double) * (size_t)(deg + 1) * m->nu);
    cs_input in = {.nu = m->nu, .deg = deg, .T = T, .H = H, .c = c};
    uend = work + 2 * m->ny + m->nu; /* after the fd work (y0, y1, the perturbed end values) */
    cs_input_eval(&in, T + H, uend);
    int rc = cs_unit_set_state(u, T, PyArray_DATA(x), &err);
    double *G = PyArray_DATA((PyArrayObject *)out);
    Py_BEGIN_ALLOW_THREADS
    if (!rc) {
        cs_unit_save_state(u, snap);
        if (method == 0)
            rc = cs_unit_window_jacobian_fd(u, snap, T, H, &in, PyArray_DATA(ell), deg, uend, PyArray_DATA(delta), G,
                                            work, &err);
        else
            rc = cs_unit_sensitivity(u, T, H, PyArray_DATA(ell), deg, cs_jacobian_sensitivity_mode(method), &in,
                                     uend, G, &err);
    }
    Py_END_ALLOW_THREADS
    free(c);
    if (rc) { Py_CLEAR(out); cs_py_raise_model(&err, m); }
done:
    cs_unit_snapshot_destroy(u, snap);
    cs_unit_destroy(u);
    cs_model_destroy(m);
    free(work);
    Py_XDECREF(x); Py_XDECREF(ell); Py_XDECREF(coef); Py_XDECREF(delta);
    return out;
}

PyMethodDef cs_py_iterative_methods[] = {
    {"interface_jacobian", py_interface_jacobian, METH_VARARGS,
     "interface_jacobian(model_spec, solver_spec, x, T, H, ell, coefs, delta, method) -> dy(T+H)/du_end."},
    {NULL, NULL, 0, NULL},
};
