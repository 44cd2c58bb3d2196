/* test_deliver_group_commit: [delivery] group_commit against the fake engine
 * of deliver_fake.h (its gate holds a request in flight as a busy engine
 * would):
 *   - an idle target's change leaves at once, whatever flush_interval_ms
 *   - a transaction's changes wait for its end and leave as one request,
 *     whatever partitions they hash to; a change set larger than batch_max
 *     goes out while it is built
 *   - while a request of a target is in flight, the target's next changes
 *     wait for it and leave together, as one request, when it returns
 *     (without group commit they leave side by side, one helper each)
 *   - batch_max waiting goes at once, beside the request in flight
 *   - flush_interval_ms stays the upper bound of the wait
 *   - another target is not held by this one's request
 *   - a stream that sends each transaction at once (a reindex page) is not
 *     held */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "deliver_fake.h"
#pragma GCC diagnostic pop

static int fake_max_inflight(void) {
    pthread_mutex_lock(&F.mu);
    int n = F.max_inflight;
    pthread_mutex_unlock(&F.mu);
    return n;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void gc_opts(struct deliver_opts *o) {
    base_opts(o);
    o->workers = 8;
    o->helpers = 3;
    o->batch_max = 100;
    o->flush_interval_ms = 60000;
}

static void submit_n(struct deliver *d, const char *index, const char *prefix, int n,
                     uint64_t v) {
    char id[32];
    for (int i = 0; i < n; i++) {
        snprintf(id, sizeof id, "%s%d", prefix, i);
        submit(d, index, id, v, CHANGE_INDEX, "{}");
    }
}

/* an idle target: the change goes at once, though flush_interval_ms is a minute */
static void t_idle_goes_at_once(void **s) {
    (void)s;
    struct deliver_opts o;
    gc_opts(&o);
    struct deliver *d = mk(&o);
    int64_t t0 = mono_ms();
    submit(d, "i", "1", 1, CHANGE_INDEX, "{}");
    uint64_t seq = deliver_txn_end(d, "a");
    assert_int_equal(deliver_wait_txn(d, seq, 20000), DELIVER_OK);
    assert_true(mono_ms() - t0 < 5000);
    assert_int_equal(fake_requests(), 1);
    deliver_free(d);
}

/* a transaction of 40 documents (over the 8 partitions): nothing leaves
 * while the producer builds it, then one request at its end */
static void t_transaction_leaves_whole(void **s) {
    (void)s;
    struct deliver_opts o;
    gc_opts(&o);
    struct deliver *d = mk(&o);
    submit_n(d, "i", "x", 40, 1);
    sleep_ms(300); /* three idle helpers, an idle engine: none sends yet */
    assert_int_equal(fake_requests(), 0);
    uint64_t seq = deliver_txn_end(d, "t");
    assert_int_equal(deliver_wait_txn(d, seq, 20000), DELIVER_OK);
    assert_int_equal(fake_items(), 40);
    assert_int_equal(fake_requests(), 1);
    /* without group commit the first change leaves at once */
    deliver_free(d);
    setup(NULL);
    o.group_commit = false;
    d = mk(&o);
    submit(d, "i", "y", 1, CHANGE_INDEX, "{}");
    WAIT_UNTIL(fake_requests() == 1);
    deliver_txn_end(d, "u");
    assert_int_equal(deliver_drain(d, 20000), DELIVER_OK);
    deliver_free(d);
}

/* a change set larger than batch_max goes out in full requests while it is
 * still being built (its end only sends the rest) */
static void t_big_transaction_streams(void **s) {
    (void)s;
    struct deliver_opts o;
    gc_opts(&o);
    o.batch_max = 10;
    struct deliver *d = mk(&o);
    submit_n(d, "i", "x", 35, 1);
    WAIT_UNTIL(fake_items() >= 30);
    uint64_t seq = deliver_txn_end(d, "t");
    assert_int_equal(deliver_wait_txn(d, seq, 20000), DELIVER_OK);
    assert_int_equal(fake_items(), 35);
    deliver_free(d);
}

/* while "first" is held at the engine, 50 changes of the same index (spread
 * over the 8 partitions) wait; when it returns they leave in one request */
static void t_waits_for_request_in_flight(void **s) {
    (void)s;
    struct deliver_opts o;
    gc_opts(&o);
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "first", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "t0");
    WAIT_UNTIL(fake_inflight() == 1);
    submit_n(d, "i", "x", 50, 2);
    deliver_txn_end(d, "t");
    sleep_ms(300); /* the other two helpers are free: none of them sends */
    assert_int_equal(fake_inflight(), 1);
    gate(false);
    /* not deliver_drain: a drain sends every queue at once, held or not */
    WAIT_UNTIL(fake_items() == 51);
    assert_int_equal(fake_requests(), 2); /* "first", then the 50 together */
    assert_int_equal(fake_max_inflight(), 1);
    deliver_free(d);
}

