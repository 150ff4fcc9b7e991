/* Bindings for csrc/analysis (stability and local-error analysis). */
#include "py/pyutil.h"

PyMethodDef cs_py_analysis_methods[] = {
    {NULL, NULL, 0, NULL},
};
