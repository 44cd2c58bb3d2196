/* log: leveled logging (see log.h). */
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

_Atomic int log_min_level = LOG_INFO;
/* where lines go; a reopen (SIGHUP) swaps it under the write lock, so no
 * line is ever written to a descriptor being closed */
static int log_fd = 2;
static pthread_rwlock_t log_lock = PTHREAD_RWLOCK_INITIALIZER;
static const char *level_names[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};

void log_set_level(int level) { log_min_level = level; }

int log_parse_level(const char *name) {
    static const char *names[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i < 5; i++)
        if (strcasecmp(name, names[i]) == 0) return i;
    return -1;
}

int log_open_file(const char *path, char *err, int errlen) {
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (fd < 0) {
        snprintf(err, (size_t)errlen, "cannot open log file %s: %s", path, strerror(errno));
        return -1;
    }
    pthread_rwlock_wrlock(&log_lock);
    int old = log_fd;
    log_fd = fd;
    pthread_rwlock_unlock(&log_lock);
    if (old > 2) close(old);
    return 0;
}

void log_use_stderr(void) {
    pthread_rwlock_wrlock(&log_lock);
    int old = log_fd;
    log_fd = 2;
    pthread_rwlock_unlock(&log_lock);
    if (old > 2) close(old);
}

void log_write(int level, const char *component, const char *fmt, ...) {
    char line[4096];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s [%s] ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000,
                     level_names[level < 0 ? 0 : level > 3 ? 3 : level], component);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2) len = sizeof line - 2;
    line[len++] = '\n';
    pthread_rwlock_rdlock(&log_lock);
    ssize_t w = write(log_fd, line, len);
    pthread_rwlock_unlock(&log_lock);
    (void)w;
}
