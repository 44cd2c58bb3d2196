/* helper.c: the helper threads that send: picking an eligible queue,
 * taking a batch, the bulk request and classifying its answer, retries with
 * backoff, and dead letters (fuses: fuse.c; purges at the high-water mark:
 * purge.c). */
#include "deliver/deliver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "search/search.h"

/* ---------- dead letters ---------- */

#define DL_LOG_BURST 10
#define DL_LOG_WINDOW_NS (10LL * 1000000000LL)

int write_dead_letter(struct deliver_hub *d, struct item *it, const char *error,
                      size_t error_len, int status) {
    char *etext = xstrndup(error ? error : "", error ? error_len : 0);
    struct dead_letter dl = {
        .index = it->index,
        .doc_id = it->doc_id,
        .routing = it->routing,
        .version = it->version,
        .op = it->op,
        .body = it->body,
        .body_len = it->body_len,
        .script = it->script,
        .error = etext,
        .status = status,
        .attempts = it->attempts,
        .require_alias = it->require_alias,
    };
    int rc = 0;
    const struct deliver *st = it->txn->s;
    if (st->dead_letter) {
        rc = st->dead_letter(st->dead_letter_ud, &dl);
    } else {
        char at[64];
        log_error("deliver", "dead letter (no table configured): index=%s id=%s version=%llu "
                  "(%s) op=%s status=%d error=%s", dl.index, dl.doc_id,
                  (unsigned long long)dl.version, version_describe(dl.version, at, sizeof at),
                  change_op_name(dl.op), status, etext);
    }
    if (rc == 0) {
        /* a mapping conflict can park thousands at once: log a burst of them,
         * then say where the rest are instead of one line each */
        int64_t now = now_ns();
        pthread_mutex_lock(&d->dl_log_mu);
        if (now - d->dl_log_window >= DL_LOG_WINDOW_NS) d->dl_log_window = now, d->dl_log_n = 0;
        int n = ++d->dl_log_n;
        pthread_mutex_unlock(&d->dl_log_mu);
        char at[64];
        if (n <= DL_LOG_BURST)
            log_warn("deliver", "dead letter: index=%s id=%s version=%llu (%s) status=%d: %.300s",
                     dl.index, dl.doc_id, (unsigned long long)dl.version,
                     version_describe(dl.version, at, sizeof at), status, etext);
        else if (n == DL_LOG_BURST + 1)
            log_warn("deliver", "more dead letters in the next %d s are not logged one by one; "
                     "see `searchsync dead-letters list` and the dead_letters statistic",
                     (int)(DL_LOG_WINDOW_NS / 1000000000LL));
    }
    free(etext);
    return rc > 0 ? 0 : rc;
}

/* ---------- helpers ---------- */

/* The next queue to send from. Helpers alternate between the classes of
 * streams (the class of a queue is its front change's): while live and
 * bulk changes both wait, every other batch is a bulk one (pages, runs,
 * repairs) and every other a live one, whatever the number of queues each
 * has — a reader's backlog spreads over every partition, a build's pages
 * sit in a few queues, and a plain round robin over queues gave the build
 * one batch in eight. When only one class waits, it gets every batch. */
static struct indexq *pick_queue(struct deliver_hub *d, int64_t now, int64_t *wake) {
    int W = d->o.workers;
    enum deliver_class want = d->prefer_bulk ? DELIVER_BULK : DELIVER_LIVE;
    struct indexq *other = NULL;
    int other_w = 0;
    for (int k = 0; k < W; k++) {
        int w = (d->scan_cursor + k) % W;
        for (struct indexq *q = d->partitions[w].qs; q; q = q->next) {
            if (!eligible(d, q, now, wake)) continue;
            if (q->main.head->txn->s->cls == want) {
                d->scan_cursor = (w + 1) % W;
                d->prefer_bulk = !d->prefer_bulk;
                return q;
            }
            if (!other) other = q, other_w = w;
        }
    }
    if (other) d->scan_cursor = (other_w + 1) % W;
    return other;
}

