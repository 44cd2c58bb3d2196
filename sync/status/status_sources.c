/* status_sources: each source of an index config fed by several sources
 * (see status_sources.h). */
#include "sync/status/status_sources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "db.h"
#include "json_exact.h"
#include "jsonw.h"
#include "search/search.h"
#include "sync/mapping/mapping.h"
#include "sync/mapping/mapping_source.h"
#include "sync/sources/reader_stats.h"

static char *dup0(const char *s) { return s ? xstrdup(s) : NULL; }

/* one row of sql into row[0..n) (NULL cells kept NULL): 1, 0 none, -1 */
static int row_of(MYSQL *m, const sbuf *q, char **row, int n) {
    char err[256];
    return db_row1(m, q->data, q->len, row, n, err, sizeof err);
}

/* the reader of source `name`: standalone, whether a connection holds its
 * reader lock (sync/node/leadership.c) — a daemon killed frees it at once;
 * with ZooKeeper the metadata cannot tell, the node state's role says */
static void reader_of(const struct ss_config *cfg, MYSQL *meta, struct status_source *s) {
    sbuf q = SBUF_INIT;
    char *row[4] = {0};
    bool zk = cfg->cluster.zookeeper && cfg->cluster.zookeeper[0];
    if (!zk) {
        sbuf_adds(&q, "SELECT IS_USED_LOCK(CONCAT('searchsync:reader:', MD5(");
        db_quote(meta, &q, s->name, strlen(s->name));
        sbuf_adds(&q, "))) IS NOT NULL");
        if (row_of(meta, &q, row, 1) == 1 && row[0]) s->reader = !strcmp(row[0], "1");
        db_row_free(row, 1);
        sbuf_reset(&q);
    }
    /* its reader's node state: who, and whether it reaches its server */
    sbuf_adds(&q, "SELECT node, role, state FROM node_states WHERE source = ");
    db_quote(meta, &q, s->name, strlen(s->name));
    sbuf_adds(&q, " ORDER BY role = 'reader' DESC, updated_at DESC LIMIT 1");
    if (row_of(meta, &q, row, 3) == 1) {
        bool reads = row[1] && !strcmp(row[1], "reader");
        if (zk) s->reader = reads;
        if (reads && s->reader == 1) {
            s->reader_node = dup0(row[0]);
            cJSON *j = row[2] ? json_exact_parse(row[2], strlen(row[2])) : NULL;
            cJSON *up = cJSON_GetObjectItemCaseSensitive(j, "source_up");
            if (cJSON_IsBool(up)) s->source_up = cJSON_IsTrue(up);
            cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "source_error");
            if (cJSON_IsString(e)) s->source_error = xstrdup(e->valuestring);
            cJSON *since = cJSON_GetObjectItemCaseSensitive(j, "source_down_since_ms");
            if (cJSON_IsRaw(since) || cJSON_IsNumber(since)) {
                long long ms = cJSON_IsRaw(since) ? strtoll(since->valuestring, NULL, 10)
                                                  : (long long)since->valuedouble;
                s->down_s = (reader_stats_now_ms() - ms) / 1000;
            }
            cJSON_Delete(j);
        }
    }
    db_row_free(row, 3);
    sbuf_free(&q);
}

/* documents per source behind the alias: one terms aggregation */
static void documents_of(struct search_conn *k, const char *alias, struct status_sources *ss) {
    char path[600];
    snprintf(path, sizeof path, "/%s/_search?request_cache=false", alias);
    static const char body[] = "{\"size\":0,\"track_total_hits\":true,\"aggs\":{\"s\":{\"terms\":"
                               "{\"field\":\"" MP_SOURCE_FIELD "\",\"size\":1000}}}}";
    struct search_resp r;
    search_resp_init(&r);
    if (search_request(k, "POST", path, "application/json", body, sizeof body - 1, &r) == 0 &&
        r.status == 200) {
        cJSON *j = json_exact_parse(r.body.data, r.body.len);
        cJSON *b = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "aggregations"),
                                             "s"),
            "buckets");
        cJSON *it;
        for (size_t i = 0; i < ss->n; i++) ss->v[i].documents = xstrdup("0");
        cJSON_ArrayForEach(it, b) {
            cJSON *key = cJSON_GetObjectItemCaseSensitive(it, "key");
            cJSON *dc = cJSON_GetObjectItemCaseSensitive(it, "doc_count");
            if (!cJSON_IsString(key)) continue;
            for (size_t i = 0; i < ss->n; i++)
                if (!strcmp(ss->v[i].name, key->valuestring)) {
                    free(ss->v[i].documents);
                    ss->v[i].documents = xstrdup(cJSON_IsRaw(dc) ? dc->valuestring : "?");
                }
        }
        cJSON_Delete(j);
    }
    search_resp_free(&r);
}

