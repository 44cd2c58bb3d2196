/* node.c: the node's table of subsystems (started in order, one run on the
 * caller's thread, stopped in drain order, asked for health), its request thread (what the admin server asks runs
 * here, node_post/node_run) and the admin server's registered operations. See
 * node.h. */
#include "sync/node/node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonw.h"
#include "log.h"
#include "monotime.h"
#include "sbuf.h"

/* ---------- subsystems ---------- */

static bool add(struct node *n, const struct node_subsystem *sub, void *state, bool owned) {
    pthread_mutex_lock(&n->mu);
    bool ok = n->nsubs < NODE_MAX_SUBSYSTEMS;
    if (ok) {
        n->subs[n->nsubs].sub = sub;
        n->subs[n->nsubs].state = state;
        n->subs[n->nsubs].stopped = false;
        n->subs[n->nsubs].owned = owned;
        n->nsubs++;
    } else {
        log_error("node", "too many subsystems: %s is not run by the node (raise "
                  "NODE_MAX_SUBSYSTEMS)", sub->name);
    }
    pthread_mutex_unlock(&n->mu);
    return ok;
}

void node_started(struct node *n, const struct node_subsystem *sub, void *state) {
    add(n, sub, state, false);
}

int node_start(struct node *n, const struct node_subsystem *const *table, size_t count,
               void *ctx) {
    for (size_t i = 0; i < count; i++) {
        const struct node_subsystem *sub = table[i];
        void *state = sub->state_size ? xcalloc(1, sub->state_size) : ctx;
        if (!add(n, sub, state, sub->state_size > 0)) {
            if (sub->state_size) free(state);
            return -1;
        }
        log_debug("node", "starting %s", sub->name);
        int rc = sub->start ? sub->start(state, ctx) : 0;
        if (rc) return rc;
    }
    return 0;
}

int node_main(struct node *n) {
    int (*run)(void *) = NULL;
    void *state = NULL;
    pthread_mutex_lock(&n->mu);
    for (int i = 0; i < n->nsubs && !run; i++)
        if (n->subs[i].sub->run && !n->subs[i].stopped)
            run = n->subs[i].sub->run, state = n->subs[i].state;
    pthread_mutex_unlock(&n->mu);
    return run ? run(state) : 0;
}

/* the next subsystem to stop: the lowest drain up to max, the latest
 * started of it */
static int next_to_stop(struct node *n, int max) {
    int best = -1;
    for (int i = 0; i < n->nsubs; i++) {
        if (n->subs[i].stopped || n->subs[i].sub->drain > max) continue;
        if (best < 0 || n->subs[i].sub->drain <= n->subs[best].sub->drain) best = i;
    }
    return best;
}

void node_stop_through(struct node *n, int max_drain) {
    for (;;) {
        pthread_mutex_lock(&n->mu);
        int i = next_to_stop(n, max_drain);
        if (i >= 0) n->subs[i].stopped = true;
        pthread_mutex_unlock(&n->mu);
        if (i < 0) break;
        const struct node_subsystem *sub = n->subs[i].sub;
        log_debug("node", "stopping %s", sub->name);
        if (sub->stop) sub->stop(n->subs[i].state);
        if (n->subs[i].owned) {
            pthread_mutex_lock(&n->mu); /* node_healthy skips it: stopped */
            free(n->subs[i].state);
            n->subs[i].state = NULL;
            pthread_mutex_unlock(&n->mu);
        }
    }
}

void node_stop_all(struct node *n) { node_stop_through(n, 1 << 30); }

/* under the node's lock: a subsystem is not stopped, nor its state freed,
 * while it is asked (a health check only reads) */
bool node_healthy(struct node *n, char *why, size_t whylen) {
    bool well = true;
    pthread_mutex_lock(&n->mu);
    for (int i = 0; i < n->nsubs && well; i++) {
        const struct node_subsystem *sub = n->subs[i].sub;
        if (n->subs[i].stopped || !sub->healthy) continue;
        char w[512] = "";
        if (!sub->healthy(n->subs[i].state, w, sizeof w)) {
            snprintf(why, whylen, "%s: %s", sub->name, w);
            well = false;
        }
    }
    pthread_mutex_unlock(&n->mu);
    return well;
}