/* A batch holds at most one change per document: if an item failed and a
 * later change of the same doc in the same request succeeded, the retry
 * would land after it (an update applied before its index, then lost). The
 * batch ends at the first repeated doc; hashes stand for docs, whatever
 * index they are sent to (a collision only ends a batch early): a write
 * through an alias and one to the version it points at by name are one
 * document. One change sent to two names (a live write and its dual write
 * to a version being built: one version, one body) is one change, though:
 * either copy may land first. */
struct seen_slot {
    uint64_t h;
    const struct item *first;
};

static bool seen_add(struct seen_slot *set, size_t cap, const struct item *it) {
    uint64_t h = it->hash | 1;
    for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (set[i].h == h)
            return set[i].first->version == it->version && set[i].first->op == it->op &&
                   strcmp(set[i].first->index, it->index) != 0;
        if (!set[i].h) {
            set[i].h = h;
            set[i].first = it;
            return true;
        }
    }
}

/* Move up to batch_max items (and batch_max_bytes) from the front of q into
 * the batch; false when the batch must end here (a repeated document, a
 * solo item, or full). */
static bool take_from(struct deliver_hub *d, struct indexq *q, struct item ***arr, int *cap, int *n,
                      size_t *bytes, struct seen_slot *seen, size_t seen_cap) {
    int took = 0;
    bool go_on = true;
    while (q->main.head) {
        struct item *it = q->main.head;
        if (it->txn->s->held) break; /* its stream's sends are held: it and what follows wait */
        if (*n >= d->o.batch_max ||
            (*n > 0 && (*bytes + it->size > (size_t)d->o.batch_max_bytes || it->solo)) ||
            !seen_add(seen, seen_cap, it)) {
            go_on = false;
            break;
        }
        list_remove(&q->main, it);
        map_del(q, it);
        q->main_bytes -= it->size;
        *bytes += it->size;
        it->attempts++;
        it->txn->s->inflight++;
        if (it->txn->s->cls == DELIVER_BULK) d->bulk_inflight++;
        if (*n >= *cap) {
            *cap = *cap ? *cap * 2 : 64;
            *arr = xrealloc(*arr, sizeof(**arr) * (size_t)*cap);
        }
        (*arr)[(*n)++] = it;
        took++;
        if (it->solo) {
            go_on = false;
            break;
        }
    }
    d->main_queued -= took;
    q->inflight = true;
    return go_on && *n < d->o.batch_max;
}

/* A batch starts at q and, while there is room, goes on with the other
 * eligible queues of the same index (other partitions' documents), so that a
 * burst spread over W partitions still leaves as full requests. Each queue
 * taken from has this batch in flight (its documents' order is kept); all
 * are of one index, so one fuse and one backoff apply to the request. */
static int take_batch(struct deliver_hub *d, struct helper *h, struct indexq *q,
                      struct item ***arr, int *cap, struct seen_slot *seen, size_t seen_cap,
                      int64_t now) {
    int n = 0;
    size_t bytes = 0;
    memset(seen, 0, seen_cap * sizeof *seen);
    h->nqs = 0;
    /* beyond the first queue, a batch takes no more than its share of what
     * the index has queued, so that the other helpers still find work (one
     * batch holding every queue would leave one request in flight) */
    long queued = index_idle_queued(d, q->fuse);
    /* with linger_ms the user asked for full requests over spread ones: the
     * rest left to another helper would linger again; a stream that waits
     * for each transaction (a reindex page) gets its transaction in one
     * request, not in a share per helper (each share would wait for its own
     * turn behind the other streams) */
    const struct deliver *hs = q->main.head->txn->s;
    long share = d->o.group_commit || hs->linger_ms > 0 || hs->flush_on_txn_end
                     ? d->o.batch_max
                     : (queued + d->o.helpers - 1) / d->o.helpers;
    bool more = true;
    for (int k = 0; k <= d->o.workers && more; k++) {
        if (k > 0 && n >= share) break;
        struct indexq *from = q;
        if (k > 0) { /* the same index in the other partitions */
            int w = (d->scan_cursor + k - 1) % d->o.workers;
            from = NULL;
            for (struct indexq *o = d->partitions[w].qs; o; o = o->next)
                if (o->fuse == q->fuse && o != q) from = o;
            int64_t wake = now;
            if (!from || !eligible_to_join(d, from, now, &wake) || from->main.head->solo) continue;
        }
        if (h->nqs >= h->qs_cap) {
            h->qs_cap = h->qs_cap ? 2 * h->qs_cap : 8;
            h->qs = xrealloc(h->qs, sizeof *h->qs * (size_t)h->qs_cap);
        }
        h->qs[h->nqs++] = from;
        more = take_from(d, from, arr, cap, &n, &bytes, seen, seen_cap);
    }
    d->inflight += n;
    d->inflight_batches++;
    q->fuse->reqs++; /* every queue taken from is of q's target */
    h->refresh_aim_ns = refresh_sent(q->fuse, n, d->tr.bulk_wait != NULL, now, &h->refresh_wait);
    return n;
}

