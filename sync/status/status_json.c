/* status_json: a source's status (struct ss_status, gathered by
 * sync/status/status.c) as the JSON of GET /api/v1/status and
 * `searchsync status --json`: the metadata server, the source and its
 * checkpoint, each index config in the metadata and the engine, the
 * metadata's tables of jobs and runs, each daemon's live state, the errors
 * met while gathering. */
#include "sync/status/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "json_exact.h"
#include "jsonw.h"
#include "sbuf.h"
#include "sync/status/status_sources.h"

/* rows as objects: names[c] is column c's key; numeric[c] writes it as a number */
static void rows_json(jsonw *w, const struct status_rows *t, const char *const *names,
                      const bool *numeric) {
    jw_arr_open(w);
    for (size_t r = 0; r < t->nrows; r++) {
        jw_obj_open(w);
        for (size_t c = 0; c < t->ncols; c++) {
            jw_key(w, names[c]);
            if (numeric[c]) jw_uint_text(w, STATUS_CELL(t, r, c));
            else jw_str0(w, STATUS_CELL(t, r, c));
        }
        jw_obj_close(w);
    }
    jw_arr_close(w);
}

/* "shards": over shard tables, the pattern and the shards read into the
 * live version; null otherwise */
static void shards_json(jsonw *w, const struct status_index *ix) {
    jw_key(w, "shards");
    if (!ix->pattern) {
        jw_null(w);
        return;
    }
    jw_obj_open(w);
    jw_key(w, "pattern");
    jw_str(w, ix->pattern);
    jw_key(w, "read");
    jw_arr_open(w);
    for (size_t k = 0; k < ix->nshards; k++) jw_str(w, ix->shards[k]);
    jw_arr_close(w);
    jw_obj_close(w);
}

/* the metadata server: where, and whether it answered */
static void metadata_json(jsonw *w, const struct ss_status *st) {
    jw_key(w, "metadata");
    jw_obj_open(w);
    jw_key(w, "host");
    jw_str0(w, st->meta_host);
    jw_key(w, "port");
    jw_int(w, st->meta_port);
    jw_key(w, "database");
    jw_str0(w, st->meta_database);
    jw_key(w, "reachable");
    jw_bool(w, st->meta_reached);
    if (st->meta_err) {
        jw_key(w, "error");
        jw_str(w, st->meta_err);
    }
    jw_obj_close(w);
}

/* the source: where, its checkpoint against its binlog's end */
static void source_json(jsonw *w, const struct ss_status *st) {
    jw_key(w, "source");
    jw_obj_open(w);
    jw_key(w, "name");
    jw_str0(w, st->source_name);
    jw_key(w, "host");
    jw_str0(w, st->source_host);
    jw_key(w, "port");
    jw_int(w, st->source_port);
    jw_key(w, "checkpoint");
    jw_str0(w, st->checkpoint);
    jw_key(w, "checkpoint_age_s");
    jw_uint_text(w, st->checkpoint_age);
    if (!st->checkpoint && st->meta_reached) { /* (unknown, not absent, without the metadata) */
        jw_key(w, "start");
        jw_str0(w, st->start);
    }
    jw_key(w, "reachable");
    jw_bool(w, st->source_reached);
    jw_key(w, "binlog_end");
    jw_str0(w, st->binlog_end);
    jw_key(w, "bytes_behind");
    if (st->bytes_behind >= 0) jw_int(w, st->bytes_behind);
    else jw_null(w);
    jw_key(w, "caught_up");
    jw_bool(w, st->caught_up);
    if (st->meta_reached) { /* (unknown, not absent, without the metadata) */
        jw_key(w, "binlog_skipped");
        if (st->skipped_at) {
            jw_obj_open(w);
            jw_key(w, "at");
            jw_str(w, st->skipped_at);
            jw_key(w, "node");
            jw_str0(w, st->skipped_node);
            jw_key(w, "detail");
            jw_str0(w, st->skipped_detail);
            jw_obj_close(w);
        } else {
            jw_null(w);
        }
    }
    if (st->source_err || st->binlog_err) {
        jw_key(w, "error");
        jw_str(w, st->source_err ? st->source_err : st->binlog_err);
    }
    jw_obj_close(w);
}

/* An index's engine side: null when not read, else its error or the
 * alias's targets and its document count. */
static void engine_json(jsonw *w, const struct status_index *ix) {
    if (!ix->engine_read) {
        jw_null(w);
    } else {
        jw_obj_open(w);
        if (ix->engine_err) {
            jw_key(w, "error");
            jw_str(w, ix->engine_err);
        } else {
            jw_key(w, "alias_targets");
            jw_arr_open(w);
            for (const char *p = ix->targets; p && *p;) {
                const char *c = strchr(p, ',');
                size_t n = c ? (size_t)(c - p) : strlen(p);
                jw_strn(w, p, n);
                p += n + (c ? 1 : 0);
            }
            jw_arr_close(w);
            jw_key(w, "documents");
            jw_uint_text(w, ix->documents);
        }
        jw_obj_close(w);
    }
}

