/* emptied_store: the rebuilds a statement that removes rows without logging
 * them (TRUNCATE, DROP TABLE, DROP DATABASE, the partition statements) owes
 * the index configs reading its tables, and their record in the metadata
 * (emptied_rebuilds).
 *
 * The reader learns of such a statement only by reading it (no row event
 * follows), and hands the rebuild to the supervisor (struct commands'
 * truncated). Once the checkpoint is past the statement, a restart would
 * never read it again, so the owed rebuild is written to the metadata
 * before the reader reads on, and deleted by the supervisor once it has
 * queued the rebuild or judged that none is owed. The reader loads its
 * source's rows when it starts: a daemon stopped or killed in between,
 * however long a dropped table stays away, still rebuilds the index.
 *
 * A row is keyed by where the statement was read (a producer's snapshot:
 * by the snapshot's position), so a statement read twice (after a restart
 * from a checkpoint before it, or a snapshot's DROP of each table) is owed
 * once while its row stands. */
#ifndef SS_SYNC_EMPTIED_STORE_H
#define SS_SYNC_EMPTIED_STORE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mysql.h>

/* an index config to rebuild because a table it reads was emptied */
struct emptied {
    char *alias, *reason; /* reason: "TRUNCATE TABLE db.t read from the binlog at pos" */
    bool dropped;         /* DROP TABLE: no rebuild until the table is back */
    unsigned tries;
    /* a statement a producer replayed to describe the schema at this binlog
     * position (Debezium's snapshot): nothing to rebuild when the index's
     * pages were read after it (replayed_file "": a statement the server ran) */
    char replayed_file[256];
    unsigned long long replayed_pos;
    char *key;         /* where it was read: one owed rebuild per index config and key */
    bool recorded;     /* a row of emptied_rebuilds stands for it */
    int64_t queued_ms; /* when the reader queued it (mono_ms) */
};

/* e owed for where (a statement's "read from" text; replayed: keyed by the
 * snapshot's position instead): alias and reason copied, not recorded */
struct emptied emptied_make(const char *alias, const char *reason, bool dropped,
                            const char *replayed_file, unsigned long long replayed_pos,
                            const char *where);
void emptied_free(struct emptied *e); /* its strings */

/* e recorded for source; *had: a row for it stood already (owed and
 * queued before: nothing more to queue). 0 or -1 (err). */
int emptied_store_add(MYSQL *meta, const char *source, const struct emptied *e, bool *had,
                      char *err, size_t errlen);
/* source's rows appended to *v (*n), oldest first, recorded; 0 or -1 (err) */
int emptied_store_load(MYSQL *meta, const char *source, struct emptied **v, size_t *n,
                       char *err, size_t errlen);
/* e handled: its row deleted (not recorded: nothing to do). 0 or -1 (err). */
int emptied_store_done(MYSQL *meta, const char *source, const struct emptied *e, char *err,
                       size_t errlen);
#endif
