/* service_notify: readiness, status and watchdog pings for systemd
 * (Type=notify; packaging/searchsync.service.in). Without $NOTIFY_SOCKET
 * (not under systemd) every call does nothing.
 *
 * `searchsync run` says READY=1 once its start-up checks passed (the
 * configuration, the metadata schema, the mapping, the admin server), then
 * STATUS= lines as it waits for the engine, stands by or reads the binlog,
 * and STOPPING=1 when it drains. With WatchdogSec= it pings WATCHDOG=1 at
 * half that period from a thread of its own, as long as the supervisor
 * thread keeps ticking (a stuck control plane gets the service restarted;
 * a reader waiting out an engine outage does not). */
#ifndef SS_SERVICE_NOTIFY_H
#define SS_SERVICE_NOTIFY_H
#include <stdbool.h>
#include <stddef.h>

/* Read $NOTIFY_SOCKET, $WATCHDOG_USEC, $WATCHDOG_PID (then unset them).
 * From main, before any thread. */
void service_notify_init(void);
bool service_notify_enabled(void);
long long service_notify_watchdog_ms(void); /* 0: no watchdog */
/* Send one message ("READY=1\nSTATUS=..."): 1 sent, 0 nobody listens,
 * -1 failed (said at debug level only). */
int service_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Ping the watchdog every half period while alive() says so (alive may be
 * NULL: always). No-op without a watchdog. 0 or -1. */
int service_watchdog_start(bool (*alive)(void *ud, char *why, size_t whylen), void *ud);
void service_watchdog_stop(void); /* idempotent */

#endif
