/* rebalance: the coordinator's protocol and the state znode (see
 * rebalance.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include "json_exact.h"
#include "jsonw.h"
#include "log.h"
#include "monotime.h"
#include "rebalance.h"
#include "zlock.h"

#define ZNODE_MAX (1 << 20)

static void state_path(char *out, size_t n, const char *cluster, const char *source) {
    snprintf(out, n, "/searchsync/%s/rebalance/%s", cluster, source);
}

static void copy_str(char *dst, size_t n, const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    snprintf(dst, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

void rebalance_state_free(struct rebalance_state *st) {
    for (size_t i = 0; i < st->nnodes; i++) free(st->nodes[i]);
    free(st->nodes);
    memset(st, 0, sizeof *st);
}

bool rebalance_state_has(const struct rebalance_state *st, const char *node) {
    for (size_t i = 0; i < st->nnodes; i++)
        if (!strcmp(st->nodes[i], node)) return true;
    return false;
}

int rebalance_state_read(struct zk *z, const char *cluster, const char *source,
                         struct rebalance_state *st, watcher_fn watch, void *watch_ctx,
                         char *err, size_t errlen) {
    memset(st, 0, sizeof *st);
    char path[900];
    state_path(path, sizeof path, cluster, source);
    char *buf = xmalloc(ZNODE_MAX); /* (not zeroed: zoo_get says the length) */
    int len = ZNODE_MAX - 1;
    struct Stat zs;
    int rc = watch ? zoo_wget(zk_handle(z), path, watch, watch_ctx, buf, &len, &zs)
                   : zoo_get(zk_handle(z), path, 0, buf, &len, &zs);
    if (rc == ZNONODE) {
        free(buf);
        /* (a watch on its creation: the first rebalance wakes the node too) */
        if (watch) zoo_wexists(zk_handle(z), path, watch, watch_ctx, &zs);
        return 0;
    }
    if (rc != ZOK) {
        free(buf);
        return errf(err, errlen, "ZooKeeper: reading %s: %s", path, zerror(rc));
    }
    cJSON *j = len > 0 ? json_exact_parse(buf, (size_t)len) : NULL;
    free(buf);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return 0; /* empty or foreign: as if none ran */
    }
    copy_str(st->session, sizeof st->session, j, "session");
    copy_str(st->phase, sizeof st->phase, j, "phase");
    copy_str(st->by, sizeof st->by, j, "by");
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(j, "nodes"), *it;
    cJSON_ArrayForEach(it, nodes) {
        if (!cJSON_IsString(it)) continue;
        st->nodes = xrealloc(st->nodes, (st->nnodes + 1) * sizeof *st->nodes);
        st->nodes[st->nnodes++] = xstrdup(it->valuestring);
    }
    cJSON_Delete(j);
    return 1;
}

static int by_id(const void *a, const void *b) {
    return strcmp(((const struct rebalance_node *)a)->id, ((const struct rebalance_node *)b)->id);
}

int rebalance_nodes(struct zk *z, const char *cluster, const char *source,
                    struct rebalance_node **out, size_t *n, char *err, size_t errlen) {
    *out = NULL;
    *n = 0;
    char dir[600];
    snprintf(dir, sizeof dir, "/searchsync/%s/nodes", cluster);
    struct String_vector kids = {0};
    int rc = zoo_get_children(zk_handle(z), dir, 0, &kids);
    if (rc == ZNONODE) return 0;
    if (rc != ZOK) return errf(err, errlen, "ZooKeeper: listing %s: %s", dir, zerror(rc));
    char *buf = xmalloc(ZNODE_MAX); /* (not zeroed: zoo_get says the length) */
    for (int i = 0; i < kids.count; i++) {
        char path[900];
        snprintf(path, sizeof path, "%s/%s", dir, kids.data[i]);
        int len = ZNODE_MAX - 1;
        struct Stat st;
        if (zoo_get(zk_handle(z), path, 0, buf, &len, &st) != ZOK || len <= 0) continue;
        cJSON *e = json_exact_parse(buf, (size_t)len);
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(e, "source");
        if (cJSON_IsString(src) && !strcmp(src->valuestring, source)) {
            *out = xrealloc(*out, (*n + 1) * sizeof **out);
            struct rebalance_node *rn = &(*out)[(*n)++];
            snprintf(rn->id, sizeof rn->id, "%s", kids.data[i]);
            copy_str(rn->node_status, sizeof rn->node_status, e, "node_status");
            copy_str(rn->session, sizeof rn->session, e, "session_id");
        }
        cJSON_Delete(e);
    }
    free(buf);
    deallocate_String_vector(&kids);
    if (*n) qsort(*out, *n, sizeof **out, by_id);
    return 0;
}

