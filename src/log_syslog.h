/* log_syslog: the syslog(3) side of src/log.c, apart because <syslog.h>
 * defines LOG_DEBUG, LOG_INFO, ... as macros that clash with log.h's levels.
 * Facility LOG_DAEMON, ident "searchsync", the pid in every line. */
#ifndef SS_LOG_SYSLOG_H
#define SS_LOG_SYSLOG_H

void log_syslog_open(void);
void log_syslog_close(void);
/* level: log.h's (0 debug .. 3 error); line without a newline */
void log_syslog_write(int level, const char *line);

#endif
