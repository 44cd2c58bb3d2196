/* schema_watch: does each index config's mapping still fit the source —
 * decided at the binlog position of the schema change that may have broken
 * it, not from whatever the server holds when a check happens to run (the
 * design is at the top of schema_watch.c). Supervisor thread; the reader
 * only posts what it read (struct ddl_read) to the command queue. */
#ifndef SS_SYNC_SCHEMA_WATCH_H
#define SS_SYNC_SCHEMA_WATCH_H
#include <stdbool.h>
#include <stddef.h>

#include "sync/mapping/mapping.h"
#include "sync/pipeline/ddl_tables.h"
#include "sync/sources/source.h"

/* a DDL statement read that names tables the mapping reads (or that this
 * node cannot read, in a database it reads), posted by the reader in the
 * order it read them */
struct ddl_read {
    char note[SOURCE_NOTE_MAX]; /* "after `RENAME TABLE ...` read from the binlog at F:P" */
    struct ddl_stmt stmt;       /* what it does to tables (ddl_tables.h) */
    char **aliases;             /* the index configs (of the generation in force) reading a
                                 * table it names, or (DDL_UNKNOWN) a database it is in */
    size_t naliases;
};
void ddl_read_free(struct ddl_read *d); /* NULL-safe; frees its contents */

struct sw_absent;   /* a mapped table the binlog says is gone (schema_watch.c) */
struct sw_named;    /* an index config a DDL read since the last look named */
struct sw_deferred; /* routed though the source does not fit it now */

struct schema_watch {
    struct sw_absent *absent;
    size_t nabsent;
    struct sw_named *named;
    size_t nnamed;
    struct sw_deferred *deferred;
    size_t ndeferred;
    char **refit; /* "alias\x1fstop reason": stopped, fitting again, rebuild asked for */
    size_t nrefit;
    char **gone;  /* shards ("db.table" of a config over shard tables) whose root table the
                   * binlog took away for good: no longer kept as units */
    size_t ngone;
    long long due_ms;  /* a look owed (monotonic ms; 0: none) */
    unsigned relooks;  /* looks in a row that left something deferred (backing off) */
};

/* What the reader read: the tables it takes away or puts back (names read by
 * an index config of m), and the index configs it names, to judge at the
 * next look. */
void schema_watch_ddl(struct schema_watch *w, const struct mapping *m, const struct ddl_read *d);

/* Is a look owed now (a DDL named an index config's tables since the last
 * one, or something deferred is to be looked at again)? */
bool schema_watch_due(const struct schema_watch *w, long long now_ms);

struct supervisor;
/* Look at the source now and judge every index config:
 *   - fits: goes on (a stopped one that fits again is rebuilt:
 *     index_stop_refit);
 *   - a table it reads is missing from the source: stopped only once the
 *     binlog read so far has taken that name away (a DROP, a RENAME from it)
 *     and no table of that name came back within [source]
 *     schema_settle_ms; while the binlog says the table is there the server
 *     is only ahead of the reader (a schema change not read yet, an online
 *     schema change's swap under way): deferred, judged again when that
 *     change is read;
 *   - a column no longer fits: stopped, naming the DDL read that names its
 *     table; without one read yet (the server ahead of the reader), deferred.
 * forced (the note of a query refused for schema_settle_ms, NULL: none):
 * nothing is deferred any more, the source as it is decides. at_start: the
 * first look, before the reader reads anything (every index config is
 * judged; a table missing then counts as taken away then). *stopped: how
 * many were stopped. 0, or -1 with sv->err (a server failed: nothing
 * decided, looked at again). */
int schema_watch_judge(struct supervisor *sv, const char *forced, bool at_start, size_t *stopped);

/* The shards a new generation keeps as units whatever one look at the
 * source says (mapping_expand_with's keep): those of generation m (the one
 * published) that are not gone — root dropped, or renamed away for longer
 * than [source] schema_settle_ms. *keep and its strings are malloc'd. */
void schema_watch_keep(const struct schema_watch *w, const struct mapping *m, char ***keep,
                       size_t *nkeep);

/* Is alias deferred (routed though the source does not fit it now)? */
bool schema_watch_deferred(const struct schema_watch *w, const char *alias);

void schema_watch_free(struct schema_watch *w);

#endif
