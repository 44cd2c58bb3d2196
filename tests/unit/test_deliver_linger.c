/* test_deliver_linger: [delivery] linger_refresh_percent (src/deliver/linger.c)
 * against the fake engine of deliver_fake.h, whose index answers a
 * refresh_interval of INTERVAL_MS:
 *   - a transaction of 5 changes every 10 ms for 3 s, spacing 50% of the
 *     interval: about one request every 50 ms instead of one a transaction,
 *     and no change waits more than the spacing (beyond a scheduling slack)
 *   - percent 0: one request a transaction, as group commit alone sends
 *   - an index without refreshes (refresh_interval -1): nothing held
 *   - a change finding its index without a request for the spacing goes at
 *     once
 *   - a faster stream (transactions of 10 changes every 10 ms): a request
 *     goes once linger_refresh_batch (25) changes wait, about one every 3
 *     transactions, where the spacing alone waits for 5
 *   - the interval is read each second while the index gets requests, not
 *     after 10 s without one, and again when one comes
 *   - a transaction someone waits for (deliver_wait_txn) goes at once: a
 *     linger does not hold it */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "deliver_fake.h"
#pragma GCC diagnostic pop

#define INTERVAL_MS 100
#define NTXN 300
#define SLACK_MS 40 /* a loaded test box's scheduling */

static struct {
    pthread_mutex_t mu;
    long interval_ms;         /* what refresh_interval answers */
    long reads;               /* how often it was asked */
    int64_t landed_us[NTXN];  /* when the last change of each transaction landed */
} L = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int64_t mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int noting_bulk(void *ud, int helper, const char *body, size_t len,
                       struct search_resp *resp) {
    int64_t now = mono_us();
    pthread_mutex_lock(&L.mu);
    for (const char *p = body; (p = memmem(p, len - (size_t)(p - body), "\"_id\":\"t", 8)); p += 8) {
        int k = atoi(p + 8);
        if (k >= 0 && k < NTXN && now > L.landed_us[k]) L.landed_us[k] = now;
    }
    pthread_mutex_unlock(&L.mu);
    return fake_bulk(ud, helper, body, len, resp);
}

static int fixed_interval(void *ud, int helper, const char *target, long *ms) {
    (void)ud, (void)helper, (void)target;
    pthread_mutex_lock(&L.mu);
    *ms = L.interval_ms;
    L.reads++;
    pthread_mutex_unlock(&L.mu);
    return 0;
}

static const struct deliver_transport SPACED = {.bulk = noting_bulk,
                                                .refresh_interval = fixed_interval};

/* the hub of these tests: 3 helpers, batches of 500, the fake engine */
static struct deliver *mk_hub(int flush_interval_ms, int linger_ms, int percent, int batch) {
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 8;
    o.helpers = 3;
    o.batch_max = 500;
    o.flush_interval_ms = flush_interval_ms;
    o.linger_ms = linger_ms;
    o.linger_refresh_percent = percent;
    o.linger_refresh_batch = batch;
    o.dead_letter = dl_cb;
    o.checkpoint = ckpt_cb;
    o.transport = &SPACED;
    char err[256];
    struct deliver *d = deliver_new(&o, NULL, err, sizeof err);
    assert_non_null(d);
    return d;
}

static struct deliver *mk_spaced_batch(int percent, long interval_ms, int batch) {
    pthread_mutex_lock(&L.mu);
    memset(L.landed_us, 0, sizeof L.landed_us);
    L.interval_ms = interval_ms;
    pthread_mutex_unlock(&L.mu);
    struct deliver *d = mk_hub(1000, 0, percent, batch);
    /* the index known, then its interval read by a free helper */
    submit(d, "i", "warm", 1, CHANGE_INDEX, "{}");
    assert_int_equal(deliver_wait_txn(d, deliver_txn_end(d, "w"), 20000), DELIVER_OK);
    usleep(100000);
    return d;
}

static struct deliver *mk_spaced(int percent, long interval_ms) {
    return mk_spaced_batch(percent, interval_ms, 0);
}

struct outcome {
    long requests;
    int64_t max_wait_ms; /* commit to landed, the longest */
    int64_t mean_wait_us;
};

/* NTXN transactions of `per` changes, one every 10 ms, then drained */
static struct outcome run_txns_of(struct deliver *d, int per) {
    int64_t committed[NTXN];
    long r0 = fake_requests();
    int64_t start = mono_us();
    char id[32];
    for (int k = 0; k < NTXN; k++) {
        int64_t at = start + (int64_t)k * 10000, now = mono_us();
        if (at > now) usleep((useconds_t)(at - now));
        for (int j = 0; j < per; j++) {
            snprintf(id, sizeof id, "t%d_%d", k, j);
            submit(d, "i", id, (uint64_t)k + 2, CHANGE_INDEX, "{}");
        }
        committed[k] = mono_us();
        deliver_txn_end(d, "p");
    }
    assert_int_equal(deliver_drain(d, 20000), DELIVER_OK);
    struct outcome o = {.requests = fake_requests() - r0};
    int64_t sum_us = 0;
    pthread_mutex_lock(&L.mu);
    for (int k = 0; k < NTXN; k++) {
        assert_true(L.landed_us[k] > 0);
        int64_t w = (L.landed_us[k] - committed[k]) / 1000;
        if (w > o.max_wait_ms) o.max_wait_ms = w;
        sum_us += L.landed_us[k] - committed[k];
    }
    pthread_mutex_unlock(&L.mu);
    o.mean_wait_us = sum_us / NTXN;
    print_message("    %ld requests for %d transactions of %d; the longest wait %lld ms, the "
                  "mean %lld us\n",
                  o.requests, NTXN, per, (long long)o.max_wait_ms, (long long)o.mean_wait_us);
    return o;
}

