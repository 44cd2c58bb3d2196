/* admission: connection slots and total deadlines of the admin HTTP server
 * (see admission.h). */
#include "admission.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "liveness.h"
#include "monotime.h"
#include "sbuf.h"

struct adm_slot {
    struct adm_slot *prev, *next;
    int fd;
    char addr[64];
    unsigned long seq;  /* accept order: smaller is older */
    bool authed, in_request, cut;
    double since;       /* start of the current phase (monotonic seconds) */
    double cut_at;      /* when it was cut (adm_healthy) */
};

struct admission {
    struct adm_limits lim;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t reaper;
    bool stop;
    struct liveness live; /* the reaper's beats */
    struct adm_slot *head;
    unsigned long seq, cuts;
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void cut(struct admission *a, struct adm_slot *s) {
    if (s->cut) return;
    s->cut = true;
    s->cut_at = now_s();
    a->cuts++;
    shutdown(s->fd, SHUT_RDWR);
}

static void *reaper(void *arg) {
    struct admission *a = arg;
    pthread_mutex_lock(&a->mu);
    while (!a->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&a->cv, &a->mu, &ts);
        liveness_beat(&a->live);
        double t = now_s();
        for (struct adm_slot *s = a->head; s; s = s->next) {
            double limit = s->in_request ? a->lim.request_s
                           : s->authed   ? a->lim.idle_s
                                         : a->lim.header_s;
            if (!s->cut && t - s->since > limit) cut(a, s);
        }
    }
    pthread_mutex_unlock(&a->mu);
    liveness_end(&a->live, true);
    return NULL;
}

struct admission *adm_new(const struct adm_limits *lim) {
    struct admission *a = xcalloc(1, sizeof *a);
    a->lim = *lim;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    liveness_start(&a->live);
    if (pthread_create(&a->reaper, NULL, reaper, a) != 0) {
        pthread_cond_destroy(&a->cv);
        pthread_mutex_destroy(&a->mu);
        free(a);
        return NULL;
    }
    return a;
}

void adm_free(struct admission *a) {
    if (!a) return;
    pthread_mutex_lock(&a->mu);
    a->stop = true;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->reaper, NULL);
    while (a->head) { /* only if the server did not close them all */
        struct adm_slot *s = a->head;
        a->head = s->next;
        free(s);
    }
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

/* the oldest live, unauthenticated slot other than self (from addr when
 * addr is given), preferring one still waiting for its headers */
static struct adm_slot *victim(struct admission *a, const struct adm_slot *self,
                               const char *addr) {
    struct adm_slot *best = NULL;
    for (struct adm_slot *s = a->head; s; s = s->next) {
        if (s == self || s->cut || s->authed) continue;
        if (addr && strcmp(s->addr, addr)) continue;
        if (!best || (best->in_request && !s->in_request) ||
            (best->in_request == s->in_request && s->seq < best->seq))
            best = s;
    }
    return best;
}

struct adm_slot *adm_open(struct admission *a, int fd, const char *addr) {
    struct adm_slot *s = xcalloc(1, sizeof *s);
    s->fd = fd;
    snprintf(s->addr, sizeof s->addr, "%s", addr ? addr : "?");
    s->since = now_s();
    pthread_mutex_lock(&a->mu);
    s->seq = ++a->seq;
    s->next = a->head;
    if (a->head) a->head->prev = s;
    a->head = s;
    unsigned total = 0, same = 0;
    for (struct adm_slot *o = a->head; o; o = o->next) {
        if (o->cut) continue;
        total++;
        if (!strcmp(o->addr, s->addr)) same++;
    }
    if (same > a->lim.max_per_addr) {
        struct adm_slot *v = victim(a, s, s->addr);
        cut(a, v ? v : s);
        if (v) total--;
    }
    if (!s->cut && total > a->lim.max_total) {
        struct adm_slot *v = victim(a, s, NULL);
        cut(a, v ? v : s);
    }
    pthread_mutex_unlock(&a->mu);
    return s;
}

void adm_close(struct admission *a, struct adm_slot *s) {
    if (!s) return;
    pthread_mutex_lock(&a->mu);
    if (s->prev) s->prev->next = s->next;
    else a->head = s->next;
    if (s->next) s->next->prev = s->prev;
    pthread_mutex_unlock(&a->mu);
    free(s);
}

static void phase(struct admission *a, struct adm_slot *s, bool in_request) {
    if (!s) return;
    pthread_mutex_lock(&a->mu);
    s->in_request = in_request;
    s->since = now_s();
    pthread_mutex_unlock(&a->mu);
}

void adm_request_start(struct admission *a, struct adm_slot *s) { phase(a, s, true); }
void adm_request_done(struct admission *a, struct adm_slot *s) { phase(a, s, false); }

void adm_authenticated(struct admission *a, struct adm_slot *s) {
    if (!s) return;
    pthread_mutex_lock(&a->mu);
    s->authed = true;
    pthread_mutex_unlock(&a->mu);
}

unsigned adm_open_count(struct admission *a) {
    unsigned n = 0;
    pthread_mutex_lock(&a->mu);
    for (struct adm_slot *s = a->head; s; s = s->next) n += !s->cut;
    pthread_mutex_unlock(&a->mu);
    return n;
}

unsigned long adm_cut_count(struct admission *a) {
    pthread_mutex_lock(&a->mu);
    unsigned long n = a->cuts;
    pthread_mutex_unlock(&a->mu);
    return n;
}

/* A connection cut at its deadline is closed by libmicrohttpd once the
 * thread serving it sees the end of its stream: one still open bound_ms
 * after its cut has a thread stuck in its handler. The reaper itself goes
 * round every 250 ms: quiet for 5 s (or bound_ms, if longer), it is wedged. */
bool adm_healthy(struct admission *a, int64_t bound_ms, char *why, size_t whylen) {
    if (!a) return true;
    if (!liveness_check(&a->live, "connection reaper", mono_ms(),
                        bound_ms > 5000 ? bound_ms : 5000, why, whylen))
        return false;
    bool well = true;
    pthread_mutex_lock(&a->mu);
    double t = now_s();
    for (struct adm_slot *s = a->head; s && well; s = s->next) {
        if (!s->cut || (t - s->cut_at) * 1000 <= (double)bound_ms) continue;
        well = false;
        snprintf(why, whylen, "a connection from %s is still open more than %lld ms after it "
                 "was cut at its deadline (the thread serving it is wedged in its handler)",
                 s->addr, (long long)bound_ms);
    }
    pthread_mutex_unlock(&a->mu);
    return well;
}
