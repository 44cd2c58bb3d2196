/* status: gathering where a source's sync stands (see status.h). Its JSON
 * rendering is sync/status/status_json.c's, its text rendering
 * cmd/cmd_status.c's. */
#include "sync/status/status.h"
#include "sync/mapping/mapping_shard.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "json_exact.h"
#include "jsonw.h"
#include "sync/mapping/mapping.h"
#include "sbuf.h"
#include "search/search.h"

/* Is the checkpoint's file (file[0..n)) among the source's binlogs? true
 * when it cannot be told (SHOW BINARY LOGS refused). */
static bool checkpoint_file_kept(MYSQL *src, const char *file, size_t n) {
    char err[256];
    MYSQL_RES *res = db_query(src, "SHOW BINARY LOGS", 0, err, sizeof err);
    if (!res) return true;
    bool kept = false;
    MYSQL_ROW row;
    while (!kept && (row = mysql_fetch_row(res)))
        kept = row[0] && strlen(row[0]) == n && !strncmp(row[0], file, n);
    mysql_free_result(res);
    return kept;
}

static void add_error(struct ss_status *st, const char *fmt, const char *a, const char *b) {
    sbuf e = SBUF_INIT;
    sbuf_printf(&e, fmt, a, b ? b : "");
    st->errors = xrealloc(st->errors, (st->nerrors + 1) * sizeof *st->errors);
    st->errors[st->nerrors++] = sbuf_detach(&e);
    st->ok = false;
}

static char *dup0(const char *s) { return s ? xstrdup(s) : NULL; }

/* run sql on m, keep every row as text */
static void rows_of(MYSQL *m, const char *sql, struct status_rows *t, struct ss_status *st,
                    const char *what) {
    memset(t, 0, sizeof *t);
    char e[600];
    MYSQL_RES *res = db_query(m, sql, 0, e, sizeof e);
    if (!res) {
        snprintf(e, sizeof e, "%s (%u)", mysql_error(m), mysql_errno(m)); /* without the SQL */
        t->failed = true;
        add_error(st, "%s: %s", what, e);
        return;
    }
    t->ncols = mysql_num_fields(res);
    t->nrows = mysql_num_rows(res);
    t->cells = xcalloc(t->nrows * t->ncols + 1, sizeof *t->cells);
    MYSQL_ROW row;
    for (size_t r = 0; (row = mysql_fetch_row(res)); r++)
        for (size_t c = 0; c < t->ncols; c++) STATUS_CELL(t, r, c) = dup0(row[c]);
    mysql_free_result(res);
}

