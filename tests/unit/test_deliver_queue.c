/* test_deliver_queue: the delivery queues against a fake engine.
 *
 * The fake engine (fake_bulk) reads the real NDJSON bodies delivery writes,
 * applies external versioning like Elasticsearch/OpenSearch (a write lands
 * only if its version is greater than the stored one, else 409; update
 * scripts are noops when the stored version is not older) and answers with a
 * real bulk response. Faults are injected per test: whole-request transport
 * errors, 429 on items, 400 mapping errors, a gate that holds requests
 * (tests/unit/deliver_fake.h). */
#include "deliver_fake.h"

/* ---------------------------------------------------------------- tests */

static void t_version_layout(void **s) {
    (void)s;
    uint64_t v = version_make(3, 42, 4711);
    assert_int_equal(version_epoch(v), 3);
    assert_int_equal(version_file(v), 42);
    assert_int_equal(version_pos(v), 4711);
    assert_true(v < (1ull << 63));
    /* a later position, a later file, a later epoch always compare greater */
    assert_true(version_make(3, 42, 4712) > v);
    assert_true(version_make(3, 43, 4) > version_make(3, 42, 0xffffffffu));
    assert_true(version_make(4, 1, 4) > version_make(3, 2097151, 0xffffffffu));
    assert_true(version_make(1023, 2097151, 0xffffffffu) <= (uint64_t)INT64_MAX);
    assert_int_equal(version_make(1024, 0, 0), 0);
    assert_int_equal(version_make(0, 1u << 21, 0), 0);
    assert_int_equal(version_make(0, 0, 1ull << 32), 0);
    /* what log lines say of a change's origin */
    char b[64];
    assert_string_equal(version_describe(v, b, sizeof b), "binlog 000042:4711 epoch 3");
    assert_string_equal(version_describe(version_make(0, 7, 91234), b, sizeof b),
                        "binlog 000007:91234");
}

static void t_invalid(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    struct deliver *d = mk(&o);
    struct change c = {.index = "i", .doc_id = "", .version = 1, .op = CHANGE_INDEX,
                       .body = "{}", .body_len = 2};
    assert_int_equal(deliver_submit(d, &c), DELIVER_EINVAL);
    c.doc_id = "1";
    c.version = 0;
    assert_int_equal(deliver_submit(d, &c), DELIVER_EINVAL);
    c.version = 1ull << 63;
    assert_int_equal(deliver_submit(d, &c), DELIVER_EINVAL);
    deliver_free(d);
}

/* many changes, many docs, mixed ops, transient faults: the final state is
 * the newest version of every doc, each doc saw its versions in order, the
 * checkpoint reached the last transaction */
static void t_stream_with_faults(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    struct deliver *d = mk(&o);
    enum { N = 20000, DOCS = 500 };
    static uint64_t want[DOCS];
    static bool want_exists[DOCS];
    memset(want, 0, sizeof want);
    memset(want_exists, 0, sizeof want_exists);
    char id[16], pos[16];
    unsigned r = 7;
    for (int i = 0; i < N; i++) {
        r = r * 1103515245u + 12345u;
        int doc = (int)((r >> 8) % DOCS);
        enum change_op op = (r >> 20) % 10 == 0 ? CHANGE_DELETE : CHANGE_INDEX;
        uint64_t v = version_make(1, 1, 4 + (uint64_t)i);
        snprintf(id, sizeof id, "%d", doc);
        submit(d, "idx", id, v, op, op == CHANGE_DELETE ? NULL : "{\"a\":1}");
        want[doc] = v;
        want_exists[doc] = op != CHANGE_DELETE;
        if (i % 7 == 6) {
            snprintf(pos, sizeof pos, "%d", i + 1);
            deliver_txn_end(d, pos);
        }
        if (i == 5000) {
            pthread_mutex_lock(&F.mu);
            F.fail_requests = 5;
            F.fail_429_items = 300;
            pthread_mutex_unlock(&F.mu);
        }
    }
    deliver_txn_end(d, "end");
    assert_int_equal(deliver_drain(d, 20000), DELIVER_OK);
    char lw[32];
    deliver_low_water(d, lw, sizeof lw);
    assert_string_equal(lw, "end");
    assert_true(ckpt_last_is("end"));
    for (int i = 0; i < DOCS; i++) {
        snprintf(id, sizeof id, "%d", i);
        struct fdoc f;
        bool found = fake_doc("idx", id, &f);
        if (!want[i]) {
            assert_false(found);
            continue;
        }
        assert_true(found);
        assert_int_equal(f.version, want[i]);
        assert_int_equal(f.exists, want_exists[i]);
        assert_false(f.order_broken);
    }
    struct deliver_stats st;
    deliver_get_stats(d, &st);
    assert_true(st.retries >= 300);
    assert_true(st.requests_failed >= 5);
    assert_true(st.coalesced > 0);
    assert_int_equal(st.queued, 0);
    assert_int_equal(st.dead_letters, 0);
    deliver_free(d);
}

