/* Bindings of FMU units: argument conversion only (the FMI calls are in csrc/fmi, the units in csrc/units).
 *
 *   fmu_load(path, version, kind, once) -> capsule   dlopen the binary, resolve the FMI functions; once: the
 *                                                   FMU allows one live instance (canBeInstantiatedOnlyOncePerProcess)
 *   fmu_log(capsule) -> (messages, dropped)       drain the FMU's log queue: [(status, instance, category, text)]
 *   fmu_set_log_callback(capsule, f)              f(status, instance, category, text) as each message arrives
 *   fmu_initial_states(spec, t0) -> ndarray      ME: the continuous states after initialisation
 *
 * The spec tuple built by cosim/fmu.py (FMU._spec):
 *   ("fmu", name, capsule, kind, token, resources, vr_u, vr_y, nx, nz, vr_real, real, vr_int, ints, vr_bool, bools,
 *    feedthrough, max_input_order, max_output_order, directional, can_state, logging_on, tolerance,
 *    intermediate_inputs, max_events, discrete_inputs, type_u, type_y)   type_u/type_y: variable type codes
 *    (CS_FMI_F64, ...) of the inputs and outputs; then vr_typed, type_typed, typed (start values of other numeric
 *    types), vr_str, strs (String start values), vr_bin, bins (FMI 3 Binary start values: bytes), elem_typed,
 *    elem_u, elem_y (element index of each typed start value, input and output within its FMI 3 array variable;
 *    0 for scalars)   intermediate_inputs: indices into vr_u of the FMI 3 inputs declared
 *    intermediateUpdate="true"; max_events: ME events per macro step before the step fails (Zeno guard) */
#include "py/fmu.h"

#include <stdlib.h>
#include <string.h>

#include "fmi/fmi.h"
#include "units/fmu_unit.h"

#define CAPSULE "cosim.fmi_lib"

static void capsule_free(PyObject *cap) {
    cs_fmi_lib *lib = PyCapsule_GetPointer(cap, CAPSULE);
    if (!lib) return;
    PyObject *callback = lib->sink_ctx;
    cs_fmi_lib_close(lib);
    Py_XDECREF(callback);
}

/* (status, instance, category, text) with bytes that are not UTF-8 replaced; NULL with an exception set */
static PyObject *message_tuple(const cs_fmi_msg *m) {
    PyObject *txt = PyUnicode_DecodeUTF8(m->text, (Py_ssize_t)strlen(m->text), "replace");
    PyObject *ins = PyUnicode_DecodeUTF8(m->instance, (Py_ssize_t)strlen(m->instance), "replace");
    PyObject *cat = PyUnicode_DecodeUTF8(m->category, (Py_ssize_t)strlen(m->category), "replace");
    PyObject *t = (txt && ins && cat) ? Py_BuildValue("(iOOO)", m->status, ins, cat, txt) : NULL;
    Py_XDECREF(txt); Py_XDECREF(ins); Py_XDECREF(cat);
    return t;
}

/* the FMU logged (any thread, with or without the GIL): the Python log_callback, at once */
static void python_sink(void *ctx, const cs_fmi_msg *m) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *t = message_tuple(m);
    PyObject *r = t ? PyObject_CallObject((PyObject *)ctx, t) : NULL;
    if (!r) PyErr_WriteUnraisable((PyObject *)ctx);   /* a callback cannot fail the FMU call that logged */
    Py_XDECREF(r);
    Py_XDECREF(t);
    PyGILState_Release(g);
}

