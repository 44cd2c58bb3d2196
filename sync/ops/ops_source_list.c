/* ops_source_list: every source the metadata schema knows, for `searchsync
 * source list` and GET /api/v1/sources (see ops_sources.h): the registry's
 * (where they are), the checkpoints' and the node states' (who reads them,
 * whether their server answers, their lag), and the index configs' (what
 * they feed). Read from the metadata alone: another source's server is
 * asked nothing (its credentials are its own process's). */
#include "sync/ops/ops_sources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "db.h"
#include "json_exact.h"
#include "jsonw.h"

static char *dup0(const char *s) { return s ? xstrdup(s) : NULL; }

static struct source_info *find_or_add(struct source_list *l, const char *name) {
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].name, name)) return &l->v[i];
    l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
    struct source_info *s = &l->v[l->n++];
    memset(s, 0, sizeof *s);
    s->name = xstrdup(name);
    s->reader = s->source_up = -1;
    s->index_configs = xstrdup("");
    return s;
}

static void add_index(struct source_info *s, const char *alias) {
    size_t n = strlen(s->index_configs);
    s->index_configs = xrealloc(s->index_configs, n + strlen(alias) + 2);
    sprintf(s->index_configs + n, "%s%s", n ? "," : "", alias);
}

static int each_row(MYSQL *m, const char *sql, void (*fn)(struct source_list *, MYSQL_ROW),
                    struct source_list *l, struct ops_err *e) {
    char err[1024];
    MYSQL_RES *r = db_query(m, sql, 0, err, sizeof err);
    if (!r) {
        ops_fail(e, OPS_FAILED, OPS_AT_METADATA, "reading the sources: %s", err);
        return -1;
    }
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(r)))
        if (row[0]) fn(l, row);
    mysql_free_result(r);
    return 0;
}

static void from_registry(struct source_list *l, MYSQL_ROW row) {
    struct source_info *s = find_or_add(l, row[0]);
    s->registered = true;
    s->mapping = dup0(row[1]);
    s->host = dup0(row[2]);
    s->port = row[3] ? (unsigned)strtoul(row[3], NULL, 10) : 0;
    s->user = dup0(row[4]);
    s->ssl_mode = dup0(row[5]);
    s->config_path = dup0(row[6]);
    s->admin_listen = dup0(row[7]);
    s->updated_at = dup0(row[8]);
    s->server_id = row[9] ? (unsigned)strtoul(row[9], NULL, 10) : 0;
}

static void from_checkpoint(struct source_list *l, MYSQL_ROW row) {
    struct source_info *s = find_or_add(l, row[0]);
    s->checkpoint = dup0(row[1]);
    s->checkpoint_age_s = dup0(row[2]);
}

/* the node that reads it (its freshest reader row), else its freshest row */
static void from_node_state(struct source_list *l, MYSQL_ROW row) {
    struct source_info *s = find_or_add(l, row[0]);
    if (s->reader_node || strcmp(row[2] ? row[2] : "", "reader")) {
        if (s->reader < 0 && !s->reader_node) s->reader = 0; /* standbys only */
        return;
    }
    /* a row is rewritten only when it changes (an idle reader's stays as
     * it is), so its age says nothing: standalone the reader lock decides
     * below whether its daemon still runs; with ZooKeeper the role is what
     * the node said last (as `searchsync status` reads it) */
    s->reader = 1;
    s->reader_node = dup0(row[1]);
    cJSON *j = row[3] ? json_exact_parse(row[3], strlen(row[3])) : NULL;
    cJSON *up = cJSON_GetObjectItemCaseSensitive(j, "source_up");
    if (cJSON_IsBool(up)) s->source_up = cJSON_IsTrue(up);
    cJSON *er = cJSON_GetObjectItemCaseSensitive(j, "source_error");
    if (cJSON_IsString(er)) s->source_error = xstrdup(er->valuestring);
    cJSON *lag = cJSON_GetObjectItemCaseSensitive(j, "lag_s");
    if (cJSON_IsRaw(lag)) s->lag_s = xstrdup(lag->valuestring);
    else if (cJSON_IsNumber(lag)) {
        char b[32];
        snprintf(b, sizeof b, "%.0f", lag->valuedouble);
        s->lag_s = xstrdup(b);
    }
    cJSON_Delete(j);
}

/* an index config: alias, mapping, sources (NULL: the source named like the
 * mapping) */
static void from_index(struct source_list *l, MYSQL_ROW row) {
    const char *alias = row[0], *mapping = row[1], *list = row[2];
    if (!mapping) return;
    if (!list || !*list) {
        struct source_info *s = find_or_add(l, mapping);
        if (!s->mapping) s->mapping = xstrdup(mapping);
        add_index(s, alias);
        return;
    }
    for (const char *p = list; *p;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), p);
        if (*name) {
            struct source_info *s = find_or_add(l, name);
            if (!s->mapping) s->mapping = xstrdup(mapping);
            add_index(s, alias);
        }
        p += n + (c ? 1 : 0);
    }
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const struct source_info *)a)->name, ((const struct source_info *)b)->name);
}

