/* FMI 2.0 / 3.0 binaries: dlopen, the function tables and one instance wrapper (csrc/fmi/fmi.c).
 *
 * The function types are declared here from the FMI standards (FMI 2.0.4 §2.1, FMI 3.0 §2.2), only those cosim
 * calls; nothing is taken from another project's headers. The folder sits below models/ and units/: it knows
 * nothing about cosim's objects, only common.h for errors.
 *
 * A cs_fmi_lib is one loaded binary (shared by every instance made from it, also across runs); it keeps a
 * thread-safe queue of the FMU's log messages that the Python binding drains into Python's logging after a run
 * (no Python is called while the FMU runs). A cs_fmi_inst is one instance (fmi2Component / fmi3Instance). */
#ifndef COSIM_FMI_H
#define COSIM_FMI_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

enum { CS_FMI_CS = 0, CS_FMI_ME = 1 };

/* ---- FMI 2.0 types (standard §2.1.2-2.1.4) ---- */
typedef void *fmi2Component;
typedef void *fmi2ComponentEnvironment;
typedef void *fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef const char *fmi2String;
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;
typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String, fmi2String, ...);
typedef void *(*fmi2CallbackAllocateMemory)(size_t, size_t);
typedef void (*fmi2CallbackFreeMemory)(void *);
typedef void (*fmi2StepFinished)(fmi2ComponentEnvironment, fmi2Status);
typedef struct {
    fmi2CallbackLogger logger;
    fmi2CallbackAllocateMemory allocateMemory;
    fmi2CallbackFreeMemory freeMemory;
    fmi2StepFinished stepFinished;
    fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;
typedef struct {
    fmi2Boolean newDiscreteStatesNeeded, terminateSimulation, nominalsOfContinuousStatesChanged,
        valuesOfContinuousStatesChanged, nextEventTimeDefined;
    fmi2Real nextEventTime;
} fmi2EventInfo;

typedef struct cs_fmi2_fns {
    fmi2Component (*instantiate)(fmi2String, fmi2Type, fmi2String, fmi2String, const fmi2CallbackFunctions *,
                                 fmi2Boolean, fmi2Boolean);
    void (*freeInstance)(fmi2Component);
    fmi2Status (*setDebugLogging)(fmi2Component, fmi2Boolean, size_t, const fmi2String[]);
    fmi2Status (*setupExperiment)(fmi2Component, fmi2Boolean, fmi2Real, fmi2Real, fmi2Boolean, fmi2Real);
    fmi2Status (*enterInitializationMode)(fmi2Component);
    fmi2Status (*exitInitializationMode)(fmi2Component);
    fmi2Status (*terminate)(fmi2Component);
    fmi2Status (*getReal)(fmi2Component, const fmi2ValueReference[], size_t, fmi2Real[]);
    fmi2Status (*getInteger)(fmi2Component, const fmi2ValueReference[], size_t, fmi2Integer[]);
    fmi2Status (*getBoolean)(fmi2Component, const fmi2ValueReference[], size_t, fmi2Boolean[]);
    fmi2Status (*setReal)(fmi2Component, const fmi2ValueReference[], size_t, const fmi2Real[]);
    fmi2Status (*setInteger)(fmi2Component, const fmi2ValueReference[], size_t, const fmi2Integer[]);
    fmi2Status (*setBoolean)(fmi2Component, const fmi2ValueReference[], size_t, const fmi2Boolean[]);
    fmi2Status (*setString)(fmi2Component, const fmi2ValueReference[], size_t, const fmi2String[]);
    fmi2Status (*getFMUstate)(fmi2Component, fmi2FMUstate *);
    fmi2Status (*setFMUstate)(fmi2Component, fmi2FMUstate);
    fmi2Status (*freeFMUstate)(fmi2Component, fmi2FMUstate *);
    fmi2Status (*getDirectionalDerivative)(fmi2Component, const fmi2ValueReference[], size_t,
                                           const fmi2ValueReference[], size_t, const fmi2Real[], fmi2Real[]);
    /* co-simulation */
    fmi2Status (*setRealInputDerivatives)(fmi2Component, const fmi2ValueReference[], size_t, const fmi2Integer[],
                                          const fmi2Real[]);
    fmi2Status (*getRealOutputDerivatives)(fmi2Component, const fmi2ValueReference[], size_t, const fmi2Integer[],
                                           fmi2Real[]);
    fmi2Status (*doStep)(fmi2Component, fmi2Real, fmi2Real, fmi2Boolean);
    fmi2Status (*getBooleanStatus)(fmi2Component, int, fmi2Boolean *);   /* fmi2StatusKind: fmi2Terminated = 3 */
    fmi2Status (*getRealStatus)(fmi2Component, int, fmi2Real *);         /* fmi2LastSuccessfulTime = 2 */
    /* model exchange */
    fmi2Status (*enterEventMode)(fmi2Component);
    fmi2Status (*newDiscreteStates)(fmi2Component, fmi2EventInfo *);
    fmi2Status (*enterContinuousTimeMode)(fmi2Component);
    fmi2Status (*completedIntegratorStep)(fmi2Component, fmi2Boolean, fmi2Boolean *, fmi2Boolean *);
    fmi2Status (*setTime)(fmi2Component, fmi2Real);
    fmi2Status (*setContinuousStates)(fmi2Component, const fmi2Real[], size_t);
    fmi2Status (*getDerivatives)(fmi2Component, fmi2Real[], size_t);
    fmi2Status (*getEventIndicators)(fmi2Component, fmi2Real[], size_t);
    fmi2Status (*getContinuousStates)(fmi2Component, fmi2Real[], size_t);
} cs_fmi2_fns;

/* ---- FMI 3.0 types (standard §2.2.2-2.2.4): co-simulation and model exchange ---- */
typedef void *fmi3Instance;
typedef void *fmi3InstanceEnvironment;
typedef void *fmi3FMUState;
typedef uint32_t fmi3ValueReference;
typedef double fmi3Float64;
typedef int32_t fmi3Int32;
typedef _Bool fmi3Boolean;
typedef const char *fmi3String;
typedef enum { fmi3OK, fmi3Warning, fmi3Discard, fmi3Error, fmi3Fatal } fmi3Status;
typedef void (*fmi3LogMessageCallback)(fmi3InstanceEnvironment, fmi3Status, fmi3String, fmi3String);
typedef void (*fmi3IntermediateUpdateCallback)(fmi3InstanceEnvironment, fmi3Float64, fmi3Boolean, fmi3Boolean,
                                               fmi3Boolean, fmi3Boolean, fmi3Boolean *, fmi3Float64 *);

typedef struct cs_fmi3_fns {
    fmi3Instance (*instantiateCoSimulation)(fmi3String, fmi3String, fmi3String, fmi3Boolean, fmi3Boolean,
                                            fmi3Boolean, fmi3Boolean, const fmi3ValueReference[], size_t,
                                            fmi3InstanceEnvironment, fmi3LogMessageCallback,
                                            fmi3IntermediateUpdateCallback);
    void (*freeInstance)(fmi3Instance);
    fmi3Status (*enterInitializationMode)(fmi3Instance, fmi3Boolean, fmi3Float64, fmi3Float64, fmi3Boolean,
                                          fmi3Float64);
    fmi3Status (*exitInitializationMode)(fmi3Instance);
    fmi3Status (*terminate)(fmi3Instance);
    fmi3Status (*getFloat64)(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Float64[], size_t);
    fmi3Status (*setFloat64)(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Float64[], size_t);
    fmi3Status (*setInt32)(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Int32[], size_t);
    fmi3Status (*setBoolean)(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Boolean[], size_t);
    fmi3Status (*setString)(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3String[], size_t);
    fmi3Status (*setBinary)(fmi3Instance, const fmi3ValueReference[], size_t, const size_t[], const uint8_t *const[],
                            size_t);
    fmi3Status (*getFMUState)(fmi3Instance, fmi3FMUState *);
    fmi3Status (*setFMUState)(fmi3Instance, fmi3FMUState);
    fmi3Status (*freeFMUState)(fmi3Instance, fmi3FMUState *);
    fmi3Status (*getDirectionalDerivative)(fmi3Instance, const fmi3ValueReference[], size_t,
                                           const fmi3ValueReference[], size_t, const fmi3Float64[], size_t,
                                           fmi3Float64[], size_t);
    fmi3Status (*getOutputDerivatives)(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Int32[],
                                       fmi3Float64[], size_t);
    fmi3Status (*doStep)(fmi3Instance, fmi3Float64, fmi3Float64, fmi3Boolean, fmi3Boolean *, fmi3Boolean *,
                         fmi3Boolean *, fmi3Float64 *);
    /* model exchange (FMI 3.0 §3) */
    fmi3Instance (*instantiateModelExchange)(fmi3String, fmi3String, fmi3String, fmi3Boolean, fmi3Boolean,
                                             fmi3InstanceEnvironment, fmi3LogMessageCallback);
    fmi3Status (*enterEventMode)(fmi3Instance);
    fmi3Status (*updateDiscreteStates)(fmi3Instance, fmi3Boolean *, fmi3Boolean *, fmi3Boolean *, fmi3Boolean *,
                                       fmi3Boolean *, fmi3Float64 *);
    fmi3Status (*enterContinuousTimeMode)(fmi3Instance);
    fmi3Status (*completedIntegratorStep)(fmi3Instance, fmi3Boolean, fmi3Boolean *, fmi3Boolean *);
    fmi3Status (*setTime)(fmi3Instance, fmi3Float64);
    fmi3Status (*setContinuousStates)(fmi3Instance, const fmi3Float64[], size_t);
    fmi3Status (*getContinuousStateDerivatives)(fmi3Instance, fmi3Float64[], size_t);
    fmi3Status (*getEventIndicators)(fmi3Instance, fmi3Float64[], size_t);
    fmi3Status (*getContinuousStates)(fmi3Instance, fmi3Float64[], size_t);
} cs_fmi3_fns;

/* Variable types of coupled signals (cosim carries every signal as a double). FMI 2: Real -> F64, Integer and
 * Enumeration -> I32, Boolean -> BOOL; FMI 3: each type as itself, Enumeration -> I64. */
enum { CS_FMI_F64 = 0, CS_FMI_F32 = 1, CS_FMI_I8 = 2, CS_FMI_U8 = 3, CS_FMI_I16 = 4, CS_FMI_U16 = 5, CS_FMI_I32 = 6,
       CS_FMI_U32 = 7, CS_FMI_I64 = 8, CS_FMI_U64 = 9, CS_FMI_BOOL = 10 };
#define CS_FMI_NTYPES 11

/* FMI 3 getters and setters by type (fmi3Get<T>(instance, vr, nvr, values, nvalues)); [CS_FMI_F64] as above */
typedef fmi3Status (*cs_fmi3_get_fn)(fmi3Instance, const fmi3ValueReference[], size_t, void *, size_t);
typedef fmi3Status (*cs_fmi3_set_fn)(fmi3Instance, const fmi3ValueReference[], size_t, const void *, size_t);

/* ---- the loaded binary ---- */
#define CS_FMI_LOG_MAX 1000            /* queued messages kept between drains (older ones are counted, not kept) */

typedef struct cs_fmi_msg {
    int status;                        /* the FMU's status code (0 OK .. 4 Fatal) */
    char instance[64];
    char category[64];
    char text[400];
} cs_fmi_msg;

typedef struct cs_fmi_lib {
    int version;                       /* 2 or 3 */
    void *handle;                      /* dlopen handle */
    cs_fmi2_fns f2;
    cs_fmi3_fns f3;
    cs_fmi3_get_fn get3[CS_FMI_NTYPES];   /* FMI 3 typed access (NULL where the binary lacks it) */
    cs_fmi3_set_fn set3[CS_FMI_NTYPES];
    pthread_mutex_t lock;              /* guards the log queue (instances may run in threads) */
    cs_fmi_msg *log;                   /* ring of CS_FMI_LOG_MAX */
    long log_first, log_count, log_dropped;
    /* where set, every message goes to sink(sink_ctx, msg) as it arrives (from the thread that called the FMU)
     * instead of the queue; the bindings set it (py/fmu.c: a Python log_callback) */
    void (*sink)(void *ctx, const cs_fmi_msg *msg);
    void *sink_ctx;
    int once;                          /* canBeInstantiatedOnlyOncePerProcess: at most one live instance ... */
    int live;                          /* ... of this loaded copy (guarded by lock) */
} cs_fmi_lib;

/* dlopen `path` and resolve the FMI `version` functions that `kind` (CS_FMI_CS / CS_FMI_ME) needs; optional
 * functions (state, derivatives) may stay NULL. Fails with CS_ERR_ARG and dlerror()'s text. */
int cs_fmi_lib_open(const char *path, int version, int kind, cs_fmi_lib **out, cs_err *err);
void cs_fmi_lib_close(cs_fmi_lib *lib);
/* Moves up to `max` queued messages into `out` (oldest first); returns how many. *dropped gets the count of
 * messages lost to the ring's size since the last drain. */
long cs_fmi_lib_drain(cs_fmi_lib *lib, cs_fmi_msg *out, long max, long *dropped);

/* ---- one instance ---- */
typedef struct cs_fmi_inst {
    cs_fmi_lib *lib;
    int kind;
    void *c;                           /* fmi2Component / fmi3Instance */
    int fatal;                         /* after Fatal only freeing the memory we own is allowed */
    int initialized;                   /* initialisation mode was left: fmiTerminate is a legal call */
    int failed;                        /* a call returned Error (or Discard without a terminate request): no
                                        * fmiTerminate, only fmiFreeInstance (FMI 2.0.4 §2.1.5, FMI 3.0 §2.3.1) */
    int terminated;                    /* the FMU asked to end the simulation (terminateSimulation) */
    int log_errors_only;
    char name[64];
    char last[400];                    /* last message of status >= Warning (quoted in errors) */
    int next_defined;                  /* ME: a time event after initialisation */
    double next_time;
    fmi2CallbackFunctions cb2;
    /* FMI 3 co-simulation intermediate update (§4.2.2): while doStep runs, the FMU's intermediateUpdate callback
     * calls intermediate(intermediate_ctx, t) when it asks for inputs (intermediateVariableSetRequested); that
     * sets the inputs declared intermediateUpdate="true" to the coupling polynomial at t. A failure there is kept
     * in cb_rc/cb_msg and reported when doStep returns. NULL: the FMU keeps the inputs of T_N. */
    int (*intermediate)(void *ctx, double t, cs_err *err);
    void *intermediate_ctx;
    long intermediate_calls;
    /* ME: inputs of discrete variability, set in event mode only (FMI 2.0.4 §3.2.3, FMI 3.0 §3.2): the model's
     * io of them and its input vector, set by cs_fmi_me_event after entering event mode (event_io NULL: none) */
    struct cs_fmi_io *event_io;
    const double *event_u;
    int cb_rc;
    char cb_msg[CS_ERRMSG_LEN];
} cs_fmi_inst;

/* Typed access to a set of coupled signals: signal k of the caller's double vector is variable vr[k] of type
 * type[k]; grouped by type so that one FMI call moves each group. A set of only Float64 scalars in signal order
 * is one fmiGetReal/SetReal on the caller's vector (no copy). An FMI 3 array variable of m elements is m
 * consecutive signals with the same value reference and elem[k] = 0 .. m-1 (its elements in row-major order; one
 * value reference in the FMI call, m values). */
typedef struct cs_fmi_io_group {
    int type, n, nvr;                  /* n values of nvr variables */
    unsigned *vr;                      /* nvr value references */
    unsigned *vr_of;                   /* n: the value reference of each value (messages) */
    int *sig;                          /* signal index of each value */
} cs_fmi_io_group;
typedef struct cs_fmi_io {
    int n, ngroups;
    int direct;                        /* one F64 group with sig[k] == k */
    cs_fmi_io_group g[CS_FMI_NTYPES];
    void *buf;                         /* 8 n bytes of typed scratch */
} cs_fmi_io;
/* The signals sig[k] (k < n) as variables vr[k] of type type[k], element elem[k] of an array variable (elem NULL:
 * scalars only); n may be 0. CS_ERR_ARG where an array's elements are not complete and consecutive. */
int cs_fmi_io_init(cs_fmi_io *io, int n, const unsigned *vr, const int *type, const int *elem, const int *sig,
                   cs_err *err);
void cs_fmi_io_free(cs_fmi_io *io);
/* v: the caller's full signal vector (indexed by sig). Integers take the nearest integer of a double (an error when
 * out of the type's range or not finite), Booleans v != 0. */
int cs_fmi_io_set(cs_fmi_inst *in, cs_fmi_io *io, const double *v, double t, cs_err *err);
int cs_fmi_io_get(cs_fmi_inst *in, cs_fmi_io *io, double *v, double t, cs_err *err);
/* Whether every signal is Float64 (derivatives, directional derivatives and intermediate updates need that). */
int cs_fmi_io_all_real(const cs_fmi_io *io);

/* Start values of one instance, by type. */
typedef struct cs_fmi_starts {
    int nreal, nint, nbool;
    const unsigned *vr_real, *vr_int, *vr_bool;
    const double *real;
    const int *ints, *bools;
    int ntyped;                        /* numeric variables of other types (FMI 3 Float32, Int8 .. UInt64, ...) */
    const unsigned *vr_typed;
    const int *type_typed;
    const double *typed;
    int nstr;                          /* String variables (fmiSetString) */
    const unsigned *vr_str;
    const char *const *strs;
    int nbin;                          /* FMI 3 Binary variables (fmi3SetBinary): bin_size[k] bytes at bins[k] */
    const unsigned *vr_bin;
    const size_t *bin_size;
    const uint8_t *const *bins;
    const int *elem_typed;             /* ntyped: element index within an array variable (NULL: scalars) */
} cs_fmi_starts;

/* Instantiate, set start values, initialise at t0 (tolerance < 0: not given) and leave initialisation mode
 * (ME: also the first event iteration, then continuous-time mode). */
int cs_fmi_inst_create(cs_fmi_lib *lib, int kind, const char *name, const char *token, const char *resources,
                       int logging_on, const cs_fmi_starts *st, double t0, double tol, cs_fmi_inst **out,
                       cs_err *err);
void cs_fmi_inst_destroy(cs_fmi_inst *in);

/* Status check: OK/Warning pass; Discard, Error, Fatal fill err (CS_ERR_SOLVER) with the function's name, the time
 * and the FMU's last logged message; Error and Fatal mark the instance so that destroy skips fmiTerminate. */
int cs_fmi_check(cs_fmi_inst *in, int status, const char *fn, double t, cs_err *err);
/* The same, inline where the status passes (the calls below run for every unit and macro step). */
static inline int cs_fmi_ok(cs_fmi_inst *in, int status, const char *fn, double t, cs_err *err) {
    return status == 0 || status == 1 ? CS_OK : cs_fmi_check(in, status, fn, t, err);
}

static inline int cs_fmi_get_real(cs_fmi_inst *in, const unsigned *vr, int n, double *v, double t, cs_err *err) {
    if (n == 0) return CS_OK;
    if (in->lib->version == 2) return cs_fmi_ok(in, in->lib->f2.getReal(in->c, vr, (size_t)n, v), "GetReal", t, err);
    return cs_fmi_ok(in, in->lib->f3.getFloat64(in->c, vr, (size_t)n, v, (size_t)n), "GetFloat64", t, err);
}

static inline int cs_fmi_set_real(cs_fmi_inst *in, const unsigned *vr, int n, const double *v, double t,
                                  cs_err *err) {
    if (n == 0) return CS_OK;
    if (in->lib->version == 2) return cs_fmi_ok(in, in->lib->f2.setReal(in->c, vr, (size_t)n, v), "SetReal", t, err);
    return cs_fmi_ok(in, in->lib->f3.setFloat64(in->c, vr, (size_t)n, v, (size_t)n), "SetFloat64", t, err);
}

/* doStep over [T, T + H]. An FMU that asks to end the simulation (FMI 2: fmi2Discard with fmi2Terminated true;
 * FMI 3: terminateSimulation) gives CS_TERMINATED, a normal end of the run, with the time in the message. */
int cs_fmi2_discarded(cs_fmi_inst *in, double T, cs_err *err);
int cs_fmi_terminated(cs_fmi_inst *in, double t, cs_err *err);   /* CS_TERMINATED, the FMU marked as terminated */
int cs_fmi3_do_step(cs_fmi_inst *in, double T, double H, cs_err *err);
static inline int cs_fmi_do_step(cs_fmi_inst *in, double T, double H, cs_err *err) {
    if (in->lib->version == 2) {
        const int s = in->lib->f2.doStep(in->c, T, H, 1);
        if (s == 2) return cs_fmi2_discarded(in, T, err);
        return cs_fmi_ok(in, s, "DoStep", T, err);
    }
    return cs_fmi3_do_step(in, T, H, err);
}
/* FMI 2 input derivatives of order `order` (1 .. ) for the inputs vr. */
int cs_fmi_set_input_derivatives(cs_fmi_inst *in, const unsigned *vr, int n, int order, const double *v, double t,
                                 cs_err *err);
int cs_fmi_get_output_derivatives(cs_fmi_inst *in, const unsigned *vr, int n, int order, double *v, double t,
                                  cs_err *err);
/* dv_unknown = d(unknown)/d(known) * seed */
int cs_fmi_directional(cs_fmi_inst *in, const unsigned *unk, int nunk, const unsigned *kn, int nkn,
                       const double *seed, double *out, double t, cs_err *err);
int cs_fmi_has_state(const cs_fmi_inst *in);
/* *state: NULL to allocate, else overwritten in place (FMI semantics). */
int cs_fmi_get_state(cs_fmi_inst *in, void **state, cs_err *err);
int cs_fmi_set_state(cs_fmi_inst *in, void *state, cs_err *err);
void cs_fmi_free_state(cs_fmi_inst *in, void **state);

/* ---- model exchange, FMI 2.0 and 3.0 alike ---- */
int cs_fmi_me_set_time(cs_fmi_inst *in, double t, cs_err *err);
int cs_fmi_me_set_states(cs_fmi_inst *in, const double *x, int nx, double t, cs_err *err);
int cs_fmi_me_get_states(cs_fmi_inst *in, double *x, int nx, double t, cs_err *err);
int cs_fmi_me_derivatives(cs_fmi_inst *in, double *xdot, int nx, double t, cs_err *err);
int cs_fmi_me_indicators(cs_fmi_inst *in, double *z, int nz, double t, cs_err *err);
/* completedIntegratorStep: *enter = the FMU asks for event mode (terminateSimulation: CS_TERMINATED) */
int cs_fmi_me_completed(cs_fmi_inst *in, double t, int *enter, cs_err *err);
/* Event mode at t: enterEventMode (unless `from_init`: FMI 3 is in event mode after initialisation), the event
 * iteration (fmi2NewDiscreteStates / fmi3UpdateDiscreteStates until no update is needed), continuous-time mode.
 * *states_changed: the FMU changed its continuous states; in->next_defined/next_time: the next time event.
 * terminateSimulation: CS_TERMINATED (a normal end of the run). The discrete inputs (in->event_io) are set from
 * in->event_u in event mode, before the iteration. */
int cs_fmi_me_event(cs_fmi_inst *in, double t, int from_init, int *states_changed, cs_err *err);

#endif