static void rows_free(struct status_rows *t) {
    for (size_t i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

/* where the alias points, and how many documents it holds */
static void engine_facts(struct search_conn *k, struct status_index *ix) {
    struct search_resp r;
    search_resp_init(&r);
    char path[600];
    ix->engine_read = true;
    snprintf(path, sizeof path, "/_alias/%s", ix->alias);
    if (search_request(k, "GET", path, NULL, NULL, 0, &r) != 0) {
        sbuf e = SBUF_INIT;
        sbuf_printf(&e, "engine: %s", r.err);
        ix->engine_err = sbuf_detach(&e);
        goto out;
    }
    char req[620], refused[1024];
    snprintf(req, sizeof req, "GET %s", path);
    if (search_refused(k, req, r.status, refused, sizeof refused)) {
        sbuf e = SBUF_INIT;
        sbuf_printf(&e, "engine: %s", refused);
        ix->engine_err = sbuf_detach(&e);
        goto out;
    }
    if (r.status != 200 && r.status != 404) { /* 404: no such alias yet */
        sbuf e = SBUF_INIT;
        sbuf_printf(&e, "engine: %s answered HTTP %ld: %.200s", req, r.status,
                    r.body.data ? r.body.data : "");
        ix->engine_err = sbuf_detach(&e);
        goto out;
    }
    sbuf targets = SBUF_INIT;
    if (r.status == 200) {
        cJSON *j = json_exact_parse(r.body.data, r.body.len);
        cJSON *it;
        cJSON_ArrayForEach(it, j) sbuf_printf(&targets, "%s%s", targets.len ? "," : "", it->string);
        cJSON_Delete(j);
    }
    if (!targets.len) goto out; /* no alias yet */
    ix->targets = sbuf_detach(&targets);
    snprintf(path, sizeof path, "/%s/_count", ix->alias);
    if (search_request(k, "GET", path, NULL, NULL, 0, &r) == 0 && r.status == 200) {
        cJSON *j = json_exact_parse(r.body.data, r.body.len);
        cJSON *c = cJSON_GetObjectItem(j, "count");
        if (c && cJSON_IsRaw(c)) ix->documents = xstrdup(c->valuestring);
        cJSON_Delete(j);
    }
out:
    search_resp_free(&r);
}

static bool has_suffix(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !memcmp(s + a - b, suffix, b);
}

bool status_only_checkpoint_writes(const struct status_binlog_event *ev, size_t n,
                                   const char *metadata_db, unsigned long long end_pos) {
    if (!metadata_db) return false;
    char offsets[300], nodes[300]; /* Table_map's Info ends "(db.table)" */
    snprintf(offsets, sizeof offsets, "(%s.offsets)", metadata_db);
    /* a daemon's node state (sync/node/node_state.c), written at its stop after
     * its last checkpoint save: bookkeeping too */
    snprintf(nodes, sizeof nodes, "(%s.node_states)", metadata_db);
    bool in_txn = false, wrote = false;
    for (size_t i = 0; i < n; i++) {
        const char *t = ev[i].type ? ev[i].type : "", *info = ev[i].info ? ev[i].info : "";
        if (ev[i].end_pos > end_pos) return false;
        if (!strcmp(t, "Gtid") || !strcmp(t, "Anonymous_Gtid")) { /* a transaction starts */
            if (in_txn) return false;
            in_txn = true;
        } else if (!strcmp(t, "Query") && !strcmp(info, "BEGIN")) {
            in_txn = true; /* MySQL's BEGIN after its Gtid event */
        } else if (!in_txn) {
            return false;
        } else if (!strcmp(t, "Table_map")) {
            if (!has_suffix(info, offsets) && !has_suffix(info, nodes)) return false;
        } else if (!strncmp(t, "Write_rows", 10) || !strncmp(t, "Update_rows", 11)) {
            wrote = true; /* rows of the table mapped before them: offsets */
        } else if (!strcmp(t, "Xid") || (!strcmp(t, "Query") && !strcmp(info, "COMMIT"))) {
            if (!wrote) return false; /* an empty or other kind of transaction */
            in_txn = wrote = false;
            if (ev[i].end_pos == end_pos) return true;
        } else if (strcmp(t, "Annotate_rows") && strcmp(t, "Rows_query")) {
            return false; /* the statement text of the rows: anything else is more */
        }
    }
    return false;
}

/* The bytes from the checkpoint to the end (file, from .. to) hold only
 * checkpoint writes? Looked at when they are few: an idle daemon's one
 * save, or one per daemon sharing the server. A failing listing (a missing
 * grant) says no, as before. */
#define CHECKPOINT_WRITES_MAX_BYTES 65536
#define CHECKPOINT_WRITES_MAX_EVENTS 256
static bool behind_only_checkpoints(MYSQL *src, const char *file, size_t file_len,
                                    unsigned long long from, unsigned long long to,
                                    const char *metadata_db) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SHOW BINLOG EVENTS IN ");
    db_quote(src, &q, file, file_len);
    sbuf_printf(&q, " FROM %llu LIMIT %d", from, CHECKPOINT_WRITES_MAX_EVENTS);
    bool only = false;
    char err[256];
    MYSQL_RES *res = db_query(src, q.data, q.len, err, sizeof err);
    if (res) {
        size_t n = (size_t)mysql_num_rows(res);
        struct status_binlog_event *ev = xcalloc(n ? n : 1, sizeof *ev);
        MYSQL_ROW row;
        size_t i = 0;
        /* Log_name, Pos, Event_type, Server_id, End_log_pos, Info */
        while (mysql_num_fields(res) >= 6 && (row = mysql_fetch_row(res)) && i < n) {
            ev[i].type = row[2];
            ev[i].end_pos = row[4] ? strtoull(row[4], NULL, 10) : 0;
            ev[i].info = row[5];
            i++;
        }
        only = status_only_checkpoint_writes(ev, i, metadata_db, to);
        free(ev);
        mysql_free_result(res);
    }
    sbuf_free(&q);
    return only;
}

/* the checkpoint, the binlog's end and how far behind the checkpoint is */
static void collect_source(const struct ss_config *cfg, MYSQL *meta, MYSQL *src,
                           const char *src_err, struct ss_status *st) {
    const char *name = cfg->source.name;
    sbuf q = SBUF_INIT;
    if (meta) {
        sbuf_adds(&q, "SELECT position, TIMESTAMPDIFF(SECOND, updated_at, NOW(3)) FROM offsets "
                      "WHERE source = ");
        db_quote(meta, &q, name, strlen(name));
        char *ck[2];
        char ckerr[600];
        int got = db_row1(meta, q.data, q.len, ck, 2, ckerr, sizeof ckerr);
        if (got == 1 && ck[0] && ck[0][0]) {
            st->checkpoint = ck[0], ck[0] = NULL;
            st->checkpoint_age = xstrdup(ck[1] ? ck[1] : "?");
        } else if (got < 0) {
            add_error(st, "checkpoint: %s%s", ckerr, NULL);
        }
        db_row_free(ck, 2);
        /* a binlog stretch skipped (on_purged = rebuild, run --from-current) */
        sbuf_reset(&q);
        sbuf_adds(&q, "SELECT DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%sZ'), node, detail FROM "
                      "sync_log WHERE event = 'binlog skipped' AND source = ");
        db_quote(meta, &q, name, strlen(name));
        sbuf_adds(&q, " ORDER BY id DESC LIMIT 1");
        char *sk[3];
        char skerr[600];
        got = db_row1(meta, q.data, q.len, sk, 3, skerr, sizeof skerr);
        if (got == 1) {
            st->skipped_at = sk[0], sk[0] = NULL;
            st->skipped_node = sk[1], sk[1] = NULL;
            st->skipped_detail = sk[2], sk[2] = NULL;
        } else if (got < 0) {
            add_error(st, "sync log: %s%s", skerr, NULL);
        }
        db_row_free(sk, 3);
    }
    if (src) {
        st->source_reached = true;
        char bfile[256], berr[512];
        unsigned long long bpos = 0;
        if (db_binlog_status(src, bfile, sizeof bfile, &bpos, berr, sizeof berr) == 1) {
            sbuf e = SBUF_INIT;
            sbuf_printf(&e, "%s:%llu", bfile, bpos);
            st->binlog_end = sbuf_detach(&e);
        }
        if (!st->binlog_end) {
            st->binlog_err = xstrdup(berr);
        } else if (st->checkpoint) {
            const char *ck = st->checkpoint, *end = st->binlog_end;
            /* [source] versions = gtid: "file:pos;gtid=SET" (sync/pipeline/gtid_version.h) */
            const char *mark = strstr(ck, ";gtid=");
            const char *c1 = mark ? memrchr(ck, ':', (size_t)(mark - ck)) : strrchr(ck, ':');
            const char *c2 = strrchr(end, ':');
            if (c1 && !checkpoint_file_kept(src, ck, (size_t)(c1 - ck))) {
                st->checkpoint_purged = true;
                add_error(st, "the checkpoint's binlog file %s is no longer on the source (purged): "
                          "the changes since it cannot be read. Recover with `searchsync run "
                          "--from-current`, which starts at the binlog's end and rebuilds every "
                          "index%s", ck, "");
            } else if (c1 && c2 && c1 - ck == c2 - end && !strncmp(ck, end, (size_t)(c1 - ck))) {
                long long behind = strtoll(c2 + 1, NULL, 10) - strtoll(c1 + 1, NULL, 10);
                st->bytes_behind = behind > 0 ? behind : 0;
                st->caught_up = st->bytes_behind == 0 ||
                                (st->bytes_behind <= CHECKPOINT_WRITES_MAX_BYTES &&
                                 behind_only_checkpoints(src, ck, (size_t)(c1 - ck),
                                                         strtoull(c1 + 1, NULL, 10),
                                                         strtoull(c2 + 1, NULL, 10),
                                                         cfg->metadata.database));
            }
        }
    } else {
        st->source_err = xstrdup(src_err ? src_err : "not connected");
        add_error(st, "source: %s%s", st->source_err, NULL);
    }
    sbuf_free(&q);
}

/* each index config: its state, versions and what the engine says of it */
static void collect_indices(const struct ss_config *cfg, MYSQL *meta, struct search_conn *k,
                            const char *engine_err, struct ss_status *st) {
    const char *name = config_mapping_name(cfg);
    struct mapping m = {0};
    char err[1024];
    if (mapping_db_load_for(meta, name, cfg->source.name, &m, err, sizeof err) < 0) {
        st->mapping_err = xstrdup(err);
        add_error(st, "mapping: %s%s", err, NULL);
        mapping_free(&m);
        return;
    }
    if (!k) {
        st->engine_err = xstrdup(engine_err ? engine_err : "no engine connection");
        add_error(st, "engine: %s%s", st->engine_err, NULL);
    }
    struct status_rows bv;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT alias, building_version, shards_read FROM index_configs WHERE "
                  "source = ");
    db_quote(meta, &q, name, strlen(name));
    rows_of(meta, q.data, &bv, st, "building versions");
    st->indices = xcalloc(m.nindices + 1, sizeof *st->indices);
    st->nindices = m.nindices;
    bool engine_ok = k != NULL;
    for (size_t i = 0; i < m.nindices; i++) {
        const struct mp_index *mi = &m.indices[i];
        struct status_index *ix = &st->indices[i];
        ix->alias = xstrdup(mi->alias);
        ix->state = xstrdup(mi->state ? mi->state : "?");
        ix->current_version = mi->current_version;
        ix->epoch = mi->epoch;
        ix->ntables = mi->ntables;
        if (mi->stopped) ix->stopped = xstrdup(mi->stopped);
        if (mi->ntables && (mp_is_pattern(mi->tables[0].db) || mp_is_pattern(mi->tables[0].table))) {
            sbuf pat = SBUF_INIT; /* over shard tables (mapping_shard.h) */
            sbuf_printf(&pat, "%s.%s", mi->tables[0].db, mi->tables[0].table);
            ix->pattern = sbuf_detach(&pat);
        }
        for (size_t r = 0; r < bv.nrows; r++)
            if (STATUS_CELL(&bv, r, 0) && !strcmp(STATUS_CELL(&bv, r, 0), mi->alias)) {
                ix->building_version = (unsigned)strtoul(STATUS_CELL(&bv, r, 1), NULL, 10);
                const char *sr = STATUS_CELL(&bv, r, 2);
                for (const char *p = sr; ix->pattern && p && *p;) { /* one a line */
                    const char *nl = strchr(p, '\n');
                    size_t l = nl ? (size_t)(nl - p) : strlen(p);
                    if (l) {
                        ix->shards = xrealloc(ix->shards, (ix->nshards + 1) * sizeof(char *));
                        ix->shards[ix->nshards++] = xstrndup(p, l);
                    }
                    p = nl ? nl + 1 : p + l;
                }
            }
        if (mp_index_multi(mi)) { /* several sources: each one's (status_sources.h) */
            ix->multi = true;
            status_sources_collect(cfg, meta, engine_ok ? k : NULL, mi, ix->building_version,
                                   &ix->sources);
            st->sources_attention |= ix->sources.attention;
        }
        if (!engine_ok) continue;
        engine_facts(k, ix);
        if (ix->engine_err) { /* one transport failure: do not wait on it per index */
            engine_ok = false;
            add_error(st, "%s%s", ix->engine_err, NULL);
        }
    }
    rows_free(&bv);
    mapping_free(&m);
    sbuf_free(&q);
}

