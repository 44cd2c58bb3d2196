/* signals: every signal of the process is handled by one thread.
 *
 * main() blocks all asynchronous signals before anything else, so every
 * thread started later (delivery's helpers, the admin server, reindex
 * runners, libcurl's resolver) inherits the mask and no signal lands on a
 * thread that does not expect it. signals_start() then runs one thread that
 * waits for them with sigwait() and turns each into a plain flag or
 * callback, on its own stack, outside any signal-handler restrictions:
 *
 *   SIGTERM, SIGINT    stop: the command's stop callback (signals_on_stop),
 *                      or, when none is set, the default action (the
 *                      process ends as if nothing were blocked)
 *   SIGHUP, SIGUSR1    the callback set for them, else ignored with a line
 *                      in the log
 *   SIGPIPE            stays blocked: writes to a closed socket or pipe fail
 *                      with EPIPE instead
 * Synchronous signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP) are
 * never blocked. */
#ifndef SS_SIGNALS_H
#define SS_SIGNALS_H
#include <signal.h>

/* Block every asynchronous signal in the calling thread (call first in main,
 * before any thread exists). */
void signals_block_all(void);
/* Start the signal thread (once; 0 or -1). */
int signals_start(void);
/* What a stop signal does from now on: set *flag (may be NULL) and call fn
 * (may be NULL) from the signal thread. Both NULL: the default action again. */
void signals_on_stop(volatile sig_atomic_t *flag, void (*fn)(int sig));
/* SIGHUP / SIGUSR1 callbacks (NULL: ignored, logged) */
void signals_on_hup(void (*fn)(void));
void signals_on_usr1(void (*fn)(void));

#endif
