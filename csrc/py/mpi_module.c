/* The optional extension module cosim._mpi (built only where an MPI library is found, setup.py): hands cosim._core
 * the MPI backend of parallel/share.h as a capsule, so that the core itself links no MPI. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "parallel/mpi_exchange.h"

#define CAPSULE_NAME "cosim.share_backend"

static void capsule_free(PyObject *cap) {
    cs_mpi_backend_free(PyCapsule_GetPointer(cap, CAPSULE_NAME));
}

/* backend(comm_address) -> capsule: the backend over the MPI_Comm at that address (mpi4py.MPI._addressof). */
static PyObject *py_backend(PyObject *self, PyObject *arg) {
    void *addr = PyLong_AsVoidPtr(arg);
    if (!addr && PyErr_Occurred()) return NULL;
    cs_err err = {0};
    cs_share_backend *b = cs_mpi_backend_create(addr, &err);
    if (!b) {
        PyErr_SetString(err.code == CS_ERR_NOMEM ? PyExc_MemoryError : PyExc_ValueError, err.msg);
        return NULL;
    }
    PyObject *cap = PyCapsule_New(b, CAPSULE_NAME, capsule_free);
    if (!cap) cs_mpi_backend_free(b);
    return cap;
}

static PyMethodDef methods[] = {
    {"backend", py_backend, METH_O, "backend(comm_address) -> capsule of the MPI exchange over that communicator"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef mpi_module = {PyModuleDef_HEAD_INIT, "cosim._mpi",
                                        "MPI backend of cosim's distributed units (optional).", -1, methods};

PyMODINIT_FUNC PyInit__mpi(void) { return PyModule_Create(&mpi_module); }