/* an older change arriving after a newer one (replay) never wins */
static void t_stale_and_duplicates(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    struct deliver *d = mk(&o);
    submit(d, "i", "1", 100, CHANGE_INDEX, "{}");
    deliver_drain(d, 5000);
    submit(d, "i", "1", 50, CHANGE_INDEX, "{}");  /* older: 409 at the engine */
    submit(d, "i", "2", 70, CHANGE_INDEX, "{}");
    submit(d, "i", "2", 60, CHANGE_INDEX, "{}");  /* older than the queued: dropped */
    submit(d, "i", "2", 70, CHANGE_INDEX, "{}");  /* duplicate */
    deliver_txn_end(d, "p");
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    struct fdoc f1, f2;
    assert_true(fake_doc("i", "1", &f1) && fake_doc("i", "2", &f2));
    assert_int_equal(f1.version, 100);
    assert_int_equal(f2.version, 70);
    struct deliver_stats st;
    deliver_get_stats(d, &st);
    assert_true(st.stale >= 2);
    deliver_free(d);
}

/* coalescing: while a batch is held, 200 versions of one doc become one write */
static void t_coalesce(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 1;
    o.helpers = 1;
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "hold", 1, CHANGE_INDEX, "{}");
    WAIT_UNTIL(fake_inflight() > 0);
    for (int v = 2; v <= 201; v++) submit(d, "i", "x", (uint64_t)v, CHANGE_INDEX, "{}");
    gate(false);
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    struct fdoc f;
    assert_true(fake_doc("i", "x", &f));
    assert_int_equal(f.version, 201);
    assert_int_equal(f.writes, 1);
    struct deliver_stats st;
    deliver_get_stats(d, &st);
    assert_int_equal(st.coalesced, 199);
    deliver_free(d);
}

/* one id under two routings is two copies on two shards: a child moved to
 * another parent is indexed with the new routing and its old copy deleted
 * with the old one; those changes must not coalesce into one */
static void t_coalesce_by_routing(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 1;
    o.helpers = 1;
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "hold", 1, CHANGE_INDEX, "{}");
    WAIT_UNTIL(fake_inflight() > 0);
    struct change a = {.index = "i", .doc_id = "c", .routing = "1", .version = 2,
                       .op = CHANGE_INDEX, .body = "{}", .body_len = 2};
    struct change b = {.index = "i", .doc_id = "c", .routing = "2", .version = 3,
                       .op = CHANGE_INDEX, .body = "{}", .body_len = 2};
    struct change del = {.index = "i", .doc_id = "c", .routing = "1", .version = 4,
                         .op = CHANGE_DELETE};
    assert_int_equal(deliver_submit(d, &a), DELIVER_OK);
    assert_int_equal(deliver_submit(d, &b), DELIVER_OK);   /* another copy: kept */
    assert_int_equal(deliver_submit(d, &del), DELIVER_OK); /* same copy as a: replaces it */
    gate(false);
    assert_int_equal(deliver_drain(d, 20000), DELIVER_OK);
    struct deliver_stats st;
    deliver_get_stats(d, &st);
    assert_int_equal(st.coalesced, 1);
    /* hold, the copy under "2" and the delete under "1" all reach the engine
     * (the fake keeps one copy per id, so one of the two may come back as a
     * version conflict there; on a real engine they are on two shards) */
    assert_int_equal(st.docs_ok + st.stale, 3);
    deliver_free(d);
}

/* updates are not coalesced and keep their order behind index writes */
static void t_update_order(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    struct deliver *d = mk(&o);
    submit(d, "i", "u", 10, CHANGE_INDEX, "{\"a\":1}");
    submit(d, "i", "u", 11, CHANGE_UPDATE, "{\"b\":2}");
    submit(d, "i", "u", 12, CHANGE_UPDATE, "{\"b\":3}");
    submit(d, "i", "gone", 13, CHANGE_UPDATE, "{\"b\":3}"); /* never indexed: 404 */
    deliver_txn_end(d, "p");
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    struct fdoc f;
    assert_true(fake_doc("i", "u", &f));
    assert_int_equal(f.version, 12);
    assert_int_equal(f.writes, 3);
    struct deliver_stats st;
    deliver_get_stats(d, &st);
    assert_int_equal(st.missing, 1);
    deliver_free(d);
}

/* permanent errors become dead letters; a failing dead-letter write keeps
 * the change (and the checkpoint) until it succeeds */
static void t_dead_letters(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    struct deliver *d = mk(&o);
    pthread_mutex_lock(&F.mu);
    F.dl_fail = 2;
    pthread_mutex_unlock(&F.mu);
    submit(d, "i", "ok", 5, CHANGE_INDEX, "{\"n\":1}");
    submit(d, "i", "b", 6, CHANGE_INDEX, "{\"n\":\"bad\"}");
    deliver_txn_end(d, "t1");
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    assert_int_equal(fake_dl_count(), 1);
    assert_true(fake_dl_error_has("mapper_parsing_exception"));
    char lw[16];
    deliver_low_water(d, lw, sizeof lw);
    assert_string_equal(lw, "t1");
    struct deliver_stats st;
    deliver_get_stats(d, &st);
    assert_int_equal(st.dead_letters, 1);
    deliver_free(d);
}

/* one body that is not JSON makes the engine refuse the whole request: the
 * batch is split and only that change becomes a dead letter */
static void t_isolate(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 1;
    o.helpers = 1;
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "first", 1, CHANGE_INDEX, "{}");
    WAIT_UNTIL(fake_inflight() > 0);
    char id[16];
    for (int i = 0; i < 10; i++) {
        snprintf(id, sizeof id, "%d", i);
        submit(d, "i", id, 10 + (uint64_t)i, CHANGE_INDEX, i == 4 ? "{\"malformed" : "{}");
    }
    deliver_txn_end(d, "t");
    gate(false);
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    assert_int_equal(fake_dl_count(), 1);
    for (int i = 0; i < 10; i++) {
        snprintf(id, sizeof id, "%d", i);
        struct fdoc f;
        if (i == 4)
            assert_false(fake_doc("i", id, &f));
        else
            assert_true(fake_doc("i", id, &f) && f.exists);
    }
    struct deliver_stats st;
    deliver_get_stats(d, &st);
    assert_int_equal(st.fuse_blows, 0);
    deliver_free(d);
}

