/* Couplings written in Python (slow path, like the Python models of py/pymodel.c): the callback coupling's table
 * (coupling/callback.h) filled with calls of a Python object's predict / on_unit_done / accept / save / restore,
 * the GIL taken per call, a raised exception turned into a CS_ERR_CALLBACK failure and kept for the binding. */
#ifndef COSIM_PY_PYCOUPLING_H
#define COSIM_PY_PYCOUPLING_H

#include "py/params.h"

/* The run's coupling choice from d (as cs_py_choice_read); d = {"kind": "callback", "object": obj} binds obj. The
 * first exception a callback raises goes to *exc (a new reference) when *exc is NULL. 0 or -1 with an exception. */
int cs_py_coupling_read(PyObject *d, cs_choice *out, cs_py_keep *keep, PyObject **exc);

#endif
