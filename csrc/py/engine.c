/* Bindings for the co-simulation engine (models, steppers, master). */
#include "py/pyutil.h"

PyMethodDef cs_py_engine_methods[] = {
    {NULL, NULL, 0, NULL},
};