/* the checkpoint never passes an unacknowledged change */
static void t_low_water(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 2;
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "a", 1, CHANGE_INDEX, "{}");
    uint64_t s1 = deliver_txn_end(d, "after-a");
    WAIT_UNTIL(fake_inflight() > 0);
    assert_int_equal(deliver_wait_txn(d, s1, 50), DELIVER_ETIMEOUT);
    char lw[32];
    assert_int_equal(deliver_low_water(d, lw, sizeof lw), 0);
    assert_string_equal(lw, "");
    /* empty transactions behind it do not move the mark either */
    deliver_txn_end(d, "empty-1");
    deliver_txn_end(d, "empty-2");
    deliver_low_water(d, lw, sizeof lw);
    assert_string_equal(lw, "");
    gate(false);
    uint64_t s3 = deliver_txn_end(d, "empty-3");
    assert_int_equal(deliver_wait_txn(d, s3, 5000), DELIVER_OK);
    deliver_low_water(d, lw, sizeof lw);
    assert_string_equal(lw, "empty-3");
    deliver_free(d);
}

struct producer {
    struct deliver *d;
    int n, hwm;
    atomic_int done;
    long items_past_hwm; /* items the engine had seen when the submit past hwm returned */
};
static void *produce(void *arg) {
    struct producer *p = arg;
    char id[16];
    for (int i = 0; i < p->n; i++) {
        snprintf(id, sizeof id, "p%d", i);
        submit(p->d, "hwm", id, 1 + (uint64_t)i, CHANGE_INDEX, "{}");
        if (i == p->hwm) p->items_past_hwm = fake_items();
    }
    atomic_store(&p->done, 1);
    return NULL;
}

/* the producer blocks at the high-water mark and resumes; nothing dropped */
static void t_high_water(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.high_watermark = 10;
    struct deliver *d = mk(&o);
    gate(true);
    struct producer p = {.d = d, .n = 50, .hwm = 10};
    pthread_t th;
    pthread_create(&th, NULL, produce, &p);
    struct deliver_stats st;
    WAIT_UNTIL((deliver_get_stats(d, &st), st.blocked >= 1));
    /* the gate holds every acknowledgement: nothing can leave */
    assert_int_equal(atomic_load(&p.done), 0);
    deliver_get_stats(d, &st);
    assert_int_equal(st.queued + st.inflight, 10);
    assert_true(st.blocked >= 1);
    gate(false);
    pthread_join(th, NULL);
    /* the submit past the mark returned only once the engine had taken items
     * (the fake counts them before it answers, behind the gate): the producer
     * waited for room the whole time the gate was closed, not only for a
     * while after it was seen blocked */
    assert_true(p.items_past_hwm > 0);
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    deliver_get_stats(d, &st);
    assert_int_equal(st.docs_ok, 50);
    deliver_free(d);
}

/* a failing index blows its fuse and pauses; another index goes on */
static void t_fuse(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.fuse_failures = 3;
    o.fuse_interval_ms = 10000;
    o.fuse_reset_ms = 300;
    struct deliver *d = mk(&o);
    fake_fail_index("sick");
    submit(d, "sick", "1", 1, CHANGE_INDEX, "{}");
    WAIT_UNTIL(deliver_fuse_blown(d, "sick") == 1);
    assert_int_equal(deliver_fuse_blown(d, "sick"), 1);
    submit(d, "well", "1", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "x");
    WAIT_UNTIL(fake_has("well", "1"));
    struct fdoc w;
    assert_true(fake_doc("well", "1", &w));
    assert_true(w.exists);
    /* drain cannot finish while the fuse is blown and the index fails */
    assert_int_equal(deliver_drain(d, 100), DELIVER_ETIMEOUT);
    fake_fail_index(NULL); /* the engine recovers */
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    assert_true(fake_has("sick", "1"));
    assert_int_equal(deliver_fuse_blown(d, "sick"), 0);
    struct deliver_stats st;
    deliver_get_stats(d, &st);
    assert_true(st.fuse_blows >= 1);
    assert_int_equal(st.drain_timeouts, 1);
    sbuf m = SBUF_INIT;
    deliver_stats_prometheus(d, &m);
    assert_non_null(strstr(m.data, "searchsync_delivery_fuse_blows_total"));
    assert_non_null(strstr(m.data, "searchsync_delivery_fuse_blown{index=\"sick\"} 0"));
    assert_non_null(strstr(m.data, "searchsync_delivery_batch_latency_seconds{quantile=\"0.999\"}"));
    assert_non_null(strstr(m.data, "searchsync_delivery_drain_timeouts_total 1"));
    sbuf_free(&m);
    deliver_free(d);
}

/* purge_one at the high-water mark with a blown fuse: purged changes are
 * dead letters and the producer moves on */
