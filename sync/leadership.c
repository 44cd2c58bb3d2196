/* leadership: which daemon reads a source's binlog (see leadership.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deliver/store.h"
#include "jsonw.h"
#include "leadership.h"
#include "log.h"
#include "rebalance/registry.h"
#include "rebalance/zlock.h"

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pause_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void entity(struct leadership *l, const char *reader, sbuf *out) {
    jsonw w;
    jw_init(&w, out);
    jw_obj_open(&w);
    jw_key(&w, "node_id");
    jw_str(&w, l->node_id);
    jw_key(&w, "cloud_status");
    jw_str(&w, "NORMAL");
    jw_key(&w, "node_status");
    jw_str(&w, "INIT");
    jw_key(&w, "session_id");
    jw_str(&w, "");
    jw_key(&w, "job_type");
    jw_str(&w, "index");
    jw_key(&w, "jobs");
    jw_arr_open(&w);
    jw_arr_close(&w);
    jw_key(&w, "alive_work");
    jw_int(&w, 0);
    jw_key(&w, "source");
    jw_str(&w, l->cfg->source.name);
    jw_key(&w, "reader");
    jw_str(&w, reader);
    jw_key(&w, "pid");
    jw_int(&w, (int64_t)getpid());
    jw_obj_close(&w);
}

int leadership_init(struct leadership *l, const struct ss_config *cfg, bool no_wait) {
    memset(l, 0, sizeof *l);
    l->cfg = cfg;
    l->no_wait = no_wait;
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
    entity(l, "standby", &e);
    int rc = registry_register(l->zk, cfg->cluster.name, l->node_id, e.data, l->err,
                               sizeof l->err);
    sbuf_free(&e);
    if (rc == 0)
        log_info("cluster", "node %s registered in cluster %s (ZooKeeper %s, session %d ms)",
                 l->node_id, cfg->cluster.name, cfg->cluster.zookeeper,
                 zk_session_timeout_ms(l->zk));
    return rc;
}

/* ---------- standalone: the lock row ---------- */

/* The row's owner is a daemon of this host ("<host>-<pid>", the default
 * node id) whose process is gone (SIGKILL, a crash): no need to wait for its
 * heartbeat to go stale. */
