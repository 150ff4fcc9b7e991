/* See master/registry.h. One line per kind; the descriptors live in the kinds' implementation files. */
#include "master/registry.h"

#include <string.h>

#include "control/adaptive.h"
#include "control/ecco.h"
#include "coupling/balance.h"
#include "coupling/callback.h"
#include "coupling/mbcorr.h"
#include "coupling/nepce.h"
#include "coupling/prestep.h"
#include "coupling/signal.h"
#include "schemes/iterative.h"
#include "units/model_unit.h"   /* the solver spec: the integrator a model unit is made with */

/* The first is the run's default. */
static const cs_kind *const couplings[] = {
    &cs_coupling_signal_kind,
    &cs_coupling_prestep_kind,
    &cs_coupling_nepce_kind,
    &cs_coupling_mbcorr_kind,
    &cs_coupling_callback_kind,
};

/* The scheme objects' kind (CS_SCHEME_*, schemes/scheme.h) is their index here (tests/test_codes.py). */
static const cs_kind *const schemes[] = {
    &cs_scheme_jacobi_kind,
    &cs_scheme_gauss_seidel_kind,
    &cs_scheme_implicit_kind,
    &cs_scheme_waveform_kind,
};

/* Step controllers with an error estimate (the fixed grid and the rejecting test controller are the run's
 * defaults, master/setup.c). */
static const cs_kind *const controls[] = {
    &cs_control_kraft_kind,
    &cs_control_ecco_kind,
};

/* Parameter-only specs. */
static const cs_kind *const solver_spec[] = {&cs_solver_kind};
static const cs_kind *const balance_spec[] = {&cs_balance_kind};

#define CAPABILITY(name, table) {name, table, (int)(sizeof table / sizeof table[0])}
const cs_capability cs_registry[] = {
    CAPABILITY("coupling", couplings), CAPABILITY("scheme", schemes), CAPABILITY("step_control", controls),
    CAPABILITY("solver", solver_spec), CAPABILITY("balance", balance_spec),
};
const int cs_registry_size = (int)(sizeof cs_registry / sizeof cs_registry[0]);

const cs_capability *cs_registry_capability(const char *name) {
    for (int c = 0; c < cs_registry_size; c++)
        if (strcmp(cs_registry[c].name, name) == 0) return &cs_registry[c];
    return NULL;
}

int cs_registry_chosen(const cs_capability *cap) {
    return cap->nkinds > 0 && cap->kinds[0]->create.coupling != NULL;   /* any member: the union holds one pointer */
}

const cs_kind *cs_registry_kind(const cs_capability *cap, const char *name) {
    for (int k = 0; k < cap->nkinds; k++)
        if (strcmp(cap->kinds[k]->name, name) == 0) return cap->kinds[k];
    return NULL;
}
