/* ddl_truncate: what a TRUNCATE TABLE or DROP TABLE read from the binlog
 * means to the mapping. Neither writes row events, so without this the
 * documents of the emptied (or dropped) table would stay in the index for
 * good. A dropped table cannot be rebuilt from until it is created again:
 * the supervisor says so and tries again, and the rebuild runs once it is
 * back (a DROP + CREATE + INSERT migration ends with exactly its rows).
 * Meanwhile the index config is stopped (sync/node/index_stop.c: no document can
 * be built from a table that is gone; the reason says it is rebuilt once the
 * table is back), and the rebuild's dual writes start only at a boundary
 * where the reader routes it again (builds_apply), so no change made in
 * between is lost.
 *
 * The reader (sync/sources/binlog_source.c on_ddl) recognises the statement
 * (ddl_truncated_table, pure) and notes each index config that reads the
 * table — as its root, a parent/child table or any relation at any depth
 * (ddl_index_reads). The supervisor then rebuilds each of them into a new
 * version (a reindex: built from MySQL as it is after the TRUNCATE, with
 * live changes written to both versions meanwhile, switched atomically); a
 * build already under way, which may have read rows from before the
 * TRUNCATE, is cancelled first. */
#ifndef SS_DDL_TRUNCATE_H
#define SS_DDL_TRUNCATE_H
#include <stdbool.h>
#include <stddef.h>

#include "sync/mapping/mapping.h"

/* If sql is `TRUNCATE [TABLE] [db.]name` (identifiers bare or in
 * backquotes, comments and any case allowed), true with the table's
 * database (default_db when not written) and name. */
bool ddl_truncated_table(const char *sql, size_t len, const char *default_db, char *db,
                         size_t dblen, char *table, size_t tablelen);

/* If sql is `DROP TABLE [IF EXISTS] t [, t ...]` (MariaDB logs it with a
 * trailing comment), fn for each table (default_db when not written; tables
 * without a database known are left out) and their number; -1 for any other
 * statement (DROP TEMPORARY TABLE too). */
int ddl_dropped_tables(const char *sql, size_t len, const char *default_db,
                       void (*fn)(void *ctx, const char *db, const char *table), void *ctx);

/* Does index config ix build documents from rows of db.table? */
bool ddl_index_reads(const struct mp_index *ix, const char *db, const char *table);

/* Might a DDL statement in database db (its text: text) touch a table
 * index config ix reads — any of its tables' or relations' databases is db
 * or written out in the statement? (The supervisor then checks the mapping
 * against the schema.) */
bool ddl_index_reads_database(const struct mp_index *ix, const char *db, const char *text);

#endif