static enum bulk_op bulk_op_of(enum change_op op) {
    switch (op) {
    case CHANGE_DELETE: return BULK_DELETE;
    case CHANGE_UPDATE: return BULK_UPDATE;
    case CHANGE_SCRIPT: return BULK_SCRIPT;
    default: return BULK_INDEX;
    }
}

int default_bulk(void *ud, int helper, const char *body, size_t len,
                        struct search_resp *resp) {
    struct deliver_hub *d = ud;
    struct search_conn *k = d->helpers[helper].conn;
    /* only what bulk_response_parse reads: each item's status and error (and a
     * failed request's own error); the engine then writes a few bytes per
     * item instead of its index, id, version, shards and sequence numbers */
    return search_request(k, "POST", "/_bulk?filter_path=error,status,errors,items.*.status,items.*.error",
                          "application/x-ndjson", body, len, resp);
}

/* the same, answered after the refresh that took its writes in */
int default_bulk_wait(void *ud, int helper, const char *body, size_t len,
                      struct search_resp *resp) {
    struct deliver_hub *d = ud;
    return search_request(d->helpers[helper].conn, "POST",
                          "/_bulk?refresh=wait_for&filter_path=error,status,errors,items.*.status,"
                          "items.*.error",
                          "application/x-ndjson", body, len, resp);
}

int default_probe(void *ud, int helper, struct search_resp *resp) {
    struct deliver_hub *d = ud;
    return search_request(d->helpers[helper].conn, "GET", "/", NULL, NULL, 0, resp);
}

enum outcome {
    OUT_ACK = 0, OUT_RETRY, OUT_DEAD,
    OUT_DROP,   /* a dead letter of an abandoned stream: dropped, not written */
    OUT_WROTE,  /* ack: a full-state write landed */
    OUT_MISSING /* ack: a partial update found no document (the producer is told) */
};

/* one helper's batch and what the engine said of it */
struct batch {
    struct item **it;
    int cap, n;
    enum outcome *outc;
    int outc_cap;
    struct seen_slot *seen;
    size_t seen_cap;
    int rc;               /* the transport's */
    bool request_failed, isolate;
    int nstale, nmissing, nretry, ndead, nok, n429;
    const char *fail_text;
    int64_t t0, t1;
};

/* the bulk body, outside the lock, in the engine's dialect as now known */
static void batch_body(struct deliver_hub *d, struct helper *h, struct batch *b) {
    const struct search_dialect *dia = d->client ? search_client_dialect(d->client) : NULL;
    sbuf_reset(&h->body);
    for (int i = 0; i < b->n; i++) {
        struct item *it = b->it[i];
        struct bulk_item bi = {
            .op = bulk_op_of(it->op),
            .index = it->index,
            .id = it->doc_id,
            .routing = it->routing,
            .version = it->version,
            .body = it->body,
            .body_len = it->body_len,
            .script = it->script,
            .version_field = d->version_field,
            .content_hash = d->o.content_hash && d->version_field[0] != '\0',
            .require_alias = it->require_alias,
        };
        bulk_append(&h->body, dia, &bi);
    }
    if (b->n > h->res_cap) {
        h->res_cap = b->n;
        h->res = xrealloc(h->res, sizeof *h->res * (size_t)b->n);
    }
    if (b->n > b->outc_cap) {
        b->outc_cap = b->n;
        b->outc = xrealloc(b->outc, sizeof *b->outc * (size_t)b->n);
    }
}

