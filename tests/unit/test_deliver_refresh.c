/* test_deliver_refresh: [delivery] batch_to_refresh (src/deliver/refresh.c)
 * against the fake engine of deliver_fake.h given a refresh schedule of its
 * own, as the engines run it: a refresh starts PERIOD_MS after the last one
 * ended and takes TOOK_MS; a write is searchable from the first refresh that
 * starts after it landed; a refresh probe is answered when the first refresh
 * after it ends.
 *   - a transaction of 5 changes every 10 ms for 3 s: a few requests a refresh
 *     period instead of one a transaction, and each transaction searchable
 *     at the refresh it would have made sent at once (bar those that came in
 *     the last milliseconds before one), none more than one refresh later
 *   - the same against an engine whose round trip grows with the request:
 *     the held requests, larger than the rest, leave early enough
 *   - batch_to_refresh = false: one request a transaction, as before
 *   - an index without refreshes (refresh_interval -1): nothing held
 *   - an engine whose requests take over a third of the interval: nothing
 *     held (searchable as soon as with group commit alone)
 *   - a change that finds its index idle goes at once */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "deliver_fake.h"
#pragma GCC diagnostic pop

#define PERIOD_MS 100
#define TOOK_MS 10
#define NTXN 300

static struct {
    pthread_mutex_t mu;
    int64_t t0_us;         /* the first refresh starts at t0 + PERIOD_MS */
    long interval_ms;      /* what refresh_interval answers */
    int64_t landed_us[NTXN]; /* when the last change of each transaction landed */
    long probes;           /* refresh probes (each waits for a refresh) */
    int64_t slow_us;       /* each bulk request takes this long (a busy engine) */
    int64_t per_doc_us;    /* and this much a document */
} R = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int64_t mono_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* the start of the first refresh at or after t */
static int64_t refresh_at(int64_t t) {
    int64_t s = R.t0_us + PERIOD_MS * 1000, step = (PERIOD_MS + TOOK_MS) * 1000;
    if (t <= s) return s;
    return s + ((t - s + step - 1) / step) * step;
}

static void note_landed(const char *body, size_t len) {
    int64_t now = mono_us();
    pthread_mutex_lock(&R.mu);
    for (const char *p = body; (p = memmem(p, len - (size_t)(p - body), "\"_id\":\"t", 8)); p += 8) {
        int k = atoi(p + 8);
        if (k >= 0 && k < NTXN && now > R.landed_us[k]) R.landed_us[k] = now;
    }
    pthread_mutex_unlock(&R.mu);
}

static int sched_bulk(void *ud, int helper, const char *body, size_t len,
                      struct search_resp *resp) {
    pthread_mutex_lock(&R.mu);
    int64_t slow = R.slow_us;
    for (const char *p = body; R.per_doc_us && (p = memchr(p, '\n', len - (size_t)(p - body)));
         p++)
        slow += R.per_doc_us / 2; /* two lines a document */
    pthread_mutex_unlock(&R.mu);
    if (slow) usleep((useconds_t)slow);
    note_landed(body, len);
    return fake_bulk(ud, helper, body, len, resp);
}

/* answered when the first refresh after it landed ends */
static int sched_probe(void *ud, int helper, const char *target) {
    (void)ud, (void)helper, (void)target;
    int64_t landed = mono_us();
    pthread_mutex_lock(&R.mu);
    R.probes++;
    pthread_mutex_unlock(&R.mu);
    int64_t end = refresh_at(landed) + TOOK_MS * 1000, now = mono_us();
    if (end > now) usleep((useconds_t)(end - now));
    return 0;
}

static int sched_interval(void *ud, int helper, const char *target, long *ms) {
    (void)ud, (void)helper, (void)target;
    pthread_mutex_lock(&R.mu);
    *ms = R.interval_ms;
    pthread_mutex_unlock(&R.mu);
    return 0;
}

