/* log_syslog: lines to syslog(3) (see log_syslog.h). */
#include "log_syslog.h"

#include <syslog.h>

void log_syslog_open(void) { openlog("searchsync", LOG_PID | LOG_NDELAY, LOG_DAEMON); }
void log_syslog_close(void) { closelog(); }

void log_syslog_write(int level, const char *line) {
    static const int prio[] = {LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERR};
    syslog(prio[level < 0 ? 0 : level > 3 ? 3 : level], "%s", line);
}