/* a request the engine refused as a whole (non-2xx): false when it is to be
 * retried as a whole */
static bool classify_refused(struct helper *h, struct batch *b) {
    enum bulk_class hc = http_classify(h->resp.status);
    b->request_failed = true;
    b->fail_text = h->resp.body.data ? h->resp.body.data : "";
    if (hc == BULK_PERMANENT && b->n > 1) {
        /* one bad item (e.g. a body that is not JSON) makes the engine
         * refuse the whole request: send each alone to find it, without
         * backoff or fuse */
        for (int i = 0; i < b->n; i++) {
            b->outc[i] = OUT_RETRY;
            b->it[i]->solo = true;
        }
        b->nretry = b->n;
        b->isolate = true;
        b->request_failed = false;
        return true;
    }
    if (hc == BULK_PERMANENT) {
        for (int i = 0; i < b->n; i++) {
            h->res[i].status = (int)h->resp.status;
            h->res[i].error = b->fail_text;
            h->res[i].error_len = strlen(b->fail_text);
            h->res[i].err_type = NULL;
            b->it[i]->result = RES_DEAD;
            b->outc[i] = OUT_DEAD;
        }
        b->ndead = b->n;
        b->request_failed = false; /* handled per item */
        return true;
    }
    return false;
}

/* each item of an answered request */
static void classify_items(struct deliver_hub *d, struct helper *h, struct batch *b) {
    for (int i = 0; i < b->n; i++) {
        struct item *it = b->it[i];
        enum bulk_class bc = bulk_classify(bulk_op_of(it->op), &h->res[i]);
        it->status = h->res[i].status;
        switch (bc) {
        case BULK_OK:
            it->result = RES_OK;
            b->outc[i] = OUT_ACK, b->nok++;
            if (it->op == CHANGE_INDEX || it->op == CHANGE_DELETE) b->outc[i] = OUT_WROTE;
            break;
        case BULK_STALE: it->result = RES_STALE, b->outc[i] = OUT_ACK, b->nstale++; break;
        case BULK_MISSING:
            it->result = RES_MISSING;
            b->outc[i] = it->txn->s->missing ? OUT_MISSING : OUT_ACK, b->nmissing++;
            break;
        case BULK_TRANSIENT: {
            int st = h->res[i].status;
            bool plain = st == 429 || st == 502 || st == 503 || st == 504 || st == 409 ||
                         (h->res[i].err_type &&
                          strcmp(h->res[i].err_type, "es_rejected_execution_exception") == 0);
            if (st == 429) b->n429++;
            if (!plain && it->attempts >= d->o.max_attempts_5xx)
                it->result = RES_DEAD, b->outc[i] = OUT_DEAD, b->ndead++;
            else
                b->outc[i] = OUT_RETRY, b->nretry++;
            break;
        }
        case BULK_PERMANENT: it->result = RES_DEAD, b->outc[i] = OUT_DEAD, b->ndead++; break;
        }
    }
}

