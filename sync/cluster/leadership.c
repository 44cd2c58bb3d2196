/* leadership: which daemon reads a source's binlog (see leadership.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cred_refused.h"
#include "deliver/store.h"
#include "jsonw.h"
#include "sync/cluster/leadership.h"
#include "log.h"
#include "rebalance/registry.h"
#include "rebalance/zlock.h"
#include "monotime.h"

/* the node's entity as JSON (the caller holds work_mu) */
static void entity(struct leadership *l, const char *reader, sbuf *out) {
    jsonw w;
    jw_init(&w, out);
    jw_obj_open(&w);
    jw_key(&w, "node_id");
    jw_str(&w, l->node_id);
    jw_key(&w, "cloud_status");
    jw_str(&w, l->cloud_status);
    jw_key(&w, "node_status");
    jw_str(&w, l->node_status);
    jw_key(&w, "session_id");
    jw_str(&w, l->session);
    /* the job type: index (a reindex's buckets) or job (a delayed
     * run's); job_types lists both when it has both */
    bool dj = l->jobs_json && strstr(l->jobs_json, "\"type\":\"job\"");
    bool ij = l->jobs_json && strstr(l->jobs_json, "\"type\":\"index\"");
    jw_key(&w, "job_type");
    jw_str(&w, dj && !ij ? "job" : "index");
    jw_key(&w, "job_types");
    jw_arr_open(&w);
    if (ij) jw_str(&w, "index");
    if (dj) jw_str(&w, "job");
    jw_arr_close(&w);
    jw_key(&w, "jobs");
    if (l->jobs_json) jw_raw(&w, l->jobs_json, strlen(l->jobs_json));
    else jw_arr_open(&w), jw_arr_close(&w);
    jw_key(&w, "alive_work");
    jw_int(&w, l->alive_work);
    jw_key(&w, "source");
    jw_str(&w, l->cfg->source.name);
    jw_key(&w, "reader");
    jw_str(&w, reader);
    jw_key(&w, "pid");
    jw_int(&w, (int64_t)getpid());
    jw_obj_close(&w);
}

/* This node's entity written to its registry node, built and written under
 * work_mu so that two threads' writes land in the order of their contents. */
static void republish(struct leadership *l) {
    if (!l->zk) return;
    sbuf e = SBUF_INIT;
    pthread_mutex_lock(&l->work_mu);
    entity(l, l->fence ? "leader" : "standby", &e);
    leadership_publish(l, e.data);
    pthread_mutex_unlock(&l->work_mu);
    sbuf_free(&e);
}

int leadership_init(struct leadership *l, const struct ss_config *cfg, bool no_wait) {
    memset(l, 0, sizeof *l);
    l->cfg = cfg;
    l->no_wait = no_wait;
    pthread_mutex_init(&l->work_mu, NULL);
    l->work_mu_init = true;
    snprintf(l->cloud_status, sizeof l->cloud_status, "NORMAL");
    snprintf(l->node_status, sizeof l->node_status, "FINISH"); /* no jobs yet */
    if (cfg->cluster.node_id && cfg->cluster.node_id[0]) {
        snprintf(l->node_id, sizeof l->node_id, "%s", cfg->cluster.node_id);
    } else {
        char host[200] = "node";
        gethostname(host, sizeof host - 1);
        snprintf(l->node_id, sizeof l->node_id, "%s-%ld", host, (long)getpid());
    }
    l->metap = db_params_metadata(cfg);
    l->metap.database = cfg->metadata.database;
    if (!cfg->cluster.zookeeper || !cfg->cluster.zookeeper[0]) return 0;
    l->zk = zk_open(cfg->cluster.zookeeper, cfg->cluster.session_timeout_ms,
                    cfg->source.connect_timeout_ms > 5000 ? cfg->source.connect_timeout_ms : 5000,
                    l->err, sizeof l->err);
    if (!l->zk) return -1;
    sbuf e = SBUF_INIT;
    pthread_mutex_lock(&l->work_mu);
    entity(l, "standby", &e);
    pthread_mutex_unlock(&l->work_mu);
    int rc = registry_register(l->zk, cfg->cluster.name, l->node_id, e.data, l->err,
                               sizeof l->err);
    sbuf_free(&e);
    if (rc == 0)
        log_info("cluster", "node %s registered in cluster %s (ZooKeeper %s, session %d ms)",
                 l->node_id, cfg->cluster.name, cfg->cluster.zookeeper,
                 zk_session_timeout_ms(l->zk));
    return rc;
}

