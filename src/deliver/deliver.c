/* deliver: the delivery queues and their helper threads (deliver.h).
 *
 * One mutex (d->mu) guards all queue state; the engine round trip, building
 * the bulk body and writing dead letters happen outside it. Three condition
 * variables: work (helpers wait for an eligible queue), space (producers wait
 * below the high-water mark), done (drain, txn waits and the checkpointer).
 *
 * An item's life:
 *
 *   deliver_submit ──► queued in indexq (main, or aux while draining)
 *        │                 │  coalesce: a newer INDEX/DELETE of the same doc
 *        │                 │  replaces a queued INDEX/DELETE in place (the old
 *        │                 │  one is acknowledged: the new one carries it)
 *        │                 ▼
 *        │            in flight (take_batch) ──► 2xx / 409 stale / 404 missing ──► ack
 *        │                 │                ──► 4xx permanent ──► dead letter ──► ack
 *        │                 │                ──► transient ──► front of queue,
 *        │                 │                    backoff, fuse melts (finish_batch)
 *        │                 ▼
 *        └── purged (purge_locked, only with a blown fuse at the high-water
 *            mark and a purge strategy) ──► dead letter ──► ack
 *
 *   ack: txn->pending--; the txn FIFO's front advances while its transactions
 *   are closed and fully acknowledged (advance_low_water); the checkpointer
 *   thread saves the newest such position.
 *
 * Fuse states (fuse_melt, eligible):  ok ──N melts within interval──► blown
 *   ──reset interval passes──► ok (the next batch is the probe). */
#include "deliver/deliver.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deliver/hist.h"
#include "log.h"
#include "search/search.h"

#define NS_PER_MS 1000000LL

/* ---------- versions ---------- */

uint64_t version_make(uint32_t epoch, uint32_t file_no, uint64_t pos) {
    if (epoch >= (1u << VERSION_EPOCH_BITS) || file_no >= (1u << VERSION_FILE_BITS) ||
        pos > 0xffffffffull)
        return 0;
    return ((uint64_t)epoch << (VERSION_FILE_BITS + VERSION_POS_BITS)) |
           ((uint64_t)file_no << VERSION_POS_BITS) | pos;
}
uint32_t version_epoch(uint64_t v) {
    return (uint32_t)(v >> (VERSION_FILE_BITS + VERSION_POS_BITS)) &
           ((1u << VERSION_EPOCH_BITS) - 1);
}
uint32_t version_file(uint64_t v) {
    return (uint32_t)(v >> VERSION_POS_BITS) & ((1u << VERSION_FILE_BITS) - 1);
}
uint32_t version_pos(uint64_t v) { return (uint32_t)(v & 0xffffffffull); }

static const char *const OP_NAMES[] = {"index", "delete", "update", "script"};
const char *change_op_name(enum change_op op) {
    return (unsigned)op < 4 ? OP_NAMES[op] : "?";
}
int change_op_parse(const char *s) {
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, OP_NAMES[i])) return i;
    return -1;
}

int purge_strategy_parse(const char *s) {
    if (!s || !*s || !strcmp(s, "off")) return PURGE_OFF;
    if (!strcmp(s, "purge_one")) return PURGE_ONE;
    if (!strcmp(s, "purge_index")) return PURGE_INDEX;
    if (!strcmp(s, "purge_all")) return PURGE_ALL;
    return -1;
}

void deliver_opts_defaults(struct deliver_opts *o) {
    memset(o, 0, sizeof *o);
    o->workers = 8;
    o->helpers = 4;
    o->batch_min = 1;
    o->batch_max = 500;
    o->batch_max_bytes = 10 << 20;
    o->flush_interval_ms = 1000;
    o->high_watermark = 10000;
    o->fuse_failures = 3;
    o->fuse_interval_ms = 5000;
    o->fuse_reset_ms = 30000;
    o->purge = PURGE_OFF;
    o->drain_timeout_ms = 60000;
    o->retry_initial_ms = 100;
    o->retry_max_ms = 30000;
    o->checkpoint_interval_ms = 1000;
    o->idle_checkpoint_interval_ms = 60000;
    o->stats_window_ms = 60000;
    o->max_attempts_5xx = 10;
    o->version_field = "ss_version";
}

void deliver_opts_from_config(struct deliver_opts *o, const struct ss_config *c) {
    deliver_opts_defaults(o);
    o->workers = c->delivery.workers;
    /* each helper owns one kept-alive connection: [search] max_connections
     * caps how many run at once */
    o->helpers = c->delivery.helpers < c->search.max_connections ? c->delivery.helpers
                                                                 : c->search.max_connections;
    if (o->helpers < 1) o->helpers = 1;
    o->batch_min = c->delivery.batch_min;
    o->batch_max = c->delivery.batch_max;
    o->batch_max_bytes = c->delivery.batch_max_bytes;
    o->flush_interval_ms = c->delivery.flush_interval_ms;
    o->high_watermark = c->delivery.high_watermark;
    o->fuse_failures = c->delivery.fuse_failures;
    o->fuse_interval_ms = c->delivery.fuse_interval_ms;
    o->fuse_reset_ms = c->delivery.fuse_reset_ms;
    int p = purge_strategy_parse(c->delivery.purge_strategy);
    o->purge = p < 0 ? PURGE_OFF : (enum purge_strategy)p;
    o->drain_timeout_ms = c->delivery.drain_timeout_ms;
    o->retry_initial_ms = c->delivery.retry_initial_ms;
    o->retry_max_ms = c->delivery.retry_max_ms;
    o->checkpoint_interval_ms = c->delivery.checkpoint_interval_ms;
    o->idle_checkpoint_interval_ms = c->delivery.idle_checkpoint_interval_ms;
    o->max_attempts_5xx = c->delivery.max_attempts_5xx;
    o->stats_window_ms = c->delivery.stats_window_ms;
}

void deliver_search_opts(struct search_opts *so, const struct ss_config *c) {
    memset(so, 0, sizeof *so);
    so->urls = c->search.urls;
    so->user = c->search.user;
    so->password = c->search.password;
    so->api_key = c->search.api_key;
    so->ca_file = c->search.ca_file;
    so->client_cert = c->search.client_cert;
    so->client_key = c->search.client_key;
    so->tls_verify = c->search.tls_verify;
    so->timeout_ms = c->search.timeout_ms;
    so->connect_timeout_ms = c->search.connect_timeout_ms;
    so->compress = c->search.compress;
}

/* ---------- structures ---------- */

struct txn {
    uint64_t seq;
    char *pos;     /* NULL while open */
    long pending;  /* changes not yet acknowledged */
    bool closed;
    struct txn *next;
};

struct indexq;

struct item {
    struct item *prev, *next; /* in its queue (main or aux) */
    struct item *hnext;       /* doc map chain */
    struct indexq *q;
    struct txn *txn;
    char *doc_id, *routing, *body, *script; /* all inside this allocation */
    size_t body_len, size;
    uint64_t version;
    uint64_t hash;
    int64_t enq_ns;
    int attempts;
    int status;       /* last item status (dead letters) */
    enum change_op op;
    bool require_alias;
    bool in_aux;
    bool in_map;
    bool solo; /* its batch was refused as a whole (400): send it alone */
};

struct fuse {
    char *index;
    int64_t *melts; /* ring of the last fuse_failures melt times */
    int nmelts, head;
    bool blown;
    int64_t heal_ns;
    uint64_t blows;
    struct fuse *next;
};

struct list {
    struct item *head, *tail;
    long n;
};

struct indexq {
    char *index;
    struct fuse *fuse;
    struct list main, aux;
    size_t main_bytes;
    struct item **map; /* doc id → newest queued item of that doc */
    size_t map_cap, map_n;
    bool inflight;
    int backoff_ms;
    int64_t not_before_ns;
    struct indexq *next; /* in its worker */
};

struct worker {
    struct indexq *qs;
};

struct helper {
    struct deliver *d;
    int id;
    pthread_t th;
    struct search_conn *conn;
    sbuf body;
    struct search_resp resp;
    struct bulk_result *res;
    int res_cap;
    unsigned rnd;
    struct indexq **qs; /* the queues the current batch was taken from */
    int nqs, qs_cap;
};