/* send the batch and sort its items by outcome (outside the lock) */
static void batch_send(struct deliver_hub *d, struct helper *h, struct batch *b) {
    b->request_failed = b->isolate = false;
    b->nstale = b->nmissing = b->nretry = b->ndead = b->nok = b->n429 = 0;
    b->fail_text = NULL;
    b->t0 = now_ns();
    b->rc = (h->refresh_wait ? d->tr.bulk_wait : d->tr.bulk)(d->tr.ud, h->id, h->body.data,
                                                            h->body.len, &h->resp);
    b->t1 = now_ns();
    if (b->rc != SEARCH_OK) {
        b->request_failed = true;
        b->fail_text = h->resp.err;
    } else if (http_classify(h->resp.status) != BULK_OK) {
        if (classify_refused(h, b)) return;
    } else if (bulk_response_parse(h->resp.body.data, h->resp.body.len, h->res, b->n) != b->n) {
        b->request_failed = true;
        b->fail_text = "bulk response does not list every item";
    } else {
        classify_items(d, h, b);
        return;
    }
    for (int i = 0; i < b->n; i++) b->outc[i] = OUT_RETRY;
    b->nretry = b->n;
}

/* under d->mu, once the engine answered: the items of a stream closed by
 * deliver_abandon are quiet (nothing reported to its producer); for the
 * others their stream's reporting count is held until batch_settle, which
 * deliver_abandon waits for, so no callback runs once it returned */
static void batch_hold_reports(struct batch *b) {
    for (int i = 0; i < b->n; i++) {
        struct item *it = b->it[i];
        struct deliver *st = it->txn->s;
        it->quiet = st->abandoned;
        if (!it->quiet) st->reporting++;
    }
}

/* dead letters first, then the producers' callbacks (outside the lock) */
static void batch_report(struct deliver_hub *d, struct helper *h, struct batch *b) {
    for (int i = 0; i < b->n; i++) {
        if (!b->it[i]->quiet) continue;
        if (b->outc[i] == OUT_DEAD) b->outc[i] = OUT_DROP, b->ndead--;
        if (b->outc[i] == OUT_WROTE || b->outc[i] == OUT_MISSING) b->outc[i] = OUT_ACK;
    }
    for (int i = 0; i < b->n && b->ndead; i++) {
        if (b->outc[i] != OUT_DEAD) continue;
        if (write_dead_letter(d, b->it[i], h->res[i].error, h->res[i].error_len,
                              h->res[i].status) != 0) {
            b->outc[i] = OUT_RETRY;
            b->nretry++;
            b->ndead--;
        }
    }
    /* after the dead letters of this batch exist: older ones of the same
     * documents are superseded by the full writes that landed */
    for (int i = 0; i < b->n; i++) {
        struct item *it = b->it[i];
        const struct deliver *st = it->txn->s;
        if (b->outc[i] == OUT_MISSING) {
            st->missing(st->missing_ud, it->index, it->doc_id, it->routing, it->version);
            b->outc[i] = OUT_ACK;
        }
        if (b->outc[i] != OUT_WROTE) continue;
        if (st->written) st->written(st->written_ud, it->index, it->doc_id, it->version);
        b->outc[i] = OUT_ACK;
    }
    /* a request without an answer, or rejected (429), is said by the
     * engine's state (engine.c), once per outage instead of per request */
    if (b->request_failed && b->rc == SEARCH_OK && h->resp.status != 429)
        log_warn("deliver", "bulk of %d items to %s failed (will retry): %.300s", b->n,
                 h->nqs ? h->qs[0]->index : "", b->fail_text ? b->fail_text : "");
}