/* One index config: its state in the metadata and in the engine. */
static void index_json(jsonw *w, const struct status_index *ix) {
    jw_obj_open(w);
    jw_key(w, "alias");
    jw_str(w, ix->alias);
    jw_key(w, "state");
    jw_str(w, ix->state);
    jw_key(w, "current_version");
    jw_uint(w, ix->current_version);
    jw_key(w, "building_version");
    if (ix->building_version) jw_uint(w, ix->building_version);
    else jw_null(w);
    jw_key(w, "epoch");
    jw_uint(w, ix->epoch);
    jw_key(w, "stopped");
    jw_str0(w, ix->stopped);
    jw_key(w, "tables");
    jw_uint(w, ix->ntables);
    shards_json(w, ix);
    if (ix->multi) status_sources_json(&ix->sources, w);
    jw_key(w, "engine");
    engine_json(w, ix);
    jw_obj_close(w);
}

/* the metadata's tables of jobs, dead letters, snapshots, runs and checks */
static void tables_json(jsonw *w, const struct ss_status *st) {
    static const char *const jn[] = {"index", "status", "jobs", "rows_read", "docs_written",
                                     "errors"};
    static const bool jnum[] = {false, false, true, true, true, true};
    static const char *const dn[] = {"index", "count"};
    static const char *const sn[] = {"table", "count"};
    static const bool cnum[] = {false, true};
    jw_key(w, "jobs");
    rows_json(w, &st->jobs, jn, jnum);
    static const char *const ln[] = {"index", "version", "bucket", "status", "node",
                                     "rows_read", "moved_by_rebalance", "type", "delayed_run"};
    static const bool lnum[] = {false, true, true, false, false, true, true, false, true};
    jw_key(w, "job_list");
    rows_json(w, &st->job_list, ln, lnum);
    jw_key(w, "dead_letters");
    rows_json(w, &st->dead, dn, cnum);
    jw_key(w, "change_snapshots");
    rows_json(w, &st->snapshots, sn, cnum);
    static const char *const rn[] = {"id", "status", "started_at", "finished_at", "snapshots",
                                     "ids", "documents_rebuilt", "documents_deleted", "errors"};
    static const bool rnum[] = {true, false, false, false, true, true, true, true, true};
    jw_key(w, "delayed_last_run");
    rows_json(w, &st->delayed_run, rn, rnum);
    static const char *const kn[] = {"index", "status", "finished_at", "window_s",
                                     "differences", "documents_fetched"};
    static const bool knum[] = {false, false, false, true, true, true};
    jw_key(w, "checks");
    rows_json(w, &st->checks, kn, knum);
}

/* each daemon's live state, its JSON as written (null if it does not parse) */
static void nodes_json(jsonw *w, const struct ss_status *st) {
    jw_key(w, "nodes");
    jw_arr_open(w);
    for (size_t r = 0; r < st->nodes.nrows; r++) {
        jw_obj_open(w);
        jw_key(w, "node");
        jw_str0(w, STATUS_CELL(&st->nodes, r, 0));
        jw_key(w, "role");
        jw_str0(w, STATUS_CELL(&st->nodes, r, 1));
        jw_key(w, "since_s");
        jw_uint_text(w, STATUS_CELL(&st->nodes, r, 2));
        jw_key(w, "state");
        const char *sj = STATUS_CELL(&st->nodes, r, 3);
        cJSON *parsed = sj ? json_exact_parse(sj, strlen(sj)) : NULL;
        if (parsed && cJSON_IsObject(parsed)) jw_raw(w, sj, strlen(sj));
        else jw_null(w);
        cJSON_Delete(parsed);
        jw_obj_close(w);
    }
    jw_arr_close(w);
}

void status_json(const struct ss_status *st, sbuf *out) {
    jsonw w;
    jw_init(&w, out);
    jw_obj_open(&w);
    jw_key(&w, "ok");
    jw_bool(&w, st->ok);
    metadata_json(&w, st);
    source_json(&w, st);
    jw_key(&w, "indices");
    jw_arr_open(&w);
    for (size_t i = 0; i < st->nindices; i++) index_json(&w, &st->indices[i]);
    jw_arr_close(&w);
    tables_json(&w, st);
    nodes_json(&w, st);
    jw_key(&w, "errors");
    jw_arr_open(&w);
    for (size_t i = 0; i < st->nerrors; i++) jw_str(&w, st->errors[i]);
    jw_arr_close(&w);
    jw_obj_close(&w);
}
