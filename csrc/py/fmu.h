/* Bindings of FMU units (csrc/py/fmu.c): the loaded binary as a capsule, the unit spec built by cosim/fmu.py. */
#ifndef COSIM_PY_FMU_H
#define COSIM_PY_FMU_H

#include "py/pyutil.h"
#include "integrators/stepper.h"
#include "models/model.h"
#include "units/unit.h"

/* Is `spec` an FMU spec tuple ("fmu", ...)? */
int cs_py_is_fmu_spec(PyObject *spec);
/* The unit of an FMU spec, initialised at t0 (NULL with a Python exception on failure). */
cs_unit *cs_py_fmu_unit_from_spec(PyObject *spec, const cs_solver_opts *solver, double t0, int index);
/* A model-exchange FMU as a bare model x' = f(t, x, u), y = g(t, x, u) for the monolithic composite (no event
 * handling: refused for FMUs with event indicators or time events, and for co-simulation FMUs). */
cs_model *cs_py_fmu_model_from_spec(PyObject *spec, double t0, int index);

#endif