/* under d->mu: the statistics, the fuse and backoff of the queues taken from */
static void batch_account(struct deliver_hub *d, struct helper *h, struct indexq *q,
                          struct batch *b, int64_t now) {
    if (b->rc != SEARCH_OK) {
        engine_failed(d, h->resp.err, now);
    } else {
        engine_answered(d, now);
        engine_rejected(d, b->request_failed ? (h->resp.status == 429 ? b->n : 0) : b->n429, now);
    }
    rotate_stats(d, now);
    wc_add(&d->batches, 1);
    hist_add(&d->batch_size, (uint64_t)b->n);
    hist_add(&d->lat_batch_us, (uint64_t)((b->t1 - b->t0) / 1000));
    if (b->n > 0) hist_add(&d->lat_doc_us, (uint64_t)((b->t1 - b->t0) / 1000 / b->n));
    if (b->request_failed) wc_add(&d->requests_failed, 1);
    wc_add(&d->docs_ok, (uint64_t)b->nok);
    wc_add(&d->stale, (uint64_t)b->nstale);
    wc_add(&d->missing, (uint64_t)b->nmissing);
    wc_add(&d->dead_letters, (uint64_t)b->ndead);
    wc_add(&d->failures, (uint64_t)(b->nretry + b->ndead));
    wc_add(&d->retries, (uint64_t)b->nretry);
    if (b->isolate) {
        wc_add(&d->requests_failed, 1);
    } else if (b->request_failed || b->nretry > 0) {
        /* the fuse melts when the engine made no progress at all: the whole
         * request failed, or every item failed with something other than
         * 429. Rejections (429: "slow down") only back off, with
         * exponential backoff and jitter per queue. */
        bool rejected = b->request_failed ? b->rc == SEARCH_OK && h->resp.status == 429
                                          : b->nretry == b->n && b->n429 == b->n;
        if ((b->request_failed || b->nretry == b->n) && !rejected) fuse_melt(d, q->fuse, now);
        int bo = q->backoff_ms ? q->backoff_ms * 2 : d->o.retry_initial_ms;
        if (bo > d->o.retry_max_ms) bo = d->o.retry_max_ms;
        /* full jitter over the upper half: [b/2, b] */
        int j = bo / 2 + (int)(rand_r(&h->rnd) % (unsigned)(bo / 2 + 1));
        for (int k = 0; k < h->nqs; k++) {
            h->qs[k]->backoff_ms = bo;
            h->qs[k]->not_before_ns = now + (int64_t)j * NS_PER_MS;
        }
    } else {
        for (int k = 0; k < h->nqs; k++) {
            h->qs[k]->backoff_ms = 0;
            h->qs[k]->not_before_ns = 0;
        }
    }
}

/* under d->mu: failed items back to the front of their queues (in their
 * order), the rest acknowledged, each stream's low-water mark moved */
static void batch_settle(struct deliver_hub *d, struct helper *h, struct batch *b) {
    bool reap = false;
    for (int i = b->n - 1; i >= 0; i--) {
        struct item *it = b->it[i];
        struct deliver *st = it->txn->s;
        st->inflight--;
        if (st->cls == DELIVER_BULK) d->bulk_inflight--;
        if (!it->quiet) st->reporting--;
        if (st->abandoned) reap = true; /* (perhaps abandoned after its report) */
        if (b->outc[i] != OUT_RETRY && b->outc[i] != OUT_DROP) continue;
        if (st->halted || st->closing) { /* dropped: nothing of it is sent any more */
            d->total--;
            if (st->cls == DELIVER_BULK) d->bulk_total--;
            st->outstanding--;
            if (st->draining && it->sseq <= st->drain_mark) st->drain_left--;
            free(it);
            b->it[i] = NULL;
            continue;
        }
        struct indexq *iq = it->q;
        list_push_front(&iq->main, it);
        iq->main_bytes += it->size;
        d->main_queued++;
        /* no newer queued change of this doc: coalescing may replace it */
        if (!map_get(iq, it->doc_id, it->routing, it->hash)) map_put(iq, it);
    }
    for (int i = 0; i < b->n; i++) {
        struct item *it = b->it[i];
        if (!it || b->outc[i] == OUT_RETRY || b->outc[i] == OUT_DROP) continue;
        struct deliver *st = it->txn->s;
        switch (it->result) {
        case RES_DEAD: st->n_dead++; break;
        case RES_STALE: st->n_stale++; break;
        case RES_MISSING: st->n_missing++; break;
        default: st->n_ok++; break;
        }
        ack_item(d, it);
        advance_low_water(st);
    }
    d->inflight -= b->n;
    d->inflight_batches--;
    if (h->nqs > 0) h->qs[0]->fuse->reqs--;
    for (int k = 0; k < h->nqs; k++) h->qs[k]->inflight = false;
    if (reap) hub_reap_abandoned(d); /* after its items: the last one frees the stream */
}

