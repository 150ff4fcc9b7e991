/* Helpers shared by the CPython bindings (argument conversion and error mapping only; no numerics here). */
#ifndef COSIM_PYUTIL_H
#define COSIM_PYUTIL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL cosim_ARRAY_API
#include <numpy/arrayobject.h>

#include "common.h"

/* Raise the Python exception that matches err->code (ValueError, MemoryError, RuntimeError, ...). */
PyObject *cs_py_raise(const cs_err *err);
/* cs_py_raise for a failure in model m (NULL: none): the exception a Python model's callback raised
 * (cs_model_take_cause) becomes the __cause__ of the error; KeyboardInterrupt and SystemExit propagate as themselves,
 * as in cosim.simulate. Returns NULL. */
struct cs_model;
PyObject *cs_py_raise_model(const cs_err *err, struct cs_model *m);
/* The rule for exceptions from Python callbacks (models, hooks) that end a C call: one that is not an Exception
 * (KeyboardInterrupt, SystemExit) propagates as itself; others become the __cause__ of the error. Raises cause and
 * returns 1 when it is such a one (cause NULL or an Exception: 0, nothing raised); the reference stays the caller's. */
int cs_py_raise_if_base(PyObject *cause);
/* The exception class cs_py_raise uses for a status code (new reference). */
PyObject *cs_py_error_type(int code);

/* Ctrl-C inside a long call (interrupt.h): arm before releasing the GIL, disarm after taking it back. Armed only
 * in Python's main thread while SIGINT has Python's default handler (KeyboardInterrupt); a custom handler keeps
 * its say at the checks between macro steps. CS_PY_RELEASED(stmt) runs stmt that way. */
int cs_py_interrupt_arm(void);
/* The lookups arm needs, done once at import (0, or -1 with an exception set). */
int cs_py_interrupt_init(void);
void cs_py_interrupt_disarm(int token);
#define CS_PY_RELEASED(stmt)                                                                                        \
    do {                                                                                                            \
        int cs_py_armed_ = cs_py_interrupt_arm();                                                                   \
        Py_BEGIN_ALLOW_THREADS stmt;                                                                                \
        Py_END_ALLOW_THREADS cs_py_interrupt_disarm(cs_py_armed_);                                                  \
    } while (0)

/* Set an exception of `type` with a printf-formatted message (C printf: %g and the like work, unlike in
 * PyErr_Format); returns NULL. */
PyObject *cs_py_errorf(PyObject *type, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Convert obj to a C-contiguous float64 array with `ndim` dimensions (new reference, NULL + TypeError/ValueError
 * naming `name` on failure). dims[i] >= 0 requires that size, -1 accepts any. Non-finite entries are rejected when
 * `finite` is set. */
PyArrayObject *cs_py_darray(PyObject *obj, const char *name, int ndim, const npy_intp *dims, int finite);
/* The same for a finite square matrix (ValueError "<name>: must be square" otherwise). */
PyArrayObject *cs_py_square(PyObject *obj, const char *name);

/* Takes the raised exception of a callback (the error indicator is cleared): "<what> raised <Type>: <text>" into
 * msg (size bytes), and the exception itself, with its traceback, into *keep when *keep is NULL (a new reference:
 * the binding re-raises KeyboardInterrupt/SystemExit as themselves and chains the others). */
void cs_py_take_exception(const char *what, char *msg, size_t size, PyObject **keep);

/* New 1-D/2-D float64 arrays filled by copying from C memory. */
PyObject *cs_py_vec(npy_intp n, const double *src);
PyObject *cs_py_mat(npy_intp m, npy_intp n, const double *src);

/* Adds `codes` ({kind: {name: code}} of the C enums, py/codes.c) to the module; 0 or -1 with an exception. */
int cs_py_add_codes(PyObject *module);

/* A method table entry from one name: the Python function `name`, its C function py_<name> (METH_VARARGS) and the
 * docstring "<name><signature and summary>". */
#define CS_PY_FN(name, doc) {#name, py_##name, METH_VARARGS, #name doc}

/* PyArg "O&" converter of an approximation spec, the tuple (kind, k, nsp) of Approximation.spec(), into a
 * cs_approx_spec (coupling/approx.h); validated by cs_approx_check where it is used. */
int cs_py_approx_spec(PyObject *obj, void *out);

/* Method tables contributed by each area (defined in csrc/py/<area>.c). */
extern PyMethodDef cs_py_linalg_methods[];
extern PyMethodDef cs_py_engine_methods[];
extern PyMethodDef cs_py_coupling_methods[];
extern PyMethodDef cs_py_stepper_methods[];
extern PyMethodDef cs_py_analysis_methods[];
extern PyMethodDef cs_py_sysid_methods[];
extern PyMethodDef cs_py_error_methods[];
extern PyMethodDef cs_py_iterative_methods[];
extern PyMethodDef cs_py_control_methods[];
extern PyMethodDef cs_py_fmu_methods[];
extern PyMethodDef cs_py_parallel_methods[];

#endif