void status_sources_collect(const struct ss_config *cfg, MYSQL *meta, struct search_conn *k,
                            const struct mp_index *mi, unsigned building,
                            struct status_sources *ss) {
    memset(ss, 0, sizeof *ss);
    ss->v = xcalloc(mi->nsources + 1, sizeof *ss->v);
    ss->n = mi->nsources;
    const char *mapping = config_mapping_name(cfg);
    sbuf q = SBUF_INIT;
    char *idr[1] = {NULL};
    sbuf_adds(&q, "SELECT id FROM index_configs WHERE source = ");
    db_quote(meta, &q, mapping, strlen(mapping));
    sbuf_adds(&q, " AND alias = ");
    db_quote(meta, &q, mi->alias, strlen(mi->alias));
    if (row_of(meta, &q, idr, 1) != 1) idr[0] = NULL;
    sbuf waits = SBUF_INIT;
    for (size_t i = 0; i < ss->n; i++) {
        struct status_source *s = &ss->v[i];
        s->name = xstrdup(mi->sources[i]);
        s->reader = s->source_up = s->part = -1;
        char *row[3] = {0};
        sbuf_reset(&q);
        sbuf_adds(&q, "SELECT position, TIMESTAMPDIFF(SECOND, updated_at, NOW(3)) FROM offsets "
                      "WHERE source = ");
        db_quote(meta, &q, s->name, strlen(s->name));
        if (row_of(meta, &q, row, 2) == 1) {
            s->checkpoint = dup0(row[0]);
            s->checkpoint_age = dup0(row[1]);
        }
        db_row_free(row, 2);
        reader_of(cfg, meta, s);
        if (s->reader == 0 || s->source_up == 0) ss->attention = true;
        if (!building || !idr[0]) continue;
        sbuf_reset(&q);
        sbuf_printf(&q, "SELECT planned, start_position FROM reindex_parts WHERE index_id = %s "
                        "AND version = %u AND source = ", idr[0], building);
        db_quote(meta, &q, s->name, strlen(s->name));
        if (row_of(meta, &q, row, 2) == 1) {
            s->part = row[0] && !strcmp(row[0], "1");
            s->part_start = dup0(row[1]);
        }
        db_row_free(row, 2);
        sbuf_reset(&q);
        sbuf_printf(&q, "SELECT COUNT(*), COALESCE(SUM(status = 'done'), 0), "
                        "COALESCE(SUM(rows_read), 0) FROM jobs WHERE index_id = %s AND "
                        "version = %u AND type = 'index' AND source = ", idr[0], building);
        db_quote(meta, &q, s->name, strlen(s->name));
        if (row_of(meta, &q, row, 3) == 1) {
            s->jobs = strtoull(row[0] ? row[0] : "0", NULL, 10);
            s->jobs_done = strtoull(row[1] ? row[1] : "0", NULL, 10);
            s->rows_read = dup0(row[2]);
        }
        db_row_free(row, 3);
        /* what holds the switch, source by source */
        if (s->part == 0) {
            sbuf_printf(&waits, "%ssource %s: its part is not planned yet", waits.len ? "; " : "",
                        s->name);
            if (s->reader == 0)
                sbuf_adds(&waits, " (no daemon reads it: start `searchsync run` for it)");
            else if (s->source_up == 0)
                sbuf_printf(&waits, " (its server is down for %lld s: %s)", s->down_s,
                            s->source_error ? s->source_error : "?");
            else
                sbuf_adds(&waits, " (its daemon plans it at its next poll)");
        } else if (s->part == 1 && s->jobs_done < s->jobs) {
            sbuf_printf(&waits, "%ssource %s: %llu of %llu job(s) left", waits.len ? "; " : "",
                        s->name, s->jobs - s->jobs_done, s->jobs);
            if (s->reader == 0) sbuf_adds(&waits, " (no daemon reads it)");
            else if (s->source_up == 0) sbuf_adds(&waits, " (its server is down)");
        }
    }
    if (waits.len) ss->waits = sbuf_detach(&waits);
    sbuf_free(&waits);
    free(idr[0]);
    sbuf_free(&q);
    if (k) documents_of(k, mi->alias, ss);
}