struct deliver {
    struct deliver_opts o;
    char *version_field;
    struct search_client *client;
    struct deliver_transport tr;
    pthread_mutex_t mu;
    /* dead-letter log lines: at most DL_LOG_BURST per DL_LOG_WINDOW_NS */
    pthread_mutex_t dl_log_mu;
    int64_t dl_log_window;
    int dl_log_n;
    pthread_cond_t work_cv, space_cv, done_cv;
    struct worker *workers;
    struct helper *helpers;
    pthread_t ckpt_th;
    bool ckpt_started;
    struct fuse *fuses;
    bool stop;
    bool draining;
    int64_t txn_flush_ns; /* flush_on_txn_end: changes queued before this go at once */
    long total;       /* queued + in flight (counts toward the high-water mark) */
    long main_queued; /* queued in main queues (drain waits for 0) */
    long inflight;    /* items in flight */
    long inflight_batches;
    int scan_cursor;
    /* transactions */
    struct txn *txn_head, *txn_tail; /* FIFO; tail may be open */
    uint64_t txn_next_seq;
    uint64_t lw_seq;
    char *lw_pos;
    bool ckpt_dirty;
    bool ckpt_quiet_dirty; /* moved only by quiet transactions since the last save */
    int64_t ckpt_saved_ns; /* when the last save (or the start) was */
    bool ckpt_busy; /* a save is running (outside the lock) */
    uint64_t ckpt_saved_seq;
    /* statistics */
    int64_t win_start_ns;
    struct wcounter docs_ok, stale, missing, retries, failures, dead_letters, purged,
        coalesced, batches, requests_failed, blocked, drains, drain_timeouts, drain_failures,
        fuse_blows, submitted;
    uint64_t checkpoints_saved, checkpoint_failures;
    uint64_t ckpt_fail_streak; /* failed saves in a row (an outage is said once a minute) */
    long blocked_now;
    struct hist lat_doc_us, lat_batch_us, batch_size, drain_us;
};

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void deadline_ts(struct timespec *ts, int64_t at_ns) {
    /* condition variables use CLOCK_MONOTONIC (pthread_condattr_setclock) */
    ts->tv_sec = (time_t)(at_ns / 1000000000LL);
    ts->tv_nsec = (long)(at_ns % 1000000000LL);
}

static uint64_t fnv1a(const char *s, size_t n, uint64_t h) {
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}
#define FNV_BASIS 14695981039346656037ull

/* ---------- lists and the doc map ---------- */

static void list_push_back(struct list *l, struct item *it) {
    it->next = NULL;
    it->prev = l->tail;
    if (l->tail)
        l->tail->next = it;
    else
        l->head = it;
    l->tail = it;
    l->n++;
}

static void list_push_front(struct list *l, struct item *it) {
    it->prev = NULL;
    it->next = l->head;
    if (l->head)
        l->head->prev = it;
    else
        l->tail = it;
    l->head = it;
    l->n++;
}

static void list_remove(struct list *l, struct item *it) {
    if (it->prev)
        it->prev->next = it->next;
    else
        l->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    else
        l->tail = it->prev;
    it->prev = it->next = NULL;
    l->n--;
}

/* new takes old's place in l */
static void list_replace(struct list *l, struct item *old, struct item *nw) {
    nw->prev = old->prev;
    nw->next = old->next;
    if (old->prev)
        old->prev->next = nw;
    else
        l->head = nw;
    if (old->next)
        old->next->prev = nw;
    else
        l->tail = nw;
    old->prev = old->next = NULL;
}

/* A document is (id, routing): the same id under another routing is another
 * copy on another shard (a child moved to a new parent leaves its old copy to
 * be deleted there), so those changes must not coalesce. */
static bool same_routing(const char *a, const char *b) {
    return a == b || (a && b && !strcmp(a, b));
}

/* the bucket of hash h: FNV-1a's low bits are poorly spread for short,
 * similar ids (1, 2, 3...), so the bucket comes from the high bits of a
 * Fibonacci multiply */
static size_t map_bucket(uint64_t h, size_t cap) {
    return (size_t)((h * 0x9E3779B97F4A7C15ULL) >> 40) & (cap - 1);
}

static struct item **map_slot(struct indexq *q, const char *id, const char *routing, uint64_t h) {
    struct item **pp = &q->map[map_bucket(h, q->map_cap)];
    while (*pp && ((*pp)->hash != h || strcmp((*pp)->doc_id, id) ||
                   !same_routing((*pp)->routing, routing)))
        pp = &(*pp)->hnext;
    return pp;
}

static void map_grow(struct indexq *q) {
    size_t ncap = q->map_cap ? q->map_cap * 2 : 64;
    struct item **nm = xcalloc(ncap, sizeof *nm);
    for (size_t i = 0; i < q->map_cap; i++) {
        struct item *it = q->map[i];
        while (it) {
            struct item *nx = it->hnext;
            struct item **b = &nm[map_bucket(it->hash, ncap)];
            it->hnext = *b;
            *b = it;
            it = nx;
        }
    }
    free(q->map);
    q->map = nm;
    q->map_cap = ncap;
}

static struct item *map_get(struct indexq *q, const char *id, const char *routing, uint64_t h) {
    if (!q->map_cap) return NULL;
    return *map_slot(q, id, routing, h);
}

/* make it the newest queued item of its doc */
static void map_put(struct indexq *q, struct item *it) {
    if (q->map_n + 1 > q->map_cap * 3 / 4) map_grow(q);
    struct item **pp = map_slot(q, it->doc_id, it->routing, it->hash);
    if (*pp) {
        struct item *old = *pp;
        it->hnext = old->hnext;
        old->hnext = NULL;
        old->in_map = false;
        *pp = it;
    } else {
        it->hnext = NULL;
        *pp = it;
        q->map_n++;
    }
    it->in_map = true;
}

static void map_del(struct indexq *q, struct item *it) {
    if (!it->in_map) return;
    struct item **pp = map_slot(q, it->doc_id, it->routing, it->hash);
    if (*pp == it) {
        *pp = it->hnext;
        q->map_n--;
    }
    it->hnext = NULL;
    it->in_map = false;
}

/* ---------- items ---------- */

static struct item *item_new(const struct change *c) {
    size_t idn = strlen(c->doc_id) + 1;
    size_t rn = c->routing ? strlen(c->routing) + 1 : 0;
    size_t bn = c->body ? c->body_len + 1 : 0;
    size_t sn = c->script ? strlen(c->script) + 1 : 0;
    struct item *it = xmalloc(sizeof *it + idn + rn + bn + sn);
    memset(it, 0, sizeof *it);
    char *p = (char *)(it + 1);
    it->doc_id = memcpy(p, c->doc_id, idn);
    p += idn;
    if (rn) it->routing = memcpy(p, c->routing, rn), p += rn;
    if (bn) {
        it->body = memcpy(p, c->body, c->body_len);
        p[c->body_len] = '\0';
        it->body_len = c->body_len;
        p += bn;
    }
    if (sn) it->script = memcpy(p, c->script, sn);
    it->version = c->version;
    it->op = c->op;
    it->require_alias = c->require_alias;
    it->hash = fnv1a(c->doc_id, idn - 1, FNV_BASIS);
    if (c->routing) it->hash = fnv1a(c->routing, rn - 1, fnv1a("\0", 1, it->hash));
    it->size = 96 + idn + rn + bn + sn;
    return it;
}

/* ---------- transactions and the low-water mark ---------- */

static struct txn *open_txn(struct deliver *d) {
    if (d->txn_tail && !d->txn_tail->closed) return d->txn_tail;
    struct txn *t = xcalloc(1, sizeof *t);
    t->seq = d->txn_next_seq++;
    if (d->txn_tail)
        d->txn_tail->next = t;
    else
        d->txn_head = t;
    d->txn_tail = t;
    return t;
}

static void advance_low_water(struct deliver *d) {
    bool moved = false;
    while (d->txn_head && d->txn_head->closed && d->txn_head->pending == 0) {
        struct txn *t = d->txn_head;
        d->txn_head = t->next;
        if (!d->txn_head) d->txn_tail = NULL;
        d->lw_seq = t->seq;
        free(d->lw_pos);
        d->lw_pos = t->pos;
        free(t);
        moved = true;
    }
    if (moved) {
        d->ckpt_dirty = true;
        pthread_cond_broadcast(&d->done_cv);
    }
}

