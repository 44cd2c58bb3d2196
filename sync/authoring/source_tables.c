/* source_tables: the source's tables a mapping can be written over (see
 * source_tables.h). */
#include "sync/authoring/source_tables.h"

long source_tables_rows(MYSQL *src, const char *metadata_db, struct stmt_rows *out, char *err,
                        size_t errlen) {
    const char *p[] = {metadata_db};
    return stmt_query(
        src,
        "SELECT t.TABLE_SCHEMA, t.TABLE_NAME, t.TABLE_ROWS, t.ENGINE, "
        "(SELECT GROUP_CONCAT(k.COLUMN_NAME ORDER BY k.ORDINAL_POSITION SEPARATOR ',') "
        " FROM information_schema.KEY_COLUMN_USAGE k WHERE k.TABLE_SCHEMA = t.TABLE_SCHEMA "
        " AND k.TABLE_NAME = t.TABLE_NAME AND k.CONSTRAINT_NAME = 'PRIMARY') "
        "FROM information_schema.TABLES t WHERE t.TABLE_TYPE = 'BASE TABLE' AND t.TABLE_SCHEMA "
        "NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') AND "
        "t.TABLE_SCHEMA <> ? ORDER BY t.TABLE_SCHEMA, t.TABLE_NAME",
        p, 1, out, err, errlen);
}