enum ops_status ops_source_list(const struct ops_env *env, struct source_list *out,
                                struct ops_err *e) {
    memset(out, 0, sizeof *out);
    bool owned;
    MYSQL *meta = ops_meta(env, &owned, e);
    if (!meta) return e->st;
    int rc = each_row(meta, "SELECT name, mapping, host, port, user, ssl_mode, config_path, "
                            "admin_listen, DATE_FORMAT(updated_at, '%Y-%m-%dT%H:%i:%sZ'), "
                            "server_id FROM sources WHERE host IS NOT NULL", from_registry, out, e);
    if (!rc)
        rc = each_row(meta, "SELECT source, position, TIMESTAMPDIFF(SECOND, updated_at, NOW(3)) "
                            "FROM offsets", from_checkpoint, out, e);
    if (!rc)
        rc = each_row(meta, "SELECT source, node, role, state FROM node_states ORDER BY "
                            "role = 'reader' DESC, updated_at DESC", from_node_state, out, e);
    if (!rc)
        rc = each_row(meta, "SELECT alias, source, sources FROM index_configs ORDER BY alias",
                      from_index, out, e);
    /* standalone, the reader lock says at once whether a daemon reads it (a
     * daemon killed frees it); with ZooKeeper the node state's role says */
    bool zk = env->cfg->cluster.zookeeper && *env->cfg->cluster.zookeeper;
    for (size_t i = 0; !rc && !zk && i < out->n; i++) {
        struct source_info *s = &out->v[i];
        sbuf q = SBUF_INIT;
        sbuf_adds(&q, "SELECT IS_USED_LOCK(CONCAT('searchsync:reader:', MD5(");
        db_quote(meta, &q, s->name, strlen(s->name));
        sbuf_adds(&q, "))) IS NOT NULL");
        char err[256];
        char *v = db_scalar(meta, q.data, err, sizeof err);
        if (v) s->reader = !strcmp(v, "1");
        if (s->reader == 0) { /* its node state is a daemon gone */
            free(s->reader_node);
            s->reader_node = NULL;
            s->source_up = -1;
            free(s->lag_s);
            s->lag_s = NULL;
        }
        free(v);
        sbuf_free(&q);
    }
    ops_meta_done(meta, owned);
    if (rc) {
        source_list_free(out);
        return e->st;
    }
    if (out->n) qsort(out->v, out->n, sizeof *out->v, by_name);
    return OPS_OK;
}

void source_list_free(struct source_list *l) {
    for (size_t i = 0; l && i < l->n; i++) {
        struct source_info *s = &l->v[i];
        free(s->name), free(s->mapping), free(s->host), free(s->user), free(s->ssl_mode);
        free(s->config_path), free(s->admin_listen), free(s->updated_at), free(s->reader_node);
        free(s->source_error), free(s->lag_s), free(s->checkpoint), free(s->checkpoint_age_s);
        free(s->index_configs);
    }
    if (l) free(l->v), memset(l, 0, sizeof *l);
}

static void str_or_null(jsonw *w, const char *k, const char *v) {
    jw_key(w, k);
    jw_str0(w, v);
}

void sources_json_array(const struct source_list *l, jsonw *w) {
    jw_arr_open(w);
    for (size_t i = 0; i < l->n; i++) {
        const struct source_info *s = &l->v[i];
        jw_obj_open(w);
        str_or_null(w, "name", s->name);
        jw_key(w, "registered");
        jw_bool(w, s->registered);
        str_or_null(w, "mapping", s->mapping);
        str_or_null(w, "host", s->host);
        jw_key(w, "port");
        if (s->port) jw_uint(w, s->port);
        else jw_null(w);
        str_or_null(w, "user", s->user);
        str_or_null(w, "ssl_mode", s->ssl_mode);
        jw_key(w, "server_id");
        if (s->server_id) jw_uint(w, s->server_id);
        else jw_null(w);
        str_or_null(w, "config_path", s->config_path);
        str_or_null(w, "admin_listen", s->admin_listen);
        str_or_null(w, "updated_at", s->updated_at);
        /* write-only: whether one is set is all that is said (a registered
         * source always has one, in its NAME.password) */
        jw_key(w, "password");
        if (s->registered) jw_str(w, "set");
        else jw_null(w);
        jw_key(w, "read");
        if (s->reader < 0) jw_null(w);
        else jw_bool(w, s->reader == 1);
        str_or_null(w, "reader_node", s->reader_node);
        jw_key(w, "source_up");
        if (s->source_up < 0) jw_null(w);
        else jw_bool(w, s->source_up == 1);
        str_or_null(w, "source_error", s->source_error);
        jw_key(w, "lag_s");
        jw_uint_text(w, s->lag_s);
        str_or_null(w, "checkpoint", s->checkpoint);
        jw_key(w, "checkpoint_age_s");
        jw_uint_text(w, s->checkpoint_age_s);
        jw_key(w, "index_configs");
        jw_arr_open(w);
        for (const char *p = s->index_configs; *p;) {
            const char *c = strchr(p, ',');
            size_t n = c ? (size_t)(c - p) : strlen(p);
            char a[300];
            snprintf(a, sizeof a, "%.*s", (int)(n < sizeof a ? n : sizeof a - 1), p);
            jw_str(w, a);
            p += n + (c ? 1 : 0);
        }
        jw_arr_close(w);
        jw_obj_close(w);
    }
    jw_arr_close(w);
}
