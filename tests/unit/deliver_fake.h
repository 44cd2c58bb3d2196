/* deliver_fake: the fixture of test_deliver_queue.c — a fake engine behind
 * delivery's transport (fake_bulk: real NDJSON in, real bulk responses out,
 * external versioning as Elasticsearch/OpenSearch apply it), its faults and
 * gate, the dead-letter and checkpoint callbacks, and the accessors that read
 * its state under its lock (delivery's helper threads write it). Included
 * by one test file only: everything here is static. */
#ifndef SS_TEST_DELIVER_FAKE_H
#define SS_TEST_DELIVER_FAKE_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deliver/deliver.h"
#include "deliver/hist.h"
#include "log.h"
#include "search/jscan.h"
#include "search/search.h"

#define MAXDOCS 4096

struct fdoc {
    char id[64];
    char index[32];
    bool exists;
    uint64_t version;
    long writes;
    uint64_t last_seen; /* last version received for this doc (order check) */
    bool order_broken;
};

struct fake {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct fdoc docs[MAXDOCS];
    int ndocs;
    int fail_requests;      /* next N requests: transport error */
    int fail_429_items;     /* next N items: 429 */
    const char *fail_index; /* requests touching this index fail (transport) */
    bool gate_closed;
    int inflight, max_inflight;
    long requests, items;
    /* every version of doc "tx" in the order it reached the engine, any index */
    uint64_t tx_log[512];
    int tx_n;
    /* dead letters */
    int dl_count;
    int dl_fail; /* next N dead-letter writes fail */
    char dl_last_error[512];
    /* checkpoints */
    int ckpt_count;
    char ckpt_last[64];
    int64_t ckpt_ms; /* when the last save was made (mono_ms) */
    /* requests */
    int64_t first_request_ms; /* when the first request reached the engine; 0: none yet */
    bool mark;                /* set by a test: requests before it are counted */
    long requests_before_mark;
};

static struct fake F;

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait up to 20 s for a condition, then fail the test: generous, because
 * make check runs these tests under ASan beside a busy search engine on two
 * cores. The condition reads the fake's state through the accessors below
 * (under its lock) or delivery's public API, never F's fields bare: helper
 * threads write them. */
