/* test_deliver_streams: one delivery (hub), a stream per producer, against
 * the fake engine of deliver_fake.h; and the invariants I1-I5 of
 * src/invariant.h, each broken on purpose to see its assertion fire.
 *
 *   - writes of one document from two streams leave in submit order, and
 *     external versions settle the pair (an older page after a live write
 *     is refused, 409)
 *   - each stream has its own transactions and checkpoint: a stream held
 *     at the engine does not hold another's checkpoint (other targets)
 *   - fairness: the bulk streams hold at most half the high-water mark, the
 *     live stream waits at the mark: each finds room behind the other
 *   - a bulk producer waiting for room, none of its class in flight, gets
 *     its partial batches sent at once
 *   - halting or closing a stream drops its queued changes only
 *   - a stream abandoned with requests held at the engine closes at once;
 *     those requests complete later without calling its callbacks (its
 *     data is freed meanwhile: the sanitizer build sees any use)
 *   - a stream closed while another producer's purge writes its dead
 *     letters waits for that callback (abandon and free alike)
 *   - a stream's statistics are its own; the hub's add them all */
/* the fixture serves test_deliver_queue.c too: some accessors are not
 * used here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "deliver_fake.h"
#pragma GCC diagnostic pop

#include "deliver/deliver_int.h"
#include "invariant.h"
#include "sync/pipeline/pipeline.h"
#include "sync/pipeline/streams.h"

static struct deliver_hub *mk_hub(struct deliver_opts *o) {
    char err[256];
    o->transport = &FAKE;
    o->dead_letter = dl_cb;
    struct deliver_hub *h = deliver_hub_new(o, NULL, err, sizeof err);
    assert_non_null(h);
    return h;
}

static struct deliver *mk_stream(struct deliver_hub *h, struct deliver_opts *o, const char *name,
                                 enum deliver_class cls) {
    char err[256];
    struct deliver *s = deliver_stream_open(h, o, name, cls, err, sizeof err);
    assert_non_null(s);
    return s;
}

/* a live write, then an older page of the same document from another
 * stream submitted after it: one queue, submit order, the page refused */
static void t_two_streams_one_document(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    struct deliver_hub *h = mk_hub(&o);
    struct deliver *live = mk_stream(h, &o, "live", DELIVER_LIVE);
    struct deliver *pages = mk_stream(h, &o, "reindex:i:2", DELIVER_BULK);
    gate(true);
    struct change c = {.index = "i", .target = "i", .doc_id = "tx", .version = 20,
                       .op = CHANGE_INDEX, .body = "{\"a\":2}", .body_len = 7};
    assert_int_equal(deliver_submit(live, &c), DELIVER_OK);
    deliver_txn_end(live, "p20");
    c.version = 10;
    c.body = "{\"a\":1}";
    assert_int_equal(deliver_submit(pages, &c), DELIVER_OK); /* not coalesced: another stream */
    deliver_txn_end(pages, "page");
    c.version = 30;
    c.op = CHANGE_DELETE;
    c.body = NULL, c.body_len = 0;
    assert_int_equal(deliver_submit(live, &c), DELIVER_OK);
    deliver_txn_end(live, "p30");
    gate(false);
    assert_int_equal(deliver_drain(live, 5000), DELIVER_OK);
    assert_int_equal(deliver_drain(pages, 5000), DELIVER_OK);
    /* in submit order: 20, 10 (refused), 30 */
    pthread_mutex_lock(&F.mu);
    assert_int_equal(F.tx_n, 3);
    assert_int_equal(F.tx_log[0], 20);
    assert_int_equal(F.tx_log[1], 10);
    assert_int_equal(F.tx_log[2], 30);
    pthread_mutex_unlock(&F.mu);
    struct fdoc f = {0};
    assert_true(fake_doc("i", "tx", &f));
    assert_false(f.exists);
    assert_int_equal(f.version, 30);
    struct deliver_stats ls, ps, hs;
    deliver_get_stats(live, &ls);
    deliver_get_stats(pages, &ps);
    deliver_hub_stats(h, &hs);
    assert_int_equal(ls.submitted, 2);
    assert_int_equal(ls.docs_ok, 2);
    assert_int_equal(ps.submitted, 1);
    assert_int_equal(ps.stale, 1);
    assert_int_equal(hs.submitted, 3);
    char lw[64];
    deliver_low_water(live, lw, sizeof lw);
    assert_string_equal(lw, "p30");
    sbuf js = SBUF_INIT;
    deliver_streams_json(live, &js);
    assert_non_null(strstr(js.data, "\"name\":\"reindex:i:2\",\"class\":\"bulk\""));
    assert_non_null(strstr(js.data, "\"name\":\"live\",\"class\":\"live\""));
    sbuf_reset(&js);
    deliver_stats_prometheus(live, &js);
    assert_non_null(strstr(js.data, "searchsync_delivery_stream_submitted_total{stream=\"live\"} 2"));
    sbuf_free(&js);
    deliver_free(pages);
    deliver_free(live);
    deliver_hub_free(h);
}

