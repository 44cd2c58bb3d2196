/* log: leveled logging (see log.h): the line's format (text or JSON) and
 * where it goes (standard error, a file, syslog). */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "jsonw.h"
#include "log_syslog.h"
#include "sbuf.h"

_Atomic int log_min_level = LOG_INFO;
static _Atomic int log_json; /* [log] format = json */
/* where lines go; a reopen (SIGHUP) swaps it under the write lock, so no
 * line is ever written to a descriptor being closed */
static int log_fd = 2;
static bool log_to_syslog;
static pthread_rwlock_t log_lock = PTHREAD_RWLOCK_INITIALIZER;
static const char *level_names[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};
static const char *level_json[] = {"debug", "info", "warn", "error"};

void log_set_level(int level) { log_min_level = level; }
void log_set_format(bool json) { log_json = json; }

int log_parse_level(const char *name) {
    static const char *names[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i < 5; i++)
        if (strcasecmp(name, names[i]) == 0) return i;
    return -1;
}

/* the new destination: fd (a file, or 2) or syslog; the old one closed */
static void swap_target(int fd, bool to_syslog) {
    pthread_rwlock_wrlock(&log_lock);
    int old = log_fd;
    bool old_syslog = log_to_syslog;
    log_fd = fd;
    log_to_syslog = to_syslog;
    if (to_syslog && !old_syslog) log_syslog_open();
    if (old_syslog && !to_syslog) log_syslog_close();
    pthread_rwlock_unlock(&log_lock);
    if (old > 2 && old != fd) close(old);
}

int log_open_file(const char *path, char *err, int errlen) {
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (fd < 0) {
        snprintf(err, (size_t)errlen, "cannot open log file %s: %s (check the directory exists "
                 "and this user may write to it)", path, strerror(errno));
        return -1;
    }
    swap_target(fd, false);
    return 0;
}

void log_use_stderr(void) { swap_target(2, false); }

int log_set_target(const char *file, char *err, int errlen) {
    if (!file || !*file) return log_use_stderr(), 0;
    if (!strcmp(file, LOG_TARGET_SYSLOG)) return swap_target(2, true), 0;
    return log_open_file(file, err, errlen);
}

bool log_is_syslog(void) {
    pthread_rwlock_rdlock(&log_lock);
    bool s = log_to_syslog;
    pthread_rwlock_unlock(&log_lock);
    return s;
}

void log_format_line(sbuf *out, bool json, bool stamp, const struct timespec *ts, int level,
                     const char *area, const char *msg, size_t msglen) {
    level = level < 0 ? 0 : level > 3 ? 3 : level;
    char when[96] = "";
    if (stamp) {
        struct tm tm;
        gmtime_r(&ts->tv_sec, &tm);
        snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 ts->tv_nsec / 1000000);
    }
    if (json) {
        sbuf_adds(out, "{");
        if (stamp) sbuf_printf(out, "\"ts\":\"%s\",", when);
        sbuf_printf(out, "\"level\":\"%s\",\"area\":", level_json[level]);
        json_escape(out, area, strlen(area));
        sbuf_adds(out, ",\"msg\":");
        json_escape(out, msg, msglen);
        sbuf_adds(out, "}\n");
        return;
    }
    if (stamp) sbuf_printf(out, "%s ", when);
    sbuf_printf(out, "%s [%s] ", level_names[level], area);
    sbuf_add(out, msg, msglen);
    sbuf_addc(out, '\n');
}

void log_write(int level, const char *component, const char *fmt, ...) {
    char msg[4096];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = m < 0 ? 0 : (size_t)m >= sizeof msg ? sizeof msg - 1 : (size_t)m;
    sbuf line = SBUF_INIT;
    pthread_rwlock_rdlock(&log_lock);
    /* syslog stamps the time itself */
    log_format_line(&line, log_json, !log_to_syslog, &ts, level, component, msg, len);
    if (log_to_syslog) {
        line.data[--line.len] = '\0'; /* no newline */
        log_syslog_write(level, line.data);
    } else {
        ssize_t w = write(log_fd, line.data, line.len);
        (void)w;
    }
    pthread_rwlock_unlock(&log_lock);
    sbuf_free(&line);
}
