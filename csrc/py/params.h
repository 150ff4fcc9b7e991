/* The one parser of the specs Python passes to the C core: a dict of named values filled into a spec struct by its
 * parameter table (params.h), and a registry kind chosen by name (master/registry.h). Argument conversion only. */
#ifndef COSIM_PY_PARAMS_H
#define COSIM_PY_PARAMS_H

#include "py/pyutil.h"

#include "master/registry.h"

/* What the parsed specs point into (arrays, converted vectors, the specs themselves): freed together. */
typedef struct cs_py_keep {
    PyObject **objects;
    void **blocks;
    int nobjects, nblocks, cap_objects, cap_blocks;
} cs_py_keep;

void cs_py_keep_free(cs_py_keep *keep);
/* Keep a new reference until cs_py_keep_free (consumed, also on failure). 0 or -1 with an exception. */
int cs_py_keep_object(cs_py_keep *keep, PyObject *o);

/* Fills spec (already holding the defaults) from dict d by the table; keys the table lacks are refused (TypeError),
 * keys d lacks keep their default. `what` names the spec in messages. 0 or -1 with an exception set. */
int cs_py_params_read(PyObject *d, const char *what, const cs_param *params, int nparams, void *spec,
                      cs_py_keep *keep);

/* d = {"kind": name, parameters...} of a registry capability: the kind and its spec (allocated in keep, defaults
 * applied). 0 or -1 with an exception set. */
int cs_py_choice_read(PyObject *d, const char *capability, cs_choice *out, cs_py_keep *keep);

/* A single named value of a dict (run options): missing keys raise TypeError naming `what`. 0 or -1. */
int cs_py_get_int(PyObject *d, const char *what, const char *key, int *out);
int cs_py_get_long(PyObject *d, const char *what, const char *key, long *out);
int cs_py_get_double(PyObject *d, const char *what, const char *key, double *out);
/* int64-convertible vector -> malloc'ed ints (NULL + exception on failure); indices: values >= 0 only. */
int *cs_py_int_vector(PyObject *o, const char *name, int indices, npy_intp *n);

/* `_core.kinds`: {capability: {kind: (parameter names)}} for the tests that tie the Python option classes to the
 * C parameter tables. 0 or -1. */
int cs_py_add_kinds(PyObject *module);

#endif
