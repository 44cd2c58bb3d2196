/* liveness: whether a thread of the daemon goes round, for the node's health
 * (sync/node/node.h: each subsystem's `healthy`, which systemd's watchdog and
 * status ask).
 *
 * A thread beats (liveness_beat) each time round its loop; where it waits for
 * something outside the process that can be named (the source server down,
 * the reader lock unconfirmed, a scheduled task running), it says so
 * (liveness_wait) and is well however long that lasts, since restarting the
 * process would not end it; a thread that neither beats nor names its wait
 * for longer than its bound is wedged (a deadlock, or a call with no
 * timeout), and one that ended when nobody stopped it is dead. Every field
 * is an atomic: a beat costs one store and no lock, and a health check only
 * reads. */
#ifndef SS_LIVENESS_H
#define SS_LIVENESS_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct liveness {
    _Atomic int64_t beat_ms;     /* monotonic ms of the last beat; 0: never started */
    _Atomic(const char *) wait;  /* the named wait it is in (a static string), or NULL */
    _Atomic int64_t wait_ms;     /* ... since (monotonic ms) */
    atomic_bool ended;           /* the thread returned */
    atomic_bool stopping;        /* ... and was asked to (not a death) */
};

/* the thread starts (its first beat) */
void liveness_start(struct liveness *l);
void liveness_beat(struct liveness *l);
/* enter the named wait `what` (a string that outlives it), or leave it
 * (NULL); both count as a beat */
void liveness_wait(struct liveness *l, const char *what);
/* the thread returns; asked: it was asked to stop */
void liveness_end(struct liveness *l, bool asked);

/* The predicate, at monotonic time now_ms: true when `thread` (its name, for
 * why) has beaten within bound_ms, or is in a named wait; else false with
 * why saying what it is (dead, or quiet for more than bound_ms). A thread
 * never started is well (nothing to ask of it). why is stable while the
 * cause lasts (the bound, not the time that passed), so that a state
 * written only when it changes is not rewritten every second. */
bool liveness_check(const struct liveness *l, const char *thread, int64_t now_ms,
                    int64_t bound_ms, char *why, size_t whylen);
/* the named wait it is in now, or NULL */
const char *liveness_waiting(const struct liveness *l);

#endif