/* ---------- standalone: a named lock of the metadata server ---------- */

/* The lock: MariaDB/MySQL GET_LOCK on the metadata server, held by this
 * node's own connection (l->meta). It needs no heartbeat and so writes
 * nothing to the binlog while held (with the metadata on the source, a
 * heartbeat row would be a binlog transaction every few seconds: an idle
 * daemon never idle). The server releases it when the connection goes, so
 * a killed or crashed reader frees it at once. The reader_locks row records
 * who took it last and the fencing token, raised by one at each taking. */
static void lock_name(struct leadership *l, sbuf *q) {
    sbuf_adds(q, "CONCAT('searchsync:reader:', MD5(");
    db_quote(l->meta, q, l->cfg->source.name, strlen(l->cfg->source.name));
    sbuf_adds(q, "))");
}

/* The metadata server cannot be asked now (its connection failed or was
 * lost), rather than refusing what was asked: an outage to wait out. A
 * refused login is the configuration's fault, not an outage. */
static bool meta_unreachable(struct leadership *l) {
    return !cred_refused() && (!l->meta || db_conn_lost(l->meta));
}

/* CONNECTION_ID() of the lock's connection, as IS_USED_LOCK names it (a
 * proxy's session id from the client library would not match); 0 unknown */
static unsigned long conn_id(struct leadership *l) {
    char err[512];
    char *v = db_scalar(l->meta, "SELECT CONNECTION_ID()", err, sizeof err);
    unsigned long id = v ? strtoul(v, NULL, 10) : 0;
    free(v);
    return id;
}

/* 1 this node holds the lock now (fence raised and read), 0 another
 * connection holds it (*who: the last recorded taker), -2 the metadata
 * server cannot be reached, -1 another error (l->err either way) */