void *helper_main(void *arg) {
    struct helper *h = arg;
    struct deliver_hub *d = h->d;
    struct batch b = {0};
    b.seen_cap = 64;
    while (b.seen_cap < (size_t)d->o.batch_max * 2) b.seen_cap *= 2;
    b.seen = xcalloc(b.seen_cap, sizeof *b.seen);
    pthread_mutex_lock(&d->mu);
    while (!d->stop) {
        int64_t now = now_ns();
        h->beat_ns = now;
        int64_t wake = now + 1000 * NS_PER_MS;
        struct indexq *q = pick_queue(d, now, &wake);
        if (!q && engine_probe_due(d, now, &wake)) {
            pthread_mutex_unlock(&d->mu);
            int prc = d->tr.probe(d->tr.ud, h->id, &h->resp);
            pthread_mutex_lock(&d->mu);
            engine_probed(d, prc == SEARCH_OK, h->resp.err, now_ns());
            continue;
        }
        struct fuse *rf = q ? NULL : refresh_read_due(d, now);
        if (rf) { /* a target's refresh interval, for the refresh-aware hold */
            char *target = xstrdup(rf->index);
            pthread_mutex_unlock(&d->mu);
            long ms = 0;
            int rrc = d->tr.refresh_interval(d->tr.ud, h->id, target, &ms);
            free(target);
            pthread_mutex_lock(&d->mu);
            refresh_read_done(rf, rrc == 0 ? ms : 0, now_ns());
            continue;
        }
        struct fuse *pf = q ? NULL : refresh_probe_due(d, now, &wake);
        if (pf) { /* when the target's next refresh ends (refresh.c) */
            pthread_mutex_unlock(&d->mu);
            int prc = d->tr.refresh_probe(d->tr.ud, h->id, pf->index);
            pthread_mutex_lock(&d->mu);
            refresh_probed(pf, prc == 0, now_ns());
            continue;
        }
        if (d->eng_redetect) {
            d->eng_redetect = false;
            pthread_mutex_unlock(&d->mu);
            char err[512];
            if (search_detect(d->client, h->conn, err, sizeof err) != 0)
                log_warn("deliver", "asking the search engine's version again after it came "
                         "back failed (bulk bodies keep the version known before): %s", err);
            pthread_mutex_lock(&d->mu);
            continue;
        }
        if (!q) {
            struct timespec ts;
            deadline_ts(&ts, wake);
            h->idle = true; /* waiting for work: not wedged however late it wakes */
            pthread_cond_timedwait(&d->work_cv, &d->mu, &ts);
            h->idle = false;
            continue;
        }
        b.n = take_batch(d, h, q, &b.it, &b.cap, b.seen, b.seen_cap, now);
        if (d->main_queued > 0) pthread_cond_signal(&d->work_cv); /* the rest: another helper */
        h->sending_ns = now_ns();
        pthread_mutex_unlock(&d->mu);

        batch_body(d, h, &b);
        batch_send(d, h, &b);
        pthread_mutex_lock(&d->mu);
        batch_hold_reports(&b);
        pthread_mutex_unlock(&d->mu);
        batch_report(d, h, &b);

        pthread_mutex_lock(&d->mu);
        h->sending_ns = 0;
        int64_t answered = now_ns();
        refresh_answered(q->fuse, b.rc == SEARCH_OK && !b.request_failed, b.t0,
                         h->refresh_aim_ns, h->refresh_wait, answered);
        batch_account(d, h, q, &b, answered);
        batch_settle(d, h, &b);
        pthread_cond_broadcast(&d->space_cv); /* either class may have room now */
        pthread_cond_broadcast(&d->done_cv);
        pthread_cond_signal(&d->work_cv);
    }
    pthread_mutex_unlock(&d->mu);
    free(b.it);
    free(b.outc);
    free(b.seen);
    return NULL;
}
