/* FMU units (units/fmu_unit.c): a co-simulation FMU (FMI 2.0 / 3.0) as a black-box cs_unit, and a model-exchange
 * FMU (FMI 2.0) integrated by cosim's own integrators (models/fmu_model.c + the model unit) with its events
 * handled between steps. */
#ifndef COSIM_FMU_UNIT_H
#define COSIM_FMU_UNIT_H

#include "fmi/fmi.h"
#include "integrators/stepper.h"
#include "units/unit.h"

typedef struct cs_fmu_spec {
    cs_fmi_lib *lib;                 /* loaded binary (not owned; must outlive the unit) */
    int kind;                        /* CS_FMI_CS / CS_FMI_ME */
    const char *name, *token, *resources;
    int nu, ny;
    const unsigned *vr_u, *vr_y;     /* inputs, outputs (value references, copied) ... */
    const int *type_u, *type_y;      /* ... and their variable types (CS_FMI_F64, CS_FMI_I32, ...; fmi/fmi.h) */
    const int *elem_u, *elem_y;      /* element index within an FMI 3 array variable (NULL: scalars; cs_fmi_io) */
    int nx, nz;                      /* ME: continuous states, event indicators */
    cs_fmi_starts starts;
    int feedthrough;                 /* some output depends on some input */
    int max_input_order;             /* CS: input derivatives the FMU takes (FMI 2 canInterpolateInputs) */
    int max_output_order;            /* CS: output derivatives it gives (maxOutputDerivativeOrder) */
    int directional;                 /* providesDirectionalDerivative(s) */
    int can_state;                   /* canGetAndSetFMUstate */
    int logging_on;
    double t0, tol;                  /* start time; tolerance for the FMU's own solver (< 0: not given) */
    int niu;                         /* CS, FMI 3: inputs declared intermediateUpdate="true" ... */
    const int *iu;                   /* ... their indices into u (set at the FMU's intermediate update times) */
    int nd;                          /* ME: inputs of discrete variability (set in event mode) ... */
    const int *di;                   /* ... their indices into u */
    int max_events;                  /* ME: events in one macro step before the step fails (Zeno guard; <= 0: 1000) */
} cs_fmu_spec;

/* A unit for the FMU described by spec: co-simulation (solver unused) or model exchange (integrated with solver).
 * The instance is created, given its start values and initialised at spec->t0 here. */
int cs_fmu_unit_create(const cs_fmu_spec *spec, const cs_solver_opts *solver, cs_unit **out, cs_err *err);

/* A model-exchange FMU as a bare cs_model (for the monolithic composite, which integrates models without event
 * handling): fails with CS_ERR_ARG for a co-simulation FMU and for an FMU with event indicators (nz > 0) or a time
 * event after initialisation. */
int cs_fmu_model_create_from_spec(const cs_fmu_spec *spec, cs_model **out, cs_err *err);

/* ME: the FMU's continuous states after initialisation (nx values). */
int cs_fmu_unit_initial_states(cs_unit *u, double *x, cs_err *err);

#endif