/* each stream saves its own checkpoint: one held at the engine (its target
 * fails) does not hold the other's */
static void t_checkpoints_per_stream(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    struct deliver_hub *h = mk_hub(&o);
    o.checkpoint = ckpt_cb;
    struct deliver *live = mk_stream(h, &o, "live", DELIVER_LIVE);
    o.checkpoint = NULL;
    struct deliver *run = mk_stream(h, &o, "delayed", DELIVER_BULK);
    fake_fail_index("stuck");
    submit(run, "stuck", "1", 5, CHANGE_INDEX, "{}");
    deliver_txn_end(run, "r1");
    submit(live, "i", "1", 7, CHANGE_INDEX, "{}");
    deliver_txn_end(live, "l7");
    WAIT_UNTIL(ckpt_last_is("l7"));
    char lw[64];
    deliver_low_water(run, lw, sizeof lw);
    assert_string_equal(lw, ""); /* still pending */
    fake_fail_index(NULL);
    assert_int_equal(deliver_drain(run, 5000), DELIVER_OK);
    deliver_low_water(run, lw, sizeof lw);
    assert_string_equal(lw, "r1");
    deliver_free(run);
    deliver_free(live);
    deliver_hub_free(h);
}

struct filler {
    struct deliver *s;
    int n;
    atomic_int done;
};

static void *fill(void *arg) {
    struct filler *f = arg;
    char id[32];
    for (int i = 0; i < f->n; i++) {
        snprintf(id, sizeof id, "b%d", i);
        struct change c = {.index = "big", .doc_id = id, .version = 1, .op = CHANGE_INDEX,
                           .body = "{}", .body_len = 2};
        if (deliver_submit(f->s, &c) != DELIVER_OK) break;
        atomic_fetch_add(&f->done, 1);
    }
    return NULL;
}

/* a bulk stream that could fill the queues waits at half the high-water
 * mark; the live stream submits the other half without waiting */
static void t_fairness(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    o.high_watermark = 200;
    o.batch_max = 10;
    o.helpers = 1;
    struct deliver_hub *h = mk_hub(&o);
    struct deliver *live = mk_stream(h, &o, "live", DELIVER_LIVE);
    struct deliver *bulk = mk_stream(h, &o, "bulk", DELIVER_BULK);
    gate(true); /* the engine holds the first request: nothing drains */
    struct filler f = {.s = bulk, .n = 1000};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fill, &f), 0);
    WAIT_UNTIL(atomic_load(&f.done) >= 100);
    usleep(100000);
    assert_int_equal(atomic_load(&f.done), 100); /* half of 200, then it waits */
    struct deliver_stats hs;
    deliver_hub_stats(h, &hs);
    assert_true(hs.blocked >= 1);
    /* the live stream: 99 more without waiting (the hub's 200th change is
     * where it would wait) */
    int64_t t0 = mono_ms();
    for (int i = 0; i < 99; i++) {
        char id[32];
        snprintf(id, sizeof id, "l%d", i);
        submit(live, "small", id, 2, CHANGE_INDEX, "{}");
    }
    assert_true(mono_ms() - t0 < 1000);
    deliver_txn_end(live, "l");
    struct deliver_stats ls;
    deliver_get_stats(live, &ls);
    assert_int_equal(ls.blocked, 0);
    gate(false);
    pthread_join(th, NULL);
    assert_int_equal(atomic_load(&f.done), 1000);
    deliver_txn_end(bulk, "b");
    assert_int_equal(deliver_drain(live, 5000), DELIVER_OK);
    assert_int_equal(deliver_drain(bulk, 10000), DELIVER_OK);
    deliver_free(bulk);
    deliver_free(live);
    deliver_hub_free(h);
}