#define WAIT_UNTIL(cond) \
    do { \
        int64_t end_ = mono_ms() + 20000; \
        while (!(cond)) { \
            if (mono_ms() >= end_) fail_msg("timed out after 20 s waiting for: %s", #cond); \
            usleep(2000); \
        } \
    } while (0)

static struct fdoc *fdoc_get(const char *index, const char *id, size_t idn) {
    for (int i = 0; i < F.ndocs; i++)
        if (strlen(F.docs[i].id) == idn && !memcmp(F.docs[i].id, id, idn) &&
            !strcmp(F.docs[i].index, index))
            return &F.docs[i];
    assert_true(F.ndocs < MAXDOCS);
    struct fdoc *d = &F.docs[F.ndocs++];
    memset(d, 0, sizeof *d);
    snprintf(d->id, sizeof d->id, "%.*s", (int)idn, id);
    snprintf(d->index, sizeof d->index, "%s", index);
    return d;
}

static struct fdoc *fdoc_find(const char *index, const char *id) {
    for (int i = 0; i < F.ndocs; i++)
        if (!strcmp(F.docs[i].id, id) && !strcmp(F.docs[i].index, index)) return &F.docs[i];
    return NULL;
}

/* read "key":"str" or "key":int from an action line */
static int fake_bulk(void *ud, int helper, const char *body, size_t len,
                     struct search_resp *resp) {
    (void)ud;
    (void)helper;
    pthread_mutex_lock(&F.mu);
    F.inflight++;
    if (F.inflight > F.max_inflight) F.max_inflight = F.inflight;
    while (F.gate_closed) pthread_cond_wait(&F.cv, &F.mu);
    F.requests++;
    if (!F.first_request_ms) F.first_request_ms = mono_ms();
    if (!F.mark) F.requests_before_mark++;
    sbuf_reset(&resp->body);
    if (F.fail_requests > 0) {
        F.fail_requests--;
        F.inflight--;
        snprintf(resp->err, sizeof resp->err, "fake: connection refused");
        pthread_mutex_unlock(&F.mu);
        return SEARCH_ETRANSPORT;
    }
    if (memmem(body, len, "malformed", 9)) {
        /* like the engines: a source line that is not JSON fails the request */
        sbuf_adds(&resp->body, "{\"error\":{\"type\":\"json_e_o_f_exception\"},\"status\":400}");
        resp->status = 400;
        F.inflight--;
        pthread_mutex_unlock(&F.mu);
        return SEARCH_OK;
    }
    sbuf_adds(&resp->body, "{\"took\":1,\"errors\":false,\"items\":[");
    const char *p = body, *e = body + len;
    int n = 0;
    while (p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        assert_non_null(nl);
        /* action line */
        char action[16] = "", index[32] = "";
        const char *id = NULL;
        size_t idn = 0;
        int64_t version = 0;
        bool done = false, first = true;
        const char *q = js_obj_begin(p, nl);
        const char *k;
        size_t kn;
        q = js_obj_next(q, nl, &k, &kn, &done, first);
        assert_non_null(q);
        snprintf(action, sizeof action, "%.*s", (int)kn, k);
        bool d2 = false, f2 = true;
        q = js_obj_begin(q, nl);
        while (q) {
            q = js_obj_next(q, nl, &k, &kn, &d2, f2);
            f2 = false;
            if (!q || d2) break;
            if (js_key_is(k, kn, "_index")) {
                const char *s;
                size_t sn;
                q = js_str(q, nl, &s, &sn);
                snprintf(index, sizeof index, "%.*s", (int)sn, s);
            } else if (js_key_is(k, kn, "_id")) {
                q = js_str(q, nl, &id, &idn);
            } else if (js_key_is(k, kn, "version")) {
                q = js_int(q, nl, &version);
            } else {
                q = js_skip(q, nl);
            }
        }
        p = nl + 1;
        const char *src = NULL;
        size_t srcn = 0;
        if (strcmp(action, "delete") != 0) {
            nl = memchr(p, '\n', (size_t)(e - p));
            assert_non_null(nl);
            src = p;
            srcn = (size_t)(nl - p);
            p = nl + 1;
        }
        struct fdoc *d = fdoc_get(index, id, idn);
        uint64_t v = (uint64_t)version;
        if (!strcmp(action, "update")) {
            /* the version is in the script params: "v":N or "_ss_v":N */
            const char *vp = memmem(src, srcn, "\"params\":{\"v\":", 14);
            if (vp) v = strtoull(vp + 14, NULL, 10);
        }
        if (v && v < d->last_seen && strcmp(action, "update")) {
            /* an older write arriving later is legal only as a replay; tests
             * that check order submit no replays */
            d->order_broken = true;
        }
        if (v > d->last_seen) d->last_seen = v;
        if (idn == 2 && !memcmp(id, "tx", 2) && F.tx_n < 512) F.tx_log[F.tx_n++] = v;
        int status;
        const char *err = NULL;
        if (F.fail_index && !strcmp(F.fail_index, index)) {
            status = 503;
            err = "{\"type\":\"unavailable_shards_exception\",\"reason\":\"fake\"}";
        } else if (F.fail_429_items > 0) {
            F.fail_429_items--;
            status = 429;
            err = "{\"type\":\"es_rejected_execution_exception\",\"reason\":\"queue full\"}";
        } else if (src && memmem(src, srcn, "\"bad\"", 5)) {
            status = 400;
            err = "{\"type\":\"mapper_parsing_exception\",\"reason\":\"failed to parse field "
                  "[n] of type [long]\"}";
        } else if (!strcmp(action, "update")) {
            if (!d->exists) {
                status = 404;
                err = "{\"type\":\"document_missing_exception\",\"reason\":\"missing\"}";
            } else if (d->version >= v) {
                status = 200; /* noop */
            } else {
                status = 200;
                d->version = v;
                d->writes++;
            }
        } else if (d->version && v <= d->version) {
            status = 409;
            err = "{\"type\":\"version_conflict_engine_exception\",\"reason\":\"stale\"}";
        } else {
            status = !strcmp(action, "delete") ? (d->exists ? 200 : 404) : 201;
            d->version = v;
            d->exists = strcmp(action, "delete") != 0;
            d->writes++;
        }
        sbuf_printf(&resp->body, "%s{\"%s\":{\"_index\":\"%s\",\"_id\":\"%.*s\",\"status\":%d%s%s}}",
                    n ? "," : "", action, index, (int)idn, id, status, err ? ",\"error\":" : "",
                    err ? err : "");
        n++;
        F.items++;
    }
    sbuf_adds(&resp->body, "]}");
    resp->status = 200;
    F.inflight--;
    pthread_mutex_unlock(&F.mu);
    return SEARCH_OK;
}

/* the fake's state, read and written under its lock (helpers run fake_bulk
 * and the callbacks concurrently) */
static int fake_inflight(void) {
    pthread_mutex_lock(&F.mu);
    int n = F.inflight;
    pthread_mutex_unlock(&F.mu);
    return n;
}
static long fake_requests(void) {
    pthread_mutex_lock(&F.mu);
    long n = F.requests;
    pthread_mutex_unlock(&F.mu);
    return n;
}
static int fake_ckpt_count(void) {
    pthread_mutex_lock(&F.mu);
    int n = F.ckpt_count;
    pthread_mutex_unlock(&F.mu);
    return n;
}
static bool ckpt_last_is(const char *pos) {
    pthread_mutex_lock(&F.mu);
    bool r = !strcmp(F.ckpt_last, pos);
    pthread_mutex_unlock(&F.mu);
    return r;
}
static bool fake_has(const char *index, const char *id) {
    pthread_mutex_lock(&F.mu);
    struct fdoc *f = fdoc_find(index, id);
    bool r = f && f->exists;
    pthread_mutex_unlock(&F.mu);
    return r;
}
/* a copy of the fake's document, false if it has none */
static bool fake_doc(const char *index, const char *id, struct fdoc *out) {
    pthread_mutex_lock(&F.mu);
    struct fdoc *f = fdoc_find(index, id);
    if (f) *out = *f;
    pthread_mutex_unlock(&F.mu);
    return f != NULL;
}
static long fake_items(void) {
    pthread_mutex_lock(&F.mu);
    long n = F.items;
    pthread_mutex_unlock(&F.mu);
    return n;
}
static int fake_dl_count(void) {
    pthread_mutex_lock(&F.mu);
    int n = F.dl_count;
    pthread_mutex_unlock(&F.mu);
    return n;
}
static bool fake_dl_error_has(const char *s) {
    pthread_mutex_lock(&F.mu);
    bool r = strstr(F.dl_last_error, s) != NULL;
    pthread_mutex_unlock(&F.mu);
    return r;
}
static int64_t fake_ckpt_ms(void) {
    pthread_mutex_lock(&F.mu);
    int64_t t = F.ckpt_ms;
    pthread_mutex_unlock(&F.mu);
    return t;
}
static int64_t fake_first_request_ms(void) {
    pthread_mutex_lock(&F.mu);
    int64_t t = F.first_request_ms;
    pthread_mutex_unlock(&F.mu);
    return t;
}
/* from now on requests are no longer counted as early */
static void fake_mark(void) {
    pthread_mutex_lock(&F.mu);
    F.mark = true;
    pthread_mutex_unlock(&F.mu);
}
static long fake_requests_before_mark(void) {
    pthread_mutex_lock(&F.mu);
    long n = F.requests_before_mark;
    pthread_mutex_unlock(&F.mu);
    return n;
}
static void fake_fail_index(const char *index) {
    pthread_mutex_lock(&F.mu);
    F.fail_index = index;
    pthread_mutex_unlock(&F.mu);
}

static const struct deliver_transport FAKE = {.ud = NULL, .bulk = fake_bulk};

static int dl_cb(void *ud, const struct dead_letter *dl) {
    (void)ud;
    pthread_mutex_lock(&F.mu);
    int rc = 0;
    if (F.dl_fail > 0) {
        F.dl_fail--;
        rc = -1;
    } else {
        F.dl_count++;
        snprintf(F.dl_last_error, sizeof F.dl_last_error, "%s", dl->error);
    }
    pthread_mutex_unlock(&F.mu);
    return rc;
}

static int ckpt_cb(void *ud, const char *pos, uint64_t seq) {
    (void)ud;
    (void)seq;
    pthread_mutex_lock(&F.mu);
    F.ckpt_count++;
    F.ckpt_ms = mono_ms();
    snprintf(F.ckpt_last, sizeof F.ckpt_last, "%s", pos);
    pthread_mutex_unlock(&F.mu);
    return 0;
}

static int setup(void **state) {
    (void)state;
    pthread_mutex_t mu = F.mu;
    pthread_cond_t cv = F.cv;
    static bool inited;
    memset(&F, 0, sizeof F);
    if (inited) {
        F.mu = mu, F.cv = cv;
    } else {
        pthread_mutex_init(&F.mu, NULL);
        pthread_cond_init(&F.cv, NULL);
        inited = true;
    }
    log_set_level(LOG_OFF);
    return 0;
}
static int teardown(void **state) {
    (void)state;
    /* a failed assertion leaves the test's helpers parked at a closed gate:
     * open it so they finish instead of hanging the run (the mutex and the
     * condition variable are static and are not destroyed for that reason) */
    pthread_mutex_lock(&F.mu);
    F.gate_closed = false;
    pthread_cond_broadcast(&F.cv);
    pthread_mutex_unlock(&F.mu);
    return 0;
}

static struct deliver *mk(struct deliver_opts *o) {
    char err[256];
    o->transport = &FAKE;
    o->dead_letter = dl_cb;
    o->checkpoint = ckpt_cb;
    struct deliver *d = deliver_new(o, NULL, err, sizeof err);
    assert_non_null(d);
    return d;
}

static void base_opts(struct deliver_opts *o) {
    deliver_opts_defaults(o);
    o->workers = 4;
    o->helpers = 3;
    o->batch_max = 16;
    o->flush_interval_ms = 5;
    o->retry_initial_ms = 1;
    o->retry_max_ms = 5;
    o->checkpoint_interval_ms = 10;
    o->fuse_failures = 1000;
}

static void submit(struct deliver *d, const char *index, const char *id, uint64_t v,
                   enum change_op op, const char *body) {
    struct change c = {.index = index, .doc_id = id, .version = v, .op = op,
                       .body = body, .body_len = body ? strlen(body) : 0};
    assert_int_equal(deliver_submit(d, &c), DELIVER_OK);
}

static void gate(bool closed) {
    pthread_mutex_lock(&F.mu);
    F.gate_closed = closed;
    pthread_cond_broadcast(&F.cv);
    pthread_mutex_unlock(&F.mu);
}

#endif