static void t_purge(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.fuse_failures = 1;
    o.fuse_reset_ms = 60000;
    o.high_watermark = 5;
    o.purge = PURGE_ONE;
    struct deliver *d = mk(&o);
    fake_fail_index("sick");
    char id[16];
    for (int i = 0; i < 20; i++) {
        snprintf(id, sizeof id, "%d", i);
        submit(d, "sick", id, 1 + (uint64_t)i, CHANGE_INDEX, "{}");
    }
    struct deliver_stats st;
    deliver_get_stats(d, &st);
    assert_true(st.purged >= 15);
    assert_int_equal(st.purged, (uint64_t)fake_dl_count());
    assert_true(fake_dl_error_has("purged"));
    deliver_free(d);
}

/* purge_index and purge_all empty the blown indices' queues (as dead
 * letters); a healthy index keeps its changes */
static void t_purge_index_all(void **s) {
    (void)s;
    for (int strat = PURGE_INDEX; strat <= PURGE_ALL; strat++) {
        setup(NULL);
        struct deliver_opts o;
        base_opts(&o);
        o.fuse_failures = 1;
        o.fuse_reset_ms = 60000;
        o.high_watermark = 30;
        o.purge = (enum purge_strategy)strat;
        struct deliver *d = mk(&o);
        fake_fail_index("sick");
        char id[16];
        submit(d, "sick", "first", 1, CHANGE_INDEX, "{}");
        WAIT_UNTIL(deliver_fuse_blown(d, "sick") == 1);
        assert_int_equal(deliver_fuse_blown(d, "sick"), 1);
        for (int i = 0; i < 100; i++) {
            snprintf(id, sizeof id, "%d", i);
            submit(d, "sick", id, 10 + (uint64_t)i, CHANGE_INDEX, "{}");
            submit(d, "well", id, 10 + (uint64_t)i, CHANGE_INDEX, "{}");
        }
        deliver_txn_end(d, "end");
        struct deliver_stats st;
        deliver_get_stats(d, &st);
        assert_true(st.purged >= 70);
        assert_int_equal(st.purged, (uint64_t)fake_dl_count());
        fake_fail_index(NULL);
        for (int i = 0; i < 100; i++) {
            snprintf(id, sizeof id, "%d", i);
            WAIT_UNTIL(fake_has("well", id));
            assert_true(fake_has("well", id)); /* nothing of the healthy index purged */
        }
        deliver_free(d);
        teardown(NULL);
    }
}

static int ckpt_fails;
static int ckpt_flaky(void *ud, const char *pos, uint64_t seq) {
    if (ckpt_fails > 0) {
        ckpt_fails--;
        return -1;
    }
    return ckpt_cb(ud, pos, seq);
}

/* a failing checkpoint save is retried; the failures are counted */
static void t_checkpoint_retry(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    char err[256];
    o.transport = &FAKE;
    o.checkpoint = ckpt_flaky;
    ckpt_fails = 3;
    struct deliver *d = deliver_new(&o, NULL, err, sizeof err);
    submit(d, "i", "1", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "p1");
    WAIT_UNTIL(ckpt_last_is("p1"));
    assert_true(ckpt_last_is("p1"));
    struct deliver_stats st;
    deliver_get_stats(d, &st);
    assert_int_equal(st.checkpoint_failures, 3);
    assert_true(st.checkpoints_saved >= 1);
    deliver_free(d);
}

static atomic_int slow_in;
static int ckpt_slow(void *ud, const char *pos, uint64_t seq) {
    if (!strcmp(pos, "p1")) {
        atomic_store(&slow_in, 1);
        usleep(300000);
    }
    return ckpt_cb(ud, pos, seq);
}

/* a slow save in the checkpointer and the drain's save never overlap: the
 * newest position is the one that stays */
static void t_checkpoint_order(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    char err[256];
    o.transport = &FAKE;
    o.checkpoint = ckpt_slow;
    atomic_store(&slow_in, 0);
    struct deliver *d = deliver_new(&o, NULL, err, sizeof err);
    submit(d, "i", "1", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "p1");
    WAIT_UNTIL(atomic_load(&slow_in));
    submit(d, "i", "2", 2, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "p2");
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    assert_true(ckpt_last_is("p2"));
    deliver_free(d);
    assert_true(ckpt_last_is("p2"));
}

/* A transaction that is itself a checkpoint save read back (quiet) moves
 * the low-water mark, but a save for it alone waits for
 * idle_checkpoint_interval_ms or the drain; an ordinary transaction after it,
 * or one in flight that it follows, is saved at the next interval as always */