bool node_health_json(struct node *n, struct sbuf *out) {
    jsonw w;
    jw_init(&w, out);
    jw_arr_open(&w);
    bool well = true;
    pthread_mutex_lock(&n->mu);
    for (int i = 0; i < n->nsubs; i++) {
        const struct node_subsystem *sub = n->subs[i].sub;
        if (n->subs[i].stopped || !sub->healthy) continue;
        char w2[512] = "";
        if (sub->healthy(n->subs[i].state, w2, sizeof w2)) continue;
        well = false;
        jw_obj_open(&w);
        jw_key(&w, "subsystem");
        jw_str(&w, sub->name);
        jw_key(&w, "why");
        jw_str(&w, w2);
        jw_obj_close(&w);
    }
    pthread_mutex_unlock(&n->mu);
    jw_arr_close(&w);
    return well;
}

int64_t node_wedged_after_ms(const struct ss_config *cfg) {
    int64_t m = (int64_t)cfg->source.connect_timeout_ms + cfg->source.read_timeout_ms;
    int64_t e = (int64_t)cfg->search.connect_timeout_ms + cfg->search.timeout_ms;
    if (e > m) m = e;
    if (cfg->delivery.drain_timeout_ms > m) m = cfg->delivery.drain_timeout_ms;
    if (cfg->source.heartbeat_ms > m) m = cfg->source.heartbeat_ms;
    return 2 * m + 10000;
}

void node_describe(struct node *n, char *buf, size_t len) {
    sbuf b = SBUF_INIT;
    bool done[NODE_MAX_SUBSYSTEMS] = {0};
    pthread_mutex_lock(&n->mu);
    for (int k = 0; k < n->nsubs; k++) {
        int best = -1;
        for (int i = 0; i < n->nsubs; i++)
            if (!done[i] && (best < 0 || n->subs[i].sub->drain < n->subs[best].sub->drain))
                best = i;
        done[best] = true;
        sbuf_printf(&b, "%s%s", b.len ? ", " : "", n->subs[best].sub->name);
    }
    pthread_mutex_unlock(&n->mu);
    snprintf(buf, len, "%s", b.data ? b.data : "");
    sbuf_free(&b);
}

/* ---------- requests ---------- */

struct node_request {
    char *what;
    node_work_fn fn;
    void *arg;
    node_done_fn done;
    void *done_arg;
    struct node_request *next;
};

int node_post(struct node *n, const char *what, node_work_fn fn, void *arg, node_done_fn done,
              void *done_arg) {
    if (!n) return -1;
    struct node_request *r = xcalloc(1, sizeof *r);
    r->what = xstrdup(what ? what : "?");
    r->fn = fn;
    r->arg = arg;
    r->done = done;
    r->done_arg = done_arg;
    pthread_mutex_lock(&n->mu);
    if (!n->req_started || n->req_stop) {
        pthread_mutex_unlock(&n->mu);
        free(r->what);
        free(r);
        return -1;
    }
    if (n->req_tail)
        n->req_tail->next = r;
    else
        n->req_head = r;
    n->req_tail = r;
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
    return 0;
}

/* node_run's wait: done under the node's lock, then the waiter returns */
struct run_wait {
    struct node *n;
    bool done, ran;
};

static void run_done(void *arg, bool ran) {
    struct run_wait *w = arg;
    struct node *n = w->n;
    pthread_mutex_lock(&n->mu);
    w->ran = ran;
    w->done = true; /* w is the waiter's: not touched after the unlock */
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
}

int node_run(struct node *n, const char *what, node_work_fn fn, void *arg) {
    struct run_wait w = {.n = n};
    if (node_post(n, what, fn, arg, run_done, &w) < 0) return -1;
    pthread_mutex_lock(&n->mu);
    while (!w.done) pthread_cond_wait(&n->cv, &n->mu);
    pthread_mutex_unlock(&n->mu);
    return w.ran ? 0 : -1;
}