/* a build's page larger than the bulk half of the mark, its documents
 * spread over the partitions so that no queue reaches batch_min (a page
 * leaves in full batches, its rest once it is closed): the producer waits
 * for room in the middle of the page, and the partial batches must leave
 * then, not after flush_interval_ms (a second a page of a build) */
static void t_bulk_page_over_its_half(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    o.high_watermark = 200;
    o.batch_max = 100;
    struct deliver_hub *h = mk_hub(&o);
    o.batch_min = o.batch_max;
    o.flush_interval_ms = 3000;
    o.flush_on_txn_end = true;
    struct deliver *pages = mk_stream(h, &o, "reindex:i:5", DELIVER_BULK);
    int64_t t0 = mono_ms();
    for (int i = 0; i < 400; i++) { /* one page of 400: 4 x the stream's room */
        char id[32];
        snprintf(id, sizeof id, "p%d", i);
        submit(pages, "big", id, 1, CHANGE_INDEX, "{}");
    }
    int64_t took = mono_ms() - t0;
    deliver_txn_end(pages, "page");
    assert_int_equal(deliver_drain(pages, 10000), DELIVER_OK);
    struct deliver_stats ps;
    deliver_get_stats(pages, &ps);
    assert_true(ps.blocked >= 1); /* it did wait for room */
    assert_true(took < 1500);     /* and not for the flush timer (3 x 3 s) */
    assert_int_equal(fake_items(), 400L);
    deliver_free(pages);
    deliver_hub_free(h);
}

/* the other way: a reader with a backlog that fills the mark leaves a
 * build its half */
static void t_fairness_backlog(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    o.high_watermark = 200;
    o.batch_max = 10;
    o.helpers = 1;
    struct deliver_hub *h = mk_hub(&o);
    struct deliver *live = mk_stream(h, &o, "live", DELIVER_LIVE);
    struct deliver *bulk = mk_stream(h, &o, "bulk", DELIVER_BULK);
    gate(true);
    struct filler f = {.s = live, .n = 1000};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fill, &f), 0);
    WAIT_UNTIL(atomic_load(&f.done) >= 200);
    usleep(100000);
    assert_int_equal(atomic_load(&f.done), 200); /* the mark, then it waits */
    int64_t t0 = mono_ms();
    for (int i = 0; i < 100; i++) {
        char id[32];
        snprintf(id, sizeof id, "p%d", i);
        submit(bulk, "pages", id, 2, CHANGE_INDEX, "{}");
    }
    assert_true(mono_ms() - t0 < 1000);
    struct deliver_stats bs;
    deliver_get_stats(bulk, &bs);
    assert_int_equal(bs.blocked, 0);
    deliver_txn_end(bulk, "b");
    gate(false);
    pthread_join(th, NULL);
    deliver_txn_end(live, "l");
    assert_int_equal(deliver_drain(live, 10000), DELIVER_OK);
    assert_int_equal(deliver_drain(bulk, 5000), DELIVER_OK);
    deliver_free(bulk);
    deliver_free(live);
    deliver_hub_free(h);
}

/* helpers alternate between classes: a build's one queue gets every other
 * request while a reader's backlog fills eight (a round robin over queues
 * gave it one in eight). Counted at the engine: how many live writes had
 * landed when the last page write landed. */
static atomic_long live_written, live_at_last_page;
static void on_live_written(void *ud, const char *index, const char *id, uint64_t v) {
    (void)ud, (void)index, (void)id, (void)v;
    atomic_fetch_add(&live_written, 1);
}
static void on_page_written(void *ud, const char *index, const char *id, uint64_t v) {
    (void)ud, (void)index, (void)id, (void)v;
    atomic_store(&live_at_last_page, atomic_load(&live_written));
}