static PyObject *py_fmu_set_log_callback(PyObject *self, PyObject *args) {
    PyObject *cap, *callback;
    if (!PyArg_ParseTuple(args, "OO:fmu_set_log_callback", &cap, &callback)) return NULL;
    if (!PyCapsule_IsValid(cap, CAPSULE)) return PyErr_Format(PyExc_TypeError, "fmu: expected a loaded FMU binary");
    if (callback != Py_None && !PyCallable_Check(callback))
        return PyErr_Format(PyExc_TypeError, "log_callback: expected a callable or None");
    cs_fmi_lib *lib = PyCapsule_GetPointer(cap, CAPSULE);
    PyObject *old = lib->sink_ctx;
    pthread_mutex_lock(&lib->lock);
    if (callback == Py_None) { lib->sink = NULL; lib->sink_ctx = NULL; }
    else { Py_INCREF(callback); lib->sink_ctx = callback; lib->sink = python_sink; }
    pthread_mutex_unlock(&lib->lock);
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

static PyObject *py_fmu_load(PyObject *self, PyObject *args) {
    const char *path;
    int version, kind, once = 0;
    if (!PyArg_ParseTuple(args, "sii|p:fmu_load", &path, &version, &kind, &once)) return NULL;
    if (kind != CS_FMI_CS && kind != CS_FMI_ME) return PyErr_Format(PyExc_ValueError, "kind: must be 0 (cs) or 1 (me)");
    cs_fmi_lib *lib = NULL;
    cs_err err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = cs_fmi_lib_open(path, version, kind, &lib, &err);
    Py_END_ALLOW_THREADS
    if (rc) return cs_py_raise(&err);
    lib->once = once;
    PyObject *cap = PyCapsule_New(lib, CAPSULE, capsule_free);
    if (!cap) cs_fmi_lib_close(lib);
    return cap;
}

static cs_fmi_lib *lib_of(PyObject *cap) {
    if (!PyCapsule_IsValid(cap, CAPSULE)) {
        PyErr_SetString(PyExc_TypeError, "fmu: expected a loaded FMU binary (from _core.fmu_load)");
        return NULL;
    }
    return PyCapsule_GetPointer(cap, CAPSULE);
}

static PyObject *py_fmu_log(PyObject *self, PyObject *args) {
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O:fmu_log", &cap)) return NULL;
    cs_fmi_lib *lib = lib_of(cap);
    if (!lib) return NULL;
    cs_fmi_msg *buf = malloc(sizeof *buf * CS_FMI_LOG_MAX);
    if (!buf) return PyErr_NoMemory();
    long dropped = 0;
    long n = cs_fmi_lib_drain(lib, buf, CS_FMI_LOG_MAX, &dropped);
    PyObject *lst = PyList_New(n);
    for (long k = 0; lst && k < n; k++) {
        PyObject *t = Py_BuildValue("(is#s#s#)", buf[k].status, buf[k].instance, (Py_ssize_t)strlen(buf[k].instance),
                                    buf[k].category, (Py_ssize_t)strlen(buf[k].category), buf[k].text,
                                    (Py_ssize_t)strlen(buf[k].text));
        if (!t) {
            /* an FMU's message that is not UTF-8: keep it, with the bad bytes replaced */
            PyErr_Clear();
            PyObject *txt = PyUnicode_DecodeUTF8(buf[k].text, (Py_ssize_t)strlen(buf[k].text), "replace");
            PyObject *ins = PyUnicode_DecodeUTF8(buf[k].instance, (Py_ssize_t)strlen(buf[k].instance), "replace");
            PyObject *cat = PyUnicode_DecodeUTF8(buf[k].category, (Py_ssize_t)strlen(buf[k].category), "replace");
            t = (txt && ins && cat) ? Py_BuildValue("(iOOO)", buf[k].status, ins, cat, txt) : NULL;
            Py_XDECREF(txt); Py_XDECREF(ins); Py_XDECREF(cat);
        }
        if (!t) { Py_CLEAR(lst); break; }
        PyList_SET_ITEM(lst, k, t);
    }
    free(buf);
    if (!lst) return NULL;
    return Py_BuildValue("(Nl)", lst, dropped);
}

/* sequence of non-negative ints -> malloc'ed unsigned array */
static unsigned *uints(PyObject *o, const char *name, int *n) {
    PyObject *seq = PySequence_Fast(o, name);
    if (!seq) return NULL;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
    if (m > (1 << 24)) { Py_DECREF(seq); PyErr_Format(PyExc_ValueError, "%s: too many entries", name); return NULL; }
    unsigned *out = malloc(sizeof(unsigned) * (size_t)(m + 1));
    if (!out) { Py_DECREF(seq); PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t k = 0; k < m; k++) {
        unsigned long v = PyLong_AsUnsignedLong(PySequence_Fast_GET_ITEM(seq, k));
        if ((v == (unsigned long)-1 && PyErr_Occurred()) || v > 0xffffffffUL) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: value reference out of range", name);
            free(out); Py_DECREF(seq);
            return NULL;
        }
        out[k] = (unsigned)v;
    }
    Py_DECREF(seq);
    *n = (int)m;
    return out;
}