/* jobs, dead letters, change snapshots, the last delayed run and checks, the
 * nodes: the metadata's tables as rows, each read by one query whose pieces
 * join around the source's name (quoted between two pieces) */
static const struct source_query {
    const char *what;
    size_t rows; /* where its rows go: offsetof(struct ss_status, ...) */
    const char *sql[4];
} source_queries[] = {
    {"jobs", offsetof(struct ss_status, jobs),
     {"SELECT ic.alias, j.status, COUNT(*), SUM(j.rows_read), SUM(j.docs_written), "
      "SUM(j.errors) FROM jobs j JOIN index_configs ic ON ic.id = j.index_id WHERE j.source = ",
      " GROUP BY ic.alias, j.status ORDER BY ic.alias, j.status"}},
    /* the reindex jobs, then those of the delayed runs under way (type job,
     * their run's id; version 0) */
    {"jobs", offsetof(struct ss_status, job_list),
     {"(SELECT ic.alias, j.version, j.bucket, j.status, COALESCE(j.owner_node, ''), "
      "j.rows_read, j.broken_by_rebalance, 'index', '' FROM jobs j JOIN index_configs ic ON "
      "ic.id = j.index_id WHERE j.type = 'index' AND j.source = ",
      " ORDER BY ic.alias, j.version, j.bucket LIMIT 1000) UNION ALL (SELECT ic.alias, "
      "j.version, j.bucket, j.status, COALESCE(j.owner_node, ''), j.rows_read, "
      "j.broken_by_rebalance, 'job', r.id FROM jobs j JOIN index_configs ic ON ic.id = "
      "j.index_id JOIN delayed_runs r ON r.status = 'running' AND j.params = "
      "CONCAT('{\"delayed_run\":', r.id, '}') WHERE j.type = 'job' AND j.source = ",
      " ORDER BY r.id, ic.alias, j.bucket LIMIT 1000)"}},
    {"dead letters", offsetof(struct ss_status, dead),
     {"SELECT index_name, COUNT(*) FROM dead_letters WHERE source = ",
      " GROUP BY index_name ORDER BY index_name"}},
    {"change snapshots", offsetof(struct ss_status, snapshots),
     {"SELECT CONCAT(db_name, '.', table_name), COUNT(*) FROM change_snapshots WHERE status "
      "IN ('init', 'error') AND source = ",
      " GROUP BY db_name, table_name ORDER BY db_name, table_name"}},
    {"delayed runs", offsetof(struct ss_status, delayed_run),
     {"SELECT id, status, started_at, finished_at, snapshots, ids, docs_written, docs_deleted, "
      "errors FROM delayed_runs WHERE source = ",
      " ORDER BY id DESC LIMIT 1"}},
    {"checks", offsetof(struct ss_status, checks),
     {"SELECT index_alias, status, finished_at, window_s, missing + extra + different + "
      "duplicate, documents_fetched FROM check_runs WHERE id IN (SELECT MAX(id) FROM "
      "check_runs WHERE source = ",
      " GROUP BY index_alias) ORDER BY index_alias"}},
    {"node states", offsetof(struct ss_status, nodes),
     {"SELECT node, role, TIMESTAMPDIFF(SECOND, updated_at, NOW(3)), state FROM node_states "
      "WHERE source = ",
      " ORDER BY role = 'stopped', node"}},
};