static void t_helpers_alternate(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    o.workers = 8;
    o.helpers = 1;
    o.batch_max = 10;
    struct deliver_hub *h = mk_hub(&o);
    atomic_store(&live_written, 0);
    o.written = on_live_written;
    struct deliver *live = mk_stream(h, &o, "live", DELIVER_LIVE);
    o.written = on_page_written;
    struct deliver *bulk = mk_stream(h, &o, "pages", DELIVER_BULK);
    gate(true);
    submit(live, "first", "0", 1, CHANGE_INDEX, "{}"); /* the one request held at the gate */
    deliver_txn_end(live, "l0");
    WAIT_UNTIL(fake_inflight() == 1);
    char id[32], ix[16];
    for (int i = 0; i < 400; i++) {
        snprintf(id, sizeof id, "%d", i);
        snprintf(ix, sizeof ix, "l%d", i % 8);
        submit(live, ix, id, 2, CHANGE_INDEX, "{}");
    }
    deliver_txn_end(live, "l1");
    for (int i = 0; i < 50; i++) {
        snprintf(id, sizeof id, "p%d", i);
        submit(bulk, "pages", id, 2, CHANGE_INDEX, "{}");
    }
    deliver_txn_end(bulk, "b1");
    gate(false);
    assert_int_equal(deliver_drain(bulk, 10000), DELIVER_OK);
    assert_int_equal(deliver_drain(live, 10000), DELIVER_OK);
    /* 5 page requests (of up to 10): at most one live request before each,
     * and the held one */
    long at = atomic_load(&live_at_last_page);
    assert_true(at <= 1 + 6 * 10);
    assert_int_equal(atomic_load(&live_written), 401);
    deliver_free(bulk);
    deliver_free(live);
    deliver_hub_free(h);
}

/* halting one stream drops its queued changes, not the other's; closing a
 * stream with changes queued frees them (the sanitizer build sees leaks) */
static void t_halt_and_close_one_stream(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    o.batch_min = 1000; /* nothing leaves before its flush interval */
    o.flush_interval_ms = 60000;
    struct deliver_hub *h = mk_hub(&o);
    struct deliver *a = mk_stream(h, &o, "a", DELIVER_LIVE);
    struct deliver *b = mk_stream(h, &o, "b", DELIVER_BULK);
    submit(a, "i", "1", 5, CHANGE_INDEX, "{}");
    submit(b, "i", "2", 5, CHANGE_INDEX, "{}");
    submit(b, "j", "3", 5, CHANGE_INDEX, "{}");
    deliver_halt(b);
    struct change c = {.index = "i", .doc_id = "4", .version = 1, .op = CHANGE_DELETE};
    assert_int_equal(deliver_submit(b, &c), DELIVER_ESTOPPED);
    assert_int_equal(deliver_drain(b, 100), DELIVER_ESTOPPED);
    deliver_txn_end(a, "a5");
    assert_int_equal(deliver_drain(a, 5000), DELIVER_OK);
    assert_true(fake_has("i", "1"));
    assert_false(fake_has("i", "2"));
    assert_false(fake_has("j", "3"));
    struct deliver *c2 = mk_stream(h, &o, "a", DELIVER_BULK); /* a second "a": "a#2" */
    sbuf js = SBUF_INIT;
    deliver_streams_json(a, &js);
    assert_non_null(strstr(js.data, "\"a#2\""));
    sbuf_free(&js);
    submit(c2, "k", "9", 5, CHANGE_INDEX, "{}");
    deliver_free(c2); /* queued, dropped */
    deliver_hub_stats(h, &(struct deliver_stats){0});
    struct deliver_stats hs;
    deliver_hub_stats(h, &hs);
    assert_int_equal(hs.queued, 0);
    deliver_free(b);
    deliver_free(a);
    deliver_hub_free(h);
}

/* a cancelled build's stream: its callbacks' data, freed once
 * deliver_abandon returned; any callback after that is counted (and, in the
 * sanitizer build, a use after free) */
