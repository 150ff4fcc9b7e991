/* The extension module cosim._core: collects the method tables of every area. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define PY_ARRAY_UNIQUE_SYMBOL cosim_ARRAY_API
#include <numpy/arrayobject.h>

#include "py/pyutil.h"
#include "py/energy.h"
#include "py/params.h"

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "cosim._core",
    "C core of cosim: co-simulation master, coupling approximations, integrators, analysis, identification.",
    -1, NULL,
};

PyMODINIT_FUNC PyInit__core(void) {
    import_array();
    PyObject *m = PyModule_Create(&core_module);
    if (!m) return NULL;
    PyMethodDef *tables[] = {cs_py_linalg_methods, cs_py_engine_methods, cs_py_coupling_methods, cs_py_stepper_methods, cs_py_analysis_methods, cs_py_sysid_methods,
                            cs_py_error_methods, cs_py_energy_methods, cs_py_iterative_methods,
                            cs_py_control_methods, cs_py_fmu_methods, cs_py_parallel_methods};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        if (PyModule_AddFunctions(m, tables[i]) < 0) { Py_DECREF(m); return NULL; }
    if (cs_py_add_codes(m) < 0 || cs_py_add_kinds(m) < 0 || cs_py_interrupt_init() < 0) { Py_DECREF(m); return NULL; }
    return m;
}