static void collect_tables(const char *name, MYSQL *meta, struct ss_status *st) {
    sbuf q = SBUF_INIT;
    for (size_t i = 0; i < sizeof source_queries / sizeof source_queries[0]; i++) {
        const struct source_query *sq = &source_queries[i];
        sbuf_reset(&q);
        sbuf_adds(&q, sq->sql[0]);
        for (size_t k = 1; k < 4 && sq->sql[k]; k++) {
            db_quote(meta, &q, name, strlen(name));
            sbuf_adds(&q, sq->sql[k]);
        }
        rows_of(meta, q.data, (struct status_rows *)((char *)st + sq->rows), st, sq->what);
    }
    sbuf_free(&q);
}

/* A daemon that runs and says a subsystem of it is unwell (a wedged
 * thread: sync/node/node.h) is a problem of the whole: named in errors */
static void nodes_health(struct ss_status *st) {
    for (size_t r = 0; r < st->nodes.nrows; r++) {
        const char *node = STATUS_CELL(&st->nodes, r, 0), *role = STATUS_CELL(&st->nodes, r, 1);
        const char *sj = STATUS_CELL(&st->nodes, r, 3);
        if (!sj || !role || !strcmp(role, "stopped")) continue;
        cJSON *j = json_exact_parse(sj, strlen(sj));
        const cJSON *u;
        cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(j, "unwell")) {
            sbuf e = SBUF_INIT;
            const char *sub = cJSON_GetStringValue(cJSON_GetObjectItem(u, "subsystem"));
            const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(u, "why"));
            sbuf_printf(&e, "%s: %s", sub ? sub : "?", why ? why : "?");
            add_error(st, "node %s: %s", node ? node : "?", e.data);
            sbuf_free(&e);
        }
        cJSON_Delete(j);
    }
}

