/* zk: one ZooKeeper session of a node (see zk.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "monotime.h"
#include "sbuf.h"
#include "zk.h"

struct zk {
    zhandle_t *zh;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool connected, expired;
    int64_t disconnected_at; /* monotonic ms; 0 = connected */
    int timeout_ms;
    char hosts[512];
};

/* the session's watcher (the client's thread): state changes only */
static void session_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    (void)zh, (void)path;
    struct zk *z = ctx;
    if (type != ZOO_SESSION_EVENT) return;
    pthread_mutex_lock(&z->mu);
    if (state == ZOO_CONNECTED_STATE) {
        if (z->disconnected_at)
            log_info("cluster", "ZooKeeper %s: connected again after %lld ms", z->hosts,
                     (long long)(mono_ms() - z->disconnected_at));
        z->connected = true;
        z->disconnected_at = 0;
    } else if (state == ZOO_EXPIRED_SESSION_STATE) {
        z->connected = false;
        z->expired = true;
        log_warn("cluster", "ZooKeeper %s: the session expired; everything this node held "
                 "through it (registration, locks, leadership) is gone", z->hosts);
    } else if (z->connected || !z->disconnected_at) {
        z->connected = false;
        if (!z->disconnected_at) {
            z->disconnected_at = mono_ms();
            log_warn("cluster", "ZooKeeper %s: disconnected; the session lives %d ms more at "
                     "most", z->hosts, z->timeout_ms);
        }
    }
    pthread_cond_broadcast(&z->cv);
    pthread_mutex_unlock(&z->mu);
}

struct zk *zk_open(const char *hosts, int session_timeout_ms, int timeout_ms, char *err,
                   size_t errlen) {
    struct zk *z = xcalloc(1, sizeof *z);
    pthread_mutex_init(&z->mu, NULL);
    pthread_cond_init(&z->cv, NULL);
    snprintf(z->hosts, sizeof z->hosts, "%s", hosts);
    z->timeout_ms = session_timeout_ms;
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    z->zh = zookeeper_init(hosts, session_watcher, session_timeout_ms, NULL, z, 0);
    if (!z->zh) {
        errf(err, errlen, "[cluster] zookeeper = %s: cannot start a ZooKeeper client (is the "
             "host list host:port[,host:port...]?)", hosts);
        zk_close(z);
        return NULL;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&z->mu);
    while (!z->connected && !z->expired)
        if (pthread_cond_timedwait(&z->cv, &z->mu, &ts) != 0) break;
    bool ok = z->connected;
    pthread_mutex_unlock(&z->mu);
    if (!ok) {
        errf(err, errlen, "[cluster] zookeeper = %s: no session within %d ms (is ZooKeeper "
             "running and reachable from here?)", hosts, timeout_ms);
        zk_close(z);
        return NULL;
    }
    int neg = zoo_recv_timeout(z->zh);
    if (neg > 0) z->timeout_ms = neg;
    return z;
}

void zk_close(struct zk *z) {
    if (!z) return;
    if (z->zh) zookeeper_close(z->zh);
    pthread_mutex_destroy(&z->mu);
    pthread_cond_destroy(&z->cv);
    free(z);
}

zhandle_t *zk_handle(struct zk *z) { return z->zh; }

bool zk_usable(struct zk *z) {
    pthread_mutex_lock(&z->mu);
    bool ok = !z->expired &&
              (z->connected || (z->disconnected_at &&
                                mono_ms() - z->disconnected_at < z->timeout_ms * 2 / 3));
    pthread_mutex_unlock(&z->mu);
    return ok;
}

bool zk_expired(struct zk *z) {
    pthread_mutex_lock(&z->mu);
    bool e = z->expired;
    pthread_mutex_unlock(&z->mu);
    return e;
}

bool zk_connected(struct zk *z) {
    pthread_mutex_lock(&z->mu);
    bool c = z->connected && !z->expired;
    pthread_mutex_unlock(&z->mu);
    return c;
}

int zk_session_timeout_ms(struct zk *z) { return z->timeout_ms; }

const char *zk_strerror(int rc) { return zerror(rc); }

int zk_ensure_path(struct zk *z, const char *path, char *err, size_t errlen) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1;; p++) {
        bool end = *p == '\0';
        if (*p == '/' || end) {
            char c = *p;
            *p = '\0';
            int rc = zoo_create(z->zh, buf, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
            if (rc != ZOK && rc != ZNODEEXISTS)
                return errf(err, errlen, "ZooKeeper: creating %s: %s", buf, zerror(rc));
            *p = c;
        }
        if (end) break;
    }
    return 0;
}
