/* test_health: the predicates behind the node's health (systemd's watchdog,
 * status): a thread's beats and named waits (src/liveness.c), a schedule's
 * thread between and during its runs (src/schedule.c), the node's request
 * thread running one admin call too long (sync/node/node.c), the admin
 * server's connection cut at its deadline and never closed
 * (web/admission.c), and the reader's outage named as a wait
 * (sync/sources/reader_stats.c). Each is made to fire, and seen to clear
 * when its cause goes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "liveness.h"
#include "monotime.h"
#include "schedule.h"
#include "sync/node/node.h"
#include "sync/sources/reader_stats.h"
#include "web/admission.h"

#define WAIT_UNTIL(cond)                                                                    \
    do {                                                                                    \
        int64_t end_ = mono_ms() + 20000;                                                   \
        while (!(cond)) {                                                                   \
            if (mono_ms() >= end_) fail_msg("timed out after 20 s waiting for: %s", #cond); \
            usleep(2000);                                                                   \
        }                                                                                   \
    } while (0)

/* ---------- liveness ---------- */

static void t_liveness(void **st) {
    (void)st;
    struct liveness l = {0};
    char why[256] = "";
    assert_true(liveness_check(&l, "x", 1000000, 10, why, sizeof why)); /* never started */
    liveness_start(&l);
    int64_t now = mono_ms();
    assert_true(liveness_check(&l, "x", now, 1000, why, sizeof why));
    /* quiet past the bound: wedged, with the bound (not the time) in why */
    assert_false(liveness_check(&l, "x", now + 5000, 1000, why, sizeof why));
    assert_string_equal(why, "the x thread has not gone round for more than 1000 ms (wedged)");
    /* a named wait is well however long it lasts */
    liveness_wait(&l, "the source server is down");
    assert_string_equal(liveness_waiting(&l), "the source server is down");
    assert_true(liveness_check(&l, "x", now + 600000, 1000, why, sizeof why));
    liveness_wait(&l, NULL);
    assert_null(liveness_waiting(&l));
    assert_false(liveness_check(&l, "x", mono_ms() + 5000, 1000, why, sizeof why));
    liveness_beat(&l);
    assert_true(liveness_check(&l, "x", mono_ms(), 1000, why, sizeof why));
    /* ended: well when asked to, dead when not */
    liveness_end(&l, false);
    assert_false(liveness_check(&l, "x", mono_ms(), 1000, why, sizeof why));
    assert_string_equal(why, "the x thread ended while nothing stopped it");
    liveness_end(&l, true);
    assert_true(liveness_check(&l, "x", mono_ms(), 1000, why, sizeof why));
}

/* ---------- a schedule ---------- */

static atomic_bool task_hold, task_in;

static void slow_task(struct schedule *s, void *ud) {
    (void)s;
    (void)ud;
    atomic_store(&task_in, true);
    while (atomic_load(&task_hold)) usleep(1000);
    atomic_store(&task_in, false);
}

static void t_schedule(void **st) {
    (void)st;
    struct schedule s;
    char why[256] = "";
    atomic_store(&task_hold, true);
    assert_int_equal(schedule_start_every(&s, 3600, NULL, slow_task, NULL), 0);
    WAIT_UNTIL(atomic_load(&task_in)); /* its run at start */
    assert_true(schedule_running_since(&s) > 0);
    /* a run with no bound of its own (a check of a large table) is a named wait */
    usleep(150 * 1000);
    assert_true(schedule_healthy(&s, "checks", 0, 100, why, sizeof why));
    /* with one (a look every second), a run past it is wedged */
    assert_false(schedule_healthy(&s, "node state", 100, 100, why, sizeof why));
    assert_string_equal(why, "the node state thread's run has lasted more than 100 ms (wedged)");
    atomic_store(&task_hold, false);
    WAIT_UNTIL(schedule_running_since(&s) == 0);
    /* between runs it looks at the time every 100 ms */
    WAIT_UNTIL(schedule_healthy(&s, "node state", 100, 1000, why, sizeof why));
    schedule_stop(&s);
    assert_true(schedule_healthy(&s, "node state", 100, 1000, why, sizeof why));
}

/* ---------- the node's request thread ---------- */

static atomic_bool req_hold, req_in;

