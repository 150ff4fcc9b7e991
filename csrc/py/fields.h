/* Named arrays and counts of the C core (cs_fields, kind.h: a coupling's log) as a Python dict.
 * Conversion only: the binding knows no kind. */
#ifndef COSIM_PY_FIELDS_H
#define COSIM_PY_FIELDS_H

#include "py/pyutil.h"

#include "master/registry.h"

/* {name: array or int} (None where f->n < 0); NULL with an exception on failure. */
PyObject *cs_py_fields_dict(const cs_fields *f);

#endif
