/* The FMI 2.0 boilerplate of the test FMUs (the *_fmi2.c files of tests/fmus), defined once: the fields every
 * instance starts with, instantiation, logging, and macros that define the API functions an FMU implements the
 * standard way. An FMU file names the macros it takes and writes only what makes it different; build.py
 * preprocesses each source to see which functions it defines and exports Error-returning stubs for the others, so
 * a macro here adds exactly the functions it expands to. GUID (-DGUID=...) must be defined before this header. */
#ifndef FMI2_COMMON_H
#define FMI2_COMMON_H

#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

/* the first member of every instance (so an instance's address is its base's) */
typedef struct fmi2_base {
    fmi2CallbackFunctions cb;
    int logging;             /* fmi2SetDebugLogging: messages of status fmi2OK are logged only while on */
    char name[64];
} fmi2_base;

/* log through the importer's logger; `c` is an instance whose first member is `fmi2_base base` */
#define FMI2_LOG(c, status, cat, ...)                                                                           \
    do {                                                                                                        \
        if ((c)->base.cb.logger && ((c)->base.logging || (status) != fmi2OK))                                  \
            (c)->base.cb.logger((c)->base.cb.componentEnvironment, (c)->base.name, status, cat, __VA_ARGS__);   \
    } while (0)

static int fmi2_guid_is_ours(fmi2String guid) { return guid && strcmp(guid, GUID) == 0; }

/* A zeroed instance of `size` bytes whose base holds the callbacks, the logging flag and the name; NULL when the
 * callbacks are missing, the GUID is not this FMU's or `accepted` is false (then `refusal` is logged, if not NULL). */
static void *fmi2_new_instance(size_t size, fmi2String name, fmi2String guid, int accepted,
                               const fmi2CallbackFunctions *cb, fmi2Boolean logging, const char *refusal) {
    if (!cb || !fmi2_guid_is_ours(guid) || !accepted) {
        if (refusal && cb && cb->logger)
            cb->logger(cb->componentEnvironment, name, fmi2Error, "logStatusError", refusal);
        return NULL;
    }
    fmi2_base *b = calloc(1, size);
    if (!b) return NULL;
    b->cb = *cb;
    b->logging = logging;
    strncpy(b->name, name ? name : "", sizeof b->name - 1);
    return b;
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cats[]) {
    ((fmi2_base *)c)->logging = on;
    return fmi2OK;
}

/* fn(fmi2Component) that has nothing to do: fmi2EnterInitializationMode, fmi2Terminate, fmi2EnterEventMode, ... */
#define FMI2_NOTHING_TO_DO(fn) \
    fmi2Status fn(fmi2Component c) { return fmi2OK; }

/* fmi2SetupExperiment that only sets the time: `time` is the member of `T` that holds it (e.g. o.t) */
#define FMI2_SETUP_EXPERIMENT_SETS_TIME(T, time)                                                               \
    fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_defined, fmi2Real tol, fmi2Real t0,        \
                                   fmi2Boolean stop_defined, fmi2Real stop) {                                  \
        ((T *)c)->time = t0;                                                                                    \
        return fmi2OK;                                                                                          \
    }

/* fmi2Get<T> / fmi2Set<T> of an FMU without variables of type T (Integer, Boolean, String): nothing to get or set */
#define FMI2_GET_NONE(T)                                                                                         \
    fmi2Status fmi2Get##T(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2##T v[]) {              \
        return n ? fmi2Error : fmi2OK;                                                                          \
    }
#define FMI2_SET_NONE(T)                                                                                         \
    fmi2Status fmi2Set##T(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2##T v[]) {        \
        return n ? fmi2Error : fmi2OK;                                                                          \
    }

/* fmi2Get/Set/FreeFMUstate: the FMU state is a copy of the member `part` (of type `S`) of the instance type `T` */
#define FMI2_FMU_STATE_AS_COPY(T, S, part)                                                                      \
    fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) {                                              \
        if (!*s && !(*s = malloc(sizeof(S)))) return fmi2Error;                                                 \
        memcpy(*s, &((T *)c)->part, sizeof(S));                                                                 \
        return fmi2OK;                                                                                          \
    }                                                                                                           \
    fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) {                                               \
        if (!s) return fmi2Error;                                                                               \
        memcpy(&((T *)c)->part, s, sizeof(S));                                                                  \
        return fmi2OK;                                                                                          \
    }                                                                                                           \
    fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) {                                             \
        free(*s);                                                                                               \
        *s = NULL;                                                                                              \
        return fmi2OK;                                                                                          \
    }

/* co-simulation whose doStep always completes: nothing to cancel, no asynchronous status to report */
#define FMI2_SYNCHRONOUS_DO_STEP                                                                                \
    fmi2Status fmi2CancelStep(fmi2Component c) { return fmi2Error; }                                            \
    fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k, fmi2Status *v) { return fmi2Discard; }    \
    fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real *v) { return fmi2Discard; }  \
    fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind k, fmi2Integer *v) {                  \
        return fmi2Discard;                                                                                     \
    }                                                                                                           \
    fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k, fmi2Boolean *v) {                  \
        return fmi2Discard;                                                                                     \
    }                                                                                                           \
    fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind k, fmi2String *v) { return fmi2Discard; }

/* model exchange: fmi2CompletedIntegratorStep that never asks for an event or the end */
#define FMI2_NO_STEP_EVENTS                                                                                     \
    fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean no_set_prior, fmi2Boolean *enter,       \
                                           fmi2Boolean *terminate) {                                            \
        *enter = fmi2False;                                                                                     \
        *terminate = fmi2False;                                                                                 \
        return fmi2OK;                                                                                          \
    }

/* model exchange: every continuous state has nominal value 1 */
#define FMI2_UNIT_NOMINALS                                                                                      \
    fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {                     \
        for (size_t k = 0; k < n; k++) x[k] = 1.0;                                                              \
        return fmi2OK;                                                                                          \
    }

/* model exchange without event indicators */
#define FMI2_NO_EVENT_INDICATORS \
    fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t n) { return fmi2OK; }

#endif
