/* log: leveled logging, one line per message, as text or JSON lines
 * ([log] format):
 *   2026-11-22T10:00:00.123Z INFO  [binlog] resumed at mysql-bin.000003:4711
 *   {"ts":"2026-11-22T10:00:00.123Z","level":"info","area":"binlog","msg":"resumed at ..."}
 * to standard error, a file or syslog ([log] file; syslog adds its own time
 * stamp, so the line has none there). The macros test the level before any
 * formatting, so disabled debug lines cost one comparison. Thread-safe: each
 * line is written with one write() (or one syslog()); the destination is
 * swapped under a lock (a SIGHUP reopen). */
#ifndef SS_LOG_H
#define SS_LOG_H
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "sbuf.h"

/* [log] file = syslog */
#define LOG_TARGET_SYSLOG "syslog"

enum log_level { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3, LOG_OFF = 4 };

extern _Atomic int log_min_level; /* set live by a SIGHUP reload */

void log_set_level(int level);
void log_set_format(bool json);
int log_parse_level(const char *name); /* -1 if unknown */
/* Log to the file (opened for appending, created 0640); called again with
 * the same path it reopens it (logrotate). The previous file is closed. */
int log_open_file(const char *path, char *err, int errlen);
/* Back to standard error (the file, if any, is closed). */
void log_use_stderr(void);
/* [log] file: NULL or "" standard error, "syslog" syslog, else a file
 * (log_open_file). 0, or -1 with err (the destination is unchanged). */
int log_set_target(const char *file, char *err, int errlen);
bool log_is_syslog(void);
/* One line (newline included) appended to out: text or JSON, with the time
 * stamp ts when stamp (not for syslog). Exposed for tests. */
void log_format_line(sbuf *out, bool json, bool stamp, const struct timespec *ts, int level,
                     const char *area, const char *msg, size_t msglen);
void log_write(int level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define LOG(level, component, ...) \
    do { \
        if ((level) >= log_min_level) log_write((level), (component), __VA_ARGS__); \
    } while (0)
#define log_debug(c, ...) LOG(LOG_DEBUG, c, __VA_ARGS__)
#define log_info(c, ...) LOG(LOG_INFO, c, __VA_ARGS__)
#define log_warn(c, ...) LOG(LOG_WARN, c, __VA_ARGS__)
#define log_error(c, ...) LOG(LOG_ERROR, c, __VA_ARGS__)

#endif
