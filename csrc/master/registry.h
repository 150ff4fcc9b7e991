/* The kinds a run can choose per capability (coupling, scheme, step controller) and the parameters of the specs
 * the bindings fill: one entry per kind {name, parameters, create}. A new kind is its implementation file plus one
 * entry in master/registry.c; the bindings parse its spec from the parameter table (csrc/py/params.c), the run
 * assembly (master/setup.c) creates it through `create` without knowing the kind. */
#ifndef COSIM_REGISTRY_H
#define COSIM_REGISTRY_H

#include "params.h"

#include "control/controller.h"
#include "control/estimator.h"
#include "coupling/approx.h"
#include "coupling/coupling.h"
#include "network/network.h"
#include "schemes/scheme.h"
#include "units/unit.h"

/* What a coupling is created from besides its spec. */
typedef struct cs_coupling_env {
    const cs_network *net;
    cs_unit **units;            /* net->nsub units (not owned) */
    const cs_approx_spec *approx; /* the signal-based approximation (NEPCE: its base) */
    int rates_lagged;           /* Hermite: lagged output derivatives */
    double H;                   /* the (constant) macro step */
} cs_coupling_env;

typedef struct cs_scheme_env {
    int nunits;
    const int *order;           /* Gauss-Seidel order, NULL = as given */
    int threads;                /* Jacobi: units on a pool of this many threads (<= 1: sequential) */
} cs_scheme_env;

/* What a step controller is created from, and what it reports back to the run. */
typedef struct cs_control_env {
    double t0, t_end, H;
    const cs_network *net;
    int nunits;
    cs_unit **units;
    cs_coupling *coupling;
    cs_scheme *scheme;
    /* out */
    long max_steps;             /* bound on the accepted steps (0: unknown, the records grow) */
    int adaptive;               /* the number of steps is not known in advance */
} cs_control_env;

typedef int (*cs_coupling_create_fn)(const void *spec, const cs_coupling_env *env, cs_coupling **out, cs_err *err);
typedef int (*cs_scheme_create_fn)(const void *spec, const cs_scheme_env *env, cs_scheme **out, cs_err *err);
typedef int (*cs_control_create_fn)(const void *spec, cs_control_env *env, cs_controller **ctl, cs_estimator **est,
                                    cs_err *err);

/* Named arrays and counts (a coupling's per-step log) that the bindings convert without knowing the kind. */
enum { CS_FIELD_DOUBLE = 0, CS_FIELD_INT = 1, CS_FIELD_BYTE = 2, CS_FIELD_COUNT = 3 };
typedef struct cs_field {
    const char *name;
    int type;                   /* CS_FIELD_* */
    long rows;
    int cols;                   /* 0: a vector of `rows` entries, else a rows x cols matrix (row-major) */
    const void *data;           /* not owned; valid while the object lives */
    long count;                 /* CS_FIELD_COUNT: the value */
} cs_field;

typedef struct cs_fields {
    int n;                      /* -1: the object keeps no log */
    cs_field f[12];
} cs_fields;

/* Appends an array / a count to out (silently ignored beyond its capacity: the tables are fixed per kind). */
void cs_fields_array(cs_fields *out, const char *name, int type, long rows, int cols, const void *data);
void cs_fields_count(cs_fields *out, const char *name, long count);

typedef int (*cs_log_fn)(const void *object, cs_fields *out, cs_err *err);

typedef struct cs_kind {
    const char *name;
    const cs_param *params;     /* the spec's parameters (NULL: none) */
    int nparams;
    size_t spec_size;           /* bytes of the spec struct (0: none) */
    void (*defaults)(void *spec); /* values of the parameters a spec leaves out (NULL: zeros) */
    union {
        cs_coupling_create_fn coupling;
        cs_scheme_create_fn scheme;
        cs_control_create_fn control;
    } create;
    cs_log_fn log;              /* the created object's log (NULL: none) */
} cs_kind;

typedef struct cs_capability {
    const char *name;
    const cs_kind *kinds;       /* a kind's code is its index (exported as `_core.codes[name]`, py/codes.c) */
    int nkinds;
} cs_capability;

/* coupling, scheme, step_control, and the parameter-only specs solver, balance (no create: the run builds them). */
extern const cs_capability cs_registry[];
extern const int cs_registry_size;
/* The capability of this name (NULL if none). */
const cs_capability *cs_registry_capability(const char *name);
/* Whether the capability's kinds are chosen per run and created through the registry (coupling, scheme,
 * step_control), not parameter-only specs (solver, balance). */
int cs_registry_chosen(const cs_capability *cap);
/* The kind of this name in a capability (NULL if none). */
const cs_kind *cs_registry_kind(const cs_capability *cap, const char *name);

/* A chosen kind and its spec (filled by the bindings). */
typedef struct cs_choice {
    const cs_kind *kind;        /* NULL: not chosen */
    const void *spec;
} cs_choice;

#endif
