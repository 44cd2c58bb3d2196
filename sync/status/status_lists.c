/* status_lists: the admin API's read-only lists of a source from the
 * metadata schema (see status_lists.h). */
#include "sync/status/status_lists.h"

#include "sbuf.h"

#define ISO(col) STMT_ISO(col)

/* enum status_list's queries, the source their one parameter */
static const char *const list_sql[] = {
    [SL_DELAYED_RUNS] =
        "SELECT id, status, index_alias, node, buckets, snapshots, ids, "
        "docs_written, docs_deleted, errors, " ISO("started_at") ", "
    ISO("finished_at") ", error_text FROM delayed_runs WHERE source = ? "
        "ORDER BY id DESC LIMIT 50",
    [SL_SNAPSHOT_COUNTS] =
        "SELECT CONCAT(db_name, '.', table_name), status, COUNT(*) FROM "
        "change_snapshots WHERE source = ? GROUP BY db_name, table_name, status "
        "ORDER BY db_name, table_name, status",
    [SL_RELATION_TOPS] =
        "SELECT t.db_name, t.table_name, i.alias, t.path, t.level, t.level_db, "
        "t.level_sql, t.output_column, t.doc_table, t.origin FROM relation_tops t "
        "LEFT JOIN index_configs i ON i.id = t.top_index_id WHERE t.source = ? "
        "ORDER BY t.db_name, t.table_name, i.alias, t.path, t.level",
    [SL_READER_LOCK] =
        "SELECT owner, fence, IS_USED_LOCK(CONCAT('searchsync:reader:', "
        "MD5(source))) IS NOT NULL FROM reader_locks WHERE source = ?",
};

long status_list_rows(MYSQL *meta, const char *source, enum status_list l,
                      struct stmt_rows *out, char *err, size_t errlen) {
    return stmt_query(meta, list_sql[l], &source, 1, out, err, errlen);
}

long status_checks_rows(MYSQL *meta, const char *source, const char *alias,
                        struct stmt_rows *out, char *err, size_t errlen) {
    const char *p[] = {source, alias, alias};
    return stmt_query(meta,
                      "SELECT id, index_alias, status, window_s, trigger_kind, node, "
                      "DATE_FORMAT(started_at, '%Y-%m-%dT%H:%i:%s.%fZ'), "
                      "DATE_FORMAT(finished_at, '%Y-%m-%dT%H:%i:%s.%fZ'), missing, extra, "
                      "different, duplicate, documents_fetched, details, error FROM check_runs "
                      "WHERE source = ? AND (? = '' OR index_alias = ?) ORDER BY id DESC LIMIT 50",
                      p, 3, out, err, errlen);
}

long status_snapshots_rows(MYSQL *meta, const char *source, const char *status,
                           struct stmt_rows *out, char *err, size_t errlen) {
    const char *p[] = {source, status, status};
    return stmt_query(meta,
                      "SELECT id, db_name, table_name, operation, business_id, status, attempts, "
                      "run_id, " ISO("created_at") ", " ISO("updated_at") ", error_text FROM "
                      "change_snapshots WHERE source = ? AND (IF(? = '', status <> 'done', "
                      "status = ?)) ORDER BY id DESC LIMIT 500",
                      p, 3, out, err, errlen);
}

long status_sync_log_rows(MYSQL *meta, const char *source, const char *event, long limit,
                          struct stmt_rows *out, char *err, size_t errlen) {
    sbuf sql = SBUF_INIT; /* STMT_ISO holds % signs: not a format */
    sbuf_adds(&sql, "SELECT l.id, i.alias, l.event, l.detail, l.node, " ISO("l.created_at")
                    " FROM sync_log l LEFT JOIN index_configs i ON i.id = l.index_id WHERE "
                    "l.source = ?");
    if (event) sbuf_adds(&sql, " AND l.event = ?");
    sbuf_printf(&sql, " ORDER BY l.id DESC LIMIT %ld", limit);
    const char *p[] = {source, event};
    long n = stmt_query(meta, sql.data, p, event ? 2 : 1, out, err, errlen);
    sbuf_free(&sql);
    return n;
}

/* seconds so far (a running build: until now); the rate from them */
#define RUN_SECONDS "TIMESTAMPDIFF(MICROSECOND, started_at, COALESCE(finished_at, NOW(3))) / 1e6"

long status_runs_rows(MYSQL *meta, const char *source, const char *alias,
                      struct stmt_rows *out, char *err, size_t errlen) {
    const char *p[] = {source, alias};
    return stmt_query(meta,
                      "SELECT version, status, buckets, start_position, rows_read, docs_written, "
                      "rejected, error_text, " ISO("started_at") ", " ISO("finished_at")
                      ", ROUND(" RUN_SECONDS ", 3), ROUND(docs_written / NULLIF(" RUN_SECONDS
                      ", 0)) FROM reindex_runs WHERE source = ? AND alias = ? ORDER BY id DESC "
                      "LIMIT 50",
                      p, 2, out, err, errlen);
}

#define DL_COLS                                                                               \
    "id, source, index_name, doc_id, routing, version, op, status, error, attempts, "          \
    ISO("created_at")

/* ` WHERE source = ? AND index_name = ?`, each part when its value is given,
 * the values in *p (their number returned) */
static size_t dl_where(sbuf *sql, const char *source, const char *index, const char **p) {
    size_t n = 0;
    if (source) sbuf_adds(sql, " WHERE source = ?"), p[n++] = source;
    if (index) sbuf_adds(sql, n ? " AND index_name = ?" : " WHERE index_name = ?"), p[n++] = index;
    return n;
}

long status_dead_letters_rows(MYSQL *meta, const char *source, const char *index, long limit,
                              struct stmt_rows *out, char *err, size_t errlen) {
    sbuf sql = SBUF_INIT; /* DL_COLS holds % signs: not a format */
    sbuf_adds(&sql, "SELECT " DL_COLS " FROM dead_letters");
    const char *p[2];
    size_t np = dl_where(&sql, source, index, p);
    sbuf_printf(&sql, " ORDER BY id DESC LIMIT %ld", limit);
    long n = stmt_query(meta, sql.data, p, np, out, err, errlen);
    sbuf_free(&sql);
    return n;
}

long status_dead_letters_count(MYSQL *meta, const char *source, const char *index,
                               struct stmt_rows *out, char *err, size_t errlen) {
    sbuf sql = SBUF_INIT;
    sbuf_adds(&sql, "SELECT COUNT(*) FROM dead_letters");
    const char *p[2];
    size_t np = dl_where(&sql, source, index, p);
    long n = stmt_query(meta, sql.data, p, np, out, err, errlen);
    sbuf_free(&sql);
    return n;
}

long status_dead_letters_by_source(MYSQL *meta, const char *index, struct stmt_rows *out,
                                   char *err, size_t errlen) {
    sbuf sql = SBUF_INIT;
    sbuf_adds(&sql, "SELECT source, COUNT(*) FROM dead_letters");
    const char *p[1];
    size_t np = dl_where(&sql, NULL, index, p);
    sbuf_adds(&sql, " GROUP BY source ORDER BY source");
    long n = stmt_query(meta, sql.data, p, np, out, err, errlen);
    sbuf_free(&sql);
    return n;
}

long status_dead_letter_row(MYSQL *meta, const char *source, const char *id,
                            struct stmt_rows *out, char *err, size_t errlen) {
    const char *p[] = {source, id};
    return stmt_query(meta,
                      "SELECT " DL_COLS ", body, script FROM dead_letters WHERE source = ? AND "
                      "id = ?",
                      p, 2, out, err, errlen);
}