struct producer {
    int written, missing, dead;
};
static atomic_int late_calls;
static void p_written(void *ud, const char *index, const char *id, uint64_t v) {
    (void)index, (void)id, (void)v;
    atomic_fetch_add(&late_calls, 1);
    ((struct producer *)ud)->written++;
}
static void p_missing(void *ud, const char *index, const char *id, const char *r, uint64_t v) {
    (void)index, (void)id, (void)r, (void)v;
    atomic_fetch_add(&late_calls, 1);
    ((struct producer *)ud)->missing++;
}
static int p_dead(void *ud, const struct dead_letter *dl) {
    (void)dl;
    atomic_fetch_add(&late_calls, 1);
    ((struct producer *)ud)->dead++;
    return 0;
}

struct closer {
    struct deliver *s;
    atomic_int done;
};
static void *abandon_thread(void *arg) {
    struct closer *c = arg;
    deliver_abandon(c->s);
    atomic_store(&c->done, 1);
    return NULL;
}
static void *free_thread(void *arg) {
    struct closer *c = arg;
    deliver_free(c->s);
    atomic_store(&c->done, 1);
    return NULL;
}

/* a stream closed with its requests held at the engine (a build cancelled
 * against a hung engine) does not wait for them; they complete later with
 * no callback of it, and the other streams go on */
static void t_abandon_in_flight(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    struct deliver_hub *h = mk_hub(&o);
    struct deliver *live = mk_stream(h, &o, "live", DELIVER_LIVE);
    struct producer *p = calloc(1, sizeof *p);
    o.written = p_written, o.written_ud = p;
    o.missing = p_missing, o.missing_ud = p;
    o.dead_letter = p_dead, o.dead_letter_ud = p;
    struct deliver *pages = mk_stream(h, &o, "reindex:i:3", DELIVER_BULK);
    atomic_store(&late_calls, 0);
    gate(true); /* the engine hangs */
    submit(pages, "i", "tx", 5, CHANGE_INDEX, "{}");                /* written */
    submit(pages, "i", "2", 5, CHANGE_INDEX, "{\"bad\":1}");        /* a dead letter */
    submit(pages, "i", "3", 5, CHANGE_UPDATE, "{\"a\":1}");         /* missing */
    deliver_txn_end(pages, "page");
    struct deliver_stats ps;
    WAIT_UNTIL((deliver_get_stats(pages, &ps), ps.inflight == 3));
    struct closer c = {.s = pages};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, abandon_thread, &c), 0);
    WAIT_UNTIL(atomic_load(&c.done)); /* with the engine still holding them */
    pthread_join(th, NULL);
    assert_int_equal(fake_inflight() > 0, 1);
    assert_int_equal(deliver_hub_wait_abandoned(h, 50), DELIVER_ETIMEOUT); /* still held */
    free(p); /* the producer's data goes once it returned */
    /* another stream's write of a document in flight waits behind it */
    submit(live, "i", "tx", 9, CHANGE_INDEX, "{}");
    deliver_txn_end(live, "l9");
    struct deliver_stats hs;
    deliver_hub_stats(h, &hs);
    assert_int_equal(hs.queued + hs.inflight, 4);
    gate(false);
    assert_int_equal(deliver_drain(live, 5000), DELIVER_OK);
    assert_int_equal(deliver_hub_wait_abandoned(h, 20000), DELIVER_OK);
    WAIT_UNTIL((deliver_hub_stats(h, &hs), hs.inflight == 0 && hs.queued == 0));
    assert_int_equal(atomic_load(&late_calls), 0); /* none of its callbacks ran */
    assert_int_equal(fake_dl_count(), 0);          /* nor the hub's dead letters */
    pthread_mutex_lock(&F.mu); /* the page's write landed first, then the live one */
    assert_int_equal(F.tx_n, 2);
    assert_int_equal(F.tx_log[0], 5);
    assert_int_equal(F.tx_log[1], 9);
    pthread_mutex_unlock(&F.mu);
    /* a stream with nothing in flight goes at once */
    struct deliver *idle = mk_stream(h, &o, "reindex:i:4", DELIVER_BULK);
    deliver_abandon(idle);
    deliver_free(live);
    deliver_hub_free(h); /* the sanitizer build: the abandoned streams were freed */
}

