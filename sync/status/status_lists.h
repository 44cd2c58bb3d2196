/* status_lists: the admin API's read-only lists of one source from the
 * metadata schema, read as rows: consistency checks, delayed runs, change
 * snapshots, relation tops, the reader lock, the sync log, the builds of an
 * index config and the dead letters. Each function runs its one query with
 * the request's values as bound parameters (never spliced into SQL text)
 * and returns the number of rows, or -1 with err; the columns are listed
 * beside each, in order. web/ names the columns and writes the JSON: the
 * queries are here so that the admin server runs none of its own. */
#ifndef SS_STATUS_LISTS_H
#define SS_STATUS_LISTS_H
#include <stddef.h>

#include <mysql.h>

#include "stmt.h"

/* The last 50 checks (check_runs), newest first, of index config alias, or
 * every one when alias is "": id, index_alias, status, window_s,
 * trigger_kind, node, started_at, finished_at, missing, extra, different,
 * duplicate, documents_fetched, details (JSON text), error. */
long status_checks_rows(MYSQL *meta, const char *source, const char *alias,
                        struct stmt_rows *out, char *err, size_t errlen);

/* The newest 500 change snapshots of status, or of every status but done
 * when status is "": id, db_name, table_name, operation, business_id,
 * status, attempts, run_id, created_at, updated_at (ISO 8601), error_text. */
long status_snapshots_rows(MYSQL *meta, const char *source, const char *status,
                           struct stmt_rows *out, char *err, size_t errlen);
/* The lists whose one parameter is the source, one query each; their
 * columns: */
enum status_list {
    /* the last 50 delayed runs, newest first: id, status, index_alias,
     * node, buckets, snapshots, ids, docs_written, docs_deleted, errors,
     * started_at, finished_at (ISO 8601), error_text */
    SL_DELAYED_RUNS,
    /* the change snapshots counted per table and status: db.table, status,
     * count */
    SL_SNAPSHOT_COUNTS,
    /* the relation tops, per table, index config, path and level: db_name,
     * table_name, alias, path, level, level_db, level_sql, output_column,
     * doc_table, origin */
    SL_RELATION_TOPS,
    /* the standalone reader lock (reader_locks, 0 or 1 row): owner, fence,
     * whether its MySQL lock is held now (1 or 0) */
    SL_READER_LOCK,
};
long status_list_rows(MYSQL *meta, const char *source, enum status_list l,
                      struct stmt_rows *out, char *err, size_t errlen);

/* The last limit entries of the sync log, newest first, of one event when
 * event is not NULL: id, alias, event, detail, node, created_at (ISO 8601). */
long status_sync_log_rows(MYSQL *meta, const char *source, const char *event, long limit,
                          struct stmt_rows *out, char *err, size_t errlen);

/* The last 50 builds of index config alias (reindex_runs), newest first:
 * version, status, buckets, start_position, rows_read, docs_written,
 * rejected, error_text, started_at, finished_at (ISO 8601), seconds so far,
 * documents per second. */
long status_runs_rows(MYSQL *meta, const char *source, const char *alias,
                      struct stmt_rows *out, char *err, size_t errlen);

/* The last limit dead letters of source (NULL: of every source), newest
 * first, of physical index index when it is not NULL: id, source,
 * index_name, doc_id, routing, version, op, status, error, attempts,
 * created_at (ISO 8601). */
long status_dead_letters_rows(MYSQL *meta, const char *source, const char *index, long limit,
                              struct stmt_rows *out, char *err, size_t errlen);
/* How many dead letters there are (one row, one column), of source and
 * index when they are not NULL. */
long status_dead_letters_count(MYSQL *meta, const char *source, const char *index,
                               struct stmt_rows *out, char *err, size_t errlen);
/* How many each source has (source, count; by name), of index when it is
 * not NULL. */
long status_dead_letters_by_source(MYSQL *meta, const char *index, struct stmt_rows *out,
                                   char *err, size_t errlen);
/* Dead letter id (0 or 1 row): the columns of status_dead_letters_rows,
 * then body and script. */
long status_dead_letter_row(MYSQL *meta, const char *source, const char *id,
                            struct stmt_rows *out, char *err, size_t errlen);

#endif
