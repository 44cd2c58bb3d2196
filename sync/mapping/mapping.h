/* mapping: the in-memory mapping model (docs/mapping.md).
 *
 * Owns: index config -> table configs -> columns and relations, relations
 * nesting at any depth (one-to-one object, one-to-many nested array); the
 * MySQL type -> engine type defaults and the compatibility rules; reading and
 * writing the declarative JSON mapping file (docs/mapping.md); loading and
 * saving the model in the metadata tables (sql/migrations/0003_mapping.sql);
 * validation against the source's information_schema.
 *
 * Errors name the file, the JSON path and the index/table/column concerned.
 * Numbers in the file are read exactly (json_exact), never through doubles. */
#ifndef SS_MAPPING_H
#define SS_MAPPING_H
#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"

struct mp_column {
    char *name;
    char *mysql_type;      /* information_schema COLUMN_TYPE, lower case ("" = unknown) */
    char *type;            /* engine type: long, text, keyword, ... */
    char *analyzer, *search_analyzer, *copy_to, *extend_name, *format; /* NULL = none */
    bool keyword;          /* text: add a .keyword subfield */
    bool is_key;
    bool nested;           /* ExtendIsNest: default for relations on this column */
    bool indexed;          /* false: stored in _source only */
    bool index_given;      /* the file said "index" (else a JSON column without a "type"
                              is stored only: see mapping.c, column types) */
    bool primary;          /* in its table's primary key (set by validation against the
                              source's schema; false when that was not loaded) */
    char *widened_from;    /* set by validation: the source's type changed from this one
                              (mysql_type as recorded) to mysql_type, which the column's
                              engine type still holds; NULL otherwise */
};

struct mp_relation {
    char *column;          /* column of the owning row */
    char *extend_name;     /* NULL: inherit the column's */
    char *db, *table;      /* the related table */
    char *join_column;     /* the related table's column matched with column */
    int nested;            /* -1 inherit the column's, 0 object, 1 nested array */
    char *where;           /* extra condition on the related rows, NULL = none */
    bool distinct;
    bool refresh_parent;
    bool area_update;
    bool flatten;          /* many-to-many through this (link) table: each element of the
                              array is the row of its one one-to-one relation, the linked
                              table's, at the element's top level; the link row's own
                              columns are read to join and order, not written */
    struct mp_column *columns; /* loaded from the related table */
    size_t ncolumns;
    struct mp_relation *relations;
    size_t nrelations;
    /* the related table's primary key, from the source's schema at
     * validation: its column count (0: not known, or none) and whether
     * join_column is one of them */
    unsigned nprimary;
    bool join_primary;
    /* join_column leads an index of a table whose secondary indexes hold
     * the primary key (InnoDB), from the same schema: the related rows'
     * keys can be read from that index alone (docbuild_level.c) */
    bool join_indexed;
    /* join_column's type class, from the same schema: the document builder
     * writes its lookup values as number literals only for an integer
     * column (a number against a VARCHAR column cannot use its index) */
    enum mp_join_kind { MP_JOIN_UNKNOWN = 0, MP_JOIN_INTEGER, MP_JOIN_OTHER } join_kind;
};

enum mp_mode { MP_REQUERY = 0, MP_ROWIMAGE = 1 };

/* One level of a hand-written relation top (a delay-effect table's
 * "relation_top" in the mapping file, sync/delayed/delayed.h): SQL run in database
 * db, taking the level below's values as a `?` list, returning column
 * output. */
struct mp_top_level {
    char *db, *sql, *output;
};

struct mp_table {
    char *db, *table;
    char *join_name;                  /* parent/child: this table's relation name */
    char *parent_db, *parent_table;   /* parent/child child: the parent table */
    char *parent_column;              /* column holding the parent's key */
    char *bucket_column, *daily_check_column, *copy_to, *expiry_column;
    /* a document table's row filter: SQL its rows must meet to be documents
     * (NULL: every row). Re-query mode adds it to the builder's queries,
     * row-image mode decides it from the row image (row_filter.h) */
    char *where;
    /* run-time, set by validation: where parsed (NULL: no where, or one
     * outside the subset row_filter reads, whose columns are then not known),
     * bound to the source's schema when one was given */
    struct row_filter *filter;
    bool delay_effect;
    struct mp_top_level *top; /* delay_effect: hand-written relation top, root keys last */
    size_t ntop;
    enum mp_mode mode;
    struct mp_column *columns;
    size_t ncolumns;
    struct mp_relation *relations;
    size_t nrelations;
};

