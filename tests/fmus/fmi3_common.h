/* The FMI 3.0 boilerplate of the test FMUs (the *_fmi3.c files of tests/fmus), defined once: the fields every
 * instance starts with, instantiation, and macros that define the API functions an FMU implements the standard way.
 * An FMU file names the macros it takes and writes only what makes it different; build.py preprocesses each source
 * to see which functions it defines and exports Error-returning stubs for the others, so a macro here adds exactly
 * the functions it expands to. GUID (-DGUID=..., the instantiation token) must be defined before this header. */
#ifndef FMI3_COMMON_H
#define FMI3_COMMON_H

#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"

/* the first member of every instance (so an instance's address is its base's) */
typedef struct fmi3_base {
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
    int logging;             /* fmi3SetDebugLogging */
    char name[64];
} fmi3_base;

/* the arguments of fmi3InstantiateModelExchange / fmi3InstantiateCoSimulation that the fixtures use */
typedef struct fmi3_instantiation {
    fmi3String name, token;
    fmi3Boolean logging;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
    fmi3IntermediateUpdateCallback upd;   /* co-simulation; NULL for model exchange */
    int me;                               /* 1: model exchange, 0: co-simulation */
} fmi3_instantiation;

static int fmi3_token_is_ours(fmi3String token) { return token && strcmp(token, GUID) == 0; }

/* A zeroed instance of `size` bytes whose base holds the environment, logger, logging flag and name; NULL when the
 * token is not this FMU's (then `refusal` is logged, if not NULL). */
static void *fmi3_new_instance(size_t size, const fmi3_instantiation *a, const char *refusal) {
    if (!fmi3_token_is_ours(a->token)) {
        if (refusal && a->log) a->log(a->env, fmi3Error, "logStatusError", refusal);
        return NULL;
    }
    fmi3_base *b = calloc(1, size);
    if (!b) return NULL;
    b->env = a->env;
    b->log = a->log;
    b->logging = a->logging;
    strncpy(b->name, a->name ? a->name : "", sizeof b->name - 1);
    return b;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n, const fmi3String cats[]) {
    ((fmi3_base *)c)->logging = on;
    return fmi3OK;
}

/* fmi3InstantiateCoSimulation / fmi3InstantiateModelExchange that return `create(&instantiation)`, the FMU's
 * static function fmi3Instance create(const fmi3_instantiation *) */
#define FMI3_INSTANTIATE_CO_SIMULATION(create)                                                                  \
    fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String resources,           \
                                             fmi3Boolean visible, fmi3Boolean logging, fmi3Boolean event_mode,  \
                                             fmi3Boolean early_return, const fmi3ValueReference req[],          \
                                             size_t nreq, fmi3InstanceEnvironment env,                          \
                                             fmi3LogMessageCallback log, fmi3IntermediateUpdateCallback upd) {  \
        const fmi3_instantiation a = {name, token, logging, env, log, upd, 0};                                  \
        return create(&a);                                                                                      \
    }
#define FMI3_INSTANTIATE_MODEL_EXCHANGE(create)                                                                 \
    fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String resources,          \
                                              fmi3Boolean visible, fmi3Boolean logging,                         \
                                              fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {        \
        const fmi3_instantiation a = {name, token, logging, env, log, NULL, 1};                                 \
        return create(&a);                                                                                      \
    }

/* fn(fmi3Instance) that has nothing to do: fmi3EnterStepMode, fmi3Terminate, fmi3EnterEventMode, ... */
#define FMI3_NOTHING_TO_DO(fn) \
    fmi3Status fn(fmi3Instance c) { return fmi3OK; }

/* fmi3Get/Set/FreeFMUState: the FMU state is a copy of the `S` at `part`, an expression of the instance `c` */
#define FMI3_FMU_STATE_AS_COPY(S, part)                                                                         \
    fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState *s) {                                               \
        if (!*s && !(*s = malloc(sizeof(S)))) return fmi3Error;                                                 \
        memcpy(*s, part, sizeof(S));                                                                            \
        return fmi3OK;                                                                                          \
    }                                                                                                           \
    fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState s) {                                                \
        if (!s) return fmi3Error;                                                                               \
        memcpy(part, s, sizeof(S));                                                                             \
        return fmi3OK;                                                                                          \
    }                                                                                                           \
    fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *s) {                                              \
        free(*s);                                                                                               \
        *s = NULL;                                                                                              \
        return fmi3OK;                                                                                          \
    }

/* fmi3DoStep and fmi3UpdateDiscreteStates start from "nothing happened" and set what did (inline: no unused-function
 * warning in a fixture without one of them) */
static inline void fmi3_step_flags_clear(fmi3Boolean *event, fmi3Boolean *terminate, fmi3Boolean *early) {
    *event = *terminate = *early = fmi3False;
}
static inline void fmi3_update_flags_clear(fmi3Boolean *need_update, fmi3Boolean *terminate,
                                           fmi3Boolean *nominals_changed, fmi3Boolean *values_changed,
                                           fmi3Boolean *next_defined, fmi3Float64 *next_time) {
    *need_update = *terminate = *nominals_changed = *values_changed = *next_defined = fmi3False;
    *next_time = 0.0;
}

/* model exchange: fmi3CompletedIntegratorStep that never asks for an event or the end */
#define FMI3_NO_STEP_EVENTS                                                                                     \
    fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean no_set_prior, fmi3Boolean *enter,        \
                                           fmi3Boolean *terminate) {                                            \
        *enter = *terminate = fmi3False;                                                                        \
        return fmi3OK;                                                                                          \
    }

/* model exchange: every continuous state has nominal value 1 */
#define FMI3_UNIT_NOMINALS                                                                                      \
    fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {                   \
        for (size_t k = 0; k < n; k++) x[k] = 1.0;                                                              \
        return fmi3OK;                                                                                          \
    }

/* model exchange without event indicators */
#define FMI3_NO_EVENT_INDICATORS                                                                                \
    fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 z[], size_t n) { return fmi3OK; }            \
    fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n) {                                      \
        *n = 0;                                                                                                 \
        return fmi3OK;                                                                                          \
    }

#endif