static void held_request(void *arg) {
    (void)arg;
    atomic_store(&req_in, true);
    while (atomic_load(&req_hold)) usleep(1000);
}

static void t_node_requests(void **st) {
    (void)st;
    struct node n;
    char err[128], why[512] = "";
    assert_int_equal(node_init(&n, NULL, err, sizeof err), 0);
    atomic_store(&req_hold, true);
    assert_int_equal(node_post(&n, "admin call /api/v1/indices/a/resync", held_request, NULL,
                               NULL, NULL), 0);
    WAIT_UNTIL(atomic_load(&req_in));
    assert_true(node_healthy(&n, why, sizeof why)); /* within its bound */
    sbuf js = SBUF_INIT;
    assert_true(node_health_json(&n, &js));
    assert_string_equal(js.data, "[]");
    /* the bound without a configuration is a minute: the request began earlier */
    pthread_mutex_lock(&n.mu);
    n.req_running_ms -= 61000;
    pthread_mutex_unlock(&n.mu);
    assert_false(node_healthy(&n, why, sizeof why));
    assert_non_null(strstr(why, "admin requests: admin call /api/v1/indices/a/resync has run "
                                "for more than 60000 ms"));
    sbuf_reset(&js);
    assert_false(node_health_json(&n, &js));
    assert_non_null(strstr(js.data, "{\"subsystem\":\"admin requests\",\"why\":\"admin call"));
    sbuf_free(&js);
    atomic_store(&req_hold, false);
    WAIT_UNTIL(node_healthy(&n, why, sizeof why));
    node_free(&n);
}

/* the bound follows the longest timeout */
static void t_node_bound(void **st) {
    (void)st;
    struct ss_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.source.connect_timeout_ms = 1000, cfg.source.read_timeout_ms = 2000;
    cfg.search.connect_timeout_ms = 1000, cfg.search.timeout_ms = 4000;
    cfg.delivery.drain_timeout_ms = 3000;
    cfg.source.heartbeat_ms = 1000;
    assert_int_equal(node_wedged_after_ms(&cfg), 2 * 5000 + 10000);
    cfg.delivery.drain_timeout_ms = 60000;
    assert_int_equal(node_wedged_after_ms(&cfg), 2 * 60000 + 10000);
}

/* ---------- the admin server's connections ---------- */

static void t_admission(void **st) {
    (void)st;
    struct adm_limits lim = {.max_total = 10, .max_per_addr = 10, .header_s = 0, .idle_s = 10,
                             .request_s = 10};
    struct admission *a = adm_new(&lim);
    assert_non_null(a);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    char why[256] = "";
    struct adm_slot *s = adm_open(a, sv[0], "127.0.0.1");
    assert_true(adm_healthy(a, 300, why, sizeof why));
    WAIT_UNTIL(adm_cut_count(a) == 1); /* its headers' deadline (0 s) passed: cut */
    /* never closed: the thread serving it would be stuck in its handler */
    WAIT_UNTIL(!adm_healthy(a, 300, why, sizeof why));
    assert_non_null(strstr(why, "a connection from 127.0.0.1 is still open more than 300 ms "
                                "after it was cut"));
    adm_close(a, s);
    assert_true(adm_healthy(a, 300, why, sizeof why));
    adm_free(a);
    close(sv[0]);
    close(sv[1]);
}

/* ---------- the reader's outage ---------- */

static void t_reader_outage(void **st) {
    (void)st;
    struct reader_stats rs;
    reader_stats_init(&rs);
    liveness_start(&rs.live);
    char why[256] = "";
    reader_stats_link(&rs, false, "cannot connect to the source server");
    assert_string_equal(liveness_waiting(&rs.live), READER_WAIT_SOURCE_DOWN);
    assert_true(liveness_check(&rs.live, "source reader", mono_ms() + 600000, 1000, why,
                               sizeof why));
    reader_stats_link(&rs, true, NULL);
    assert_null(liveness_waiting(&rs.live));
    assert_false(liveness_check(&rs.live, "source reader", mono_ms() + 600000, 1000, why,
                                sizeof why));
    reader_stats_destroy(&rs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_liveness),      cmocka_unit_test(t_schedule),
        cmocka_unit_test(t_node_requests), cmocka_unit_test(t_node_bound),
        cmocka_unit_test(t_admission),     cmocka_unit_test(t_reader_outage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