/* A purge writes a stream's dead letters unlocked, from another producer's
 * thread (waiting at the high-water mark); a stream closed meanwhile must
 * wait for that callback, or its producer frees the data the callback
 * writes to (seen in review: a build cancelled while another producer
 * purged its pages of a blown index). */
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cv = PTHREAD_COND_INITIALIZER;
static int held_in, held_open;
static int held_dead(void *ud, const struct dead_letter *dl) {
    (void)dl;
    pthread_mutex_lock(&held_mu);
    held_in++;
    pthread_cond_broadcast(&held_cv);
    while (!held_open) pthread_cond_wait(&held_cv, &held_mu);
    pthread_mutex_unlock(&held_mu);
    ((struct producer *)ud)->dead++;
    return 0;
}
static int held_entered(void) {
    pthread_mutex_lock(&held_mu);
    int n = held_in;
    pthread_mutex_unlock(&held_mu);
    return n;
}

struct submitter {
    struct deliver *s;
    atomic_int done;
};
static void *submit_thread(void *arg) {
    struct submitter *u = arg;
    char id[16];
    for (int i = 0; i < 4; i++) { /* the 3rd waits at the mark and purges */
        snprintf(id, sizeof id, "l%d", i);
        submit(u->s, "sick", id, 10 + (uint64_t)i, CHANGE_INDEX, "{}");
    }
    atomic_store(&u->done, 1);
    return NULL;
}

static void t_purge_then_close(void **st) {
    (void)st;
    for (int how = 0; how < 2; how++) { /* deliver_abandon, then deliver_free */
        struct deliver_opts o;
        base_opts(&o);
        o.fuse_failures = 1;
        o.fuse_reset_ms = 60000;
        o.high_watermark = 4;
        o.purge = PURGE_ALL;
        struct deliver_hub *h = mk_hub(&o);
        struct deliver *live = mk_stream(h, &o, "live", DELIVER_LIVE);
        struct producer *p = calloc(1, sizeof *p);
        o.dead_letter = held_dead, o.dead_letter_ud = p;
        struct deliver *pages = mk_stream(h, &o, "reindex:sick:2", DELIVER_BULK);
        held_in = held_open = 0;
        fake_fail_index("sick"); /* the first request blows the fuse */
        submit(pages, "sick", "1", 5, CHANGE_INDEX, "{}");
        submit(pages, "sick", "2", 5, CHANGE_INDEX, "{}");
        deliver_txn_end(pages, "page");
        struct deliver_stats hs;
        WAIT_UNTIL((deliver_hub_stats(h, &hs), hs.fuses_blown > 0 && hs.inflight == 0));
        struct submitter u = {.s = live};
        pthread_t sth, cth;
        assert_int_equal(pthread_create(&sth, NULL, submit_thread, &u), 0);
        WAIT_UNTIL(held_entered() > 0); /* the live producer purges the pages */
        struct closer c = {.s = pages};
        assert_int_equal(pthread_create(&cth, NULL, how ? free_thread : abandon_thread, &c), 0);
        usleep(200 * 1000);
        assert_int_equal(atomic_load(&c.done), 0); /* waits for the callback under way */
        pthread_mutex_lock(&held_mu);
        held_open = 1;
        pthread_cond_broadcast(&held_cv);
        pthread_mutex_unlock(&held_mu);
        WAIT_UNTIL(atomic_load(&c.done));
        pthread_join(cth, NULL);
        assert_true(p->dead >= 1);
        free(p); /* the producer's data goes once the close returned */
        WAIT_UNTIL(atomic_load(&u.done));
        pthread_join(sth, NULL);
        fake_fail_index(NULL);
        deliver_free(live);
        deliver_hub_free(h);
    }
}

/* ---------------------------------------------------------------- invariants */

static char fired[8];
static void hook(const char *id, const char *msg) {
    (void)msg;
    snprintf(fired, sizeof fired, "%s", id);
}

