/* The model + integrator unit (units/model_unit.c). */
#ifndef COSIM_MODEL_UNIT_H
#define COSIM_MODEL_UNIT_H

#include "integrators/stepper.h"
#include "units/unit.h"

/* A unit integrating `model` (not owned; must outlive the unit) with the integrator described by opts. */
cs_unit *cs_model_unit_new(cs_model *model, const cs_solver_opts *opts, cs_err *err);

#endif
