/* The models behind a run's units, and the unit factory over them: model units (with quadrature states for balance
 * correction), the one unit of the monolithic composite, and the ports of each unit to be made (sizes,
 * feed-through, linearity: from a prebuilt unit where given, else from the model) that the run's network needs.
 * The run set-up (master/setup.c) holds a model set and asks it for units, so the master never touches a model or
 * an integrator itself (DESIGN.md §1). The integrator spec a model unit is made with (cs_solver_opts, its parameter
 * table cs_solver_kind) comes with units/model_unit.h. */
#ifndef COSIM_MODEL_SET_H
#define COSIM_MODEL_SET_H

#include "units/model_unit.h"

struct cs_network;

typedef struct cs_model_set {
    int n;                      /* subsystems */
    cs_model **models;          /* n entries (NULL where a prebuilt unit stands), owned */
    cs_model *composite;        /* the monolithic composite over the n models (owned), or NULL */
} cs_model_set;

/* Takes ownership of the n models (also on failure: they are destroyed then); the array is copied. */
int cs_model_set_init(cs_model_set *s, int n, cs_model *const *models, cs_err *err);
/* The inputs, outputs, feed-through and linearity of each unit (n entries each): units[i] where units (may be NULL)
 * has it, else model i's; after cs_model_set_monolithic, the composite's alone (one entry). */
void cs_model_set_ports(const cs_model_set *s, cs_unit *const *units, int *nu, int *ny, int *feedthrough,
                        int *linear);
/* The monolithic reference: the composite of the n models over `net` (the network over the models, which must
 * outlive the set); its one unit is then made by cs_model_set_units. */
int cs_model_set_monolithic(cs_model_set *s, struct cs_network *net, cs_err *err);
/* Fills the NULL entries of units with model units made with solvers[i] (with quadrature states where
 * `quadrature`): units[0..n), or units[0] over the composite after cs_model_set_monolithic. */
int cs_model_set_units(const cs_model_set *s, const cs_solver_opts *solvers, int quadrature, cs_unit **units,
                       cs_err *err);
/* What the first failing model left for the caller (cs_model_take_cause), or NULL. */
void *cs_model_set_take_cause(const cs_model_set *s);
/* Destroys the models and the composite; the set is empty afterwards. */
void cs_model_set_free(cs_model_set *s);

#endif
