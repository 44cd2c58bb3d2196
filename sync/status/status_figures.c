/* status_figures: the source's binlogs and the metadata's figures of a
 * source, as /metrics reads them (see status_figures.h). */
#include "sync/status/status_figures.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binlog/binlog.h"
#include "db.h"
#include "sbuf.h"

void status_binlogs_free(struct status_binlogs *b) {
    for (size_t i = 0; i < b->n; i++) free(b->names[i]);
    free(b->names);
    free(b->sizes);
}

int status_binlogs_read(MYSQL *src, struct status_binlogs *b, char *err, size_t errlen) {
    memset(b, 0, sizeof *b);
    MYSQL_RES *res = db_query(src, "SHOW BINARY LOGS", 0, err, errlen);
    if (!res) {
        snprintf(err, errlen, "SHOW BINARY LOGS: %s", mysql_error(src));
        return -1;
    }
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) {
        b->names = xrealloc(b->names, (b->n + 1) * sizeof *b->names);
        b->sizes = xrealloc(b->sizes, (b->n + 1) * sizeof *b->sizes);
        b->names[b->n] = xstrdup(row[0] ? row[0] : "");
        b->sizes[b->n] = row[1] ? strtoull(row[1], NULL, 10) : 0;
        b->n++;
    }
    mysql_free_result(res);
    return 0;
}

long long status_bytes_behind(const struct status_binlogs *b, const char *file,
                              unsigned long long pos) {
    unsigned long seq = bl_file_seq(file);
    long long sum = 0;
    bool found = false;
    for (size_t i = 0; i < b->n; i++) {
        if (!strcmp(b->names[i], file)) {
            found = true;
            sum += b->sizes[i] > pos ? (long long)(b->sizes[i] - pos) : 0;
        } else if (bl_file_seq(b->names[i]) > seq) {
            sum += (long long)b->sizes[i];
        }
    }
    return found ? sum : -1;
}

/* enum status_figure's queries, the source their one parameter */
static const char *const figure_sql[] = {
    [SF_CHECKPOINT] = "SELECT position, TIMESTAMPDIFF(MICROSECOND, updated_at, NOW(3)) FROM "
                      "offsets WHERE source = ?",
    [SF_DEAD_LETTERS] = "SELECT index_name, COUNT(*) FROM dead_letters WHERE source = ? GROUP BY "
                        "index_name ORDER BY index_name",
    [SF_SNAPSHOTS] = "SELECT s.status, COUNT(c.id) FROM (SELECT 'init' status UNION ALL SELECT "
                     "'running' UNION ALL SELECT 'error' UNION ALL SELECT 'done') s LEFT JOIN "
                     "change_snapshots c ON c.status = s.status AND c.source = ? GROUP BY s.status "
                     "ORDER BY s.status",
    [SF_BUILDS] = "SELECT x.alias, j.version, j.status, COUNT(*), SUM(j.rows_read), "
                  "SUM(j.docs_written), SUM(j.errors) FROM jobs j JOIN index_configs x ON x.id = "
                  "j.index_id WHERE j.source = ? AND j.type = 'index' AND j.version = "
                  "x.building_version AND x.building_version > 0 GROUP BY x.alias, j.version, "
                  "j.status ORDER BY x.alias, j.status",
    [SF_RUNS] = "SELECT alias, status, COUNT(*), SUM(docs_written) FROM reindex_runs WHERE "
                "source = ? GROUP BY alias, status ORDER BY alias, status",
    [SF_DELAYED_RUN] = "SELECT status, snapshots, ids, docs_written, docs_deleted, errors, "
                       "UNIX_TIMESTAMP(started_at), UNIX_TIMESTAMP(finished_at) FROM "
                       "delayed_runs WHERE source = ? ORDER BY id DESC LIMIT 1",
    [SF_CHECKS] = "SELECT index_alias, SUBSTRING_INDEX(GROUP_CONCAT(missing + extra + different "
                  "+ duplicate ORDER BY id DESC), ',', 1), SUM(repaired_documents + "
                  "repaired_deletes), SUBSTRING_INDEX(GROUP_CONCAT(UNIX_TIMESTAMP(started_at) "
                  "ORDER BY id DESC), ',', 1) FROM check_runs WHERE source = ? AND status <> "
                  "'failed' GROUP BY index_alias ORDER BY index_alias",
};

long status_figure_rows(MYSQL *meta, const char *source, enum status_figure f,
                        struct stmt_rows *out, char *err, size_t errlen) {
    return stmt_query(meta, figure_sql[f], &source, 1, out, err, errlen);
}
