/* Bindings for csrc/sysid (MOESP, recursive least squares, Gilbert realization). */
#include "py/pyutil.h"

PyMethodDef cs_py_sysid_methods[] = {
    {NULL, NULL, 0, NULL},
};
