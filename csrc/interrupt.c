#include "interrupt.h"

#include <string.h>

volatile sig_atomic_t cs_interrupt_pending = 0;
volatile sig_atomic_t cs_interrupt_seen = 0;

static _Thread_local int watching = 0;
static int depth = 0;                /* nesting of armed calls (main thread only) */
static struct sigaction previous;    /* the handler ours passes SIGINT on to */

int cs_interrupt_watched(void) { return watching; }

int cs_interrupt_watch(int on) {
    int was = watching;
    watching = on;
    return was;
}

int cs_interrupt_fail(cs_err *err, double t) {
    return t >= 0.0 ? cs_fail(err, CS_ERR_INTERRUPTED, "interrupted at t = %.10g", t)
                    : cs_fail(err, CS_ERR_INTERRUPTED, "interrupted");
}

static void on_sigint(int sig, siginfo_t *info, void *uctx) {
    cs_interrupt_pending = 1;
    if (previous.sa_flags & SA_SIGINFO) previous.sa_sigaction(sig, info, uctx);
    else previous.sa_handler(sig);
}

/* Ours in front of the current handler; 0 when the current one is not a function (nothing to pass on to). */
static int install(void) {
    struct sigaction cur;
    if (sigaction(SIGINT, NULL, &cur)) return 0;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigint) return 1;   /* still ours */
    if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_DFL || cur.sa_handler == SIG_IGN)) return 0;
    struct sigaction ours = cur;
    ours.sa_flags = cur.sa_flags | SA_SIGINFO;
    ours.sa_sigaction = on_sigint;
    previous = cur;
    return sigaction(SIGINT, &ours, NULL) == 0;
}

int cs_interrupt_arm(void) {
    if (depth == 0) {
        if (!install()) return -1;
        cs_interrupt_pending = 0;
        cs_interrupt_seen = 0;
    } else if (!watching) {
        return -1;
    }
    depth++;
    return cs_interrupt_watch(1);
}

/* Our handler stays installed between calls (it passes every SIGINT on); the flag and the watch are reset. */
int cs_interrupt_disarm(int token) {
    if (token < 0) return 0;
    cs_interrupt_watch(token);
    if (--depth > 0) return 0;
    int unseen = cs_interrupt_pending && !cs_interrupt_seen;
    cs_interrupt_pending = 0;
    cs_interrupt_seen = 0;
    return unseen;
}