static const struct deliver_transport SCHED = {.bulk = sched_bulk,
                                               .refresh_probe = sched_probe,
                                               .refresh_interval = sched_interval};

static struct deliver *mk_sched_slow(bool hold, long interval_ms, int64_t slow_us) {
    pthread_mutex_lock(&R.mu);
    R.slow_us = slow_us;
    R.per_doc_us = 0;
    memset(R.landed_us, 0, sizeof R.landed_us);
    R.probes = 0;
    R.interval_ms = interval_ms;
    R.t0_us = mono_us();
    pthread_mutex_unlock(&R.mu);
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 8;
    o.helpers = 3;
    o.batch_max = 500;
    o.flush_interval_ms = 1000;
    o.batch_to_refresh = hold;
    o.dead_letter = dl_cb;
    o.checkpoint = ckpt_cb;
    o.transport = &SCHED;
    char err[256];
    struct deliver *d = deliver_new(&o, NULL, err, sizeof err);
    assert_non_null(d);
    usleep(50000); /* the helpers read the interval once the target is known */
    return d;
}

static struct deliver *mk_sched(bool hold, long interval_ms) {
    return mk_sched_slow(hold, interval_ms, 0);
}

struct outcome {
    long requests;
    int on_time;  /* searchable at the refresh it would have made sent at once */
    int late_one; /* one refresh later */
    int later;    /* more */
    int refreshes; /* refreshes that took a write */
    int64_t worst_us; /* the longest from a commit to the end of the refresh that showed it */
};

/* NTXN transactions of 5 changes, one every 10 ms, then drained */
static struct outcome run_txns(struct deliver *d) {
    int64_t committed[NTXN];
    long r0 = fake_requests();
    int64_t start = mono_us();
    char id[32];
    for (int k = 0; k < NTXN; k++) {
        int64_t at = start + (int64_t)k * 10000, now = mono_us();
        if (at > now) usleep((useconds_t)(at - now));
        for (int j = 0; j < 5; j++) {
            snprintf(id, sizeof id, "t%d_%d", k, j);
            submit(d, "i", id, (uint64_t)k + 1, CHANGE_INDEX, "{}");
        }
        committed[k] = mono_us();
        deliver_txn_end(d, "p");
    }
    assert_int_equal(deliver_drain(d, 20000), DELIVER_OK);
    struct outcome o = {.requests = fake_requests() - r0};
    pthread_mutex_lock(&R.mu);
    int64_t prev = 0;
    for (int k = 0; k < NTXN; k++) {
        assert_true(R.landed_us[k] > 0);
        /* transactions land in order: a new refresh start is one more */
        if (refresh_at(R.landed_us[k]) != prev) {
            o.refreshes++, prev = refresh_at(R.landed_us[k]);
        }
        /* sent at once, a request of its own lands within 2 ms */
        int64_t ideal = refresh_at(committed[k] + 2000), got = refresh_at(R.landed_us[k]);
        if (got + TOOK_MS * 1000 - committed[k] > o.worst_us)
            o.worst_us = got + TOOK_MS * 1000 - committed[k];
        if (got <= ideal)
            o.on_time++;
        else if (got <= refresh_at(ideal + 1))
            o.late_one++;
        else
            o.later++;
    }
    pthread_mutex_unlock(&R.mu);
    print_message("    %ld requests for %d transactions in %d refreshes; searchable on time %d, "
                  "a refresh late %d, later %d; at most %ld ms from commit to searchable\n",
                  o.requests, NTXN, o.refreshes, o.on_time, o.late_one, o.later,
                  (long)(o.worst_us / 1000));
    return o;
}

static void t_held_to_the_refresh(void **s) {
    (void)s;
    struct deliver *d = mk_sched(true, PERIOD_MS);
    struct outcome o = run_txns(d);
    /* 3 s of 110 ms periods: about 27, two requests each; group commit
     * alone sends 300 */
    assert_true(o.requests <= NTXN / 3);
    assert_true(o.on_time >= NTXN * 8 / 10);
    assert_int_equal(o.later, 0);
    pthread_mutex_lock(&R.mu);
    assert_true(R.probes > 0);
    pthread_mutex_unlock(&R.mu);
    deliver_free(d);
}

