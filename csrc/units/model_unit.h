/* The model + integrator unit (units/model_unit.c). It is made with an integrator spec, cs_solver_opts, whose
 * parameter table cs_solver_kind (integrators/stepper.h) the registry lists as the "solver" spec. */
#ifndef COSIM_MODEL_UNIT_H
#define COSIM_MODEL_UNIT_H

#include "integrators/stepper.h"
#include "units/unit.h"

/* A unit integrating `model` (not owned; must outlive the unit) with the integrator described by opts. */
int cs_model_unit_create(cs_model *model, const cs_solver_opts *opts, cs_unit **out, cs_err *err);

/* The same with step integrals (unit.h step_integral; models/quadrature.h): ny quadrature states q = ∫ y dt are
 * integrated with the model by the same integrator and hidden from the unit's states. The balance correction's
 * senders are such units (moshagen §2.6). */
int cs_model_unit_create_quadrature(cs_model *model, const cs_solver_opts *opts, cs_unit **out, cs_err *err);

#endif