/* I1: an acknowledgement with nothing pending in its transaction */
static void t_i1_fires(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    struct deliver *d = mk(&o);
    ss_invariant_hook = hook;
    fired[0] = '\0';
    struct txn t = {.s = d, .seq = 1, .pending = 0};
    struct item *it = calloc(1, sizeof *it);
    it->txn = &t;
    it->index = "i", it->doc_id = "1";
    pthread_mutex_lock(&d->d->mu);
    d->d->total++, d->outstanding++; /* (as if submitted: only the count is off) */
    ack_item(d->d, it);
    pthread_mutex_unlock(&d->d->mu);
    assert_string_equal(fired, "I1");
    ss_invariant_hook = NULL;
    deliver_free(d);
}

/* I4: the low-water mark passing a transaction older than itself, and a
 * checkpoint save behind the last one */
static void t_i4_fires(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    struct deliver *d = mk(&o);
    ss_invariant_hook = hook;
    fired[0] = '\0';
    pthread_mutex_lock(&d->d->mu);
    d->lw_seq = 10;
    struct txn *t = calloc(1, sizeof *t);
    t->s = d, t->seq = 5, t->closed = true, t->pos = strdup("old");
    d->txn_head = d->txn_tail = t;
    advance_low_water(d);
    pthread_mutex_unlock(&d->d->mu);
    assert_string_equal(fired, "I4");
    fired[0] = '\0';
    pthread_mutex_lock(&d->d->mu);
    d->ckpt_saved_seq = 50; /* saved further than the low-water mark (5) */
    d->ckpt_dirty = true;
    save_checkpoint_locked(d, true);
    pthread_mutex_unlock(&d->d->mu);
    assert_string_equal(fired, "I4");
    ss_invariant_hook = NULL;
    deliver_free(d);
}

/* I5 and I3: a stream that promises version order submits an older change
 * of a queued document (I3 when what it would follow is its delete) */
static void t_i5_i3_fire(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    o.batch_min = 1000;
    o.flush_interval_ms = 60000;
    o.ordered_versions = true;
    struct deliver *d = mk(&o);
    ss_invariant_hook = hook;
    fired[0] = '\0';
    submit(d, "i", "1", 20, CHANGE_UPDATE, "{}");
    submit(d, "i", "1", 20, CHANGE_UPDATE, "{}"); /* the same version again: fine */
    assert_string_equal(fired, "");
    submit(d, "i", "1", 10, CHANGE_INDEX, "{}");
    assert_string_equal(fired, "I5");
    fired[0] = '\0';
    submit(d, "i", "2", 30, CHANGE_DELETE, NULL);
    submit(d, "i", "2", 25, CHANGE_INDEX, "{}");
    assert_string_equal(fired, "I3");
    ss_invariant_hook = NULL;
    deliver_free(d);
}

static void *submit_second(void *arg) {
    submit(arg, "i", "2", 2, CHANGE_INDEX, "{}");
    deliver_txn_end(arg, "p2");
    return NULL;
}

/* The hub's health: a sender held in one request past the bound is wedged
 * (named, with where), and well again once the request returns; a producer
 * held at the high-water mark is in a wait it can name */
static void t_hub_health(void **st) {
    (void)st;
    struct deliver_opts o;
    base_opts(&o);
    o.batch_min = 1;
    o.high_watermark = 1;
    struct deliver_hub *h = mk_hub(&o);
    struct deliver *s = mk_stream(h, &o, "live", DELIVER_LIVE);
    char why[256] = "";
    WAIT_UNTIL(deliver_hub_healthy(h, 200, why, sizeof why)); /* its threads went round */
    gate(true);
    struct change c = {.index = "i", .target = "i", .doc_id = "1", .version = 1,
                       .op = CHANGE_INDEX, .body = "{}", .body_len = 2};
    assert_int_equal(deliver_submit(s, &c), DELIVER_OK);
    deliver_txn_end(s, "p1");
    WAIT_UNTIL(!deliver_hub_healthy(h, 200, why, sizeof why));
    assert_non_null(strstr(why, "sender thread"));
    assert_non_null(strstr(why, "in a batch"));
    assert_false(deliver_waiting_for_space(s));
    pthread_t th; /* a second change: over the high-water mark, its producer waits */
    assert_int_equal(pthread_create(&th, NULL, submit_second, s), 0);
    WAIT_UNTIL(deliver_waiting_for_space(s));
    gate(false);
    pthread_join(th, NULL);
    assert_false(deliver_waiting_for_space(s));
    WAIT_UNTIL(deliver_hub_healthy(h, 200, why, sizeof why));
    assert_int_equal(deliver_drain(s, 5000), DELIVER_OK);
    deliver_free(s);
    deliver_hub_free(h);
}