/* the change is acknowledged (delivered, stale, dead-lettered or purged) */
static void ack_item(struct deliver *d, struct item *it) {
    it->txn->pending--;
    d->total--;
    free(it);
}

/* ---------- fuses ---------- */

static struct fuse *fuse_get(struct deliver *d, const char *index) {
    for (struct fuse *f = d->fuses; f; f = f->next)
        if (!strcmp(f->index, index)) return f;
    struct fuse *f = xcalloc(1, sizeof *f);
    f->index = xstrdup(index);
    f->melts = xcalloc((size_t)d->o.fuse_failures, sizeof(int64_t));
    f->next = d->fuses;
    d->fuses = f;
    return f;
}

static void fuse_melt(struct deliver *d, struct fuse *f, int64_t now) {
    if (f->blown) return;
    int n = d->o.fuse_failures;
    f->melts[f->head] = now;
    f->head = (f->head + 1) % n;
    if (f->nmelts < n) f->nmelts++;
    int recent = 0;
    for (int i = 0; i < f->nmelts; i++)
        if (now - f->melts[i] <= (int64_t)d->o.fuse_interval_ms * NS_PER_MS) recent++;
    if (recent >= n) {
        f->blown = true;
        f->heal_ns = now + (int64_t)d->o.fuse_reset_ms * NS_PER_MS;
        f->blows++;
        f->nmelts = 0;
        f->head = 0;
        wc_add(&d->fuse_blows, 1);
        log_warn("deliver", "fuse of index %s blown after %d failures within %d ms; "
                 "pausing it for %d ms", f->index, n, d->o.fuse_interval_ms, d->o.fuse_reset_ms);
    }
}

static bool fuse_check(struct deliver *d, struct fuse *f, int64_t now, int64_t *wake) {
    (void)d;
    if (!f->blown) return true;
    if (now >= f->heal_ns) {
        f->blown = false;
        log_info("deliver", "fuse of index %s healed; resuming deliveries", f->index);
        return true;
    }
    if (f->heal_ns < *wake) *wake = f->heal_ns;
    return false;
}

/* ---------- queues ---------- */

static struct indexq *indexq_get(struct deliver *d, const char *index, uint64_t ih) {
    struct worker *w = &d->workers[ih % (uint64_t)d->o.workers];
    for (struct indexq *q = w->qs; q; q = q->next)
        if (!strcmp(q->index, index)) return q;
    struct indexq *q = xcalloc(1, sizeof *q);
    q->index = xstrdup(index);
    q->fuse = fuse_get(d, index);
    q->next = w->qs;
    w->qs = q;
    return q;
}

static bool eligible(struct deliver *d, struct indexq *q, int64_t now, int64_t *wake) {
    if (q->inflight || q->main.n == 0) return false;
    if (!fuse_check(d, q->fuse, now, wake)) return false;
    if (now < q->not_before_ns) {
        if (q->not_before_ns < *wake) *wake = q->not_before_ns;
        return false;
    }
    if (d->draining) return true;
    if (q->main.n >= d->o.batch_min) return true;
    if (q->main.head->enq_ns <= d->txn_flush_ns) return true;
    if (d->total >= d->o.high_watermark) return true;
    int64_t due = q->main.head->enq_ns + (int64_t)d->o.flush_interval_ms * NS_PER_MS;
    if (now >= due) return true;
    if (due < *wake) *wake = due;
    return false;
}

static void rotate_stats(struct deliver *d, int64_t now) {
    if (now - d->win_start_ns < (int64_t)d->o.stats_window_ms * NS_PER_MS) return;
    d->win_start_ns = now;
    struct wcounter *cs[] = {&d->docs_ok, &d->stale, &d->missing, &d->retries, &d->failures,
                             &d->dead_letters, &d->purged, &d->coalesced, &d->batches,
                             &d->requests_failed, &d->blocked, &d->drains,
                             &d->drain_timeouts, &d->drain_failures, &d->fuse_blows,
                             &d->submitted};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) wc_rotate(cs[i]);
    hist_rotate(&d->lat_doc_us);
    hist_rotate(&d->lat_batch_us);
    hist_rotate(&d->batch_size);
    hist_rotate(&d->drain_us);
}

/* ---------- dead letters ---------- */

#define DL_LOG_BURST 10
#define DL_LOG_WINDOW_NS (10LL * 1000000000LL)