static int *ints(PyObject *o, const char *name, int n) {
    PyObject *seq = PySequence_Fast(o, name);
    if (!seq) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != n) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s: expected %d values", name, n);
        return NULL;
    }
    int *out = malloc(sizeof(int) * (size_t)(n + 1));
    if (!out) { Py_DECREF(seq); PyErr_NoMemory(); return NULL; }
    for (int k = 0; k < n; k++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, k));
        if ((v == -1 && PyErr_Occurred()) || v < -2147483647L - 1 || v > 2147483647L) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: value out of the int32 range", name);
            free(out); Py_DECREF(seq);
            return NULL;
        }
        out[k] = (int)v;
    }
    Py_DECREF(seq);
    return out;
}

int cs_py_is_fmu_spec(PyObject *spec) {
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) < 1 || !PyUnicode_Check(PyTuple_GET_ITEM(spec, 0))) return 0;
    return PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(spec, 0), "fmu") == 0;
}

/* as_model = 0: a unit (integrated with solver where ME); 1: the ME FMU as a bare cs_model (monolithic) */
static void *from_spec(PyObject *spec, const cs_solver_opts *solver, double t0, int index, int as_model) {
    const char *tag, *name, *token, *resources;
    PyObject *cap, *ovu, *ovy, *ovr, *oreal, *ovi, *oint, *ovb, *obool, *oiu, *odi, *otu, *oty, *ovt, *ott, *otv, *ovs, *ostr;
    PyObject *ovx, *obin, *oet, *oeu, *oey;
    cs_fmu_spec s;
    memset(&s, 0, sizeof s);
    if (!PyArg_ParseTuple(spec, "ssOiss" "OOii" "OOOOOO" "piiiipdOiOOOOOOOO" "OOOOO:fmu spec", &tag, &name, &cap,
                          &s.kind, &token, &resources, &ovu, &ovy, &s.nx, &s.nz, &ovr, &oreal, &ovi, &oint, &ovb,
                          &obool, &s.feedthrough, &s.max_input_order, &s.max_output_order, &s.directional,
                          &s.can_state, &s.logging_on, &s.tol, &oiu, &s.max_events, &odi, &otu, &oty, &ovt, &ott, &otv,
                          &ovs, &ostr, &ovx, &obin, &oet, &oeu, &oey))
        return NULL;
    if (s.nx < 0 || s.nz < 0 || s.nx > (1 << 24) || s.nz > (1 << 24)) {
        PyErr_Format(PyExc_ValueError, "subsystems[%d]: state or event indicator count out of range", index);
        return NULL;
    }
    if (!(s.lib = lib_of(cap))) return NULL;
    unsigned *vu = NULL, *vy = NULL, *vr = NULL, *vi = NULL, *vb = NULL;
    int *iv = NULL, *bv = NULL, *iu = NULL, *di = NULL, *tu = NULL, *ty = NULL, *tt = NULL;
    unsigned *vt = NULL, *vs = NULL, *vx = NULL;
    int *et = NULL, *eu = NULL, *ey = NULL;
    PyArrayObject *typed = NULL;
    const char **strs = NULL;
    const uint8_t **bins = NULL;
    size_t *bin_size = NULL;
    int ntyped = 0, nstr = 0, nbin = 0;
    PyArrayObject *real = NULL;
    void *u = NULL;
    int nreal = 0, nint = 0, nbool = 0;
    if (!(vu = uints(ovu, "inputs", &s.nu)) || !(vy = uints(ovy, "outputs", &s.ny)) ||
        !(vr = uints(ovr, "start_values", &nreal)) || !(vi = uints(ovi, "start_values", &nint)) ||
        !(vb = uints(ovb, "start_values", &nbool)))
        goto done;
    npy_intp d[1] = {nreal};
    if (!(real = cs_py_darray(oreal, "start_values", 1, d, 0)) || !(iv = ints(oint, "start_values", nint)) ||
        !(bv = ints(obool, "start_values", nbool)))
        goto done;
    Py_ssize_t niu = PySequence_Size(oiu);
    if (niu < 0 || niu > s.nu) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "subsystems[%d]: too many intermediate-update inputs", index);
        goto done;
    }
    if (!(iu = ints(oiu, "intermediate_inputs", (int)niu))) goto done;
    Py_ssize_t nd = PySequence_Size(odi);
    if (nd < 0 || nd > s.nu) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "subsystems[%d]: too many discrete inputs", index);
        goto done;
    }
    if (!(di = ints(odi, "discrete_inputs", (int)nd))) goto done;
    if (!(tu = ints(otu, "input types", s.nu)) || !(ty = ints(oty, "output types", s.ny))) goto done;
    for (int k = 0; k < s.nu + s.ny; k++) {
        const int code = k < s.nu ? tu[k] : ty[k - s.nu];
        if (code < 0 || code >= CS_FMI_NTYPES) {
            PyErr_Format(PyExc_ValueError, "subsystems[%d]: unknown variable type code %d", index, code);
            goto done;
        }
    }
    s.type_u = tu;
    s.type_y = ty;
    if (!(vt = uints(ovt, "start_values", &ntyped)) || !(tt = ints(ott, "start_values", ntyped)) ||
        !(vs = uints(ovs, "start_values", &nstr)))
        goto done;
    npy_intp dt[1] = {ntyped};
    if (!(typed = cs_py_darray(otv, "start_values", 1, dt, 0))) goto done;
    if (PySequence_Size(ostr) != nstr) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "subsystems[%d]: String start values", index);
        goto done;
    }
    if (!(strs = calloc((size_t)nstr + 1, sizeof *strs))) { PyErr_NoMemory(); goto done; }
    for (int k = 0; k < nstr; k++) {   /* UTF-8 buffers owned by the spec's str objects (alive during the call) */
        PyObject *o = PySequence_GetItem(ostr, k);
        if (!o) goto done;
        strs[k] = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
        Py_DECREF(o);
        if (!strs[k]) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "subsystems[%d]: String start values must be str", index);
            goto done;
        }
    }
    if (!(vx = uints(ovx, "start_values", &nbin)) || !(et = ints(oet, "start_values", ntyped)) ||
        !(eu = ints(oeu, "input elements", s.nu)) || !(ey = ints(oey, "output elements", s.ny)))
        goto done;
    if (PySequence_Size(obin) != nbin) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "subsystems[%d]: Binary start values", index);
        goto done;
    }
    bins = calloc((size_t)nbin + 1, sizeof *bins);
    bin_size = calloc((size_t)nbin + 1, sizeof *bin_size);
    if (!bins || !bin_size) { PyErr_NoMemory(); goto done; }
    for (int k = 0; k < nbin; k++) {   /* buffers owned by the spec's bytes objects (alive during the call) */
        PyObject *o = PySequence_GetItem(obin, k);
        if (!o) goto done;
        const int ok = PyBytes_Check(o);
        if (ok) {
            bins[k] = (const uint8_t *)PyBytes_AS_STRING(o);
            bin_size[k] = (size_t)PyBytes_GET_SIZE(o);
        }
        Py_DECREF(o);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "subsystems[%d]: Binary start values must be bytes", index);
            goto done;
        }
    }
    s.starts.nbin = nbin;
    s.starts.vr_bin = vx;
    s.starts.bin_size = bin_size;
    s.starts.bins = bins;
    s.starts.elem_typed = et;
    s.elem_u = eu;
    s.elem_y = ey;
    s.nd = (int)nd;
    s.di = di;
    s.niu = (int)niu;
    s.iu = iu;
    s.name = name;
    s.token = token;
    s.resources = resources;
    s.vr_u = vu;
    s.vr_y = vy;
    s.starts.nreal = nreal; s.starts.nint = nint; s.starts.nbool = nbool;
    s.starts.vr_real = vr; s.starts.vr_int = vi; s.starts.vr_bool = vb;
    s.starts.real = PyArray_DATA(real); s.starts.ints = iv; s.starts.bools = bv;
    s.starts.ntyped = ntyped; s.starts.vr_typed = vt; s.starts.type_typed = tt; s.starts.typed = PyArray_DATA(typed);
    s.starts.nstr = nstr; s.starts.vr_str = vs; s.starts.strs = strs;
    s.t0 = t0;
    cs_err err = {0};
    Py_BEGIN_ALLOW_THREADS
    cs_model *m = NULL;
    cs_unit *un = NULL;
    if (as_model) cs_fmu_model_create_from_spec(&s, &m, &err);
    else cs_fmu_unit_create(&s, solver, &un, &err);
    u = as_model ? (void *)m : (void *)un;
    Py_END_ALLOW_THREADS
    if (!u) cs_py_raise(&err);
