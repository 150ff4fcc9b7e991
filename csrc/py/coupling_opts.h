/* Conversion of the `coupling` run option (built by cosim/coupling.py) into the pre-step / NEPCE specs of
 * master/setup.h, and of their logs into Python objects. Argument conversion only. */
#ifndef COSIM_PY_COUPLING_OPTS_H
#define COSIM_PY_COUPLING_OPTS_H

#include "py/pyutil.h"

#include "master/setup.h"

typedef struct cs_py_coupling_opts {
    cs_prestep_spec prestep;
    cs_nepce_spec nepce;
    PyArrayObject *arrays[6];   /* Sy, Su, Sd, a0, b0, moesp_cfg (owned references) */
} cs_py_coupling_opts;

/* Reads opts["coupling"] (absent or None: signal coupling) into cfg. Returns 0, or -1 with an exception set. */
int cs_py_coupling_opts_read(PyObject *opts, cs_run_config *cfg, cs_py_coupling_opts *o);
void cs_py_coupling_opts_free(cs_py_coupling_opts *o);
/* The coupling's log as a dict (None for the signal coupling); NULL with an exception on failure. */
PyObject *cs_py_coupling_log(const cs_run *run, int kind);

#endif
