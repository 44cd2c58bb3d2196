/* service_notify: telling systemd how `searchsync run` is doing
 * (Type=notify units; see service_notify.h).
 *
 * The protocol (sd_notify(3), "notify socket" in systemd's documentation of
 * its interfaces, declared stable) is one datagram of newline-separated
 * KEY=VALUE lines sent to the AF_UNIX socket named by $NOTIFY_SOCKET (a
 * path, or an abstract name when it starts with '@'). It is written here
 * rather than taken from libsystemd because it is that one sendto(), and
 * the daemon then needs no library beyond those every build already links
 * (a machine without systemd runs the same binary, and every call is a
 * no-op there).
 *
 * State is process-wide by nature: the environment names one socket for the
 * process. It is read once (service_notify_init, from main before threads)
 * and only read afterwards, except the watchdog's last ping (atomic). */
#include "service_notify.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static struct sockaddr_un addr;
static socklen_t addr_len; /* 0: no service manager listens */
static int64_t watchdog_ms;   /* 0: no watchdog asked */

static struct {
    pthread_t thread;
    bool running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    bool (*alive)(void *ud, char *why, size_t whylen);
    void *ud;
} wd = {.mu = PTHREAD_MUTEX_INITIALIZER}; /* cv: monotonic, set up in service_watchdog_start */

void service_notify_init(void) {
    addr_len = 0;
    watchdog_ms = 0;
    const char *s = getenv("NOTIFY_SOCKET");
    if (s && (s[0] == '/' || s[0] == '@') && strlen(s) < sizeof addr.sun_path) {
        memset(&addr, 0, sizeof addr);
        addr.sun_family = AF_UNIX;
        memcpy(addr.sun_path, s, strlen(s));
        if (s[0] == '@') addr.sun_path[0] = '\0'; /* abstract namespace */
        addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(s));
    }
    const char *us = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
    if (addr_len && us && (!pid || strtol(pid, NULL, 10) == (long)getpid())) {
        long long v = strtoll(us, NULL, 10);
        if (v > 0) watchdog_ms = v / 1000 > 0 ? v / 1000 : 1;
    }
    /* not for children (none are started; a shell-out would inherit them) */
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
}

bool service_notify_enabled(void) {
    return addr_len > 0;
}

long long service_notify_watchdog_ms(void) {
    return watchdog_ms;
}

int service_notify(const char *fmt, ...) {
    if (!addr_len) return 0;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0) return -1;
    if ((size_t)n >= sizeof msg) n = (int)sizeof msg - 1;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    ssize_t w = sendto(fd, msg, (size_t)n, MSG_NOSIGNAL, (struct sockaddr *)&addr, addr_len);
    int e = errno;
    close(fd);
    if (w < 0) {
        log_debug("systemd", "notifying the service manager failed: %s", strerror(e));
        return -1;
    }
    return 1;
}

/* ---------- the watchdog ---------- */

static void *watchdog_main(void *arg) {
    (void)arg;
    bool said = false;
    pthread_mutex_lock(&wd.mu);
    while (!wd.stop) {
        char why[256] = "";
        pthread_mutex_unlock(&wd.mu);
        bool ok = !wd.alive || wd.alive(wd.ud, why, sizeof why);
        if (ok) {
            service_notify("WATCHDOG=1");
            if (said) log_info("systemd", "the watchdog is pinged again");
            said = false;
        } else if (!said) {
            log_error("systemd", "not pinging systemd's watchdog: %s; systemd restarts the "
                      "service once WatchdogSec passes without a ping", why);
            said = true;
        }
        pthread_mutex_lock(&wd.mu);
        struct timespec ts; /* monotonic: a clock step never delays a ping */
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t wait = watchdog_ms / 2 > 0 ? watchdog_ms / 2 : 1;
        ts.tv_sec += wait / 1000;
        ts.tv_nsec += (wait % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        if (!wd.stop) pthread_cond_timedwait(&wd.cv, &wd.mu, &ts);
    }
    pthread_mutex_unlock(&wd.mu);
    return NULL;
}

int service_watchdog_start(bool (*alive)(void *ud, char *why, size_t whylen), void *ud) {
    if (!watchdog_ms || wd.running) return 0;
    wd.alive = alive;
    wd.ud = ud;
    wd.stop = false;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wd.cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&wd.thread, NULL, watchdog_main, NULL) != 0) return -1;
    wd.running = true;
    log_info("systemd", "pinging systemd's watchdog every %lld ms", (long long)watchdog_ms / 2);
    return 0;
}

void service_watchdog_stop(void) {
    if (!wd.running) return;
    pthread_mutex_lock(&wd.mu);
    wd.stop = true;
    pthread_cond_broadcast(&wd.cv);
    pthread_mutex_unlock(&wd.mu);
    pthread_join(wd.thread, NULL);
    pthread_cond_destroy(&wd.cv);
    wd.running = false;
}