static struct outcome run_txns(struct deliver *d) { return run_txns_of(d, 5); }

static void t_spaced_by_the_refresh(void **s) {
    (void)s;
    struct deliver *d = mk_spaced(50, INTERVAL_MS);
    struct outcome o = run_txns(d);
    /* 3 s at one request per 50 ms: about 60; group commit alone sends 300 */
    assert_true(o.requests <= NTXN / 4);
    assert_true(o.max_wait_ms <= INTERVAL_MS / 2 + SLACK_MS);
    deliver_free(d);
}

static void t_off_one_request_a_transaction(void **s) {
    (void)s;
    struct deliver *d = mk_spaced(0, INTERVAL_MS);
    struct outcome o = run_txns(d);
    assert_true(o.requests >= NTXN * 8 / 10);
    deliver_free(d);
}

static void t_no_refresh_not_held(void **s) {
    (void)s;
    struct deliver *d = mk_spaced(50, 0); /* refresh_interval -1 */
    struct outcome o = run_txns(d);
    assert_true(o.requests >= NTXN * 8 / 10);
    deliver_free(d);
}

/* an index without a request for the spacing: the change goes at once */
static void t_idle_goes_at_once(void **s) {
    (void)s;
    struct deliver *d = mk_spaced(50, 1000); /* a spacing of 100 ms (the cap) */
    usleep(150000);
    int64_t t = mono_ms();
    long r0 = fake_requests();
    submit(d, "i", "lone", 2, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "b");
    WAIT_UNTIL(fake_requests() > r0);
    assert_true(mono_ms() - t < 50);
    /* the next one, right behind it, waits for the spacing */
    t = mono_ms();
    r0 = fake_requests();
    submit(d, "i", "next", 3, CHANGE_INDEX, "{}");
    deliver_txn_end(d, "c");
    WAIT_UNTIL(fake_requests() > r0);
    assert_true(mono_ms() - t >= 60);
    deliver_free(d);
}

/* 1,000 changes a second in transactions of 10, linger_refresh_batch 25: a
 * request goes once 25 changes wait (the third transaction), not at the
 * spacing (the fifth) */
static void t_full_enough_goes(void **s) {
    struct deliver *d = mk_spaced_batch(50, INTERVAL_MS, 0); /* batch_max: the spacing alone */
    struct outcome spaced = run_txns_of(d, 10);
    deliver_free(d);
    teardown(s), setup(s); /* an empty fake engine for the same documents */
    d = mk_spaced_batch(50, INTERVAL_MS, 25);
    struct outcome enough = run_txns_of(d, 10);
    deliver_free(d);
    assert_true(spaced.requests <= NTXN / 4);        /* about 60 */
    assert_true(enough.requests >= NTXN * 27 / 100); /* about 100 */
    assert_true(enough.requests <= NTXN / 2);
    assert_true(enough.mean_wait_us < spaced.mean_wait_us);
}

/* a caller that waits for a transaction (deliver_wait_txn: a child copy
 * lookup, a snapshot's reuse) has its changes sent at once: a linger of
 * 5 s does not hold them while it waits */
static void t_waited_goes_at_once(void **s) {
    (void)s;
    struct deliver *d = mk_hub(20000, 5000, 0, 0);
    long r0 = fake_requests();
    submit(d, "i", "held", 2, CHANGE_INDEX, "{}");
    uint64_t seq = deliver_txn_end(d, "a");
    usleep(300000);
    assert_int_equal(fake_requests(), r0); /* the linger holds it... */
    int64_t t = mono_ms();
    assert_int_equal(deliver_wait_txn(d, seq, 20000), DELIVER_OK);
    print_message("    waited %lld ms under a linger of 5000 ms\n", (long long)(mono_ms() - t));
    assert_true(mono_ms() - t < 2500); /* ...until someone waits for it */
    assert_int_equal(fake_requests(), r0 + 1);
    deliver_free(d);
}

static long reads(void) {
    pthread_mutex_lock(&L.mu);
    long n = L.reads;
    pthread_mutex_unlock(&L.mu);
    return n;
}

static void t_idle_index_not_read(void **s) {
    (void)s;
    struct deliver *d = mk_spaced(50, INTERVAL_MS);
    long r0 = reads();
    sleep(3); /* requests 1-3 s ago at most: still read each second */
    assert_true(reads() - r0 >= 2);
    sleep(9); /* 12 s without a request */
    r0 = reads();
    sleep(3);
    assert_int_equal(reads() - r0, 0);
    submit(d, "i", "again", 2, CHANGE_INDEX, "{}");
    assert_int_equal(deliver_wait_txn(d, deliver_txn_end(d, "a"), 20000), DELIVER_OK);
    WAIT_UNTIL(reads() > r0);
    deliver_free(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_spaced_by_the_refresh, setup, teardown),
        cmocka_unit_test_setup_teardown(t_off_one_request_a_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(t_no_refresh_not_held, setup, teardown),
        cmocka_unit_test_setup_teardown(t_idle_goes_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(t_full_enough_goes, setup, teardown),
        cmocka_unit_test_setup_teardown(t_idle_index_not_read, setup, teardown),
        cmocka_unit_test_setup_teardown(t_waited_goes_at_once, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