/* "replicas" absent from a mapping file: the engine's default
 * (search/replicas.h), settled by mapping import before it is stored */
#define MP_REPLICAS_DEFAULT (-1)

struct mp_index {
    char *alias;
    int shards, replicas, history_retention; /* replicas MP_REPLICAS_DEFAULT: a file
                                               * that names none (mapping_parse) */
    char *join_field;  /* name of the join field (parent/child), default "relation" */
    char *analysis;    /* JSON text of settings.analysis, NULL = none */
    struct mp_table *tables; /* tables[0] is the root */
    size_t ntables;
    /* run-time state, from the metadata tables only (never from a file) */
    char *state;
    unsigned current_version, epoch;
    char *stopped;   /* index_configs.stopped_reason when loaded (NULL: none) */
    bool deliveries_stopped; /* nothing through the alias (sync/node/index_stop.c): set from
                              * stopped at load, then kept by the reader from the
                              * build table (a build going live lifts it) */
    bool unusable;   /* stopped, and the source no longer fits its mapping (set by
                      * mapping_validate): nothing is routed to it at all */
    /* table patterns (sync/mapping/mapping_shard.h): from the file */
    char *id_template; /* "id": the document id made of {db} {table} {key} {name...};
                        * NULL: the default */
    bool unique_keys;  /* "unique_keys": keys never collide across shards and sources ({key}) */
    /* several sources (sync/mapping/mapping_shard.h, mp_index_multi): from the file */
    char **sources;    /* "sources": the sources whose rows are its documents (NULL: the
                        * source named like the mapping) */
    size_t nsources;
    char *source;      /* the source this process builds its documents for, set when
                        * the mapping is loaded for one (mapping_for_source); NULL: none */
    /* a unit: this config for one shard (mapping_expand), its names concrete */
    char *unit;        /* the shard's root table "db.table" (NULL: not a unit) */
    char *pattern_db, *pattern_table; /* the root's pattern, to match new shards */
    char **patterns;   /* the other tables' and relations' patterns: db, table pairs
                        * (2 * npatterns), to match their new tables */
    size_t npatterns;
    char *id_pre, *id_post; /* its documents' ids: id_pre + key + id_post (NULL: the key) */
    bool deferred;   /* not stopped, and the source does not fit it now, but whether it
                      * still fits is decided at the schema change the reader has yet to
                      * read (sync/node/schema_watch.c): routed as before, its problems
                      * not counted by mapping_validate */
};

struct mapping {
    struct mp_index *indices;
    size_t nindices;
};

void mapping_free(struct mapping *m); /* NULL-safe; leaves *m empty */
void mp_index_free(struct mp_index *ix); /* its contents */
/* A deep copy of ix into *out (everything, run-time fields too). */
void mp_index_copy(struct mp_index *out, const struct mp_index *ix);
void mapping_copy(struct mapping *out, const struct mapping *m);
/* The column types validation filled into `validated` (m expanded into
 * units: mapping_shard.h), put into m: each index config of m takes them
 * from its first unit. An index config with table patterns and no unit (no
 * shard in the source) is a problem (one line in errs). only: NULL, or
 * m->nindices flags, false for an index config to leave as it is (another
 * source's: sync/mapping/mapping_source.h). Returns the number of problems. */
int mapping_types_from(struct mapping *m, const struct mapping *validated, const bool *only,
                       sbuf *errs);
/* The index config with this alias, NULL when none. */
const struct mp_index *mp_index_named(const struct mapping *m, const char *alias);
/* The column marked as the key among cols[0..n) (a table's or a relation's),
 * NULL when none is. */
const struct mp_column *mp_key_column(const struct mp_column *cols, size_t n);
static inline const struct mp_column *mp_table_key(const struct mp_table *t) {
    return mp_key_column(t->columns, t->ncolumns);
}
/* Does the index hold parent/child documents (tables below the root with a
 * parent)? */