/* Every producer's stream, opened as its producer opens it (stream_ordered
 * decides ordered_versions: sync/pipeline/producer.c, reindex_runner.c,
 * ops_replay.c): those that promise version order fire I5 at an older
 * version of a queued document, and I3 at an older whole write behind its
 * delete; the replay of dead letters promises nothing and fires neither */
static void t_streams_order(void **st) {
    (void)st;
    static const struct {
        const char *name;
        bool ordered;
    } S[] = {{"resync", true},  {"delayed", true},       {"repair", true},
             {"replay", true},  {"join", true},          {"reindex:products:3", true},
             {"dead-letters", false}, {"producer", false}};
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) {
        assert_int_equal(stream_ordered(S[i].name), S[i].ordered);
        struct deliver_opts o;
        base_opts(&o);
        o.batch_min = 1000;
        o.flush_interval_ms = 60000;
        o.ordered_versions = stream_ordered(S[i].name);
        struct deliver_hub *h = mk_hub(&o);
        struct deliver *d = mk_stream(h, &o, S[i].name, DELIVER_BULK);
        ss_invariant_hook = hook;
        fired[0] = '\0';
        submit(d, "i", "1", 20, CHANGE_INDEX, "{}");
        submit(d, "i", "1", 20, CHANGE_INDEX, "{}"); /* read again: the same version */
        assert_string_equal(fired, "");
        submit(d, "i", "1", 10, CHANGE_INDEX, "{}");
        if (S[i].ordered) assert_string_equal(fired, "I5");
        else assert_string_equal(fired, "");
        fired[0] = '\0';
        submit(d, "i", "2", 30, CHANGE_DELETE, NULL);
        submit(d, "i", "2", 25, CHANGE_INDEX, "{}");
        if (S[i].ordered) assert_string_equal(fired, "I3");
        else assert_string_equal(fired, "");
        ss_invariant_hook = NULL;
        deliver_free(d);
        deliver_hub_free(h);
    }
}

/* I2: a snapshot's version read before it may only be behind the snapshot */
static void t_i2_fires(void **st) {
    (void)st;
    ss_invariant_hook = hook;
    fired[0] = '\0';
    pipeline_version_check("mysql-bin.000003", 400, "mysql-bin.000003", 900);
    pipeline_version_check("mysql-bin.000003", 900, "mysql-bin.000004", 4);
    assert_string_equal(fired, "");
    pipeline_version_check("mysql-bin.000003", 900, "mysql-bin.000003", 400);
    assert_string_equal(fired, "I2");
    ss_invariant_hook = NULL;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_two_streams_one_document, setup, teardown),
        cmocka_unit_test_setup_teardown(t_checkpoints_per_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(t_fairness, setup, teardown),
        cmocka_unit_test_setup_teardown(t_fairness_backlog, setup, teardown),
        cmocka_unit_test_setup_teardown(t_bulk_page_over_its_half, setup, teardown),
        cmocka_unit_test_setup_teardown(t_helpers_alternate, setup, teardown),
        cmocka_unit_test_setup_teardown(t_halt_and_close_one_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(t_abandon_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(t_purge_then_close, setup, teardown),
        cmocka_unit_test_setup_teardown(t_i1_fires, setup, teardown),
        cmocka_unit_test_setup_teardown(t_i4_fires, setup, teardown),
        cmocka_unit_test_setup_teardown(t_i5_i3_fire, setup, teardown),
        cmocka_unit_test_setup_teardown(t_i2_fires, setup, teardown),
        cmocka_unit_test_setup_teardown(t_hub_health, setup, teardown),
        cmocka_unit_test_setup_teardown(t_streams_order, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
