/* test_health: the predicates behind the node's health (systemd's watchdog,
 * status): a thread's beats and named waits (src/liveness.c), a schedule's
 * thread between and during its runs (src/schedule.c), the node's request
 * thread running one admin call too long (sync/node/node.c), the admin
 * server's connection cut at its deadline and never closed
 * (web/admission.c), the reader's outage named as a wait
 * (sync/sources/reader_stats.c), a build's workers (sync/reindex/
 * reindex_health.c) and the shard joins thread (sync/node/shard_join.c)
 * held to the node's bound. Each is made to fire, and seen to clear when
 * its cause goes. */
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

#include "deliver/deliver_int.h"
#include "liveness.h"
#include "monotime.h"
#include "schedule.h"
#include "sync/node/node.h"
#include "sync/node/shard_join.h"
#include "sync/reindex/reindex.h"
#include "sync/reindex/reindex_runner_int.h"
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

/* ---------- a build's workers ---------- */

/* a configuration whose node bound is 2 x 4 s + 10 s = 18 s */
static void small_timeouts(struct ss_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->source.connect_timeout_ms = 1000, cfg->source.read_timeout_ms = 3000;
    cfg->search.connect_timeout_ms = 1000, cfg->search.timeout_ms = 3000;
    cfg->delivery.drain_timeout_ms = 3000;
    cfg->source.heartbeat_ms = 500;
}

/* the time of a thread's last beat moved back by ms */
static void quiet_for(struct liveness *l, int64_t ms) {
    atomic_store(&l->beat_ms, mono_ms() - ms);
}

static void t_build_workers(void **st) {
    (void)st;
    struct ss_config cfg;
    small_timeouts(&cfg);
    int64_t bound = node_wedged_after_ms(&cfg);
    assert_int_equal(bound, 18000);
    char why[512] = "";
    /* no build: well */
    assert_true(reindex_runners_healthy(bound, why, sizeof why));
    struct reindex_runner r;
    memset(&r, 0, sizeof r);
    r.alias = "products";
    r.version = 3;
    struct worker w[2];
    memset(w, 0, sizeof w);
    r.w = w;
    r.nw = r.wcap = 2;
    struct job j = {.id = 7, .bucket = 1};
    w[0].r = w[1].r = &r;
    atomic_store(&w[0].job, &j);
    rx_health_add(&r);
    /* workers not yet running: nothing to ask of them */
    assert_true(reindex_runners_healthy(bound, why, sizeof why));
    liveness_start(&w[0].live);
    liveness_start(&w[1].live);
    assert_true(reindex_runners_healthy(bound, why, sizeof why));
    /* a long table: a page within the bound each time is well however long
     * the job runs */
    for (int k = 0; k < 5; k++) {
        quiet_for(&w[0].live, bound - 1000);
        assert_true(reindex_runners_healthy(bound, why, sizeof why));
        liveness_beat(&w[0].live);
    }
    /* no page past the bound: stalled, the build, the worker and its bucket named */
    quiet_for(&w[0].live, bound + 1000);
    assert_false(reindex_runners_healthy(bound, why, sizeof why));
    assert_string_equal(why, "products v3 (worker 1, bucket 1): has read, delivered or waited "
                             "on no page for more than 18000 ms (stalled: a page read, an "
                             "acknowledgement wait or a statement on its job that does not "
                             "end; the build waits with it)");
    /* the same at a time given: the bound is the limit */
    int64_t beat = atomic_load(&w[0].live.beat_ms);
    assert_true(rx_runner_healthy(&r, beat + bound, bound, why, sizeof why));
    assert_false(rx_runner_healthy(&r, beat + bound + 1, bound, why, sizeof why));
    /* a page read: well again */
    liveness_beat(&w[0].live);
    assert_true(reindex_runners_healthy(bound, why, sizeof why));
    /* the source away is a named wait: well however long it lasts ... */
    liveness_wait(&w[0].live, RX_WAIT_SOURCE_AWAY);
    quiet_for(&w[0].live, 10 * bound);
    assert_true(reindex_runners_healthy(bound, why, sizeof why));
    /* ... and the other worker, between jobs (none), is still asked */
    quiet_for(&w[1].live, bound + 1);
    assert_false(reindex_runners_healthy(bound, why, sizeof why));
    assert_non_null(strstr(why, "products v3 (worker 2): has read, delivered or waited on no "
                                "page for more than 18000 ms"));
    /* a page's submit waiting for room in delivery (the engine away): well */
    struct deliver d;
    memset(&d, 0, sizeof d);
    atomic_store(&d.waiting_space, true);
    w[1].d = &d;
    assert_true(reindex_runners_healthy(bound, why, sizeof why));
    w[1].d = NULL;
    /* its jobs done (the build waits for another source's part, or for its
     * switch elsewhere): ended, well */
    liveness_end(&w[1].live, true);
    liveness_wait(&w[0].live, NULL);
    liveness_end(&w[0].live, true);
    quiet_for(&w[0].live, 10 * bound);
    assert_true(reindex_runners_healthy(bound, why, sizeof why));
    /* freed: no longer asked */
    liveness_start(&w[0].live);
    quiet_for(&w[0].live, 10 * bound);
    assert_false(reindex_runners_healthy(bound, why, sizeof why));
    rx_health_remove(&r);
    assert_true(reindex_runners_healthy(bound, why, sizeof why));
}