void status_collect(const struct ss_config *cfg, MYSQL *meta, const char *meta_err, MYSQL *src,
                    const char *src_err, struct search_conn *k, const char *engine_err,
                    struct ss_status *st) {
    memset(st, 0, sizeof *st);
    st->ok = true;
    st->bytes_behind = -1;
    const char *name = cfg->source.name;
    db_params mp = db_params_metadata(cfg);
    st->meta_host = xstrdup(mp.socket && *mp.socket ? mp.socket : mp.host ? mp.host : "localhost");
    st->meta_port = mp.port;
    st->meta_database = xstrdup(cfg->metadata.database);
    st->meta_reached = meta != NULL;
    if (!meta) {
        st->meta_err = xstrdup(meta_err && *meta_err ? meta_err : "not connected");
        add_error(st, "metadata: %s%s", st->meta_err, NULL);
    }
    st->source_name = xstrdup(name);
    st->source_host = xstrdup(cfg->source.host ? cfg->source.host : "localhost");
    st->source_port = cfg->source.port;
    st->start = cfg->source.start;
    collect_source(cfg, meta, src, src_err, st);
    if (!meta) return; /* the mapping, jobs, dead letters, ...: not known */
    collect_indices(cfg, meta, k, engine_err, st);
    collect_tables(name, meta, st);
    nodes_health(st);
}

