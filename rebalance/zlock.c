/* zlock: the ZooKeeper lock recipe (see zlock.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "sbuf.h"
#include "zlock.h"

struct zlock {
    struct zk *z;
    char dir[512];
    char prefix[300]; /* "<node_id>-" */
    char mine[900];   /* full path of this candidate's child */
    int64_t czxid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool changed; /* the watched predecessor changed */
};

static void pred_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    (void)zh, (void)type, (void)state, (void)path;
    struct zlock *l = ctx;
    pthread_mutex_lock(&l->mu);
    l->changed = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

/* the 10-digit sequence at the end of a child's name */
static long long seq_of(const char *name) {
    size_t n = strlen(name);
    return n > 10 ? atoll(name + n - 10) : -1;
}

/* this candidate's child among the children (after a lost connection the
 * create may have succeeded): 0 found (l->mine set), -1 not */
static int find_mine(struct zlock *l, const struct String_vector *kids) {
    for (int i = 0; i < kids->count; i++)
        if (!strncmp(kids->data[i], l->prefix, strlen(l->prefix))) {
            snprintf(l->mine, sizeof l->mine, "%s/%s", l->dir, kids->data[i]);
            struct Stat st;
            if (zoo_exists(zk_handle(l->z), l->mine, 0, &st) == ZOK) l->czxid = st.czxid;
            return 0;
        }
    return -1;
}

struct zlock *zlock_enter(struct zk *z, const char *dir, const char *node_id, char *err,
                          size_t errlen) {
    if (zk_ensure_path(z, dir, err, errlen) < 0) return NULL;
    struct zlock *l = xcalloc(1, sizeof *l);
    l->z = z;
    snprintf(l->dir, sizeof l->dir, "%s", dir);
    snprintf(l->prefix, sizeof l->prefix, "%s-", node_id);
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    char path[900], made[900];
    snprintf(path, sizeof path, "%s/%s", dir, l->prefix);
    for (int attempt = 0; attempt < 5; attempt++) {
        struct Stat st;
        int rc = zoo_create2(zk_handle(z), path, node_id, (int)strlen(node_id),
                             &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL, made, sizeof made,
                             &st);
        if (rc == ZOK) {
            snprintf(l->mine, sizeof l->mine, "%s", made);
            l->czxid = st.czxid;
            return l;
        }
        if (rc != ZCONNECTIONLOSS && rc != ZOPERATIONTIMEOUT) {
            errf(err, errlen, "ZooKeeper: joining %s: %s", dir, zerror(rc));
            break;
        }
        struct String_vector kids = {0};
        if (zoo_get_children(zk_handle(z), dir, 0, &kids) == ZOK) {
            int found = find_mine(l, &kids);
            deallocate_String_vector(&kids);
            if (found == 0) return l;
        }
        struct timespec ts = {0, 200000000L};
        nanosleep(&ts, NULL);
        errf(err, errlen, "ZooKeeper: joining %s: %s", dir, zerror(rc));
    }
    zlock_leave(l);
    return NULL;
}

int zlock_wait(struct zlock *l, volatile sig_atomic_t *stop, int64_t *fence, char *err,
               size_t errlen) {
    const char *me = strrchr(l->mine, '/') + 1;
    long long myseq = seq_of(me);
    char said[300] = "";
    for (;;) {
        if (stop && *stop) return 0;
        if (!zk_usable(l->z)) return errf(err, errlen, "the ZooKeeper session is lost");
        struct String_vector kids = {0};
        int rc = zoo_get_children(zk_handle(l->z), l->dir, 0, &kids);
        if (rc != ZOK) {
            if (rc == ZSESSIONEXPIRED || zk_expired(l->z))
                return errf(err, errlen, "the ZooKeeper session expired");
            struct timespec ts = {0, 200000000L};
            nanosleep(&ts, NULL);
            continue;
        }
        const char *pred = NULL, *lowest = NULL;
        long long pseq = -1, lseq = -1;
        bool present = false;
        for (int i = 0; i < kids.count; i++) {
            long long s = seq_of(kids.data[i]);
            if (s == myseq) present = true;
            if (lseq < 0 || s < lseq) lseq = s, lowest = kids.data[i];
            if (s < myseq && s > pseq) pseq = s, pred = kids.data[i];
        }
        if (!present) {
            deallocate_String_vector(&kids);
            return errf(err, errlen, "this node's candidate %s is gone (its session expired)",
                        l->mine);
        }
        if (!pred) {
            deallocate_String_vector(&kids);
            *fence = l->czxid;
            return 1;
        }
        char holder[300] = "";
        if (lowest) { /* the node id of the holder: the child's name before its sequence */
            snprintf(holder, sizeof holder, "%s", lowest);
            size_t n = strlen(holder);
            if (n > 11) holder[n - 11] = '\0';
        }
        if (strcmp(said, holder)) {
            log_info("cluster", "%s is held by node %s: this node stands by (queued behind %s)",
                     l->dir, holder, pred);
            snprintf(said, sizeof said, "%s", holder);
        }
        char pp[900];
        snprintf(pp, sizeof pp, "%s/%s", l->dir, pred);
        deallocate_String_vector(&kids);
        pthread_mutex_lock(&l->mu);
        l->changed = false;
        pthread_mutex_unlock(&l->mu);
        struct Stat st;
        rc = zoo_wexists(zk_handle(l->z), pp, pred_watcher, l, &st);
        if (rc == ZNONODE) continue; /* gone meanwhile: look again */
        /* wait for the predecessor to change, checking stop and the session */
        pthread_mutex_lock(&l->mu);
        while (!l->changed && !(stop && *stop) && zk_usable(l->z)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 200000000L;
            if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&l->cv, &l->mu, &ts);
        }
        pthread_mutex_unlock(&l->mu);
    }
}

enum zlock_state zlock_state(struct zlock *l) {
    if (zk_expired(l->z)) return ZLOCK_LOST;
    if (!zk_connected(l->z)) return ZLOCK_CUT_OFF;
    struct Stat st;
    int rc = zoo_exists(zk_handle(l->z), l->mine, 0, &st);
    if (rc == ZOK) return ZLOCK_HELD;
    if (rc == ZNONODE || rc == ZSESSIONEXPIRED || zk_expired(l->z)) return ZLOCK_LOST;
    return ZLOCK_CUT_OFF; /* a connection lost on the way, a timeout: not an answer */
}

void zlock_leave(struct zlock *l) {
    if (!l) return;
    if (l->mine[0] && !zk_expired(l->z)) zoo_delete(zk_handle(l->z), l->mine, -1);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l);
}