/* an engine that takes 0.6 ms a document: a transaction's request comes
 * back in 3 ms, a held one of a period's 55 changes in about 33 ms, which the
 * average round trip hides. Held requests answered after the refresh they
 * aimed at began make the next leave earlier: about three in four
 * transactions searchable at the refresh they would have made sent at once
 * and none more than one refresh later (leaving by the average round trip
 * alone: half of them a refresh late, and some two) */
static void t_big_held_request_leaves_earlier(void **s) {
    (void)s;
    struct deliver *d = mk_sched(true, PERIOD_MS);
    pthread_mutex_lock(&R.mu);
    R.per_doc_us = 600;
    pthread_mutex_unlock(&R.mu);
    struct outcome o = run_txns(d);
    deliver_free(d);
    assert_true(o.requests <= NTXN / 2);
    assert_true(o.on_time >= NTXN * 63 / 100);
    assert_int_equal(o.later, 0);
}

static void t_off_one_request_a_transaction(void **s) {
    (void)s;
    struct deliver *d = mk_sched(false, PERIOD_MS);
    struct outcome o = run_txns(d);
    assert_true(o.requests >= NTXN * 8 / 10);
    pthread_mutex_lock(&R.mu);
    assert_int_equal(R.probes, 0);
    pthread_mutex_unlock(&R.mu);
    deliver_free(d);
}

static void t_no_refresh_not_held(void **s) {
    (void)s;
    struct deliver *d = mk_sched(true, 0); /* refresh_interval -1 */
    struct outcome o = run_txns(d);
    assert_true(o.requests >= NTXN * 8 / 10);
    pthread_mutex_lock(&R.mu);
    assert_int_equal(R.probes, 0);
    pthread_mutex_unlock(&R.mu);
    deliver_free(d);
}

/* an engine whose requests take 40 ms (over a third of the 100 ms
 * interval): a held batch would land after the refresh it aims at, so
 * nothing is held, and changes are searchable as soon as with group commit
 * alone */
static void t_slow_engine_not_held(void **s) {
    (void)s;
    struct deliver *d = mk_sched_slow(false, PERIOD_MS, 40000);
    struct outcome off = run_txns(d);
    deliver_free(d);
    d = mk_sched_slow(true, PERIOD_MS, 40000);
    struct outcome on = run_txns(d);
    deliver_free(d);
    assert_true(on.on_time >= off.on_time - NTXN / 10);
    assert_true(on.later <= off.later);
}

/* an idle index: the change goes at once (not held for the refresh) */
static void t_idle_goes_at_once(void **s) {
    (void)s;
    struct deliver *d = mk_sched(true, PERIOD_MS);
    submit(d, "i", "warm", 1, CHANGE_INDEX, "{}");
    assert_int_equal(deliver_wait_txn(d, deliver_txn_end(d, "a"), 20000), DELIVER_OK);
    usleep(3 * PERIOD_MS * 1000);
    int64_t t = mono_ms();
    submit(d, "i", "lone", 2, CHANGE_INDEX, "{}");
    long r0 = fake_requests();
    deliver_txn_end(d, "b");
    WAIT_UNTIL(fake_requests() > r0);
    assert_true(mono_ms() - t < PERIOD_MS / 2);
    deliver_free(d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_held_to_the_refresh, setup, teardown),
        cmocka_unit_test_setup_teardown(t_big_held_request_leaves_earlier, setup, teardown),
        cmocka_unit_test_setup_teardown(t_off_one_request_a_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(t_no_refresh_not_held, setup, teardown),
        cmocka_unit_test_setup_teardown(t_slow_engine_not_held, setup, teardown),
        cmocka_unit_test_setup_teardown(t_idle_goes_at_once, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
