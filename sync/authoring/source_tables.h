/* source_tables: the tables of the source a mapping can be written over
 * (the admin UI's mapping editor lists them): every base table outside the
 * system schemas and the metadata schema, read from information_schema. */
#ifndef SS_SOURCE_TABLES_H
#define SS_SOURCE_TABLES_H
#include <stddef.h>

#include <mysql.h>

#include "stmt.h"

/* The source's tables by schema and name, leaving out schema metadata_db
 * (the metadata's, when it lives on the source): TABLE_SCHEMA, TABLE_NAME,
 * TABLE_ROWS (the server's estimate), ENGINE, the primary key's columns in
 * order, comma-separated (NULL without one). The number of rows, or -1 with
 * err. */
long source_tables_rows(MYSQL *src, const char *metadata_db, struct stmt_rows *out, char *err,
                        size_t errlen);

#endif
