/* A kind descriptor: one kind of a capability (a coupling, a scheme, a step controller, or a parameter-only spec)
 * as the registry lists it (master/registry.c) and the bindings parse it (py/params.c). Each kind's implementation
 * file defines its descriptor (`const cs_kind cs_coupling_foo_kind = {...}`): its name, the parameter table of its
 * spec, the defaults, and the adapter that creates the object from the spec and what the run provides (the *_env
 * structs below). The registry lists the descriptors, one line each. */
#ifndef COSIM_KIND_H
#define COSIM_KIND_H

#include "common.h"
#include "params.h"
#include "unit_access.h"

struct cs_approx_spec;
struct cs_controller;
struct cs_coupling;
struct cs_estimator;
struct cs_network;
struct cs_pool;
struct cs_scheme;

/* What a coupling is created from besides its spec. */
typedef struct cs_coupling_env {
    const struct cs_network *net;
    const cs_unit_access *units; /* the net->nsub units (not owned) */
    const struct cs_approx_spec *approx; /* the signal-based approximation (NEPCE: its base) */
    int rates_lagged;           /* Hermite: lagged output derivatives */
    const int *integral_of;     /* acc/accRel: per output the velocity output it integrates (-1 none), or NULL */
    int integral_of_n;
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
    const struct cs_network *net;
    int nunits;
    const cs_unit_access *units;
    struct cs_coupling *coupling;
    struct cs_pool *pool;       /* the Jacobi scheme's threads (NULL: sequential), for comparative runs */
    /* out */
    long max_steps;             /* bound on the accepted steps (0: unknown, the records grow) */
    int adaptive;               /* the number of steps is not known in advance */
} cs_control_env;

typedef int (*cs_coupling_create_fn)(const void *spec, const cs_coupling_env *env, struct cs_coupling **out,
                                     cs_err *err);
typedef int (*cs_scheme_create_fn)(const void *spec, const cs_scheme_env *env, struct cs_scheme **out,
                                   cs_err *err);
typedef int (*cs_control_create_fn)(const void *spec, cs_control_env *env, struct cs_controller **ctl,
                                    struct cs_estimator **est, cs_err *err);

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

#endif