void status_sources_free(struct status_sources *ss) {
    if (!ss) return;
    for (size_t i = 0; i < ss->n; i++) {
        struct status_source *s = &ss->v[i];
        free(s->name), free(s->checkpoint), free(s->checkpoint_age), free(s->reader_node);
        free(s->source_error), free(s->documents), free(s->part_start), free(s->rows_read);
    }
    free(ss->v);
    free(ss->waits);
    memset(ss, 0, sizeof *ss);
}

/* a source's reader, in status's words */
static void reader_words(const struct status_source *s, sbuf *out) {
    if (s->source_up == 0)
        sbuf_printf(out, "DOWN for %lld s (%s), ", s->down_s,
                    s->source_error ? s->source_error : "?");
    sbuf_adds(out, s->reader == 1   ? "read"
                   : s->reader == 0 ? "NOT READ (no daemon holds its reader lock)"
                                    : "reader not known");
    if (s->reader_node) sbuf_printf(out, " by %s", s->reader_node);
}

/* its part of the build, in status's words (nothing without a build) */
static void part_words(const struct status_source *s, sbuf *out) {
    if (s->part == 0) sbuf_adds(out, "; its part of the build: not planned");
    else if (s->part == 1)
        sbuf_printf(out, "; its part of the build: %llu/%llu job(s) done, %s rows read",
                    s->jobs_done, s->jobs, s->rows_read ? s->rows_read : "0");
}

void status_sources_text(const struct status_sources *ss, sbuf *out) {
    sbuf_printf(out, "    sources (%zu)\n", ss->n);
    for (size_t i = 0; i < ss->n; i++) {
        const struct status_source *s = &ss->v[i];
        sbuf_printf(out, "      %s  ", s->name);
        reader_words(s, out);
        if (s->checkpoint)
            sbuf_printf(out, ", checkpoint %s (saved %s s ago)", s->checkpoint,
                        s->checkpoint_age ? s->checkpoint_age : "?");
        else
            sbuf_adds(out, ", no checkpoint yet");
        if (s->documents) sbuf_printf(out, ", %s documents", s->documents);
        part_words(s, out);
        sbuf_addc(out, '\n');
    }
    if (ss->waits) sbuf_printf(out, "    the version being built waits for %s\n", ss->waits);
}

void status_sources_build_text(const struct status_sources *ss, sbuf *out) {
    for (size_t i = 0; i < ss->n; i++) {
        const struct status_source *s = &ss->v[i];
        sbuf_printf(out, "  %s  ", s->name);
        reader_words(s, out);
        if (s->part < 0) sbuf_adds(out, "; its part of the build: not known");
        part_words(s, out);
        sbuf_addc(out, '\n');
    }
    if (ss->waits) sbuf_printf(out, "  the version being built waits for %s\n", ss->waits);
}

static void int_or_null(jsonw *w, int v) {
    if (v < 0) jw_null(w);
    else jw_bool(w, v == 1);
}

void status_sources_json(const struct status_sources *ss, jsonw *w) {
    jw_key(w, "sources");
    jw_arr_open(w);
    for (size_t i = 0; i < ss->n; i++) {
        const struct status_source *s = &ss->v[i];
        jw_obj_open(w);
        jw_key(w, "name");
        jw_str(w, s->name);
        jw_key(w, "read");
        int_or_null(w, s->reader);
        jw_key(w, "reader_node");
        jw_str0(w, s->reader_node);
        jw_key(w, "source_up");
        int_or_null(w, s->source_up);
        if (s->source_up == 0) {
            jw_key(w, "source_error");
            jw_str0(w, s->source_error);
            jw_key(w, "down_s");
            jw_int(w, s->down_s);
        }
        jw_key(w, "checkpoint");
        jw_str0(w, s->checkpoint);
        jw_key(w, "checkpoint_age_s");
        jw_uint_text(w, s->checkpoint_age);
        jw_key(w, "documents");
        jw_uint_text(w, s->documents);
        jw_key(w, "part");
        if (s->part < 0) {
            jw_null(w);
        } else {
            jw_obj_open(w);
            jw_key(w, "planned");
            jw_bool(w, s->part == 1);
            jw_key(w, "start_position");
            jw_str0(w, s->part_start);
            jw_key(w, "jobs");
            jw_uint(w, s->jobs);
            jw_key(w, "jobs_done");
            jw_uint(w, s->jobs_done);
            jw_key(w, "rows_read");
            jw_uint_text(w, s->rows_read);
            jw_obj_close(w);
        }
        jw_obj_close(w);
    }
    jw_arr_close(w);
    jw_key(w, "waits_for");
    jw_str0(w, ss->waits);
}
