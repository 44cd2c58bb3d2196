/* ddl_truncate: what a TRUNCATE TABLE read from the binlog means to the
 * mapping. TRUNCATE writes no row events, so without this the documents of
 * the emptied table would stay in the index for good.
 *
 * The reader (sync/binlog_source.c on_ddl) recognises the statement
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

#include "mapping.h"

/* If sql is `TRUNCATE [TABLE] [db.]name` (identifiers bare or in
 * backquotes, comments and any case allowed), true with the table's
 * database (default_db when not written) and name. */
bool ddl_truncated_table(const char *sql, size_t len, const char *default_db, char *db,
                         size_t dblen, char *table, size_t tablelen);

/* Does index config ix build documents from rows of db.table? */
bool ddl_index_reads(const struct mp_index *ix, const char *db, const char *table);

#endif
