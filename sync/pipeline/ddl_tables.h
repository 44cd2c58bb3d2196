/* ddl_tables: what a DDL statement read from the binlog (or from a Kafka
 * producer) does to tables, and which index configs read them.
 *
 * The binlog holds a schema change as the statement's text only. To follow a
 * change at the position it was read at — not at whatever the server holds
 * when a check happens to run — the node needs to know which tables the
 * statement names and what it does to each: creates, alters, drops,
 * truncates, renames (from one name to another). Online schema change tools
 * (pt-online-schema-change, gh-ost) swap a rebuilt table in with a RENAME,
 * in one statement (`RENAME TABLE t TO _t_old, _t_new TO t`) or two (gh-ost's
 * two-step cut-over: `RENAME TABLE t TO _t_del`, then `RENAME TABLE _t_gho TO
 * t`), and run many statements that name only their own shadow tables
 * (ANALYZE, CREATE TRIGGER, DROP of the old copy): only a statement naming a
 * mapped table says anything about it.
 *
 * ddl_parse is pure (no server, no mapping): the statement's text in, its
 * effects out, in the order the statement applies them. Neither TRUNCATE nor
 * DROP writes row events, so without these effects the documents of an
 * emptied or dropped table would stay in the index for good: the node queues
 * a rebuild of every index config that reads it (sync/node/daemon_source.c),
 * and decides whether each mapping still fits (sync/node/schema_watch.c). */
#ifndef SS_DDL_TABLES_H
#define SS_DDL_TABLES_H
#include <stdbool.h>
#include <stddef.h>

#include "sync/mapping/mapping.h"

enum ddl_kind {
    DDL_NONE,    /* changes no table's shape or rows: ANALYZE, OPTIMIZE, triggers,
                  * views, routines, users, CREATE DATABASE, temporary tables, ... */
    DDL_TABLES,  /* its effects on tables are listed */
    DDL_UNKNOWN  /* a statement this parser does not read: it may change any
                  * table of its database */
};

enum ddl_effect {
    DDL_CREATED,      /* CREATE TABLE (LIKE, AS SELECT) */
    DDL_ALTERED,      /* ALTER TABLE, CREATE INDEX / DROP INDEX ... ON */
    DDL_TRUNCATED,    /* TRUNCATE: the table stays, its rows are gone */
    DDL_DROPPED,      /* DROP TABLE, the old table of CREATE OR REPLACE */
    DDL_RENAMED_FROM, /* the name a RENAME takes the table from ... */
    DDL_RENAMED_TO,   /* ... and the name it gives it (the next target) */
    DDL_DB_DROPPED    /* DROP DATABASE: every table of db (table is "") */
};

struct ddl_target {
    char db[65], table[65]; /* MySQL identifiers: at most 64 characters */
    enum ddl_effect effect;
};

struct ddl_stmt {
    enum ddl_kind kind;
    struct ddl_target *t; /* in the order the statement applies them */
    size_t n;
};

/* Read sql (len bytes; comments, any case, `quoted` identifiers allowed).
 * default_db: the statement's database (tables written without one are in
 * it; with none known such targets are left out). Fills *out (free it with
 * ddl_stmt_free) and returns out->kind. */
enum ddl_kind ddl_parse(const char *sql, size_t len, const char *default_db,
                        struct ddl_stmt *out);
void ddl_stmt_free(struct ddl_stmt *s); /* NULL-safe; leaves *s empty */

/* Does the statement take db.table away (a DROP, a RENAME from it, its
 * database dropped) without putting a table of that name back later in the
 * same statement (a swap puts one back)? And does it put one there (CREATE,
 * a RENAME to it)? The last effect on a name wins. */
bool ddl_takes_away(const struct ddl_stmt *s, const char *db, const char *table);
bool ddl_puts_back(const struct ddl_stmt *s, const char *db, const char *table);

/* Does index config ix build documents from rows of db.table? */
bool ddl_index_reads(const struct mp_index *ix, const char *db, const char *table);

/* Might a DDL statement in database db (its text: text) touch a table
 * index config ix reads — any of its tables' or relations' databases is db
 * or written out in the statement? (For a statement this parser does not
 * read: DDL_UNKNOWN.) */
bool ddl_index_reads_database(const struct mp_index *ix, const char *db, const char *text);

/* Does the statement name a table ix reads (any effect; a dropped database
 * holding one counts)? */
bool ddl_names_index_table(const struct ddl_stmt *s, const struct mp_index *ix);

#endif
