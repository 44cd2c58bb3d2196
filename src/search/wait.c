/* wait.c: start-up waits for an engine that is down or not ready yet,
 * instead of refusing to start (an engine outage is handled like a source
 * outage: said once, retried, and over when it answers). */
#include "search/wait.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "log.h"
#include "search/search.h"
#include "monotime.h"

#define WAIT_FIRST_MS 500
#define WAIT_MAX_MS 5000

/* 1 the engine answers usefully, 0 it does not (why in why), -1 it cannot
 * be talked to until the configuration changes (its certificate is not
 * trusted, a certificate file is unusable): waiting does not help */
static int answers(struct search_conn *k, char *why, size_t len) {
    struct search_resp r;
    search_resp_init(&r);
    int ok = 0;
    if (search_request(k, "GET", "/", NULL, NULL, 0, &r) != SEARCH_OK)
        snprintf(why, len, "%s", r.err), ok = r.tls ? -1 : 0;
    else if (r.status >= 500 || r.status == 429)
        snprintf(why, len, "it answers GET / with HTTP %ld", r.status);
    else
        ok = 1;
    search_resp_free(&r);
    return ok;
}

static bool sleep_unless(int ms, const volatile sig_atomic_t *stop) {
    for (int slept = 0; slept < ms; slept += 100) {
        if (stop && *stop) return false;
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return !(stop && *stop);
}

int search_wait_ready(struct search_client *c, struct search_conn *k, int (*ready)(void *ud),
                      void *ud, const volatile sig_atomic_t *stop, char *err, size_t errlen) {
    int64_t since = 0;
    int delay = WAIT_FIRST_MS;
    char why[SEARCH_ERR_LEN + 64];
    for (;;) {
        if (stop && *stop) {
            snprintf(err, errlen, "stopped while waiting for the search engine");
            return -1;
        }
        int a = answers(k, why, sizeof why);
        if (a < 0) { /* search_detect says what is wrong and what to do */
            if (search_detect(c, k, err, errlen) == 0) continue;
            return -1;
        }
        if (a > 0) {
            if (since)
                log_info("search", "the search engine answers after %.1f s; starting",
                         (double)(mono_ms() - since) / 1000.0);
            since = 0;
            delay = WAIT_FIRST_MS;
            if (search_detect(c, k, err, errlen) == 0 && (!ready || ready(ud) == 0)) return 0;
            /* failed: waited for again only when the engine went away meanwhile */
            if (answers(k, why, sizeof why) != 0) return -1;
        }
        if (!since) {
            since = mono_ms();
            log_warn("search", "the search engine at %s does not answer (%s); waiting for it, "
                     "retrying every %d s at most (SIGTERM stops)", search_client_url(c, 0), why,
                     WAIT_MAX_MS / 1000);
        }
        if (!sleep_unless(delay, stop)) continue;
        delay = delay * 2 > WAIT_MAX_MS ? WAIT_MAX_MS : delay * 2;
    }
}
