/* invariant.c: what happens when an invariant of invariant.h is broken:
 * the hook (tests), else one log line naming it and abort(). */
#include "invariant.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

void (*ss_invariant_hook)(const char *id, const char *msg);

void ss_invariant_failed(const char *id, const char *file, int line, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ss_invariant_hook) {
        ss_invariant_hook(id, msg);
        return;
    }
    log_error("invariant", "invariant %s broken at %s:%d: %s; stopping before anything past it "
              "is saved (a restart resumes from the last checkpoint); please report this",
              id, file, line, msg);
    abort();
}
