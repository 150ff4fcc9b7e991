/* Ctrl-C inside long C calls (issue 30, part 1).
 *
 * The bindings arm the check around a call made from Python's main thread while Python's default SIGINT handler is
 * in place (cs_interrupt_arm/disarm): a SIGINT then sets cs_interrupt_pending (and is passed on to Python's own
 * handler, which raises KeyboardInterrupt once the call returns). Long loops test cs_interrupted() after a bounded
 * amount of work (a model evaluation, a macro step, a grid point, a column) and return CS_ERR_INTERRUPTED: one load
 * of a flag that is almost always 0, no syscall, no GIL. Only threads that watch obey: the armed thread and the
 * workers it hands work to (cs_interrupt_watch), never a run in another Python thread. */
#ifndef COSIM_INTERRUPT_H
#define COSIM_INTERRUPT_H

#include <signal.h>

#include "common.h"

extern volatile sig_atomic_t cs_interrupt_pending;
/* Set by the check that saw the flag: the call then stops and reports the interrupt itself. */
extern volatile sig_atomic_t cs_interrupt_seen;

/* Whether the calling thread obeys the flag; cs_interrupt_watch sets it (for pool workers: the caller's value) and
 * returns the previous value. */
int cs_interrupt_watched(void);
int cs_interrupt_watch(int on);

/* A SIGINT arrived during an armed call of a thread that watches. */
static inline int cs_interrupted(void) {
    if (!cs_interrupt_pending || !cs_interrupt_watched()) return 0;
    cs_interrupt_seen = 1;
    return 1;
}

/* The error of an interrupted call ("interrupted at t = ..." where t >= 0 is known; t < 0: no time). */
int cs_interrupt_fail(cs_err *err, double t);

/* Arm for the calling thread (nestable): installs the flag's SIGINT handler in front of the current one, which must
 * be a function (not SIG_DFL/SIG_IGN; then nothing is armed). Returns a token for cs_interrupt_disarm. */
int cs_interrupt_arm(void);
/* Returns 1 when the outermost armed call ends with a SIGINT that no check saw (it came after the last check, or
 * the call has none): the caller must hand it back to Python, whose own flag may have been taken for it. */
int cs_interrupt_disarm(int token);

#endif