static void t_quiet_txn(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    enum { IDLE_MS = 500 }; /* 50 checkpoint intervals */
    o.idle_checkpoint_interval_ms = IDLE_MS;
    struct deliver *d = mk(&o);
    char lw[64];
    submit(d, "i", "1", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "p1");
    WAIT_UNTIL(ckpt_last_is("p1"));
    assert_true(ckpt_last_is("p1"));
    int saves = fake_ckpt_count();
    int64_t saved_at = fake_ckpt_ms();
    deliver_txn_end_quiet(d, "q1"); /* p1's save, read back */
    deliver_low_water(d, lw, sizeof lw);
    assert_string_equal(lw, "q1");
    /* q1 is saved once the idle interval since p1's save has passed, and no
     * save comes between (the ordinary interval does not save it) */
    WAIT_UNTIL(ckpt_last_is("q1"));
    assert_int_equal(fake_ckpt_count(), saves + 1);
    assert_true(fake_ckpt_ms() - saved_at >= IDLE_MS);
    saves = fake_ckpt_count();
    saved_at = fake_ckpt_ms();
    deliver_txn_end_quiet(d, "q2"); /* q1's save, read back: again not at once */
    WAIT_UNTIL(ckpt_last_is("q2"));
    assert_int_equal(fake_ckpt_count(), saves + 1);
    assert_true(fake_ckpt_ms() - saved_at >= IDLE_MS);
    deliver_txn_end(d, "p2"); /* an ordinary transaction (no changes of its own) */
    WAIT_UNTIL(ckpt_last_is("p2"));
    assert_true(ckpt_last_is("p2"));
    /* behind a transaction in flight it moves that one's position, saved
     * with it when it is acknowledged */
    gate(true);
    submit(d, "i", "2", 2, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "p3");
    deliver_txn_end_quiet(d, "q3");
    gate(false);
    WAIT_UNTIL(ckpt_last_is("q3"));
    assert_true(ckpt_last_is("q3"));
    /* with changes of its own it is an ordinary end */
    submit(d, "i", "3", 3, CHANGE_INDEX, "{}");
    deliver_txn_end_quiet(d, "p4");
    WAIT_UNTIL(ckpt_last_is("p4"));
    assert_true(ckpt_last_is("p4"));
    /* the drain saves a quiet position at once: a stopped daemon is exact */
    deliver_txn_end_quiet(d, "q5");
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    assert_true(ckpt_last_is("q5"));
    deliver_free(d);
}

/* every metric line is "name[{labels}] value" */
static void t_prometheus_format(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    struct deliver *d = mk(&o);
    submit(d, "we\"ird", "1", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "x");
    deliver_drain(d, 5000);
    sbuf m = SBUF_INIT;
    deliver_stats_prometheus(d, &m);
    int lines = 0;
    for (char *line = strtok(m.data, "\n"); line; line = strtok(NULL, "\n")) {
        lines++;
        if (line[0] == '#') {
            assert_true(!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7));
            continue;
        }
        char *sp = strrchr(line, ' ');
        assert_non_null(sp);
        char *end;
        strtod(sp + 1, &end);
        assert_int_equal(*end, '\0');
        assert_true(!strncmp(line, "searchsync_delivery_", 20));
    }
    assert_true(lines > 100);
    sbuf_free(&m);
    deliver_free(d);
}

/* one drain at a time; changes submitted during a drain wait for it */
struct drainer {
    struct deliver *d;
    int rc;
};
static void *do_drain(void *arg) {
    struct drainer *x = arg;
    x->rc = deliver_drain(x->d, 5000);
    return NULL;
}
static void t_drain(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 1;
    o.helpers = 1;
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "before", 1, CHANGE_INDEX, "{}");
    WAIT_UNTIL(fake_inflight() > 0);
    struct drainer x = {.d = d};
    pthread_t th;
    pthread_create(&th, NULL, do_drain, &x);
    struct deliver_stats st0;
    WAIT_UNTIL((deliver_get_stats(d, &st0), st0.drains >= 1)); /* the drain has begun */
    assert_int_equal(deliver_drain(d, 10), DELIVER_EBUSY);
    submit(d, "i", "during", 2, CHANGE_INDEX, "{}"); /* aux queue */
    gate(false);
    pthread_join(th, NULL);
    assert_int_equal(x.rc, DELIVER_OK);
    struct fdoc f;
    assert_true(fake_doc("i", "before", &f));
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    assert_true(fake_doc("i", "during", &f));
    struct deliver_stats st;
    deliver_get_stats(d, &st);
    assert_int_equal(st.drains, 2); /* the refused one is not a drain */
    assert_int_equal(st.drain_failures, 0);
    deliver_free(d);
}

/* deliver_halt (a reader fenced out): the request in flight completes, nothing
 * queued behind it is sent, no checkpoint is saved, submits and drains stop */
static void t_halt(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 1;
    o.helpers = 1;
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "flying", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "p1");
    WAIT_UNTIL(fake_inflight() > 0);
    submit(d, "i", "queued", 2, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "p2");
    int saves = fake_ckpt_count();
    deliver_halt(d);
    gate(false);
    WAIT_UNTIL(fake_has("i", "flying") && fake_inflight() == 0);
    usleep(300000); /* time enough for the helper to take the next batch, were it to */
    assert_int_equal(fake_requests(), 1);
    assert_false(fake_has("i", "queued"));
    assert_int_equal(fake_ckpt_count(), saves);
    struct change c = {.index = "i", .doc_id = "late", .version = 3, .op = CHANGE_INDEX,
                       .body = "{}", .body_len = 2};
    assert_int_equal(deliver_submit(d, &c), DELIVER_ESTOPPED);
    assert_int_equal(deliver_drain(d, 5000), DELIVER_ESTOPPED);
    assert_int_equal(deliver_wait_txn(d, 2, 5000), DELIVER_ESTOPPED);
    assert_int_equal(fake_ckpt_count(), saves);
    deliver_halt(d); /* twice: harmless */
    deliver_free(d);
}

/* deliver_hold_sends (a reader whose lock cannot be confirmed): the request
 * in flight completes, nothing queued is sent while held (nor what another
 * stream queued behind it for the same target), submits still queue;
 * released, everything goes in order and the checkpoint moves on */