/* ---------- the shard joins thread ---------- */

static void t_shard_joins(void **st) {
    (void)st;
    struct ss_config cfg;
    small_timeouts(&cfg);
    int64_t bound = node_wedged_after_ms(&cfg);
    char why[512] = "";
    struct shard_joins j;
    memset(&j, 0, sizeof j);
    assert_true(shard_joins_healthy(&j, bound, why, sizeof why)); /* not started */
    assert_int_equal(shard_joins_start(&j, &cfg, NULL), 0);
    WAIT_UNTIL(liveness_waiting(&j.live) != NULL);
    /* idle (no shard to read) is well however long it lasts */
    quiet_for(&j.live, 10 * bound);
    assert_true(shard_joins_healthy(&j, bound, why, sizeof why));
    /* a join under way (the thread held in its wait by its lock meanwhile) */
    pthread_mutex_lock(&j.mu);
    liveness_wait(&j.live, NULL);
    pthread_mutex_lock(&j.cur_mu);
    snprintf(j.cur, sizeof j.cur, "shard db.t_2 of index ix");
    pthread_mutex_unlock(&j.cur_mu);
    quiet_for(&j.live, bound - 1000);
    assert_true(shard_joins_healthy(&j, bound, why, sizeof why));
    quiet_for(&j.live, bound + 1000);
    assert_false(shard_joins_healthy(&j, bound, why, sizeof why));
    assert_string_equal(why, "reading shard db.t_2 of index ix into its live version: no page "
                             "read and delivered for more than 18000 ms (stalled: a page read "
                             "or its delivery that does not end)");
    /* its page's submit waiting for room in delivery: well */
    struct deliver d;
    memset(&d, 0, sizeof d);
    atomic_store(&d.waiting_space, true);
    pthread_mutex_lock(&j.cur_mu);
    j.d = &d;
    pthread_mutex_unlock(&j.cur_mu);
    assert_true(shard_joins_healthy(&j, bound, why, sizeof why));
    pthread_mutex_lock(&j.cur_mu);
    j.d = NULL;
    j.cur[0] = '\0';
    pthread_mutex_unlock(&j.cur_mu);
    /* a page delivered: well again */
    liveness_beat(&j.live);
    assert_true(shard_joins_healthy(&j, bound, why, sizeof why));
    liveness_wait(&j.live, JOINS_WAIT_IDLE);
    pthread_mutex_unlock(&j.mu);
    /* stopped: well */
    shard_joins_stop(&j);
    assert_true(shard_joins_healthy(&j, bound, why, sizeof why));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_liveness),      cmocka_unit_test(t_schedule),
        cmocka_unit_test(t_node_requests), cmocka_unit_test(t_node_bound),
        cmocka_unit_test(t_admission),     cmocka_unit_test(t_reader_outage),
        cmocka_unit_test(t_build_workers), cmocka_unit_test(t_shard_joins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
