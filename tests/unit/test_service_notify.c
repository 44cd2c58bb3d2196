/* test_service_notify: the datagrams systemd would receive (src/service_notify.c),
 * on a real AF_UNIX socket: READY/STATUS messages to a path and to an
 * abstract name, nothing without $NOTIFY_SOCKET, the environment cleared
 * after it is read, and watchdog pings only while alive() says so. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <semaphore.h>

#include <cmocka.h>

#include "service_notify.h"

static int bind_socket(const char *name, bool abstract) {
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, name, strlen(name));
    if (abstract) a.sun_path[0] = '\0';
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
    assert_int_equal(bind(fd, (struct sockaddr *)&a, len), 0);
    struct timeval tv = {5, 0}; /* a lost datagram fails the test, never hangs it */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void recv_str(int fd, char *buf, size_t len) {
    ssize_t n = recv(fd, buf, len - 1, 0);
    assert_true(n > 0);
    buf[n] = '\0';
}

static void t_path_socket(void **state) {
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/ss-notify-%d", (int)getpid());
    unlink(path);
    int fd = bind_socket(path, false);
    setenv("NOTIFY_SOCKET", path, 1);
    unsetenv("WATCHDOG_USEC");
    service_notify_init();
    assert_true(service_notify_enabled());
    assert_null(getenv("NOTIFY_SOCKET")); /* not passed on */
    assert_int_equal(service_notify_watchdog_ms(), 0);
    assert_int_equal(service_notify("READY=1\nSTATUS=reading the binlog of source %s", "s1"), 1);
    char buf[256];
    recv_str(fd, buf, sizeof buf);
    assert_string_equal(buf, "READY=1\nSTATUS=reading the binlog of source s1");
    assert_int_equal(service_watchdog_start(NULL, NULL), 0); /* no watchdog asked: no-op */
    service_watchdog_stop();
    close(fd);
    unlink(path);
}

static void t_no_socket(void **state) {
    (void)state;
    unsetenv("NOTIFY_SOCKET");
    setenv("WATCHDOG_USEC", "1000000", 1);
    service_notify_init();
    assert_false(service_notify_enabled());
    assert_int_equal(service_notify_watchdog_ms(), 0); /* a watchdog needs the socket */
    assert_int_equal(service_notify("READY=1"), 0);
}

static void t_watchdog_of_other_pid(void **state) {
    (void)state;
    char name[64];
    snprintf(name, sizeof name, "@ss-notify-pid-%d", (int)getpid());
    int fd = bind_socket(name, true);
    setenv("NOTIFY_SOCKET", name, 1);
    setenv("WATCHDOG_USEC", "1000000", 1);
    setenv("WATCHDOG_PID", "1", 1); /* meant for another process */
    service_notify_init();
    assert_true(service_notify_enabled());
    assert_int_equal(service_notify_watchdog_ms(), 0);
    close(fd);
}

/* alive() as the test says: each call is counted on a semaphore */
static volatile int alive_answer = 1;
static sem_t alive_calls;
static bool alive(void *ud, char *why, size_t whylen) {
    (void)ud;
    snprintf(why, whylen, "the test says so");
    int a = alive_answer;
    sem_post(&alive_calls);
    return a;
}

static void t_watchdog(void **state) {
    (void)state;
    char name[64];
    snprintf(name, sizeof name, "@ss-notify-wd-%d", (int)getpid());
    int fd = bind_socket(name, true);
    setenv("NOTIFY_SOCKET", name, 1);
    setenv("WATCHDOG_USEC", "100000", 1);
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv("WATCHDOG_PID", pid, 1);
    service_notify_init();
    assert_int_equal(service_notify_watchdog_ms(), 100);
    sem_init(&alive_calls, 0, 0);
    alive_answer = 1;
    assert_int_equal(service_watchdog_start(alive, NULL), 0);
    char buf[64];
    for (int i = 0; i < 3; i++) { /* every 50 ms */
        recv_str(fd, buf, sizeof buf);
        assert_string_equal(buf, "WATCHDOG=1");
    }
    /* not alive: after the first refusing call, nothing more is sent */
    alive_answer = 0;
    for (;;) { /* the first call that saw 0 */
        sem_wait(&alive_calls);
        if (!alive_answer) break;
    }
    int drained = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int calls = 0; calls < 2;) { /* drain what came before it */
        sem_wait(&alive_calls);
        calls++;
        if (calls == 1)
            while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) drained++;
    }
    errno = 0;
    assert_true(recv(fd, buf, sizeof buf, MSG_DONTWAIT) < 0); /* none between two refusals */
    assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
    assert_true(drained <= 1);
    service_watchdog_stop();
    service_watchdog_stop(); /* idempotent */
    sem_destroy(&alive_calls);
    close(fd);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_path_socket),
        cmocka_unit_test(t_no_socket),
        cmocka_unit_test(t_watchdog_of_other_pid),
        cmocka_unit_test(t_watchdog),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