static void t_hold_sends(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 1;
    o.helpers = 1;
    struct deliver *d = mk(&o);
    o.checkpoint = NULL; /* the other stream saves nothing */
    char err[256];
    struct deliver *other = deliver_stream_open(deliver_hub_of(d), &o, "other", DELIVER_BULK,
                                                err, sizeof err);
    assert_non_null(other);
    gate(true);
    submit(d, "i", "flying", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "p1");
    WAIT_UNTIL(fake_inflight() > 0);
    submit(d, "i", "queued", 2, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "p2");
    assert_int_equal(deliver_hold_sends(d, true), 1);
    submit(other, "i", "behind", 3, CHANGE_INDEX, "{}"); /* the same target's queue */
    deliver_txn_end(other, "o1");
    gate(false);
    WAIT_UNTIL(fake_has("i", "flying") && fake_inflight() == 0);
    submit(d, "i", "while held", 4, CHANGE_INDEX, "{}"); /* still queues */
    deliver_txn_end(d, "p3");
    usleep(300000); /* time enough for the helper to take the next batch, were it to */
    assert_int_equal(fake_requests(), 1);
    assert_false(fake_has("i", "queued"));
    assert_false(fake_has("i", "behind"));
    assert_int_equal(deliver_hold_sends(d, true), 2);
    deliver_hold_sends(d, false);
    WAIT_UNTIL(fake_has("i", "queued") && fake_has("i", "behind") &&
               fake_has("i", "while held"));
    assert_int_equal(deliver_wait_txn(d, 3, 5000), DELIVER_OK);
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    assert_true(ckpt_last_is("p3"));
    deliver_free(other);
    deliver_free(d);
}

/* batch minimum: below it nothing is sent until the flush interval */
static void t_batch_min_flush(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 1;
    o.batch_min = 10;
    o.flush_interval_ms = 1000;
    struct deliver *d = mk(&o);
    int64_t t0 = mono_ms();
    submit(d, "i", "1", 1, CHANGE_INDEX, "{}");
    WAIT_UNTIL(fake_requests() == 1);
    /* sent by the flush interval, not before (t0 precedes the change's queueing) */
    assert_true(fake_first_request_ms() - t0 >= 1000);
    assert_int_equal(fake_requests(), 1);
    deliver_free(d);
}

/* a burst spread over every worker's queue leaves as full requests: a batch
 * goes on with the same index's queues in the other workers */
static void t_batch_spans_workers(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 8;
    o.helpers = 1;
    o.batch_max = 100;
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "first", 1, CHANGE_INDEX, "{}");
    WAIT_UNTIL(fake_inflight() == 1); /* held at the gate */
    char id[16];
    for (int i = 0; i < 200; i++) {
        snprintf(id, sizeof id, "%d", i);
        submit(d, "i", id, 2, CHANGE_INDEX, "{}");
    }
    submit(d, "other", "x", 2, CHANGE_INDEX, "{}"); /* another index: its own request */
    deliver_txn_end(d, "t");
    gate(false);
    assert_int_equal(deliver_drain(d, 20000), DELIVER_OK);
    assert_int_equal(fake_items(), 202);
    assert_int_equal(fake_requests(), 4); /* 1 + 100 + 100 of "i", 1 of "other" */
    deliver_free(d);
}

/* flush_on_txn_end: below batch_min, a closed transaction goes at once */
static void t_flush_on_txn_end(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 1;
    o.batch_min = 500;
    o.batch_max = 500;
    o.flush_interval_ms = 60000;
    o.flush_on_txn_end = true;
    struct deliver *d = mk(&o);
    submit(d, "i", "1", 1, CHANGE_INDEX, "{}");
    submit(d, "i", "2", 1, CHANGE_INDEX, "{}");
    fake_mark(); /* requests from here on follow the transaction's end */
    uint64_t seq = deliver_txn_end(d, "p");
    assert_int_equal(deliver_wait_txn(d, seq, 20000), DELIVER_OK);
    /* one request with both changes, none before the end (a change sent
     * on its own at submit would be a request of one item, or an early one) */
    assert_int_equal(fake_requests_before_mark(), 0);
    assert_int_equal(fake_requests(), 1);
    assert_int_equal(fake_items(), 2);
    deliver_free(d);
}

/* linger_ms: closed transactions wait for company up to linger_ms and then
 * leave as one request; batch_max waiting goes at once. Watched by the fake
 * engine's requests, not by deliver_wait_txn (a wait for a transaction
 * sends it at once). */
static void t_linger(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 1;
    o.batch_max = 3;
    o.flush_interval_ms = 60000;
    o.flush_on_txn_end = true;
    o.linger_ms = 300;
    struct deliver *d = mk(&o);
    int64_t t0 = mono_ms();
    submit(d, "i", "1", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "a");
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    submit(d, "i", "2", 2, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "b");
    WAIT_UNTIL(fake_items() == 2);
    assert_true(fake_first_request_ms() - t0 >= 300);
    assert_int_equal(fake_requests(), 1); /* both transactions in one request */
    /* a full batch does not linger */
    int64_t t1 = mono_ms();
    submit(d, "i", "3", 3, CHANGE_INDEX, "{}");
    submit(d, "i", "4", 3, CHANGE_INDEX, "{}");
    submit(d, "i", "5", 3, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "c");
    WAIT_UNTIL(fake_items() == 5);
    assert_true(mono_ms() - t1 < 250);
    assert_int_equal(fake_requests(), 2);
    deliver_free(d);

    /* nor does a full batch of one index spread over the partitions: it
     * leaves at once, as one request */
    o.workers = 8;
    o.batch_max = 6;
    d = mk(&o);
    int64_t t2 = mono_ms();
    char id[16];
    for (int i = 0; i < 6; i++) {
        snprintf(id, sizeof id, "s%d", i);
        submit(d, "i", id, 4, CHANGE_INDEX, "{}");
    }
    deliver_txn_end(d, "d");
    WAIT_UNTIL(fake_items() == 11);
    assert_true(mono_ms() - t2 < 250);
    assert_int_equal(fake_requests(), 3); /* 2 above, and this one */
    deliver_free(d);
}