static int state_write(struct zk *z, const char *cluster, const char *source, const char *session,
                       const char *phase, const char *me, const char *const *nodes, size_t n,
                       const char *assign, char *err, size_t errlen) {
    char dir[600], path[900];
    snprintf(dir, sizeof dir, "/searchsync/%s/rebalance", cluster);
    if (zk_ensure_path(z, dir, err, errlen) < 0) return -1;
    state_path(path, sizeof path, cluster, source);
    sbuf b = SBUF_INIT;
    jsonw w;
    jw_init(&w, &b);
    jw_obj_open(&w);
    jw_key(&w, "session");
    jw_str(&w, session);
    jw_key(&w, "phase");
    jw_str(&w, phase);
    jw_key(&w, "by");
    jw_str(&w, me);
    jw_key(&w, "at");
    jw_int(&w, (int64_t)time(NULL));
    jw_key(&w, "nodes");
    jw_arr_open(&w);
    for (size_t i = 0; i < n; i++) jw_str(&w, nodes[i]);
    jw_arr_close(&w);
    if (assign) {
        jw_key(&w, "assign");
        jw_raw(&w, assign, strlen(assign));
    }
    jw_obj_close(&w);
    int rc = zoo_set(zk_handle(z), path, b.data, (int)b.len, -1);
    if (rc == ZNONODE)
        rc = zoo_create(zk_handle(z), path, b.data, (int)b.len, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (rc == ZNODEEXISTS) rc = zoo_set(zk_handle(z), path, b.data, (int)b.len, -1);
    sbuf_free(&b);
    if (rc != ZOK) return errf(err, errlen, "ZooKeeper: writing %s: %s", path, zerror(rc));
    return 0;
}

/* Step 2's wait: which of nodes answered CLEAN_OK for session (ok[i]).
 * Nodes that left the registry count as answered-and-gone (gone[i]). */
static int wait_clean_ok(struct zk *z, const char *cluster, const char *source,
                         const char *session, char **nodes, size_t n, bool *ok, bool *gone,
                         int timeout_ms, volatile sig_atomic_t *stop, char *err, size_t errlen) {
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (stop && *stop) return 0;
        struct rebalance_node *rn = NULL;
        size_t m = 0;
        if (rebalance_nodes(z, cluster, source, &rn, &m, err, errlen) < 0) return -1;
        size_t waiting = 0;
        for (size_t i = 0; i < n; i++) {
            const struct rebalance_node *found = NULL;
            for (size_t k = 0; k < m; k++)
                if (!strcmp(rn[k].id, nodes[i])) found = &rn[k];
            gone[i] = !found;
            ok[i] = found && !strcmp(found->node_status, "CLEAN_OK") &&
                    !strcmp(found->session, session);
            waiting += !ok[i] && !gone[i];
        }
        free(rn);
        if (!waiting) return 1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long el = (long)(now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
        if (el >= timeout_ms) return 1; /* the silent ones get nothing */
        sleep_ms(25);
    }
}

int rebalance_coordinate(struct zk *z, const char *cluster, const char *source, const char *me,
                         int clean_timeout_ms, volatile sig_atomic_t *stop,
                         rebalance_assign_fn assign, void *ud, sbuf *report, char *err,
                         size_t errlen) {
    char dir[600];
    snprintf(dir, sizeof dir, "/searchsync/%s/locks/rebalance", cluster);
    struct zlock *l = zlock_enter(z, dir, me, err, errlen);
    if (!l) return -1;
    int64_t fence = 0;
    int rc = zlock_wait(l, stop, &fence, err, errlen);
    if (rc <= 0) {
        zlock_leave(l);
        return rc;
    }
    char session[32];
    snprintf(session, sizeof session, "%lld", (long long)fence);
    struct rebalance_node *rn = NULL;
    size_t n = 0;
    char **ids = NULL;
    bool *ok = NULL, *gone = NULL;
    sbuf as = SBUF_INIT;
    rc = -1;
    if (rebalance_nodes(z, cluster, source, &rn, &n, err, errlen) < 0) goto out;
    ids = xcalloc(n + 1, sizeof *ids);
    for (size_t i = 0; i < n; i++) ids[i] = rn[i].id;
    log_info("cluster", "rebalance %s of source %s: asking %zu node(s) to stop their jobs",
             session, source, n);
    if (state_write(z, cluster, source, session, "CLEAN", me, (const char *const *)ids, n, NULL,
                    err, errlen) < 0)
        goto out;
    ok = xcalloc(n + 1, sizeof *ok);
    gone = xcalloc(n + 1, sizeof *gone);
    rc = wait_clean_ok(z, cluster, source, session, ids, n, ok, gone, clean_timeout_ms, stop,
                       err, errlen);
    if (rc <= 0) goto out;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (ok[i]) ids[k++] = rn[i].id;
        else if (!gone[i])
            log_warn("cluster", "rebalance %s: node %s did not stop its jobs within %d ms: it "
                     "gets none this time (what it still writes is fenced by the session)",
                     session, rn[i].id, clean_timeout_ms);
    }
    if (assign(ud, session, (const char *const *)ids, k, &as, err, errlen) < 0) {
        rc = -1;
        goto out;
    }
    if (state_write(z, cluster, source, session, "INIT", me, (const char *const *)ids, k,
                    as.len ? as.data : "{}", err, errlen) < 0) {
        rc = -1;
        goto out;
    }
    if (report) sbuf_printf(report, "%s", as.len ? as.data : "{}");
    log_info("cluster", "rebalance %s of source %s: jobs assigned %s", session, source,
             as.len ? as.data : "{}");
    rc = 1;
out:
    sbuf_free(&as);
    free(ok);
    free(gone);
    free(ids);
    free(rn);
    zlock_leave(l);
    return rc;
}

int cluster_live_nodes(const struct ss_config *cfg) {
    if (!cfg->cluster.zookeeper || !cfg->cluster.zookeeper[0]) return 0;
    char err[512];
    struct zk *z = zk_open(cfg->cluster.zookeeper, cfg->cluster.session_timeout_ms, 5000, err,
                           sizeof err);
    if (!z) {
        log_warn("cluster", "%s: the buckets are not raised to the live node count", err);
        return 0;
    }
    struct rebalance_node *rn = NULL;
    size_t n = 0;
    if (rebalance_nodes(z, cfg->cluster.name, cfg->source.name, &rn, &n, err, sizeof err) < 0) {
        log_warn("cluster", "%s: the buckets are not raised to the live node count", err);
        n = 0;
    }
    free(rn);
    zk_close(z);
    return (int)n;
}
