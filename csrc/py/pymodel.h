#ifndef COSIM_PYMODEL_H
#define COSIM_PYMODEL_H

#include "py/pyutil.h"
#include "models/model.h"

/* Model from Python callables rhs(t, x, u), output(t, x, u) and optional output_dt(t, x, u, udot). */
int cs_py_model_create(int nx, int nu, int ny, int feedthrough, PyObject *rhs, PyObject *output, PyObject *output_dt,
                       const char *name, cs_model **out, cs_err *err);

#endif
