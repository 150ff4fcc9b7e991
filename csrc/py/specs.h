#ifndef COSIM_SPECS_H
#define COSIM_SPECS_H

#include "py/pyutil.h"
#include "integrators/stepper.h"

/* Model from ("lti", name, A, B, C, D) | ("cfunc", name, nx, nu, ny, feedthrough, rhs, output, user) |
 * ("builtin", name, kind, params) | ("python", name, nx, nu, ny, feedthrough, rhs, output, output_dt).
 * NULL with a Python exception set on failure. */
cs_model *cs_py_model_from_spec(PyObject *spec, int index);
/* Solver from its spec dict {kind, substeps, h, rtol, atol, ...} (the registry's "solver" parameters; missing keys
 * keep their defaults); -1 with an exception on failure. */
int cs_py_solver_from_spec(PyObject *spec, cs_solver_opts *o);

#endif
