/* Shared error handling for the C core.
 *
 * Every fallible function returns an int status (CS_OK = 0) and writes a human-readable message into a
 * cs_err owned by the caller. The Python bindings turn (status, message) into an exception. No globals. */
#ifndef COSIM_COMMON_H
#define COSIM_COMMON_H

#include <stddef.h>

enum {
    CS_OK = 0,
    CS_ERR_ARG = 1,        /* invalid argument (becomes ValueError) */
    CS_ERR_NOMEM = 2,      /* allocation failed (MemoryError) */
    CS_ERR_LINALG = 3,     /* singular matrix, LAPACK failure */
    CS_ERR_SOLVER = 4,     /* subsystem integrator failed (cosim.SolverError) */
    CS_ERR_DIVERGED = 5,   /* non-finite or exploding values (cosim.DivergenceError) */
    CS_ERR_CALLBACK = 6,   /* a user callback (Python or C) reported an error */
    CS_STOPPED = 7,        /* an observer asked to stop (user hook returned False): not an error, status "stopped" */
    CS_ERR_INTERRUPTED = 8, /* Ctrl-C (KeyboardInterrupt) */
    CS_ERR_CONVERGENCE = 9, /* an iterative scheme did not converge (cosim.ConvergenceError, a SolverError) */
    CS_TERMINATED = 10     /* a unit (an FMU) asked to end the simulation: not an error, status "terminated" */
};

#define CS_ERRMSG_LEN 512

typedef struct cs_err {
    int code;
    char msg[CS_ERRMSG_LEN];
} cs_err;

/* Set code and printf-style message; returns code so callers can `return cs_fail(err, ...)`. */
int cs_fail(cs_err *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prefix context ("subsystem S1, t = 0.1: ") to an existing message. */
void cs_err_prefix(cs_err *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#define CS_TRY(expr) do { int cs_rc_ = (expr); if (cs_rc_ != CS_OK) return cs_rc_; } while (0)

#endif