/* [delivery] and [search] keys reach the options */
static void t_opts_from_config(void **s) {
    (void)s;
    struct ss_config c;
    memset(&c, 0, sizeof c);
    config_defaults(&c);
    struct deliver_opts o;
    deliver_opts_from_config(&o, &c);
    assert_int_equal(o.workers, c.delivery.workers);
    assert_int_equal(o.batch_max, c.delivery.batch_max);
    assert_int_equal(o.high_watermark, c.delivery.high_watermark);
    assert_int_equal(o.linger_ms, 0); /* the default: no linger */
    assert_true(o.group_commit);      /* the default: group commit */
    assert_int_equal(o.purge, PURGE_OFF);
    assert_true(o.helpers >= 1 && o.helpers <= c.search.max_connections);
    c.search.max_connections = 1;
    c.delivery.linger_ms = 25;
    c.delivery.group_commit = false;
    deliver_opts_from_config(&o, &c);
    assert_int_equal(o.helpers, 1);
    assert_int_equal(o.linger_ms, 25);
    assert_false(o.group_commit);
    config_free(&c);
}

static void t_hist(void **s) {
    (void)s;
    struct hist h;
    memset(&h, 0, sizeof h);
    for (uint64_t v = 1; v <= 10000; v++) hist_add(&h, v);
    uint64_t p50 = hist_quantile(&h, 0.5), p99 = hist_quantile(&h, 0.99);
    assert_true(p50 > 4500 && p50 < 5500);
    assert_true(p99 > 9300 && p99 <= 10000);
    assert_int_equal(h.min, 1);
    assert_int_equal(h.max, 10000);
    for (uint64_t v = 0; v < 1000000; v += 997) {
        int b = hist_bucket(v);
        uint64_t r = hist_bucket_value(b);
        assert_true(r + r / 8 + 1 >= v && r <= v + v / 8 + 1);
    }
}

/* after a reindex switch an alias and its physical index name one index:
 * changes sent through the alias (target p) and to p by name are one queue,
 * sent in submit order with at most one batch in flight (an element update
 * through the alias, then an older whole-document write to p accepted after
 * it, was the defect) */
static void t_target_one_queue(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 4;
    o.helpers = 3;
    o.batch_max = 4;
    struct deliver *d = mk(&o);
    gate(true);
    struct change c0 = {.index = "p", .doc_id = "tx", .version = 1, .op = CHANGE_INDEX,
                        .body = "{}", .body_len = 2};
    assert_int_equal(deliver_submit(d, &c0), DELIVER_OK);
    WAIT_UNTIL(fake_inflight() > 0);
    assert_int_equal(fake_inflight(), 1);
    /* whole documents to p by name, partial updates through the alias a */
    for (uint64_t v = 2; v <= 60; v++) {
        struct change c = {.index = v % 2 ? "p" : "a", .target = v % 2 ? NULL : "p",
                           .doc_id = "tx", .version = v,
                           .op = v % 2 ? CHANGE_INDEX : CHANGE_UPDATE,
                           .body = "{\"e\":1}", .body_len = 7,
                           .require_alias = !(v % 2)};
        assert_int_equal(deliver_submit(d, &c), DELIVER_OK);
    }
    assert_int_equal(fake_inflight(), 1);
    /* no second batch of the one queue ever starts: the fake's high mark of
     * requests in flight (kept under its lock through all 15 batches of 4,
     * with 3 helpers free) is asserted after the drain */
    gate(false);
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    pthread_mutex_lock(&F.mu);
    int n = F.tx_n, maxin = F.max_inflight;
    uint64_t log[512];
    memcpy(log, F.tx_log, sizeof log);
    pthread_mutex_unlock(&F.mu);
    assert_int_equal(maxin, 1);
    assert_int_equal(n, 60); /* nothing coalesced: index and update alternate */
    for (int i = 0; i < n; i++) assert_int_equal(log[i], (uint64_t)i + 1);
    /* the fuse is the target's */
    assert_int_equal(deliver_fuse_blown(d, "p"), 0);
    assert_int_equal(deliver_fuse_blown(d, "a"), -1);
    deliver_free(d);
}

/* One queue for an index config's writes to its alias and to a version by
 * name (sync/pipeline/targets.c): a live write and its dual write of one change carry
 * one version and neither stands for the other (both delivered, none
 * coalesced away), they may share a request, and the next change of the
 * document waits for the next request: a document's changes leave in order
 * whatever name they are sent to. */