void status_free(struct ss_status *st) {
    if (!st) return;
    free(st->meta_err);
    free(st->meta_host);
    free(st->meta_database);
    free(st->source_name);
    free(st->source_host);
    free(st->checkpoint);
    free(st->checkpoint_age);
    free(st->skipped_at);
    free(st->skipped_node);
    free(st->skipped_detail);
    free(st->source_err);
    free(st->binlog_end);
    free(st->binlog_err);
    free(st->mapping_err);
    free(st->engine_err);
    for (size_t i = 0; i < st->nindices; i++) {
        struct status_index *ix = &st->indices[i];
        free(ix->alias), free(ix->state), free(ix->engine_err), free(ix->targets);
        free(ix->stopped);
        free(ix->pattern);
        for (size_t k = 0; k < ix->nshards; k++) free(ix->shards[k]);
        free(ix->shards);
        status_sources_free(&ix->sources);
        free(ix->documents);
    }
    free(st->indices);
    rows_free(&st->jobs);
    rows_free(&st->job_list);
    rows_free(&st->dead);
    rows_free(&st->snapshots);
    rows_free(&st->delayed_run);
    rows_free(&st->checks);
    rows_free(&st->nodes);
    for (size_t i = 0; i < st->nerrors; i++) free(st->errors[i]);
    free(st->errors);
    memset(st, 0, sizeof *st);
}