static inline bool mp_index_has_children(const struct mp_index *ix) {
    for (size_t i = 1; i < ix->ntables; i++)
        if (ix->tables[i].parent_table) return true;
    return false;
}
static inline const struct mp_column *mp_relation_key(const struct mp_relation *r) {
    return mp_key_column(r->columns, r->ncolumns);
}

/* ---------- types ---------- */

/* The default engine type for a MySQL COLUMN_TYPE ("bigint(20) unsigned"). */
const char *mapping_default_type(const char *mysql_type);
/* TINYINT..BIGINT (signed or not): SQL orders its values as numbers */
bool mapping_is_integer_type(const char *mysql_type);
/* BIGINT UNSIGNED: values up to 2^64-1, above what a `long` field holds */
bool mapping_is_unsigned_bigint(const char *mysql_type);
/* DECIMAL(p,s): s; any other type: -1. */
int mapping_decimal_scale(const char *mysql_type);
/* 0 if engine type `type` can hold every value of `mysql_type` without loss;
 * -1 with a reason otherwise (unknown engine type included). */
int mapping_type_compatible(const char *mysql_type, const char *type, char *why, size_t whylen);
/* May a column recorded as MySQL type `from` with engine type `type` follow
 * the source to `to` without a reindex? Yes when both are of one kind
 * (integers, strings, decimals with the same scale, floating point, enum or
 * set labels...), `to` holds every value of `from`, and `type` still holds
 * `to`: a longer VARCHAR, INT -> BIGINT, more DECIMAL digits. */
bool mapping_type_widens(const char *from, const char *to, const char *type);

/* ---------- the JSON file ---------- */

/* Parse a mapping file's text. name is used in messages. 0 or -1 with err
 * ("NAME: $.indices[0].tables[1].columns[2].type: ..."). */
int mapping_parse(const char *name, const char *text, size_t len, struct mapping *out, char *err,
                  size_t errlen);
/* Write the canonical file (stable order, defaults omitted), ending in '\n'. */
void mapping_write(const struct mapping *m, sbuf *out);
/* Re-indent compact JSON for people: containers holding no container stay
 * on one line (used for the file and the golden index bodies). */
void mapping_pretty(const char *json, size_t n, sbuf *out);
/* The canonical JSON of one index config (plans compare these). */
void mapping_write_index(const struct mp_index *ix, sbuf *out);

/* ---------- validation ---------- */

/* The source schema as information_schema describes it. */
struct mp_schema_col {
    char *db, *table, *column, *type;
    char *collation; /* information_schema COLLATION_NAME (NULL: none, or not loaded) */
    bool primary;
    bool unique; /* a UNIQUE index of its own (COLUMN_KEY 'UNI'): the key taken when the
                  * primary key has several columns */
    bool leads_index; /* the first column of a secondary index (COLUMN_KEY 'UNI' or 'MUL') */
    bool clustered;   /* its table is InnoDB: a secondary index entry holds the primary key */
};
struct mp_schema {
    struct mp_schema_col *cols;
    size_t n, cap;
};
void mp_schema_add(struct mp_schema *s, const char *db, const char *table, const char *column,
                   const char *type, bool primary);
void mp_schema_free(struct mp_schema *s);
const struct mp_schema_col *mp_schema_find(const struct mp_schema *s, const char *db,
                                           const char *table, const char *column);

/* Fill missing mysql types and engine types from the schema (NULL: types
 * only from what the file says) and check the whole model. Every problem is
 * appended to errs as one line; returns the number of problems. An index
 * config whose deliveries are stopped (ix->stopped) is checked too, but its
 * problems are not counted: it is marked unusable instead; one deferred
 * (ix->deferred) is checked, its problems not counted, and stays usable. */
int mapping_validate(struct mapping *m, const struct mp_schema *schema, sbuf *errs);
/* One index config of m against schema (as mapping_validate does for each):
 * the number of problems, one line each appended to errs. */
int mapping_validate_index(struct mapping *m, size_t i, const struct mp_schema *schema,
                           sbuf *errs);

