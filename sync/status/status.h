/* status: where one source's sync stands, gathered into a struct that both
 * `searchsync status` (cmd/cmd_status.c, text) and the admin API
 * (web/api.c, GET /api/v1/status, JSON) render. Nothing is kept in a
 * daemon's memory: every fact is read from the metadata schema, the source
 * and the engine, so it works whether a daemon runs or not.
 *
 *   source   checkpoint (position, age) beside the binlog's end on the source,
 *            and the bytes between them when both are in one file; caught up
 *            when nothing lies between them but checkpoint writes (below)
 *   indices  per index config: state, live version, version being built,
 *            epoch; where the alias points in the engine and its documents
 *   jobs     reindex jobs by index and status
 *   waiting  dead letters per index, change snapshots for the delayed run
 *
 * A part that cannot be read is recorded with its error and the rest is still
 * gathered (`ok` false); the metadata server among them, when only the
 * source's binlog end (and the server that is down) can be said. Numbers that come from the servers stay the text the
 * servers sent (BIGINT counters never pass through a double). */
#ifndef SS_STATUS_H
#define SS_STATUS_H
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "config.h"

struct search_conn;

/* rows of one query, cells as text (NULL = SQL NULL) */
struct status_rows {
    bool failed;      /* the query failed (err in ss_status.errors) */
    size_t nrows, ncols;
    char **cells;     /* nrows * ncols */
};
#define STATUS_CELL(t, r, c) ((t)->cells[(r) * (t)->ncols + (c)])

struct status_index {
    char *alias, *state;
    unsigned current_version, building_version, epoch;
    size_t ntables;
    bool engine_read;  /* the engine was asked */
    char *engine_err;  /* why it could not be (NULL: no error) */
    char *targets;     /* comma list of the indices behind the alias; NULL: no alias yet */
    char *documents;   /* count as the engine sent it; NULL: unknown */
    char *stopped;     /* why its live deliveries are stopped (sync/node/index_stop.c); NULL: not */
    char *pattern;     /* over shard tables: its root table's pattern (NULL: none) */
    char **shards;     /* ... the shards its live version has read (shards_read) */
    size_t nshards;
};

struct ss_status {
    bool ok;               /* every part could be read */
    bool meta_reached;     /* the metadata schema could be read (else nothing of it is
                            * known: checkpoint, mapping, jobs, ... are left out) */
    char *meta_err;        /* why it could not */
    char *meta_host, *meta_database;
    int meta_port;
    char *source_name, *source_host;
    int source_port;
    char *checkpoint;      /* "file:pos"; NULL: none yet, or not known (!meta_reached) */
    char *checkpoint_age;  /* seconds since it was saved */
    const char *start;     /* [source] start (where a source without checkpoint begins) */
    bool source_reached;
    char *source_err;      /* the source could not be reached */
    char *binlog_end;      /* "file:pos"; NULL: unknown */
    char *binlog_err;      /* why unknown (db_binlog_status failed, binlog off) */
    long long bytes_behind; /* checkpoint and end in one file; -1: not comparable */
    bool caught_up;        /* bytes_behind 0, or only checkpoint writes in those bytes */
    char *mapping_err;     /* the mapping could not be read */
    char *engine_err;      /* the engine client could not be made */
    struct status_index *indices;
    size_t nindices;
    struct status_rows jobs;       /* alias, status, jobs, rows read, docs written, errors */
    struct status_rows job_list;   /* each job of a running build: alias, version, bucket,
                                    * status, node (cluster: its owner), rows read, moved
                                    * by a rebalance */
    struct status_rows dead;       /* index, count */
    struct status_rows snapshots;  /* db.table, count */
    struct status_rows delayed_run; /* the last delayed run: id, status, started, finished,
                                      snapshots, ids, documents rebuilt, deleted, errors */
    struct status_rows nodes;      /* each daemon's role and health as it wrote it when they
                                    * changed (node_states): node, role, seconds since, state */
    struct status_rows checks;     /* each index's last check: index, status, finished,
                                      window_s, differences, documents fetched */
    char **errors;                 /* what could not be read, in order */
    size_t nerrors;
    bool checkpoint_purged;    /* the checkpoint's binlog file is gone from the source */
    /* the last stretch of binlog skipped ([source] on_purged = rebuild, run
     * --from-current): when, by which node, what (the stretch and the versions
     * queued); NULL: none in the sync log */
    char *skipped_at, *skipped_node, *skipped_detail;
};

/* Gather everything. meta: the metadata schema selected, or NULL with
 * meta_err saying why it is unreachable (then only the source's binlog end
 * is read); src: the source, or NULL with src_err saying why; k: an engine
 * connection, or NULL with engine_err set. Never fails as a whole: st->ok
 * and st->errors tell what is missing (a server that is down as "metadata: ",
 * "source: " or "engine: " and why). */
void status_collect(const struct ss_config *cfg, MYSQL *meta, const char *meta_err, MYSQL *src,
                    const char *src_err, struct search_conn *k, const char *engine_err,
                    struct ss_status *st);
void status_free(struct ss_status *st); /* NULL-safe */

/* With the metadata schema on the source server, every checkpoint save is
 * itself a binlog transaction (an UPDATE of `<metadata>.offsets`) written
 * after the position it saves, so an idle daemon's checkpoint always sits one
 * such transaction short of the binlog's end. The bytes between them are
 * read (SHOW BINLOG EVENTS, which the documented REPLICATION CLIENT grant
 * allows) and the source counts as caught up when they hold nothing else.
 *
 * One event of that listing, as the server sent it. */
struct status_binlog_event {
    const char *type;            /* Event_type */
    unsigned long long end_pos;  /* End_log_pos */
    const char *info;            /* Info */
};

/* Whether events, listed from the checkpoint on, reach end_pos through
 * whole transactions that write only metadata_db's offsets (checkpoint
 * saves) and node_states (a daemon's role at its stop) tables. false for
 * anything else: another table, DDL, a rotation, or a listing that stops
 * short of end_pos. Pure, for the unit tests. */
bool status_only_checkpoint_writes(const struct status_binlog_event *ev, size_t n,
                                   const char *metadata_db, unsigned long long end_pos);

/* The status as one JSON object (docs/http-api.md, GET /api/v1/status). */
struct sbuf;
void status_json(const struct ss_status *st, struct sbuf *out);

#endif