/* tests only: hold a request the test named (SEARCHSYNC_TEST_NODE_SLOW_*) */
static void test_slow(const struct node *n, const char *what) {
    if (n->slow_ms <= 0 || !strstr(what, n->slow_what)) return;
    log_info("node", "test hook: request %s held %d ms", what, n->slow_ms);
    struct timespec ts = {n->slow_ms / 1000, (long)(n->slow_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

static void *req_main(void *arg) {
    struct node *n = arg;
    pthread_mutex_lock(&n->mu);
    for (;;) {
        while (!n->req_head && !n->req_stop) pthread_cond_wait(&n->cv, &n->mu);
        struct node_request *r = n->req_head;
        if (!r) break; /* stopping, nothing left */
        n->req_head = r->next;
        if (!n->req_head) n->req_tail = NULL;
        bool run = !n->req_stop; /* else refused: the node is stopping */
        pthread_mutex_unlock(&n->mu);
        if (run) {
            pthread_mutex_lock(&n->mu); /* for its health: what runs, since when */
            n->req_running = r->what;
            n->req_running_ms = mono_ms();
            pthread_mutex_unlock(&n->mu);
            test_slow(n, r->what);
            log_debug("node", "running %s", r->what);
            r->fn(r->arg);
            pthread_mutex_lock(&n->mu);
            n->req_running = NULL;
            pthread_mutex_unlock(&n->mu);
        } else {
            log_info("node", "%s not run: the node is stopping", r->what);
        }
        if (r->done) r->done(r->done_arg, run);
        free(r->what);
        free(r);
        pthread_mutex_lock(&n->mu);
    }
    pthread_mutex_unlock(&n->mu);
    return NULL;
}

static void requests_stop(void *state) {
    struct node *n = state;
    pthread_mutex_lock(&n->mu);
    bool started = n->req_started;
    n->req_stop = true;
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
    if (started) pthread_join(n->req_th, NULL);
    pthread_mutex_lock(&n->mu);
    n->req_started = false;
    pthread_mutex_unlock(&n->mu);
}

/* Under the node's lock (node_healthy). An admin call's operation makes
 * calls with timeouts only (the metadata, the source, the engine): one that
 * runs past the node's bound is wedged, and the calls queued behind it wait
 * with it. */
static bool requests_healthy(void *state, char *why, size_t whylen) {
    struct node *n = state;
    if (!n->req_running) return true;
    int64_t bound = n->cfg ? node_wedged_after_ms(n->cfg) : 60000;
    if (mono_ms() - n->req_running_ms <= bound) return true;
    snprintf(why, whylen, "%s has run for more than %lld ms (wedged; the calls queued behind "
             "it wait)", n->req_running, (long long)bound);
    return false;
}

/* after the admin server (whose connections wait on requests), before builds */
static const struct node_subsystem REQUESTS = {.name = "admin requests",
                                               .drain = NODE_DRAIN_ADMIN + 1,
                                               .stop = requests_stop,
                                               .healthy = requests_healthy};

int node_init(struct node *n, const struct ss_config *cfg, char *err, size_t errlen) {
    memset(n, 0, sizeof *n);
    n->cfg = cfg;
    pthread_mutex_init(&n->mu, NULL);
    pthread_cond_init(&n->cv, NULL);
    const char *slow = getenv("SEARCHSYNC_TEST_NODE_SLOW_MS");
    const char *slow_what = getenv("SEARCHSYNC_TEST_NODE_SLOW_WHAT");
    if (slow && slow_what) {
        n->slow_ms = atoi(slow);
        snprintf(n->slow_what, sizeof n->slow_what, "%s", slow_what);
    }
    if (pthread_create(&n->req_th, NULL, req_main, n) != 0) {
        snprintf(err, errlen, "cannot start the node's request thread");
        return -1;
    }
    n->req_started = true;
    node_started(n, &REQUESTS, n);
    return 0;
}

void node_free(struct node *n) {
    node_stop_all(n);
    pthread_mutex_destroy(&n->mu);
    pthread_cond_destroy(&n->cv);
}

/* ---------- the admin server's operations ---------- */

static const struct node_admin_ops *admin_ops;

void node_admin_register(const struct node_admin_ops *ops) { admin_ops = ops; }
const struct node_admin_ops *node_admin(void) { return admin_ops; }
