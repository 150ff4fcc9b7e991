/* Bindings of the balance correction and ECCO options of a run (argument conversion only; the objects are built by
 * master/setup.c). */
#ifndef COSIM_PY_ENERGY_H
#define COSIM_PY_ENERGY_H

#include "control/ecco.h"
#include "master/setup.h"
#include "py/params.h"

typedef struct cs_py_energy {
    unsigned char *corrected;   /* balance: nu flags */
    cs_balance_spec balance;
    const cs_ecco_spec *ecco;   /* the run's ECCO spec (in cfg->step_control), or NULL */
    cs_py_keep keep;
    PyObject *bal_t, *bal_v, *ecco_t, *ecco_v;   /* record arrays */
    cs_observer *bal_rec, *ecco_rec;
} cs_py_energy;

/* opts["balance"], opts["balance_corrected"] (absent or None: off) into cfg, and the check of an ECCO spec in
 * cfg->step_control (parsed before); 0 or -1 with an exception. */
int cs_py_energy_options(PyObject *opts, int nu, cs_run_config *cfg, cs_py_energy *e);
/* Record arrays and observers for a created run (cap records); 0 or -1 with an exception. */
int cs_py_energy_observers(cs_run *run, long cap, cs_py_energy *e);
/* Adds "balance_t", "balance", "ecco_t", "ecco" to the result dict; 0 or -1. */
int cs_py_energy_results(PyObject *out, cs_py_energy *e);
void cs_py_energy_free(cs_py_energy *e);

extern PyMethodDef cs_py_energy_methods[];

#endif