static int lock_try(struct leadership *l, char *who, size_t wholen) {
    if (db_ensure(&l->meta, &l->metap, l->err, sizeof l->err) < 0)
        return cred_refused() ? -1 : -2;
    const char *src = l->cfg->source.name;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT GET_LOCK(");
    lock_name(l, &q);
    sbuf_adds(&q, ", 0)");
    char *got = db_scalar(l->meta, q.data, l->err, sizeof l->err);
    int rc = -1;
    if (!got) goto out;
    if (strcmp(got, "1") != 0) {
        sbuf_reset(&q);
        sbuf_adds(&q, "SELECT owner FROM reader_locks WHERE source = ");
        db_quote(l->meta, &q, src, strlen(src));
        char e2[256];
        char *owner = db_scalar(l->meta, q.data, e2, sizeof e2);
        snprintf(who, wholen, "%s", owner ? owner : "unknown");
        free(owner);
        rc = 0;
        goto out;
    }
    sbuf_reset(&q);
    sbuf_adds(&q, "INSERT INTO reader_locks (source, owner, fence, heartbeat_at) VALUES (");
    db_quote(l->meta, &q, src, strlen(src));
    sbuf_addc(&q, ',');
    db_quote(l->meta, &q, l->node_id, strlen(l->node_id));
    sbuf_adds(&q, ", 1, NOW(3)) ON DUPLICATE KEY UPDATE fence = fence + 1, owner = "
                  "VALUES(owner), heartbeat_at = VALUES(heartbeat_at)");
    if (db_exec(l->meta, q.data, l->err, sizeof l->err) < 0) goto out;
    sbuf_reset(&q);
    sbuf_adds(&q, "SELECT fence FROM reader_locks WHERE source = ");
    db_quote(l->meta, &q, src, strlen(src));
    char *f = db_scalar(l->meta, q.data, l->err, sizeof l->err);
    if (!f) goto out;
    l->fence = strtoull(f, NULL, 10);
    free(f);
    l->lock_conn = conn_id(l);
    l->beat_at_ms = mono_ms();
    rc = 1;
out:
    if (rc == -1 && meta_unreachable(l)) rc = -2;
    free(got);
    sbuf_free(&q);
    return rc;
}

/* Still held by this connection? 1 yes, 0 no (the connection is alive and
 * does not hold it), -1 not known (the connection is lost) */
static int lock_held(struct leadership *l) {
    char err[512];
    if (!l->meta) return -1;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT IS_USED_LOCK(");
    lock_name(l, &q);
    sbuf_adds(&q, ") = CONNECTION_ID()");
    char *v = db_scalar(l->meta, q.data, err, sizeof err);
    sbuf_free(&q);
    if (!v) return db_conn_lost(l->meta) ? -1 : 0; /* NULL: nobody holds it */
    int held = !strcmp(v, "1");
    free(v);
    return held;
}

/* the connection id holding the lock (IS_USED_LOCK), 0 when none or not known */
static unsigned long lock_holder(struct leadership *l) {
    char err[512];
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT IS_USED_LOCK(");
    lock_name(l, &q);
    sbuf_adds(&q, ")");
    char *v = db_scalar(l->meta, q.data, err, sizeof err);
    sbuf_free(&q);
    unsigned long id = v ? strtoul(v, NULL, 10) : 0;
    free(v);
    return id;
}

/* The row of a taker (connection holder) that holds the lock but has not
 * raised the token yet: read again for up to a second, until the token is
 * above this node's (*who, *theirs; else *who names the connection) */
static void taker_row(struct leadership *l, unsigned long holder, char *who, size_t wholen,
                      uint64_t *theirs) {
    char err[512];
    snprintf(who, wholen, "connection %lu, whose token is not written yet,", holder);
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT owner, fence FROM reader_locks WHERE source = ");
    db_quote(l->meta, &q, l->cfg->source.name, strlen(l->cfg->source.name));
    for (int i = 0; i < 10 && *theirs <= l->fence; i++) {
        sleep_ms(100);
        char *row[2];
        if (db_row1(l->meta, q.data, q.len, row, 2, err, sizeof err) == 1 && row[1] &&
            strtoull(row[1], NULL, 10) > l->fence) {
            snprintf(who, wholen, "%s", row[0] ? row[0] : "unknown");
            *theirs = strtoull(row[1], NULL, 10);
        }
        db_row_free(row, 2);
    }
    sbuf_free(&q);
}

/* The lock after this node's connection to it was lost, or no longer holds
 * it (the metadata server restarted, the connection was killed): taken
 * again when nobody took it meanwhile, which the token tells — every taking
 * raises it while holding the lock, so a token still this node's own means
 * no other reader was given the source (the token stays: it is still this
 * node's turn). 1 held again; 0 another daemon holds it or took it
 * meanwhile (*who, *theirs: the recorded taker and token), the lock let go
 * again — also when the token is still this node's but the lock is held by
 * another connection than the one that took it: a taker a moment before it
 * raises the token; -1 not known (l->err): the metadata server cannot be
 * asked, or the holder is the connection that took it (this node's old one,
 * which the server has not dropped yet): asked again a second later. */
static int lock_retake(struct leadership *l, char *who, size_t wholen, uint64_t *theirs) {
    char err[512];
    *theirs = 0;
    snprintf(who, wholen, "unknown");
    if (db_ensure(&l->meta, &l->metap, l->err, sizeof l->err) < 0) return -1;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT GET_LOCK(");
    lock_name(l, &q);
    sbuf_adds(&q, ", 0)");
    char *got = db_scalar(l->meta, q.data, l->err, sizeof l->err);
    int rc = -1;
    if (!got) goto out; /* an error (SQL NULL too: one of the lock itself) */
    sbuf_reset(&q);
    sbuf_adds(&q, "SELECT owner, fence FROM reader_locks WHERE source = ");
    db_quote(l->meta, &q, l->cfg->source.name, strlen(l->cfg->source.name));
    char *row[2];
    int n = db_row1(l->meta, q.data, q.len, row, 2, err, sizeof err);
    if (n == 1) {
        snprintf(who, wholen, "%s", row[0] ? row[0] : "unknown");
        *theirs = row[1] ? strtoull(row[1], NULL, 10) : 0;
    }
    db_row_free(row, 2);
    if (got && !strcmp(got, "1")) {
        if (n < 0) { /* held, but the token unread: let it go, and try again */
            snprintf(l->err, sizeof l->err, "%s", err);
            db_close(l->meta);
            l->meta = NULL;
            goto out;
        }
        if (n == 1 && *theirs == l->fence) {
            l->lock_conn = conn_id(l);
            rc = 1;
            goto out;
        }
        db_close(l->meta); /* another took it meanwhile: theirs, not this node's */
        l->meta = NULL;
    } else if (n == 1 && *theirs == l->fence) {
        unsigned long holder = lock_holder(l);
        if (!holder) { /* let go since the GET_LOCK: taken back a second later */
            snprintf(l->err, sizeof l->err, "the lock was held by another connection a moment "
                     "ago, and the token is still this daemon's");
            goto out;
        }
        if (holder == l->lock_conn || !l->lock_conn) {
            snprintf(l->err, sizeof l->err, "the lock is still held by connection %lu, this "
                     "daemon's old one%s, which the metadata server has not dropped yet, and "
                     "the token is still this daemon's", holder,
                     l->lock_conn ? "" : " (its id unknown: taken as such)");
            goto out;
        }
        /* not the connection that took it: a taker between its GET_LOCK
         * and raising the token. Theirs for good; its name once it is in */
        taker_row(l, holder, who, wholen, theirs);
    } else if (n < 0) { /* held by another connection, the token unread */
        snprintf(l->err, sizeof l->err, "%s", err);
        goto out;
    }
    rc = 0;
out:
    free(got);
    sbuf_free(&q);
    return rc;
}

/* the lock was seen held: whatever waited goes on */
static void confirmed(struct leadership *l) {
    int64_t now = mono_ms();
    if (l->unconfirmed_at_ms) {
        if (l->zk)
            log_info("cluster", "node %s reaches ZooKeeper again after %lld ms, with its session: "
                     "it still reads source %s and goes on", l->node_id,
                     (long long)(now - l->unconfirmed_at_ms), l->cfg->source.name);
        else
            log_info("run", "the reader lock of source %s is confirmed again after %lld ms: the "
                     "metadata server answers and nobody took the lock meanwhile (fencing token "
                     "%llu); this daemon goes on reading", l->cfg->source.name,
                     (long long)(now - l->unconfirmed_at_ms), (unsigned long long)l->fence);
    }
    l->unconfirmed_at_ms = 0;
    l->beat_at_ms = now;
    atomic_store(&l->hold_reads, false);
}

/* the lock cannot be confirmed: the reader waits (said once) */
static enum lead_state unconfirmed(struct leadership *l) {
    if (!l->unconfirmed_at_ms) {
        l->unconfirmed_at_ms = mono_ms();
        atomic_store(&l->hold_reads, true);
        for (char *nl = strchr(l->err, '\n'); nl; nl = strchr(nl, '\n')) *nl = ' ';
        if (l->zk)
            log_warn("cluster", "node %s cannot confirm that it still reads source %s: it is cut "
                     "off from ZooKeeper (%s). It waits: it reads nothing more of the binlog, "
                     "sends what it read until %lld ms after the last confirmation, and goes on "
                     "once ZooKeeper answers with its session (it steps down if the session "
                     "expired meanwhile)", l->node_id, l->cfg->source.name, l->err,
                     (long long)leadership_send_window_ms(l));
        else
            log_warn("run", "the reader lock of source %s cannot be confirmed (%s). This "
                     "daemon waits: it reads nothing more of the binlog, sends what it read "
                     "until %lld ms after the last confirmation, and goes on once the lock is "
                     "confirmed (another daemon can take it only through the metadata server; "
                     "if one does, this one stops)",
                     l->cfg->source.name, l->err, (long long)leadership_send_window_ms(l));
    }
    return LEAD_UNCONFIRMED;
}

/* ---------- both ---------- */

static int claim(struct leadership *l) {
    uint64_t other = 0;
    if (db_ensure(&l->meta, &l->metap, l->err, sizeof l->err) < 0) return -1;
    int rc = offsets_claim(l->meta, l->cfg->source.name, l->fence, &other, l->err,
                           sizeof l->err);
    if (rc == 1)
        return errf(l->err, sizeof l->err, "source %s's checkpoint is held by a newer reader "
                    "(token %llu > this node's %llu)", l->cfg->source.name,
                    (unsigned long long)other, (unsigned long long)l->fence);
    return rc;
}

/* A standby's session expired: everything it held through it is gone (its
 * registration, its place in the election; its jobs were stopped by
 * sync/cluster/cluster_jobs.c when the session became unusable). Open a new one and
 * register again, waiting for ZooKeeper as long as it takes. 0, or -1
 * stopped. */
static int renew_session(struct leadership *l, volatile sig_atomic_t *stop) {
    const struct ss_config *cfg = l->cfg;
    log_warn("cluster", "node %s: its ZooKeeper session expired while it stood by: it registers "
             "again with a new session and waits for the next rebalance", l->node_id);
    zlock_leave(l->lock);
    l->lock = NULL;
    long pause = 500;
    for (;;) {
        if (stop && *stop) return -1;
        struct zk *z = zk_open(cfg->cluster.zookeeper, cfg->cluster.session_timeout_ms,
                               cfg->source.connect_timeout_ms > 5000 ? cfg->source.connect_timeout_ms
                                                                      : 5000,
                               l->err, sizeof l->err);
        if (z) {
            sbuf e = SBUF_INIT;
            pthread_mutex_lock(&l->work_mu);
            entity(l, "standby", &e);
            pthread_mutex_unlock(&l->work_mu);
            int rc = registry_register(z, cfg->cluster.name, l->node_id, e.data, l->err,
                                       sizeof l->err);
            sbuf_free(&e);
            if (rc == 0) {
                l->retired = xrealloc(l->retired, (l->nretired + 1) * sizeof *l->retired);
                l->retired[l->nretired++] = l->zk;
                l->zk = z;
                log_info("cluster", "node %s registered again in cluster %s", l->node_id,
                         cfg->cluster.name);
                return 0;
            }
            zk_close(z);
        }
        log_warn("cluster", "node %s: registering again: %s (retried in %ld ms)", l->node_id,
                 l->err, pause);
        sleep_ms(pause);
        pause = pause * 2 > 10000 ? 10000 : pause * 2;
    }
}

int leadership_acquire(struct leadership *l, volatile sig_atomic_t *stop) {
    const char *src = l->cfg->source.name;
    if (l->zk) {
        char dir[600];
        snprintf(dir, sizeof dir, "/searchsync/%s/leaders/%s", l->cfg->cluster.name, src);
        int rc = 0;
        int64_t fence = 0;
        for (;;) {
            if (stop && *stop) return 0;
            if (zk_expired(l->zk)) {
                if (renew_session(l, stop) < 0) return 0;
                continue;
            }
            if (!zk_usable(l->zk)) { /* cut off: wait for ZooKeeper (or the expiry) */
                sleep_ms(200);
                continue;
            }
            if (!l->lock) l->lock = zlock_enter(l->zk, dir, l->node_id, l->err, sizeof l->err);
            if (!l->lock) {
                if (!zk_usable(l->zk)) continue;
                return -1;
            }
            rc = zlock_wait(l->lock, stop, &fence, l->err, sizeof l->err);
            if (rc < 0 && !zk_usable(l->zk)) continue; /* the session, not the lock */
            break;
        }
        if (rc <= 0) return rc;
        l->fence = (uint64_t)fence;
        if (claim(l) < 0) return -1;
        republish(l);
        log_info("cluster", "node %s reads the binlog of source %s (fencing token %llu)",
                 l->node_id, src, (unsigned long long)l->fence);
        return 1;
    }
    char said[256] = "";
    int64_t away = 0; /* the metadata server unreachable since (monotonic ms) */
    for (;;) {
        if (stop && *stop) return 0;
        char who[256] = "";
        int rc = lock_try(l, who, sizeof who);
        if (rc == -2) { /* an outage: waited out, said once */
            if (!away) {
                away = mono_ms();
                log_warn("run", "the reader lock of source %s cannot be taken: the metadata "
                         "server does not answer (%s); this daemon waits for it", src, l->err);
            }
            sleep_ms(1000);
            continue;
        }
        if (rc < 0) return -1;
        if (away) {
            log_info("run", "the metadata server answers again after %lld ms",
                     (long long)(mono_ms() - away));
            away = 0;
        }
        if (rc == 1) {
            if (claim(l) < 0) return -1;
            log_info("run", "this daemon (%s) reads the binlog of source %s (reader lock, "
                     "fencing token %llu)", l->node_id, src, (unsigned long long)l->fence);
            return 1;
        }
        if (l->no_wait)
            return errf(l->err, sizeof l->err, "source %s is read by another daemon (%s): only one "
                        "daemon may read a source; stop it first, or start this one without "
                        "--no-wait to stand by", src, who);
        if (strcmp(said, who)) {
            log_warn("run", "source %s is read by another daemon (%s): this one stands by and "
                     "takes over when that one stops", src, who);
            snprintf(said, sizeof said, "%s", who);
        }
        sleep_ms(1000);
    }
}

enum lead_state leadership_check(struct leadership *l) {
    if (!l->fence) return LEAD_LOST;
    const char *src = l->cfg->source.name;
    if (l->zk) {
        switch (zlock_state(l->lock)) {
        case ZLOCK_HELD: confirmed(l); return LEAD_HELD;
        case ZLOCK_CUT_OFF:
            snprintf(l->err, sizeof l->err, "no answer from %s", l->cfg->cluster.zookeeper);
            return unconfirmed(l);
        case ZLOCK_LOST: break;
        }
        if (zk_expired(l->zk))
            snprintf(l->err, sizeof l->err, "node %s's ZooKeeper session expired (cut off, or "
                     "paused, longer than its timeout): its place in the election of source %s "
                     "went with it, and another node reads the source now or will", l->node_id,
                     src);
        else
            snprintf(l->err, sizeof l->err, "node %s's election node for source %s is gone from "
                     "ZooKeeper (deleted): another node reads the source now or will",
                     l->node_id, src);
        return LEAD_LOST;
    }
    int64_t now = mono_ms();
    if (!l->unconfirmed_at_ms) {
        if (now - l->beat_at_ms < 2000) return LEAD_HELD; /* looked at every 2 s */
        if (lock_held(l) == 1) {
            confirmed(l);
            return LEAD_HELD;
        }
    } else if (now < l->retry_at_ms) {
        return LEAD_UNCONFIRMED;
    }
    l->retry_at_ms = now + 1000;
    char who[256];
    uint64_t theirs = 0;
    int rc = lock_retake(l, who, sizeof who, &theirs);
    if (rc == 1) {
        confirmed(l);
        return LEAD_HELD;
    }
    if (rc < 0) return unconfirmed(l);
    if (theirs > l->fence)
        snprintf(l->err, sizeof l->err, "the reader lock of source %s was taken by another "
                 "daemon (%s, fencing token %llu > this daemon's %llu)", src, who,
                 (unsigned long long)theirs, (unsigned long long)l->fence);
    else
        snprintf(l->err, sizeof l->err, "the reader lock of source %s is held by another "
                 "daemon's connection (%s was the last to take it)", src, who);
    return LEAD_LOST;
}

bool leadership_holds_reads(struct leadership *l) { return atomic_load(&l->hold_reads); }

int64_t leadership_unconfirmed_ms(struct leadership *l) {
    return l->unconfirmed_at_ms ? mono_ms() - l->beat_at_ms : 0;
}

int64_t leadership_send_window_ms(struct leadership *l) {
    int64_t t = l->zk ? zk_session_timeout_ms(l->zk) : l->cfg->cluster.session_timeout_ms;
    return t * 2 / 3;
}

void leadership_set_work(struct leadership *l, const char *cloud_status, const char *node_status,
                         const char *session, const char *jobs_json, int alive_work) {
    pthread_mutex_lock(&l->work_mu);
    snprintf(l->cloud_status, sizeof l->cloud_status, "%s", cloud_status);
    snprintf(l->node_status, sizeof l->node_status, "%s", node_status);
    snprintf(l->session, sizeof l->session, "%s", session ? session : "");
    free(l->jobs_json);
    l->jobs_json = jobs_json ? xstrdup(jobs_json) : NULL;
    l->alive_work = alive_work;
    pthread_mutex_unlock(&l->work_mu);
    republish(l);
}

void leadership_publish(struct leadership *l, const char *json) {
    if (!l->zk) return;
    char err[512];
    if (registry_update(l->zk, l->cfg->cluster.name, l->node_id, json, err, sizeof err) < 0)
        log_warn("cluster", "%s", err);
}

int leadership_nodes(struct leadership *l, sbuf *out) {
    if (!l->zk) {
        sbuf e = SBUF_INIT;
        pthread_mutex_lock(&l->work_mu);
        entity(l, l->fence ? "leader" : "standby", &e);
        pthread_mutex_unlock(&l->work_mu);
        sbuf_printf(out, "[{\"node\":");
        json_escape(out, l->node_id, strlen(l->node_id));
        sbuf_printf(out, ",\"entity\":%s}]", e.data);
        sbuf_free(&e);
        return 0;
    }
    return registry_list(l->zk, l->cfg->cluster.name, out, l->err, sizeof l->err);
}

void leadership_release(struct leadership *l) {
    if (!l->fence) return;
    if (l->zk) { /* the election node goes now, not at the session's expiry */
        zlock_leave(l->lock);
        l->lock = NULL;
        l->fence = 0;
        return;
    }
    char err[512];
    if (l->meta) { /* (closing the connection would release it too) */
        sbuf q = SBUF_INIT;
        sbuf_adds(&q, "DO RELEASE_LOCK(");
        lock_name(l, &q);
        sbuf_addc(&q, ')');
        db_exec(l->meta, q.data, err, sizeof err);
        sbuf_free(&q);
    }
    l->fence = 0;
}

void leadership_free(struct leadership *l) {
    zlock_leave(l->lock);
    l->lock = NULL;
    zk_close(l->zk);
    l->zk = NULL;
    for (size_t i = 0; i < l->nretired; i++) zk_close(l->retired[i]);
    free(l->retired);
    l->retired = NULL;
    l->nretired = 0;
    db_close(l->meta);
    l->meta = NULL;
    free(l->jobs_json);
    l->jobs_json = NULL;
    if (l->work_mu_init) pthread_mutex_destroy(&l->work_mu);
    l->work_mu_init = false;
}