static int write_dead_letter(struct deliver *d, struct item *it, const char *error,
                             size_t error_len, int status) {
    char *etext = xstrndup(error ? error : "", error ? error_len : 0);
    struct dead_letter dl = {
        .index = it->q->index,
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
    if (d->o.dead_letter) {
        rc = d->o.dead_letter(d->o.dead_letter_ud, &dl);
    } else {
        log_error("deliver", "dead letter (no table configured): index=%s id=%s version=%llu "
                  "op=%s status=%d error=%s", dl.index, dl.doc_id,
                  (unsigned long long)dl.version, change_op_name(dl.op), status, etext);
    }
    if (rc == 0) {
        /* a mapping conflict can park thousands at once: log a burst of them,
         * then say where the rest are instead of one line each */
        int64_t now = now_ns();
        pthread_mutex_lock(&d->dl_log_mu);
        if (now - d->dl_log_window >= DL_LOG_WINDOW_NS) d->dl_log_window = now, d->dl_log_n = 0;
        int n = ++d->dl_log_n;
        pthread_mutex_unlock(&d->dl_log_mu);
        if (n <= DL_LOG_BURST)
            log_warn("deliver", "dead letter: index=%s id=%s version=%llu status=%d: %.300s",
                     dl.index, dl.doc_id, (unsigned long long)dl.version, status, etext);
        else if (n == DL_LOG_BURST + 1)
            log_warn("deliver", "more dead letters in the next %d s are not logged one by one; "
                     "see `searchsync dead-letters list` and the dead_letters statistic",
                     (int)(DL_LOG_WINDOW_NS / 1000000000LL));
    }
    free(etext);
    return rc > 0 ? 0 : rc;
}

/* ---------- purge (seed 001) ---------- */

/* Under d->mu with the producer blocked at the high-water mark: move queued
 * items of blown indices into *out (they stay counted in d->total until the
 * dead letter is written and they are acknowledged). */
static void purge_collect(struct deliver *d, struct list *out) {
    if (d->o.purge == PURGE_OFF) return;
    int nq = 0;
    for (int w = 0; w < d->o.workers; w++)
        for (struct indexq *q = d->workers[w].qs; q; q = q->next)
            if (q->fuse->blown && q->main.n + q->aux.n > 0) nq++;
    if (nq == 0) return;
    int pick = rand() % nq, i = 0;
    const char *pick_index = NULL;
    for (int w = 0; w < d->o.workers; w++) {
        for (struct indexq *q = d->workers[w].qs; q; q = q->next) {
            if (!(q->fuse->blown && q->main.n + q->aux.n > 0)) continue;
            bool take;
            if (d->o.purge == PURGE_ALL)
                take = true;
            else if (d->o.purge == PURGE_ONE)
                take = i == pick;
            else {
                if (i == pick) pick_index = q->index;
                take = false;
            }
            i++;
            if (!take) continue;
            struct list *l = q->main.n ? &q->main : &q->aux;
            while (l->head) {
                struct item *it = l->head;
                list_remove(l, it);
                if (l == &q->main) {
                    d->main_queued--;
                    q->main_bytes -= it->size;
                }
                map_del(q, it);
                list_push_back(out, it);
                if (d->o.purge == PURGE_ONE) return;
            }
            if (l == &q->main)
                while (q->aux.head) {
                    struct item *it = q->aux.head;
                    list_remove(&q->aux, it);
                    map_del(q, it);
                    list_push_back(out, it);
                }
        }
    }
    if (pick_index) {
        for (int w = 0; w < d->o.workers; w++)
            for (struct indexq *q = d->workers[w].qs; q; q = q->next) {
                if (strcmp(q->index, pick_index)) continue;
                struct list *ls[2] = {&q->main, &q->aux};
                for (int k = 0; k < 2; k++)
                    while (ls[k]->head) {
                        struct item *it = ls[k]->head;
                        list_remove(ls[k], it);
                        if (k == 0) {
                            d->main_queued--;
                            q->main_bytes -= it->size;
                        }
                        map_del(q, it);
                        list_push_back(out, it);
                    }
            }
    }
}

/* Called with d->mu held; drops and retakes it. */
static void purge_flush(struct deliver *d, struct list *pl) {
    if (!pl->head) return;
    pthread_mutex_unlock(&d->mu);
    struct list ok = {0}, failed = {0};
    while (pl->head) {
        struct item *it = pl->head;
        list_remove(pl, it);
        const char *why = "purged at the high-water mark while the index's fuse was blown";
        if (write_dead_letter(d, it, why, strlen(why), 0) == 0)
            list_push_back(&ok, it);
        else
            list_push_back(&failed, it);
    }
    pthread_mutex_lock(&d->mu);
    while (ok.head) {
        struct item *it = ok.head;
        list_remove(&ok, it);
        wc_add(&d->purged, 1);
        wc_add(&d->dead_letters, 1);
        ack_item(d, it);
    }
    while (failed.tail) { /* back to the front of its queue, order kept */
        struct item *it = failed.tail;
        list_remove(&failed, it);
        it->in_aux = false;
        list_push_front(&it->q->main, it);
        d->main_queued++;
        it->q->main_bytes += it->size;
        if (!map_get(it->q, it->doc_id, it->routing, it->hash)) map_put(it->q, it);
    }
    advance_low_water(d);
    pthread_cond_broadcast(&d->space_cv);
}

/* ---------- submit ---------- */

int deliver_submit(struct deliver *d, const struct change *c) {
    if (!c || !c->index || !*c->index || !c->doc_id || !*c->doc_id || c->version == 0 ||
        c->version > (uint64_t)INT64_MAX || (unsigned)c->op > CHANGE_SCRIPT ||
        (c->op == CHANGE_SCRIPT && !c->script) ||
        (c->op != CHANGE_DELETE && !c->body))
        return DELIVER_EINVAL;
    struct item *it = item_new(c);
    uint64_t ih = fnv1a(c->index, strlen(c->index), FNV_BASIS);
    ih = fnv1a("\0", 1, ih);
    ih = fnv1a(c->doc_id, strlen(c->doc_id), ih);

    pthread_mutex_lock(&d->mu);
    bool counted_block = false;
    while (!d->stop && d->total >= d->o.high_watermark) {
        if (!counted_block) {
            counted_block = true;
            wc_add(&d->blocked, 1);
            d->blocked_now++;
            pthread_cond_broadcast(&d->work_cv); /* flush partial batches */
        }
        struct list pl = {0};
        purge_collect(d, &pl);
        if (pl.head) {
            purge_flush(d, &pl);
            continue;
        }
        struct timespec ts;
        deadline_ts(&ts, now_ns() + 200 * NS_PER_MS);
        pthread_cond_timedwait(&d->space_cv, &d->mu, &ts);
    }
    if (counted_block) d->blocked_now--;
    if (d->stop) {
        pthread_mutex_unlock(&d->mu);
        free(it);
        return DELIVER_ESTOPPED;
    }
    int64_t now = now_ns();
    rotate_stats(d, now);
    struct indexq *q = indexq_get(d, c->index, ih);
    it->q = q;
    struct txn *t = open_txn(d);
    it->txn = t;
    t->pending++;
    d->total++;
    wc_add(&d->submitted, 1);
    it->enq_ns = now;
    it->in_aux = d->draining;
    bool aux = it->in_aux;
    struct item *old = NULL;
    if (c->op == CHANGE_INDEX || c->op == CHANGE_DELETE) {
        struct item *m = map_get(q, it->doc_id, it->routing, it->hash);
        if (m && m->in_aux == it->in_aux && (m->op == CHANGE_INDEX || m->op == CHANGE_DELETE))
            old = m;
    }
    struct list *l = it->in_aux ? &q->aux : &q->main;
    if (old && it->version <= old->version) {
        /* a replay of something older than what is queued: it would lose
         * to the queued change at the engine anyway (409) */
        wc_add(&d->coalesced, 1);
        wc_add(&d->stale, 1);
        ack_item(d, it);
        advance_low_water(d);
    } else if (old) {
        /* the newer full-state change replaces the queued one in place */
        list_replace(l, old, it);
        map_del(q, old);
        map_put(q, it);
        it->enq_ns = old->enq_ns;
        if (!it->in_aux) q->main_bytes += it->size - old->size;
        wc_add(&d->coalesced, 1);
        ack_item(d, old);
        advance_low_water(d);
    } else {
        list_push_back(l, it);
        map_put(q, it);
        if (!it->in_aux) {
            d->main_queued++;
            q->main_bytes += it->size;
        }
    }
    /* wake a helper only when this changes what it would do: a first item
     * (its flush deadline), a queue that reached batch_min, or the high
     * water mark; waking it for every item of a filling batch costs a
     * context switch per document */
    if (!aux && !q->inflight &&
        (q->main.n == 1 || q->main.n >= d->o.batch_min || d->total >= d->o.high_watermark))
        pthread_cond_signal(&d->work_cv);
    pthread_mutex_unlock(&d->mu);
    return DELIVER_OK;
}

static uint64_t txn_end(struct deliver *d, const char *position, bool quiet) {
    pthread_mutex_lock(&d->mu);
    uint64_t seq;
    if (d->txn_tail && !d->txn_tail->closed) {
        struct txn *t = d->txn_tail;
        t->pos = xstrdup(position ? position : "");
        t->closed = true;
        seq = t->seq;
    } else if (d->txn_tail) {
        /* an empty transaction behind a closed one: it moves that one's
         * position forward (nothing of its own to wait for) */
        struct txn *t = d->txn_tail;
        free(t->pos);
        t->pos = xstrdup(position ? position : "");
        t->seq = d->txn_next_seq++;
        seq = t->seq;
    } else {
        seq = d->txn_next_seq++;
        d->lw_seq = seq;
        free(d->lw_pos);
        d->lw_pos = xstrdup(position ? position : "");
        if (quiet)
            d->ckpt_quiet_dirty = true;
        else
            d->ckpt_dirty = true;
        pthread_cond_broadcast(&d->done_cv);
    }
    if (d->o.flush_on_txn_end) { /* the closed transaction's partial batches go now */
        d->txn_flush_ns = now_ns();
        pthread_cond_broadcast(&d->work_cv);
    }
    advance_low_water(d);
    pthread_mutex_unlock(&d->mu);
    return seq;
}

uint64_t deliver_txn_end(struct deliver *d, const char *position) {
    return txn_end(d, position, false);
}

uint64_t deliver_txn_end_quiet(struct deliver *d, const char *position) {
    return txn_end(d, position, true);
}

int deliver_wait_txn(struct deliver *d, uint64_t seq, int timeout_ms) {
    int64_t end = now_ns() + (int64_t)timeout_ms * NS_PER_MS;
    pthread_mutex_lock(&d->mu);
    int rc = DELIVER_OK;
    while (d->lw_seq < seq) {
        if (d->stop) {
            rc = DELIVER_ESTOPPED;
            break;
        }
        if (now_ns() >= end) {
            rc = DELIVER_ETIMEOUT;
            break;
        }
        struct timespec ts;
        deadline_ts(&ts, end);
        pthread_cond_timedwait(&d->done_cv, &d->mu, &ts);
    }
    pthread_mutex_unlock(&d->mu);
    return rc;
}

uint64_t deliver_low_water(struct deliver *d, char *buf, size_t len) {
    pthread_mutex_lock(&d->mu);
    uint64_t s = d->lw_seq;
    if (buf && len) snprintf(buf, len, "%s", d->lw_pos ? d->lw_pos : "");
    pthread_mutex_unlock(&d->mu);
    return s;
}

/* ---------- helpers ---------- */

static struct indexq *pick_queue(struct deliver *d, int64_t now, int64_t *wake) {
    int W = d->o.workers;
    for (int k = 0; k < W; k++) {
        int w = (d->scan_cursor + k) % W;
        for (struct indexq *q = d->workers[w].qs; q; q = q->next) {
            if (eligible(d, q, now, wake)) {
                d->scan_cursor = (w + 1) % W;
                return q;
            }
        }
    }
    return NULL;
}

/* A batch holds at most one change per document: if an item failed and a
 * later change of the same doc in the same request succeeded, the retry
 * would land after it (an update applied before its index, then lost). The
 * batch ends at the first repeated doc; hashes stand for docs (a collision
 * only ends a batch early). */
static bool seen_add(uint64_t *set, size_t cap, uint64_t h) {
    h |= 1;
    for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (set[i] == h) return false;
        if (!set[i]) {
            set[i] = h;
            return true;
        }
    }
}