done:
    free(vu); free(vy); free(vr); free(vi); free(vb); free(iv); free(bv); free(iu); free(di); free(tu); free(ty); free(tt); free(vt); free(vs); free(strs);
    free(vx); free(et); free(eu); free(ey); free(bins); free(bin_size);
    Py_XDECREF(typed);
    Py_XDECREF(real);
    return u;
}

cs_unit *cs_py_fmu_unit_from_spec(PyObject *spec, const cs_solver_opts *solver, double t0, int index) {
    return from_spec(spec, solver, t0, index, 0);
}

cs_model *cs_py_fmu_model_from_spec(PyObject *spec, double t0, int index) {
    return from_spec(spec, NULL, t0, index, 1);
}

static PyObject *py_fmu_initial_states(PyObject *self, PyObject *args) {
    PyObject *spec;
    double t0;
    if (!PyArg_ParseTuple(args, "Od:fmu_initial_states", &spec, &t0)) return NULL;
    if (!cs_py_is_fmu_spec(spec)) return PyErr_Format(PyExc_TypeError, "spec: expected an FMU spec");
    cs_solver_opts so;
    memset(&so, 0, sizeof so);
    so.kind = CS_SOLVER_EULER;
    so.substeps = 1;
    cs_unit *u = cs_py_fmu_unit_from_spec(spec, &so, t0, 0);
    if (!u) return NULL;
    double *x = calloc((size_t)u->nx + 1, sizeof(double));
    if (!x) { cs_unit_destroy(u); return PyErr_NoMemory(); }
    cs_err err = {0};
    int rc = cs_fmu_unit_initial_states(u, x, &err);
    PyObject *out = rc ? cs_py_raise(&err) : cs_py_vec(u->nx, x);
    free(x);
    Py_BEGIN_ALLOW_THREADS
    cs_unit_destroy(u);
    Py_END_ALLOW_THREADS
    return out;
}

PyMethodDef cs_py_fmu_methods[] = {
    {"fmu_load", py_fmu_load, METH_VARARGS, "fmu_load(path, version, kind, once=False) -> capsule of the loaded FMU binary."},
    {"fmu_log", py_fmu_log, METH_VARARGS, "fmu_log(capsule) -> ([(status, instance, category, text)], dropped)."},
    {"fmu_set_log_callback", py_fmu_set_log_callback, METH_VARARGS,
     "fmu_set_log_callback(capsule, f) -> None: f(status, instance, category, text) for every message as it "
     "arrives (None: back to the queue)."},
    {"fmu_initial_states", py_fmu_initial_states, METH_VARARGS,
     "fmu_initial_states(spec, t0) -> the continuous states of a model-exchange FMU after initialisation."},
    {NULL, NULL, 0, NULL},
};