static bool owner_dead_here(const char *owner) {
    char host[200] = "";
    if (gethostname(host, sizeof host - 1) != 0 || !host[0]) return false;
    size_t hl = strlen(host);
    if (strncmp(owner, host, hl) != 0 || owner[hl] != '-') return false;
    char *end = NULL;
    long pid = strtol(owner + hl + 1, &end, 10);
    if (!end || *end || pid <= 0 || pid == (long)getpid()) return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* 1 this node holds the row now (taken, or still its own), 0 another node's
 * row is fresh (*who, *age_ms), -1 error */
static int lock_row_try(struct leadership *l, char *who, size_t wholen, long long *age_ms) {
    if (db_ensure(&l->meta, &l->metap, l->err, sizeof l->err) < 0) return -1;
    const char *src = l->cfg->source.name;
    sbuf q = SBUF_INIT;
    int rc = -1;
    if (db_exec(l->meta, "START TRANSACTION", l->err, sizeof l->err) < 0) goto out;
    sbuf_adds(&q, "SELECT owner, fence, TIMESTAMPDIFF(MICROSECOND, heartbeat_at, NOW(3)) DIV "
                  "1000 FROM reader_locks WHERE source = ");
    db_quote(l->meta, &q, src, strlen(src));
    sbuf_adds(&q, " FOR UPDATE");
    MYSQL_RES *res = db_query(l->meta, q.data, q.len, l->err, sizeof l->err);
    if (!res) goto rollback;
    MYSQL_ROW row = mysql_fetch_row(res);
    char owner[256] = "";
    unsigned long long fence = 0;
    long long age = 0;
    bool exists = row != NULL;
    if (row) {
        snprintf(owner, sizeof owner, "%s", row[0] ? row[0] : "");
        fence = strtoull(row[1] ? row[1] : "0", NULL, 10);
        age = atoll(row[2] ? row[2] : "0");
    }
    mysql_free_result(res);
    bool mine = exists && !strcmp(owner, l->node_id);
    bool stale = exists && (age >= l->cfg->cluster.session_timeout_ms || owner_dead_here(owner));
    sbuf_reset(&q);
    if (!exists) {
        fence = 1;
        sbuf_adds(&q, "INSERT INTO reader_locks (source, owner, fence, heartbeat_at) VALUES (");
        db_quote(l->meta, &q, src, strlen(src));
        sbuf_addc(&q, ',');
        db_quote(l->meta, &q, l->node_id, strlen(l->node_id));
        sbuf_adds(&q, ", 1, NOW(3))");
    } else if (mine || stale) {
        if (!mine) {
            fence++;
            log_warn("cluster", "source %s: node %s stopped beating its reader lock %lld ms ago%s: "
                     "this node takes the binlog over", src, owner, age,
                     age < l->cfg->cluster.session_timeout_ms ? " (its process is gone)" : "");
        }
        sbuf_printf(&q, "UPDATE reader_locks SET owner = ");
        db_quote(l->meta, &q, l->node_id, strlen(l->node_id));
        sbuf_printf(&q, ", fence = %llu, heartbeat_at = NOW(3) WHERE source = ", fence);
        db_quote(l->meta, &q, src, strlen(src));
    } else {
        snprintf(who, wholen, "%s", owner);
        *age_ms = age;
        rc = 0;
        goto rollback;
    }
    if (db_exec(l->meta, q.data, l->err, sizeof l->err) < 0 ||
        db_exec(l->meta, "COMMIT", l->err, sizeof l->err) < 0)
        goto rollback;
    l->fence = fence;
    l->beat_at_ms = mono_ms();
    rc = 1;
    goto out;
rollback:
    db_exec(l->meta, "ROLLBACK", (char[64]){0}, 64);
out:
    sbuf_free(&q);
    return rc;
}

/* the heartbeat: lands only while the row is still this node's, with its
 * fence. 1 still held, 0 lost, -1 not known (error) */
static int lock_row_beat(struct leadership *l) {
    char err[512];
    if (db_ensure(&l->meta, &l->metap, err, sizeof err) < 0) return -1;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "UPDATE reader_locks SET heartbeat_at = NOW(3) WHERE source = ");
    db_quote(l->meta, &q, l->cfg->source.name, strlen(l->cfg->source.name));
    sbuf_adds(&q, " AND owner = ");
    db_quote(l->meta, &q, l->node_id, strlen(l->node_id));
    sbuf_printf(&q, " AND fence = %llu", (unsigned long long)l->fence);
    long long n = db_exec_rows(l->meta, q.data, err, sizeof err);
    sbuf_free(&q);
    if (n < 0) return -1;
    /* 0 rows: not ours, or a beat within the same millisecond (same value) */
    if (n == 0) {
        sbuf_adds(&q, "SELECT COUNT(*) FROM reader_locks WHERE source = ");
        db_quote(l->meta, &q, l->cfg->source.name, strlen(l->cfg->source.name));
        sbuf_adds(&q, " AND owner = ");
        db_quote(l->meta, &q, l->node_id, strlen(l->node_id));
        sbuf_printf(&q, " AND fence = %llu", (unsigned long long)l->fence);
        char *v = db_scalar(l->meta, q.data, err, sizeof err);
        sbuf_free(&q);
        int held = v && atoi(v) > 0;
        free(v);
        if (!v) return -1;
        if (!held) return 0;
    }
    l->beat_at_ms = mono_ms();
    return 1;
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

int leadership_acquire(struct leadership *l, volatile sig_atomic_t *stop) {
    const char *src = l->cfg->source.name;
    if (l->zk) {
        char dir[600];
        snprintf(dir, sizeof dir, "/searchsync/%s/leaders/%s", l->cfg->cluster.name, src);
        if (!l->lock) l->lock = zlock_enter(l->zk, dir, l->node_id, l->err, sizeof l->err);
        if (!l->lock) return -1;
        int64_t fence = 0;
        int rc = zlock_wait(l->lock, stop, &fence, l->err, sizeof l->err);
        if (rc <= 0) return rc;
        l->fence = (uint64_t)fence;
        if (claim(l) < 0) return -1;
        sbuf e = SBUF_INIT;
        entity(l, "leader", &e);
        leadership_publish(l, e.data);
        sbuf_free(&e);
        log_info("cluster", "node %s reads the binlog of source %s (fencing token %llu)",
                 l->node_id, src, (unsigned long long)l->fence);
        return 1;
    }
    char said[256] = "";
    for (;;) {
        if (stop && *stop) return 0;
        char who[256] = "";
        long long age = 0;
        int rc = lock_row_try(l, who, sizeof who, &age);
        if (rc < 0) return -1;
        if (rc == 1) {
            if (claim(l) < 0) return -1;
            log_info("run", "this daemon (%s) reads the binlog of source %s (reader lock, "
                     "fencing token %llu)", l->node_id, src, (unsigned long long)l->fence);
            return 1;
        }
        if (l->no_wait)
            return errf(l->err, sizeof l->err, "source %s is read by another daemon (%s, last "
                        "heartbeat %lld ms ago): only one daemon may read a source; stop it "
                        "first, or start this one without --no-wait to stand by", src, who, age);
        if (strcmp(said, who)) {
            log_warn("run", "source %s is read by another daemon (%s, last heartbeat %lld ms "
                     "ago): this one stands by and takes over if that one stops beating for "
                     "[cluster] session_timeout_ms (%d ms)", src, who, age,
                     l->cfg->cluster.session_timeout_ms);
            snprintf(said, sizeof said, "%s", who);
        }
        pause_ms(l->cfg->cluster.session_timeout_ms / 4 > 2000 ? 2000
                                                               : l->cfg->cluster.session_timeout_ms / 4);
    }
}

bool leadership_check(struct leadership *l) {
    if (!l->fence) return false;
    if (l->zk) {
        if (zlock_held(l->lock)) return true;
        snprintf(l->err, sizeof l->err, "the ZooKeeper session that made this node the reader "
                 "of source %s is lost (or its election node is gone)", l->cfg->source.name);
        return false;
    }
    int64_t now = mono_ms();
    int every = l->cfg->cluster.session_timeout_ms / 3;
    if (now - l->beat_at_ms < every) return true;
    int rc = lock_row_beat(l);
    if (rc == 1) return true;
    if (rc == 0) {
        snprintf(l->err, sizeof l->err, "the reader lock of source %s was taken over by another "
                 "daemon", l->cfg->source.name);
        return false;
    }
    /* not known: lost only once it could have gone stale for the others */
    if (now - l->beat_at_ms < l->cfg->cluster.session_timeout_ms * 2 / 3) return true;
    snprintf(l->err, sizeof l->err, "the reader lock of source %s could not be renewed for %lld "
             "ms (the metadata server is unreachable): another daemon may take it over",
             l->cfg->source.name, (long long)(now - l->beat_at_ms));
    return false;
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
        entity(l, l->fence ? "leader" : "standby", &e);
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
    if (db_ensure(&l->meta, &l->metap, err, sizeof err) < 0) return;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "DELETE FROM reader_locks WHERE source = ");
    db_quote(l->meta, &q, l->cfg->source.name, strlen(l->cfg->source.name));
    sbuf_adds(&q, " AND owner = ");
    db_quote(l->meta, &q, l->node_id, strlen(l->node_id));
    sbuf_printf(&q, " AND fence = %llu", (unsigned long long)l->fence);
    if (db_exec(l->meta, q.data, err, sizeof err) < 0)
        log_warn("run", "the reader lock of source %s was not released (%s): another daemon "
                 "takes it over once its heartbeat is stale", l->cfg->source.name, err);
    sbuf_free(&q);
    l->fence = 0;
}

void leadership_free(struct leadership *l) {
    zlock_leave(l->lock);
    l->lock = NULL;
    zk_close(l->zk);
    l->zk = NULL;
    db_close(l->meta);
    l->meta = NULL;
}
