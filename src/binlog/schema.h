/* schema: table shapes from the server's information_schema (see schema.c). */
#ifndef SS_BINLOG_SCHEMA_H
#define SS_BINLOG_SCHEMA_H
#include <mysql.h>
#include <stdbool.h>

#include "binlog/binlog.h"

typedef struct bl_schema {
    MYSQL *conn;                       /* opened lazily, reopened when lost */
    MYSQL *(*connect)(void *ctx, char *err, size_t errlen);
    void *connect_ctx;
    bool mariadb;
    bool full_metadata;
} bl_schema;

void bl_schema_init(bl_schema *s, MYSQL *(*connect)(void *ctx, char *err, size_t errlen), void *ctx,
                    bool mariadb, bool full_metadata);
void bl_schema_free(bl_schema *s);
/* Fill what the TABLE_MAP lacks and check it against the schema: a
 * bl_table_hook (ctx = the bl_schema). */
int bl_schema_check(bl_schema *s, bl_table *t, char *err, size_t errlen);

#endif