/* the same without group commit: the free helpers send side by side */
static void t_off_sends_side_by_side(void **s) {
    (void)s;
    struct deliver_opts o;
    gc_opts(&o);
    o.group_commit = false;
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "first", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "t0");
    WAIT_UNTIL(fake_inflight() == 1);
    submit_n(d, "i", "x", 50, 2);
    deliver_txn_end(d, "t");
    WAIT_UNTIL(fake_inflight() == 3);
    gate(false);
    assert_int_equal(deliver_drain(d, 20000), DELIVER_OK);
    assert_int_equal(fake_items(), 51);
    assert_true(fake_requests() >= 3);
    deliver_free(d);
}

/* batch_max of the index waiting: a full request goes beside the one in flight */
static void t_full_batch_goes(void **s) {
    (void)s;
    struct deliver_opts o;
    gc_opts(&o);
    o.batch_max = 10;
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "first", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "t0");
    WAIT_UNTIL(fake_inflight() == 1);
    submit_n(d, "i", "x", 25, 2);
    deliver_txn_end(d, "t");
    WAIT_UNTIL(fake_inflight() >= 2);
    gate(false);
    assert_int_equal(deliver_drain(d, 20000), DELIVER_OK);
    assert_int_equal(fake_items(), 26);
    deliver_free(d);
}

/* flush_interval_ms bounds the wait: a change held behind a request that
 * does not return leaves once it has waited that long */
static void t_flush_interval_bounds_the_wait(void **s) {
    (void)s;
    struct deliver_opts o;
    gc_opts(&o);
    o.flush_interval_ms = 300;
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "first", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "t0");
    WAIT_UNTIL(fake_inflight() == 1);
    int64_t t0 = mono_ms();
    submit(d, "i", "second", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "t");
    WAIT_UNTIL(fake_inflight() == 2);
    assert_true(mono_ms() - t0 >= 290);
    gate(false);
    assert_int_equal(deliver_drain(d, 20000), DELIVER_OK);
    assert_int_equal(fake_items(), 2);
    deliver_free(d);
}

/* another index is another target: not held by this one's request */
static void t_other_target_not_held(void **s) {
    (void)s;
    struct deliver_opts o;
    gc_opts(&o);
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "first", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "t0");
    WAIT_UNTIL(fake_inflight() == 1);
    submit(d, "j", "other", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "t");
    WAIT_UNTIL(fake_inflight() == 2);
    gate(false);
    assert_int_equal(deliver_drain(d, 20000), DELIVER_OK);
    assert_int_equal(fake_requests(), 2);
    deliver_free(d);
}

/* a stream that sends each transaction at once (flush_on_txn_end, a
 * reindex page): its closed transaction goes beside the request in flight */
static void t_page_stream_not_held(void **s) {
    (void)s;
    struct deliver_opts o;
    gc_opts(&o);
    o.flush_on_txn_end = true;
    struct deliver *d = mk(&o);
    gate(true);
    submit(d, "i", "first", 1, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "p1");
    WAIT_UNTIL(fake_inflight() == 1);
    submit_n(d, "i", "x", 5, 2);
    deliver_txn_end(d, "p2");
    WAIT_UNTIL(fake_inflight() >= 2);
    gate(false);
    assert_int_equal(deliver_drain(d, 20000), DELIVER_OK);
    assert_int_equal(fake_items(), 6);
    deliver_free(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_idle_goes_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(t_transaction_leaves_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(t_big_transaction_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(t_waits_for_request_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(t_off_sends_side_by_side, setup, teardown),
        cmocka_unit_test_setup_teardown(t_full_batch_goes, setup, teardown),
        cmocka_unit_test_setup_teardown(t_flush_interval_bounds_the_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(t_other_target_not_held, setup, teardown),
        cmocka_unit_test_setup_teardown(t_page_stream_not_held, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
