/* A model-exchange FMU (FMI 2.0 or 3.0) as a cs_model: x' = f(t, x, u) is fmi2GetDerivatives /
 * fmi3GetContinuousStateDerivatives after SetTime, SetContinuousStates and setting the inputs; y = g(t, x, u) is
 * fmi2GetReal / fmi3GetFloat64 of the outputs. cosim's
 * integrators (CVODE, RK4, Euler) integrate it through the model unit (units/model_unit.c); the FMU's events are
 * handled between integrator steps by cs_fmu_model_events (called by the ME unit in units/fmu_unit.c). */
#ifndef COSIM_FMU_MODEL_H
#define COSIM_FMU_MODEL_H

#include "fmi/fmi.h"
#include "models/model.h"

/* `inst` (initialised, in continuous-time mode) is owned by the model from here on, also on failure.
 * nz: number of event indicators. vr_u, vr_y, their variable types (CS_FMI_F64, ...) and their element indices
 * within FMI 3 array variables (NULL: scalars; fmi/fmi.h cs_fmi_io) are copied. */
int cs_fmu_model_create(cs_fmi_inst *inst, int nx, int nz, int nu, int ny, const unsigned *vr_u, const unsigned *vr_y,
                        const int *type_u, const int *type_y, const int *elem_u, const int *elem_y, int feedthrough,
                        const char *name, cs_model **out, cs_err *err);
cs_fmi_inst *cs_fmu_model_inst(const cs_model *m);
/* The FMU's continuous states (nx) as initialised. */
int cs_fmu_model_states(cs_model *m, double *x, cs_err *err);

/* Event bookkeeping that a rollback restores. */
typedef struct cs_fmu_events {
    double next_time;        /* next time event, when defined */
    int next_defined;
    double *z;               /* event indicators after the last accepted point (nz) */
} cs_fmu_events;
int cs_fmu_model_nz(const cs_model *m);
cs_fmu_events *cs_fmu_model_event_state(cs_model *m);

/* Inputs of discrete variability: u[idx[k]] (k < nd) are set in event mode only (FMI 2.0.4 §3.2.3), the others in
 * continuous-time mode. */
int cs_fmu_model_set_discrete(cs_model *m, const int *idx, int nd, cs_err *err);
/* At a macro point: where the discrete inputs of u differ from those the FMU holds, an event at t that sets them
 * (*events = 1; *changed, xnew as for cs_fmu_model_events). */
int cs_fmu_model_discrete_inputs(cs_model *m, double t, const double *x, const double *u, double *xnew,
                                 int *changed, int *events, cs_err *err);
/* After a rollback: the FMU's discrete inputs are unknown (set again at the next macro point). */
void cs_fmu_model_forget_inputs(cs_model *m);

/* The event indicators z (nz) at (t, x, u). */
int cs_fmu_model_indicators(cs_model *m, double t, const double *x, const double *u, double *z, cs_err *err);
/* Index of the first indicator whose sign differs between z and the last accepted point, or -1. */
int cs_fmu_model_crossed(const cs_model *m, const double *z);

/* After an integrator step ending at (t, x, u): CompletedIntegratorStep, time events (t >= next event time),
 * state events (a sign change of an event indicator since the last call) -> event mode, event iteration,
 * continuous-time mode. *changed = 1 when the FMU changed its continuous states (then xnew holds them and the
 * integrator must restart). The caller (units/fmu_unit.c) first locates a state event by root finding, so that t
 * is just past the zero crossing. */
int cs_fmu_model_events(cs_model *m, double t, const double *x, const double *u, double *xnew, int *changed,
                        int *events, cs_err *err);

#endif
