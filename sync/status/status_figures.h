/* status_figures: what /metrics publishes of the source and the metadata
 * schema, read as rows: the source's binlogs (how far a position is behind
 * their end) and the metadata's figures of one source (its checkpoint,
 * dead letters, change snapshots, builds, reindex history, last delayed run
 * and checks). The page itself is written by web/metrics.c; the queries are
 * here so that the admin server runs none of its own. */
#ifndef SS_STATUS_FIGURES_H
#define SS_STATUS_FIGURES_H
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "stmt.h"

/* The source's binlogs and their sizes (SHOW BINARY LOGS). */
struct status_binlogs {
    size_t n;
    char **names;
    unsigned long long *sizes;
};
/* 0, or -1 with err */
int status_binlogs_read(MYSQL *src, struct status_binlogs *b, char *err, size_t errlen);
void status_binlogs_free(struct status_binlogs *b);
/* The bytes from file:pos to the binlog's end: the rest of that file and
 * every later one. -1 when the file is not among the source's (purged, or
 * another server's). */
long long status_bytes_behind(const struct status_binlogs *b, const char *file,
                              unsigned long long pos);

/* The metadata's figures of a source, one query each; their columns: */
enum status_figure {
    SF_CHECKPOINT,   /* position, microseconds since it was written (0 or 1 row) */
    SF_DEAD_LETTERS, /* index, count */
    SF_SNAPSHOTS,    /* status, count: every status, 0 included */
    SF_BUILDS,       /* index, version, job status, jobs, rows read, docs written, errors */
    SF_RUNS,         /* index, outcome, runs, docs written */
    SF_DELAYED_RUN,  /* status, snapshots, ids, written, deleted, errors, start, end (0 or 1) */
    SF_CHECKS,       /* index, differences of the last, repairs, start of the last (unix) */
};
/* The rows of figure f of source into *out: their number, or -1 with err. */
long status_figure_rows(MYSQL *meta, const char *source, enum status_figure f,
                        struct stmt_rows *out, char *err, size_t errlen);

#endif
