/* read_view: a read snapshot of the source in which every table it reads is
 * the table that name held when the snapshot began.
 *
 * InnoDB checks a table against a transaction's read view for the table's
 * own creation only (ER_TABLE_DEF_CHANGED after a CREATE, ALTER, TRUNCATE of
 * it), never for a RENAME. An online schema change (pt-online-schema-change,
 * gh-ost) fills a shadow table created beforehand and swaps it in with a
 * RENAME. A snapshot that began after the shadow was created and before its
 * last rows were copied, and that first opens the table after the swap,
 * reads the shadow as it was when the snapshot began: rows missing, nested
 * arrays empty, no error. A document built from it is stale for good (its
 * version is the snapshot's, and no later change of its rows comes).
 *
 * A table's metadata lock, taken when a statement of a transaction first
 * opens it and held to the transaction's end, keeps every RENAME, DROP or
 * ALTER of it waiting. So a snapshot here first opens every table its reads
 * may touch (one statement, LIMIT 0, before any row is read), then makes
 * sure no schema change naming one of them landed between the snapshot's
 * start and those locks:
 *   - a server that reports the snapshot's binlog position (MariaDB, Percona
 *     Server): every such change is in the binlog between that position and
 *     the binlog's end read once the locks are held (a DDL is binlogged
 *     before it lets go of its own locks). One naming a table read, or one
 *     this parser cannot read in a database read: the snapshot is taken
 *     again (ddl_tables.h reads the statements);
 *   - a server that does not (MySQL): the snapshot is a plain transaction,
 *     whose read view InnoDB takes at its first read of a row, after the
 *     locks. Its version is the binlog position read before it, once every
 *     transaction binlogged up to there is committed
 *     (db_wait_binlogged_committed), which any read view taken later holds.
 *
 * The price: a RENAME of a table read waits while a snapshot is open, as it
 * already did for the tables the snapshot had read (a reindex page's
 * snapshot lives at most 500 ms, a transaction's while its documents are
 * built). */
#ifndef SS_READ_VIEW_H
#define SS_READ_VIEW_H
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "sbuf.h"
#include "strset.h"
#include "sync/mapping/mapping.h"

/* The tables a snapshot's reads may touch. Zero-initialised = none. */
struct rv_tables {
    struct strset seen; /* "db\x1ftable" */
    char **db, **table;
    size_t n, cap;
};
void rv_tables_clear(struct rv_tables *t); /* empty again, memory freed */
/* Every table index config ix builds documents from: its root, its
 * parent/child tables, the tables of its relations at any depth (a
 * delay-effect table's settings entry only through a relation). */
void rv_tables_add_index(struct rv_tables *t, const struct mp_index *ix);
void rv_tables_add(struct rv_tables *t, const char *db, const char *table);

/* What the caller knows of the server: whether it reports a snapshot's
 * binlog position. Start at RV_UNKNOWN; read_view_begin learns it. */
enum rv_kind { RV_UNKNOWN = -1, RV_NO_POSITION = 0, RV_POSITION = 1 };

/* Open a read snapshot on source connection m (REPEATABLE READ, no
 * transaction open) in which every table of t is opened and locked as it was
 * at the snapshot's start. 1: the server reported the snapshot's binlog
 * position (file/pos); 0: it reports none (MySQL: the transaction is open,
 * its read view taken at its first read; the caller versions it with a
 * position read before); -1 error: err says what, *srcerr is the server's
 * error code (ER_NO_SUCH_TABLE for a table of t that is not there now), no
 * transaction is left open. End it with db_snapshot_end. */
int read_view_begin(MYSQL *m, const struct rv_tables *t, enum rv_kind *kind, char *file,
                    size_t filelen, unsigned long long *pos, unsigned *srcerr, char *err,
                    size_t errlen);

/* The statement(s) that open t's tables, appended to out, one per line (at
 * most RV_TOUCH_CHUNK tables each). Exposed for tests. */
#define RV_TOUCH_CHUNK 100
void rv_touch_sql(const struct rv_tables *t, sbuf *out);

/* Does one binlog event of SHOW BINLOG EVENTS (its Event_type and Info)
 * change a table of t, or possibly (a statement ddl_tables cannot read, in a
 * database of t or naming one)? Exposed for tests. */
bool rv_event_touches(const struct rv_tables *t, const char *event_type, const char *info);

#endif