static void t_alias_and_version_one_queue(void **s) {
    (void)s;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 1;
    o.helpers = 1; /* busy with the held request while the changes queue */
    o.batch_max = 50;
    struct deliver *d = mk(&o);
    gate(true);
    struct change c0 = {.index = "q", .doc_id = "hold", .version = 1, .op = CHANGE_INDEX,
                        .body = "{}", .body_len = 2};
    assert_int_equal(deliver_submit(d, &c0), DELIVER_OK);
    WAIT_UNTIL(fake_inflight() > 0);
    for (uint64_t v = 1; v <= 3; v++)
        for (int k = 0; k < 2; k++) {
            struct change c = {.index = k ? "a_v2" : "a", .target = "a", .doc_id = "tx",
                               .version = v, .op = v == 3 ? CHANGE_DELETE : CHANGE_INDEX,
                               .body = v == 3 ? NULL : "{\"e\":1}", .body_len = v == 3 ? 0 : 7,
                               .require_alias = !k};
            assert_int_equal(deliver_submit(d, &c), DELIVER_OK);
        }
    gate(false);
    assert_int_equal(deliver_drain(d, 5000), DELIVER_OK);
    pthread_mutex_lock(&F.mu);
    int n = F.tx_n;
    uint64_t log[512];
    memcpy(log, F.tx_log, sizeof log);
    pthread_mutex_unlock(&F.mu);
    assert_int_equal(n, 6);
    for (int i = 0; i < n; i++) assert_int_equal(log[i], (uint64_t)(i / 2 + 1));
    /* the held request, then a change (both copies) a request */
    assert_int_equal(fake_requests(), 4);
    assert_false(fake_has("a", "tx") || fake_has("a_v2", "tx")); /* the deletes landed last */
    deliver_free(d);
}

static int fake_probe(void *ud, int helper, struct search_resp *resp) {
    (void)ud;
    (void)helper;
    pthread_mutex_lock(&F.mu);
    int rc = F.fail_requests > 0 ? SEARCH_ETRANSPORT : SEARCH_OK;
    pthread_mutex_unlock(&F.mu);
    if (rc != SEARCH_OK) snprintf(resp->err, sizeof resp->err, "fake: connection refused");
    resp->status = rc == SEARCH_OK ? 200 : 0;
    return rc;
}

/* the engine away long enough to blow the fuse (reset: 60 s): the first
 * answer to a probe heals it and deliveries resume at once */
static void t_engine_back_resumes(void **s) {
    (void)s;
    static const struct deliver_transport PROBING = {.bulk = fake_bulk, .probe = fake_probe};
    struct deliver_opts o;
    base_opts(&o);
    o.fuse_failures = 2;
    o.fuse_reset_ms = 60000;
    o.retry_initial_ms = 50;
    o.retry_max_ms = 60000;
    o.transport = &PROBING;
    o.dead_letter = dl_cb;
    o.checkpoint = ckpt_cb;
    char err[256];
    struct deliver *d = deliver_new(&o, NULL, err, sizeof err);
    assert_non_null(d);
    pthread_mutex_lock(&F.mu);
    F.fail_requests = 1000000;
    pthread_mutex_unlock(&F.mu);
    submit(d, "i", "1", 1, CHANGE_INDEX, "{}");
    WAIT_UNTIL(deliver_fuse_blown(d, "i") == 1);
    pthread_mutex_lock(&F.mu);
    F.fail_requests = 0; /* the engine is back */
    pthread_mutex_unlock(&F.mu);
    int64_t t0 = mono_ms();
    WAIT_UNTIL(fake_has("i", "1"));
    assert_true(mono_ms() - t0 < 5000); /* a probe a second, not the fuse's 60 s */
    assert_int_equal(deliver_fuse_blown(d, "i"), 0);
    deliver_free(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_version_layout),
        cmocka_unit_test(t_hist),
        cmocka_unit_test(t_opts_from_config),
        cmocka_unit_test_setup_teardown(t_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(t_stream_with_faults, setup, teardown),
        cmocka_unit_test_setup_teardown(t_stale_and_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(t_coalesce, setup, teardown),
        cmocka_unit_test_setup_teardown(t_coalesce_by_routing, setup, teardown),
        cmocka_unit_test_setup_teardown(t_update_order, setup, teardown),
        cmocka_unit_test_setup_teardown(t_dead_letters, setup, teardown),
        cmocka_unit_test_setup_teardown(t_low_water, setup, teardown),
        cmocka_unit_test_setup_teardown(t_isolate, setup, teardown),
        cmocka_unit_test_setup_teardown(t_high_water, setup, teardown),
        cmocka_unit_test_setup_teardown(t_fuse, setup, teardown),
        cmocka_unit_test_setup_teardown(t_purge, setup, teardown),
        cmocka_unit_test(t_purge_index_all),
        cmocka_unit_test_setup_teardown(t_checkpoint_retry, setup, teardown),
        cmocka_unit_test_setup_teardown(t_checkpoint_order, setup, teardown),
        cmocka_unit_test_setup_teardown(t_quiet_txn, setup, teardown),
        cmocka_unit_test_setup_teardown(t_prometheus_format, setup, teardown),
        cmocka_unit_test_setup_teardown(t_batch_spans_workers, setup, teardown),
        cmocka_unit_test_setup_teardown(t_flush_on_txn_end, setup, teardown),
        cmocka_unit_test_setup_teardown(t_drain, setup, teardown),
        cmocka_unit_test_setup_teardown(t_halt, setup, teardown),
        cmocka_unit_test_setup_teardown(t_hold_sends, setup, teardown),
        cmocka_unit_test_setup_teardown(t_batch_min_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(t_linger, setup, teardown),
        cmocka_unit_test_setup_teardown(t_target_one_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(t_alias_and_version_one_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(t_engine_back_resumes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