/* The effective extend name / nested flag of a relation (the relation's
 * own value overrides its column's). */
const char *mp_relation_name(const struct mp_relation *r, const struct mp_column *owner_cols,
                             size_t nowner);
bool mp_relation_nested(const struct mp_relation *r, const struct mp_column *owner_cols,
                        size_t nowner);
/* A column of the index's root documents (the root table's, or a relation's
 * at any depth) whose value an engine-side rewrite of `_source` (a script or
 * partial update) would not keep byte for byte: JSON (numbers and spacing
 * re-serialised: 1.10 -> 1.1, 1e400 -> "Infinity"), FLOAT and DOUBLE (the
 * engine's number form: 12345678.9 -> 1.23456789E7). Its name, or NULL. */
const char *mp_index_rewritten_column(const struct mp_index *ix, const char **mysql_type);

/* ---------- the metadata tables ---------- */
struct st_mysql;
/* Load the information_schema columns of every table the mapping names. */
int mapping_schema_load(struct st_mysql *src, const struct mapping *m, struct mp_schema *out,
                        char *err, size_t errlen);
/* Load the source's schema for m and validate m against it (mapping_validate):
 * 0 valid, 1 invalid (err: "the mapping does not match the source:" and one
 * line per problem), -1 the source failed (err). */
int mapping_check_source(struct st_mysql *src, struct mapping *m, char *err, size_t errlen);
/* The same, a config over shard tables expanded keeping the shards keep[]
 * (mapping_expand_with): the ones the daemon follows already. */
int mapping_check_source_keep(struct st_mysql *src, struct mapping *m, char *const *keep,
                              size_t nkeep, char *err, size_t errlen);
/* Run each relation's extra WHERE condition, and each document table's
 * where, against its table on the source (SELECT 1 ... WHERE (cond)
 * LIMIT 0), so a condition with an error or an unknown column is refused at
 * import rather than at sync time. Problems are
 * appended to errs, one line each; returns their number, or -1 with err when
 * the server fails otherwise. The condition is configuration written by an
 * operator, spliced into SQL by design. */
int mapping_check_where(struct st_mysql *src, const struct mapping *m, sbuf *errs, char *err,
                        size_t errlen);
/* Load / replace the model of one source (metadata schema selected). Save
 * keeps each kept index config's state, version and epoch; it runs in one
 * transaction. */
int mapping_db_load(struct st_mysql *meta, const char *source, struct mapping *out, char *err,
                    size_t errlen);
/* The same for the daemon or a command of source `source` reading mapping
 * `mapping` ([source] mapping, config_mapping_name): only the index configs
 * the source feeds, made its own (mapping_for_source). */
int mapping_db_load_for(struct st_mysql *meta, const char *mapping, const char *source,
                        struct mapping *out, char *err, size_t errlen);
/* ... for configuration cfg's source (config.h) */
struct ss_config;
int mapping_db_load_config(struct st_mysql *meta, const struct ss_config *cfg,
                           struct mapping *out, char *err, size_t errlen);
int mapping_db_save(struct st_mysql *meta, const char *source, const struct mapping *m,
                    char *err, size_t errlen);
/* The checksums of the metadata tables a mapping is stored in (one CHECKSUM
 * TABLE), as text into out: a cheap test of whether a load could find an
 * edit. 0, or -1 (err) when the server cannot say. */
/* Record a widening validation accepted (mp_column.widened_from): column
 * db.table.column of source's mapping, recorded as `from`, becomes `to`
 * wherever it is listed. Rows changed, or -1 with err. */
long long mapping_db_record_type(struct st_mysql *meta, const char *source, const char *db,
                                 const char *table, const char *column, const char *from,
                                 const char *to, char *err, size_t errlen);
int mapping_db_checksum(struct st_mysql *meta, char *out, size_t outlen, char *err,
                        size_t errlen);

/* Check an operator-written WHERE fragment of a relation or a document
 * table (spliced as `WHERE (fragment)`): 0 if acceptable, -1 with the reason
 * in why. */
int mapping_where_check(const char *cond, char *why, size_t whylen);

#endif
