/* The logs of the pre-step and NEPCE couplings as Python objects (their specs are parsed by py/params.c).
 * Conversion only. */
#ifndef COSIM_PY_COUPLING_OPTS_H
#define COSIM_PY_COUPLING_OPTS_H

#include "py/pyutil.h"

#include "master/setup.h"

/* The coupling's log as a dict (None for the signal coupling); NULL with an exception on failure. */
PyObject *cs_py_coupling_log(const cs_run *run, const cs_kind *kind);

#endif