/* Move up to batch_max items (and batch_max_bytes) from the front of q into
 * the batch; false when the batch must end here (a repeated document, a
 * solo item, or full). */
static bool take_from(struct deliver *d, struct indexq *q, struct item ***arr, int *cap, int *n,
                      size_t *bytes, uint64_t *seen, size_t seen_cap) {
    int took = 0;
    bool go_on = true;
    while (q->main.head) {
        struct item *it = q->main.head;
        if (*n >= d->o.batch_max ||
            (*n > 0 && (*bytes + it->size > (size_t)d->o.batch_max_bytes || it->solo)) ||
            !seen_add(seen, seen_cap, it->hash)) {
            go_on = false;
            break;
        }
        list_remove(&q->main, it);
        map_del(q, it);
        q->main_bytes -= it->size;
        *bytes += it->size;
        it->attempts++;
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
 * eligible queues of the same index (other workers' documents), so that a
 * burst spread over W workers still leaves as full requests. Each queue
 * taken from has this batch in flight (its documents' order is kept); all
 * are of one index, so one fuse and one backoff apply to the request. */
static int take_batch(struct deliver *d, struct helper *h, struct indexq *q,
                      struct item ***arr, int *cap, uint64_t *seen, size_t seen_cap,
                      int64_t now) {
    int n = 0;
    size_t bytes = 0;
    memset(seen, 0, seen_cap * sizeof *seen);
    h->nqs = 0;
    /* beyond the first queue, a batch takes no more than its share of what
     * the index has queued, so that the other helpers still find work (one
     * batch holding every queue would leave one request in flight) */
    long queued = 0;
    for (int w = 0; w < d->o.workers; w++)
        for (struct indexq *o = d->workers[w].qs; o; o = o->next)
            if (o->fuse == q->fuse && !o->inflight) queued += o->main.n;
    long share = (queued + d->o.helpers - 1) / d->o.helpers;
    bool more = true;
    for (int k = 0; k <= d->o.workers && more; k++) {
        if (k > 0 && n >= share) break;
        struct indexq *from = q;
        if (k > 0) { /* the same index in the other workers */
            int w = (d->scan_cursor + k - 1) % d->o.workers;
            from = NULL;
            for (struct indexq *o = d->workers[w].qs; o; o = o->next)
                if (o->fuse == q->fuse && o != q) from = o;
            int64_t wake = now;
            if (!from || !eligible(d, from, now, &wake) || from->main.head->solo) continue;
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

static int default_bulk(void *ud, int helper, const char *body, size_t len,
                        struct search_resp *resp) {
    struct deliver *d = ud;
    struct search_conn *k = d->helpers[helper].conn;
    /* only what bulk_response_parse reads: each item's status and error (and a
     * failed request's own error); the engine then writes a few bytes per
     * item instead of its index, id, version, shards and sequence numbers */
    return search_request(k, "POST", "/_bulk?filter_path=error,status,errors,items.*.status,items.*.error",
                          "application/x-ndjson", body, len, resp);
}

enum outcome {
    OUT_ACK = 0, OUT_RETRY, OUT_DEAD,
    OUT_WROTE,  /* ack: a full-state write landed */
    OUT_MISSING /* ack: a partial update found no document (the producer is told) */
};

static void *helper_main(void *arg) {
    struct helper *h = arg;
    struct deliver *d = h->d;
    struct item **batch = NULL;
    int cap = 0;
    enum outcome *outc = NULL;
    int outc_cap = 0;
    const struct search_dialect *dia = d->client ? search_client_dialect(d->client) : NULL;
    size_t seen_cap = 64;
    while (seen_cap < (size_t)d->o.batch_max * 2) seen_cap *= 2;
    uint64_t *seen = xcalloc(seen_cap, sizeof *seen);
    pthread_mutex_lock(&d->mu);
    while (!d->stop) {
        int64_t now = now_ns();
        int64_t wake = now + 1000 * NS_PER_MS;
        struct indexq *q = pick_queue(d, now, &wake);
        if (!q) {
            struct timespec ts;
            deadline_ts(&ts, wake);
            pthread_cond_timedwait(&d->work_cv, &d->mu, &ts);
            continue;
        }
        int n = take_batch(d, h, q, &batch, &cap, seen, seen_cap, now);
        if (d->main_queued > 0) pthread_cond_signal(&d->work_cv); /* the rest: another helper */
        pthread_mutex_unlock(&d->mu);

        /* build and send, outside the lock */
        sbuf_reset(&h->body);
        for (int i = 0; i < n; i++) {
            struct item *it = batch[i];
            struct bulk_item bi = {
                .op = bulk_op_of(it->op),
                .index = q->index,
                .id = it->doc_id,
                .routing = it->routing,
                .version = it->version,
                .body = it->body,
                .body_len = it->body_len,
                .script = it->script,
                .version_field = d->version_field,
                .require_alias = it->require_alias,
            };
            bulk_append(&h->body, dia, &bi);
        }
        if (n > h->res_cap) {
            h->res_cap = n;
            h->res = xrealloc(h->res, sizeof *h->res * (size_t)n);
        }
        if (n > outc_cap) {
            outc_cap = n;
            outc = xrealloc(outc, sizeof *outc * (size_t)n);
        }
        int64_t t0 = now_ns();
        int rc = d->tr.bulk(d->tr.ud, h->id, h->body.data, h->body.len, &h->resp);
        int64_t t1 = now_ns();
        bool request_failed = false, isolate = false;
        int nstale = 0, nmissing = 0, nretry = 0, ndead = 0, nok = 0, n429 = 0;
        const char *fail_text = NULL;
        if (rc != SEARCH_OK) {
            request_failed = true;
            fail_text = h->resp.err;
        } else {
            enum bulk_class hc = http_classify(h->resp.status);
            if (hc != BULK_OK) {
                request_failed = true;
                fail_text = h->resp.body.data ? h->resp.body.data : "";
                if (hc == BULK_PERMANENT && n > 1) {
                    /* one bad item (e.g. a body that is not JSON) makes the
                     * engine refuse the whole request: send each alone to
                     * find it, without backoff or fuse */
                    for (int i = 0; i < n; i++) {
                        outc[i] = OUT_RETRY;
                        batch[i]->solo = true;
                    }
                    nretry = n;
                    isolate = true;
                    request_failed = false;
                    goto classified;
                }
                if (hc == BULK_PERMANENT) {
                    for (int i = 0; i < n; i++) {
                        h->res[i].status = (int)h->resp.status;
                        h->res[i].error = fail_text;
                        h->res[i].error_len = strlen(fail_text);
                        h->res[i].err_type = NULL;
                        outc[i] = OUT_DEAD;
                    }
                    ndead = n;
                    request_failed = false; /* handled per item */
                    goto classified;
                }
            } else {
                int got = bulk_response_parse(h->resp.body.data, h->resp.body.len, h->res, n);
                if (got != n) {
                    request_failed = true;
                    fail_text = "bulk response does not list every item";
                }
            }
        }
        if (request_failed) {
            for (int i = 0; i < n; i++) outc[i] = OUT_RETRY;
            nretry = n;
        } else {
            for (int i = 0; i < n; i++) {
                struct item *it = batch[i];
                enum bulk_class bc = bulk_classify(bulk_op_of(it->op), &h->res[i]);
                it->status = h->res[i].status;
                switch (bc) {
                case BULK_OK:
                    outc[i] = OUT_ACK, nok++;
                    if (it->op == CHANGE_INDEX || it->op == CHANGE_DELETE) outc[i] = OUT_WROTE;
                    break;
                case BULK_STALE: outc[i] = OUT_ACK, nstale++; break;
                case BULK_MISSING:
                    outc[i] = d->o.missing ? OUT_MISSING : OUT_ACK, nmissing++;
                    break;
                case BULK_TRANSIENT: {
                    int s = h->res[i].status;
                    bool plain = s == 429 || s == 502 || s == 503 || s == 504 || s == 409 ||
                                 (h->res[i].err_type && strcmp(h->res[i].err_type,
                                                               "es_rejected_execution_exception") == 0);
                    if (s == 429) n429++;
                    if (!plain && it->attempts >= d->o.max_attempts_5xx) {
                        outc[i] = OUT_DEAD, ndead++;
                    } else {
                        outc[i] = OUT_RETRY, nretry++;
                    }
                    break;
                }
                case BULK_PERMANENT: outc[i] = OUT_DEAD, ndead++; break;
                }
            }
        }
    classified:
        /* dead letters: write them before acknowledging */
        for (int i = 0; i < n && ndead; i++) {
            if (outc[i] != OUT_DEAD) continue;
            struct item *it = batch[i];
            if (write_dead_letter(d, it, h->res[i].error, h->res[i].error_len,
                                  h->res[i].status) != 0) {
                outc[i] = OUT_RETRY;
                nretry++;
                ndead--;
            }
        }
        /* after the dead letters of this batch exist: older ones of the
         * same documents are superseded by the full writes that landed */
        for (int i = 0; i < n; i++) {
            if (outc[i] == OUT_MISSING) {
                d->o.missing(d->o.missing_ud, q->index, batch[i]->doc_id, batch[i]->routing,
                             batch[i]->version);
                outc[i] = OUT_ACK;
            }
            if (outc[i] != OUT_WROTE) continue;
            if (d->o.written)
                d->o.written(d->o.written_ud, q->index, batch[i]->doc_id, batch[i]->version);
            outc[i] = OUT_ACK;
        }
        if (request_failed)
            log_warn("deliver", "bulk of %d items to %s failed (will retry): %.300s", n,
                     q->index, fail_text ? fail_text : "");

        pthread_mutex_lock(&d->mu);
        now = now_ns();
        rotate_stats(d, now);
        wc_add(&d->batches, 1);
        hist_add(&d->batch_size, (uint64_t)n);
        hist_add(&d->lat_batch_us, (uint64_t)((t1 - t0) / 1000));
        if (n > 0) hist_add(&d->lat_doc_us, (uint64_t)((t1 - t0) / 1000 / n));
        if (request_failed) wc_add(&d->requests_failed, 1);
        wc_add(&d->docs_ok, (uint64_t)nok);
        wc_add(&d->stale, (uint64_t)nstale);
        wc_add(&d->missing, (uint64_t)nmissing);
        wc_add(&d->dead_letters, (uint64_t)ndead);
        wc_add(&d->failures, (uint64_t)(nretry + ndead));
        wc_add(&d->retries, (uint64_t)nretry);
        if (isolate) {
            wc_add(&d->requests_failed, 1);
        } else if (request_failed || nretry > 0) {
            /* the fuse melts when the engine made no progress at all: the
             * whole request failed, or every item failed with something other
             * than 429. Rejections (429: "slow down") only back off, with
             * exponential backoff and jitter per queue. */
            bool rejected = request_failed ? rc == SEARCH_OK && h->resp.status == 429
                                           : nretry == n && n429 == n;
            if ((request_failed || nretry == n) && !rejected) fuse_melt(d, q->fuse, now);
            int b = q->backoff_ms ? q->backoff_ms * 2 : d->o.retry_initial_ms;
            if (b > d->o.retry_max_ms) b = d->o.retry_max_ms;
            /* full jitter over the upper half: [b/2, b] */
            int j = b / 2 + (int)(rand_r(&h->rnd) % (unsigned)(b / 2 + 1));
            for (int k = 0; k < h->nqs; k++) {
                h->qs[k]->backoff_ms = b;
                h->qs[k]->not_before_ns = now + (int64_t)j * NS_PER_MS;
            }
        } else {
            for (int k = 0; k < h->nqs; k++) {
                h->qs[k]->backoff_ms = 0;
                h->qs[k]->not_before_ns = 0;
            }
        }
        /* failed items go back to the front of their queues, in their order */
        for (int i = n - 1; i >= 0; i--) {
            struct item *it = batch[i];
            if (outc[i] != OUT_RETRY) continue;
            struct indexq *iq = it->q;
            list_push_front(&iq->main, it);
            iq->main_bytes += it->size;
            d->main_queued++;
            if (!map_get(iq, it->doc_id, it->routing, it->hash)) {
                /* no newer queued change of this doc: coalescing may replace it */
                map_put(iq, it);
            }
        }
        for (int i = 0; i < n; i++)
            if (outc[i] != OUT_RETRY) ack_item(d, batch[i]);
        d->inflight -= n;
        d->inflight_batches--;
        for (int k = 0; k < h->nqs; k++) h->qs[k]->inflight = false;
        advance_low_water(d);
        if (d->total < d->o.high_watermark) pthread_cond_broadcast(&d->space_cv);
        pthread_cond_broadcast(&d->done_cv);
        pthread_cond_signal(&d->work_cv);
    }
    pthread_mutex_unlock(&d->mu);
    free(batch);
    free(outc);
    free(seen);
    return NULL;
}

/* ---------- checkpointer ---------- */

/* Called with d->mu held; drops and retakes it. final: the drain's save, whose
 * failure is always said. */
static void save_checkpoint_locked(struct deliver *d, bool final) {
    /* one save at a time (checkpointer thread, drain): two concurrent saves
     * could land out of order and leave the older position behind */
    while (d->ckpt_busy) pthread_cond_wait(&d->done_cv, &d->mu);
    if (!d->o.checkpoint || !d->lw_pos) return;
    /* moved only past checkpoint saves read back: saved once the idle
     * interval has passed (or at the drain), else the save's own binlog
     * transaction would be the next save's reason, every interval */
    bool quiet_due = d->ckpt_quiet_dirty &&
                     (final || now_ns() - d->ckpt_saved_ns >=
                                   (int64_t)d->o.idle_checkpoint_interval_ms * NS_PER_MS);
    if (!d->ckpt_dirty && !quiet_due) return;
    char *pos = xstrdup(d->lw_pos);
    uint64_t seq = d->lw_seq;
    bool was_dirty = d->ckpt_dirty, was_quiet = d->ckpt_quiet_dirty;
    d->ckpt_dirty = d->ckpt_quiet_dirty = false;
    d->ckpt_busy = true;
    pthread_mutex_unlock(&d->mu);
    int rc = d->o.checkpoint(d->o.checkpoint_ud, pos, seq);
    pthread_mutex_lock(&d->mu);
    d->ckpt_busy = false;
    pthread_cond_broadcast(&d->done_cv);
    if (rc == 0) {
        d->checkpoints_saved++;
        d->ckpt_saved_seq = seq;
        d->ckpt_saved_ns = now_ns();
        if (d->ckpt_fail_streak)
            log_info("deliver", "checkpoint %s saved after %llu failed attempt(s)", pos,
                     (unsigned long long)d->ckpt_fail_streak);
        d->ckpt_fail_streak = 0;
    } else {
        d->checkpoint_failures++;
        d->ckpt_dirty |= was_dirty; /* whatever moved it since set its own flag too */
        d->ckpt_quiet_dirty |= was_quiet;
        /* one attempt per checkpoint interval: said at the first failure,
         * then about once a minute at the default interval */
        if (d->ckpt_fail_streak++ % 60 == 0 || final)
            log_warn("deliver", "saving the checkpoint %s failed; will retry (%llu failure(s) "
                     "in a row)", pos, (unsigned long long)d->ckpt_fail_streak);
    }
    /* moved during the save: by what moved it (advance_low_water and txn_end
     * set the flag of their kind) */
    if (d->lw_seq != seq && !d->ckpt_dirty && !d->ckpt_quiet_dirty) d->ckpt_dirty = true;
    free(pos);
}

static void *ckpt_main(void *arg) {
    struct deliver *d = arg;
    /* at most one save per checkpoint_interval_ms: done_cv is broadcast on
     * every acknowledgement, and when the checkpoint lives on the source
     * server each save is itself a binlog transaction that moves the
     * low-water mark, so saving on every wake-up would feed on itself */
    pthread_mutex_lock(&d->mu);
    int64_t next = now_ns() + (int64_t)d->o.checkpoint_interval_ms * NS_PER_MS;
    while (!d->stop) {
        struct timespec ts;
        deadline_ts(&ts, next);
        pthread_cond_timedwait(&d->done_cv, &d->mu, &ts);
        if (d->stop) break;
        if (now_ns() < next) continue;
        save_checkpoint_locked(d, false);
        next = now_ns() + (int64_t)d->o.checkpoint_interval_ms * NS_PER_MS;
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* ---------- drain ---------- */

int deliver_drain(struct deliver *d, int timeout_ms) {
    if (timeout_ms <= 0) timeout_ms = d->o.drain_timeout_ms;
    int64_t t0 = now_ns(), end = t0 + (int64_t)timeout_ms * NS_PER_MS;
    pthread_mutex_lock(&d->mu);
    if (d->draining) {
        pthread_mutex_unlock(&d->mu);
        return DELIVER_EBUSY;
    }
    d->draining = true;
    rotate_stats(d, t0);
    wc_add(&d->drains, 1);
    pthread_cond_broadcast(&d->work_cv);
    int rc = DELIVER_OK;
    while (d->main_queued > 0 || d->inflight_batches > 0) {
        if (d->stop) {
            rc = DELIVER_ESTOPPED;
            break;
        }
        if (now_ns() >= end) {
            rc = DELIVER_ETIMEOUT;
            break;
        }
        struct timespec ts;
        int64_t w = now_ns() + 100 * NS_PER_MS;
        deadline_ts(&ts, w < end ? w : end);
        pthread_cond_timedwait(&d->done_cv, &d->mu, &ts);
    }
    /* the auxiliary queues join the main ones */
    for (int w = 0; w < d->o.workers; w++)
        for (struct indexq *q = d->workers[w].qs; q; q = q->next) {
            while (q->aux.head) {
                struct item *it = q->aux.head;
                list_remove(&q->aux, it);
                it->in_aux = false;
                list_push_back(&q->main, it);
                q->main_bytes += it->size;
                d->main_queued++;
            }
        }
    d->draining = false;
    int64_t t1 = now_ns();
    hist_add(&d->drain_us, (uint64_t)((t1 - t0) / 1000));
    if (rc == DELIVER_ETIMEOUT) wc_add(&d->drain_timeouts, 1);
    if (rc != DELIVER_OK) wc_add(&d->drain_failures, 1);
    advance_low_water(d);
    save_checkpoint_locked(d, true);
    pthread_cond_broadcast(&d->work_cv);
    pthread_mutex_unlock(&d->mu);
    if (rc != DELIVER_OK)
        log_warn("deliver", "drain did not finish within %d ms", timeout_ms);
    return rc;
}

/* ---------- life cycle ---------- */

struct deliver *deliver_new(const struct deliver_opts *o, struct search_client *client,
                            char *err, size_t errlen) {
    if (!o->transport && !client) {
        snprintf(err, errlen, "delivery needs a search client");
        return NULL;
    }
    if (o->workers < 1 || o->helpers < 1 || o->batch_max < 1 || o->batch_min < 1 ||
        o->high_watermark < 1 || o->fuse_failures < 1) {
        snprintf(err, errlen, "[delivery] workers, helpers, batch sizes, high_watermark and "
                 "fuse_failures must be at least 1");
        return NULL;
    }
    if (client && !o->transport && !search_client_dialect(client)) {
        snprintf(err, errlen, "the engine's version is unknown (search_detect first)");
        return NULL;
    }
    struct deliver *d = xcalloc(1, sizeof *d);
    d->o = *o;
    d->version_field = xstrdup(o->version_field ? o->version_field : "");
    d->o.version_field = d->version_field;
    if (d->o.batch_min > d->o.batch_max) d->o.batch_min = d->o.batch_max;
    if (d->o.stats_window_ms <= 0) d->o.stats_window_ms = 60000;
    if (d->o.max_attempts_5xx <= 0) d->o.max_attempts_5xx = 10;
    if (d->o.retry_initial_ms < 1) d->o.retry_initial_ms = 1;
    if (d->o.retry_max_ms < d->o.retry_initial_ms) d->o.retry_max_ms = d->o.retry_initial_ms;
    if (d->o.checkpoint_interval_ms < 1) d->o.checkpoint_interval_ms = 1000;
    if (d->o.idle_checkpoint_interval_ms < 1) d->o.idle_checkpoint_interval_ms = 60000;
    d->ckpt_saved_ns = now_ns();
    d->client = client;
    if (o->transport)
        d->tr = *o->transport;
    else
        d->tr = (struct deliver_transport){.ud = d, .bulk = default_bulk};
    pthread_mutex_init(&d->mu, NULL);
    pthread_mutex_init(&d->dl_log_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->work_cv, &ca);
    pthread_cond_init(&d->space_cv, &ca);
    pthread_cond_init(&d->done_cv, &ca);
    pthread_condattr_destroy(&ca);
    d->workers = xcalloc((size_t)d->o.workers, sizeof *d->workers);
    d->txn_next_seq = 1;
    d->win_start_ns = now_ns();
    d->helpers = xcalloc((size_t)d->o.helpers, sizeof *d->helpers);
    for (int i = 0; i < d->o.helpers; i++) {
        struct helper *h = &d->helpers[i];
        h->d = d;
        h->id = i;
        h->rnd = (unsigned)(now_ns() ^ (i * 2654435761u));
        search_resp_init(&h->resp);
        if (client && !o->transport) h->conn = search_conn_new(client);
    }
    int started = 0;
    for (int i = 0; i < d->o.helpers; i++) {
        if (pthread_create(&d->helpers[i].th, NULL, helper_main, &d->helpers[i]) != 0) break;
        started++;
    }
    if (started == d->o.helpers &&
        pthread_create(&d->ckpt_th, NULL, ckpt_main, d) == 0)
        d->ckpt_started = true;
    if (!d->ckpt_started) {
        snprintf(err, errlen, "cannot start delivery threads: %s", strerror(errno));
        d->o.helpers = started;
        deliver_free(d);
        return NULL;
    }
    return d;
}

void deliver_free(struct deliver *d) {
    if (!d) return;
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    pthread_cond_broadcast(&d->work_cv);
    pthread_cond_broadcast(&d->space_cv);
    pthread_cond_broadcast(&d->done_cv);
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < d->o.helpers; i++) pthread_join(d->helpers[i].th, NULL);
    if (d->ckpt_started) pthread_join(d->ckpt_th, NULL);
    for (int i = 0; i < d->o.helpers; i++) {
        struct helper *h = &d->helpers[i];
        search_conn_free(h->conn);
        sbuf_free(&h->body);
        search_resp_free(&h->resp);
        free(h->res);
        free(h->qs);
    }
    free(d->helpers);
    for (int w = 0; w < d->o.workers; w++) {
        struct indexq *q = d->workers[w].qs;
        while (q) {
            struct indexq *nq = q->next;
            struct list *ls[2] = {&q->main, &q->aux};
            for (int k = 0; k < 2; k++)
                while (ls[k]->head) {
                    struct item *it = ls[k]->head;
                    list_remove(ls[k], it);
                    free(it);
                }
            free(q->map);
            free(q->index);
            free(q);
            q = nq;
        }
    }
    free(d->workers);
    while (d->fuses) {
        struct fuse *f = d->fuses;
        d->fuses = f->next;
        free(f->index);
        free(f->melts);
        free(f);
    }
    while (d->txn_head) {
        struct txn *t = d->txn_head;
        d->txn_head = t->next;
        free(t->pos);
        free(t);
    }
    free(d->lw_pos);
    free(d->version_field);
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->dl_log_mu);
    pthread_cond_destroy(&d->work_cv);
    pthread_cond_destroy(&d->space_cv);
    pthread_cond_destroy(&d->done_cv);
    free(d);
}

/* ---------- statistics ---------- */

void deliver_get_stats(struct deliver *d, struct deliver_stats *s) {
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&d->mu);
    s->docs_ok = d->docs_ok.total;
    s->stale = d->stale.total;
    s->missing = d->missing.total;
    s->retries = d->retries.total;
    s->failures = d->failures.total;
    s->dead_letters = d->dead_letters.total;
    s->purged = d->purged.total;
    s->coalesced = d->coalesced.total;
    s->batches = d->batches.total;
    s->requests_failed = d->requests_failed.total;
    s->blocked = d->blocked.total;
    s->drains = d->drains.total;
    s->drain_timeouts = d->drain_timeouts.total;
    s->drain_failures = d->drain_failures.total;
    s->fuse_blows = d->fuse_blows.total;
    s->submitted = d->submitted.total;
    s->checkpoints_saved = d->checkpoints_saved;
    s->checkpoint_failures = d->checkpoint_failures;
    s->queued = d->total - d->inflight;
    s->inflight = d->inflight;
    for (struct fuse *f = d->fuses; f; f = f->next) s->fuses_blown += f->blown;
    pthread_mutex_unlock(&d->mu);
}

int deliver_fuse_blown(struct deliver *d, const char *index) {
    int r = -1;
    pthread_mutex_lock(&d->mu);
    for (struct fuse *f = d->fuses; f; f = f->next)
        if (!strcmp(f->index, index)) r = f->blown && now_ns() < f->heal_ns;
    pthread_mutex_unlock(&d->mu);
    return r;
}

static void prom_counter(sbuf *o, const char *name, const char *help,
                         const struct wcounter *c) {
    sbuf_printf(o, "# HELP searchsync_delivery_%s_total %s\n", name, help);
    sbuf_printf(o, "# TYPE searchsync_delivery_%s_total counter\n", name);
    sbuf_printf(o, "searchsync_delivery_%s_total %llu\n", name, (unsigned long long)c->total);
    sbuf_printf(o, "# HELP searchsync_delivery_%s_window %s, in the last whole window\n", name,
                help);
    sbuf_printf(o, "# TYPE searchsync_delivery_%s_window gauge\n", name);
    sbuf_printf(o, "searchsync_delivery_%s_window %llu\n", name, (unsigned long long)c->last);
}

static void prom_summary(sbuf *o, const char *name, const char *help, const struct hist *h,
                         double scale) {
    static const double qs[] = {0.5, 0.95, 0.99, 0.999};
    sbuf_printf(o, "# HELP searchsync_delivery_%s %s\n", name, help);
    sbuf_printf(o, "# TYPE searchsync_delivery_%s summary\n", name);
    for (size_t i = 0; i < 4; i++)
        sbuf_printf(o, "searchsync_delivery_%s{quantile=\"%g\"} %.6g\n", name, qs[i],
                    (double)hist_quantile(h, qs[i]) * scale);
    sbuf_printf(o, "searchsync_delivery_%s_sum %.6g\n", name, (double)h->sum * scale);
    sbuf_printf(o, "searchsync_delivery_%s_count %llu\n", name, (unsigned long long)h->count);
    sbuf_printf(o, "# TYPE searchsync_delivery_%s_min gauge\n", name);
    sbuf_printf(o, "searchsync_delivery_%s_min %.6g\n", name, (double)h->min * scale);
    sbuf_printf(o, "# TYPE searchsync_delivery_%s_max gauge\n", name);
    sbuf_printf(o, "searchsync_delivery_%s_max %.6g\n", name, (double)h->max * scale);
    sbuf_printf(o, "# TYPE searchsync_delivery_%s_mean gauge\n", name);
    sbuf_printf(o, "searchsync_delivery_%s_mean %.6g\n", name,
                h->count ? (double)h->sum / (double)h->count * scale : 0.0);
}

static void prom_label(sbuf *o, const char *v) {
    for (; *v; v++) {
        if (*v == '\\' || *v == '"') sbuf_addc(o, '\\');
        if (*v == '\n') {
            sbuf_adds(o, "\\n");
            continue;
        }
        sbuf_addc(o, *v);
    }
}

void deliver_stats_prometheus(struct deliver *d, sbuf *o) {
    pthread_mutex_lock(&d->mu);
    int64_t now = now_ns();
    rotate_stats(d, now);
    prom_counter(o, "index_docs", "Changes the engine acknowledged", &d->docs_ok);
    prom_counter(o, "index_failures", "Item deliveries that failed (retried or dead-lettered)",
                 &d->failures);
    prom_counter(o, "index_stale", "Writes refused as older than the stored version (409)",
                 &d->stale);
    prom_counter(o, "update_missing", "Partial updates of documents that were gone",
                 &d->missing);
    prom_counter(o, "retries", "Items queued again after a transient failure", &d->retries);
    prom_counter(o, "dead_letters", "Changes written to the dead-letter table",
                 &d->dead_letters);
    prom_counter(o, "purged", "Changes purged at the high-water mark (also dead letters)",
                 &d->purged);
    prom_counter(o, "coalesced", "Queued changes replaced by a newer change of the same doc",
                 &d->coalesced);
    prom_counter(o, "batches", "Bulk requests sent", &d->batches);
    prom_counter(o, "request_failures", "Bulk requests that failed as a whole",
                 &d->requests_failed);
    prom_counter(o, "producer_blocked", "Submits that waited at the high-water mark",
                 &d->blocked);
    prom_counter(o, "drains", "Drains started", &d->drains);
    prom_counter(o, "drain_failures", "Drains that did not complete", &d->drain_failures);
    prom_counter(o, "drain_timeouts", "Drains that timed out", &d->drain_timeouts);
    prom_counter(o, "fuse_blows", "Times an index's fuse blew", &d->fuse_blows);
    prom_counter(o, "submitted", "Changes submitted", &d->submitted);
    prom_summary(o, "index_latency_seconds",
                 "Batch round trip divided by its size, per change", &d->lat_doc_us, 1e-6);
    prom_summary(o, "batch_latency_seconds", "Bulk request round trip", &d->lat_batch_us, 1e-6);
    prom_summary(o, "batch_size", "Changes per bulk request", &d->batch_size, 1);
    prom_summary(o, "drain_latency_seconds", "Time a drain took", &d->drain_us, 1e-6);
    sbuf_printf(o, "# TYPE searchsync_delivery_queue_length gauge\n"
                   "searchsync_delivery_queue_length %ld\n",
                d->total - d->inflight);
    sbuf_printf(o, "# TYPE searchsync_delivery_inflight gauge\n"
                   "searchsync_delivery_inflight %ld\n", d->inflight);
    sbuf_printf(o, "# TYPE searchsync_delivery_high_watermark gauge\n"
                   "searchsync_delivery_high_watermark %d\n", d->o.high_watermark);
    sbuf_printf(o, "# TYPE searchsync_delivery_producer_blocked_now gauge\n"
                   "searchsync_delivery_producer_blocked_now %ld\n", d->blocked_now);
    sbuf_printf(o, "# TYPE searchsync_delivery_checkpoint_seq gauge\n"
                   "searchsync_delivery_checkpoint_seq %llu\n",
                (unsigned long long)d->ckpt_saved_seq);
    sbuf_printf(o, "# TYPE searchsync_delivery_checkpoints_saved_total counter\n"
                   "searchsync_delivery_checkpoints_saved_total %llu\n",
                (unsigned long long)d->checkpoints_saved);
    sbuf_printf(o, "# TYPE searchsync_delivery_checkpoint_failures_total counter\n"
                   "searchsync_delivery_checkpoint_failures_total %llu\n",
                (unsigned long long)d->checkpoint_failures);
    sbuf_adds(o, "# HELP searchsync_delivery_fuse_blown 1 while the index's fuse is blown\n"
                 "# TYPE searchsync_delivery_fuse_blown gauge\n");
    for (struct fuse *f = d->fuses; f; f = f->next) {
        sbuf_adds(o, "searchsync_delivery_fuse_blown{index=\"");
        prom_label(o, f->index);
        sbuf_printf(o, "\"} %d\n", f->blown && now < f->heal_ns);
    }
    pthread_mutex_unlock(&d->mu);
}
