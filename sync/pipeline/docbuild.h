/* docbuild: the document builder — MySQL rows in, complete search documents
 * out (docs/design.md, "Data flow").
 *
 * Owns: reading one index config's documents from the source, by key or by
 * keyset page. Roots are fetched `WHERE key IN (...)` in chunks
 * (DOCBUILD_CHUNK keys) or read whole by a reindex page's keyset query; each
 * relation level then costs one IN query per chunk of distinct parent values
 * for all parents of that level together — never one query per row — with
 * a list of integers that is dense in its span read as one BETWEEN range
 * (a range costs the server far less than a literal per value; rows in the
 * gaps are never looked up), and memory is bounded by one root chunk with
 * its subtree. One-to-one relations
 * become objects (null when the owning column is NULL or no row matches),
 * one-to-many nested arrays ([] when none), at any depth, with the relation's
 * WHERE condition (`AND (cond)`) and DISTINCT. Many-to-many is a nested
 * relation on the link table with a one-to-one relation inside it, as the
 * mapping expresses it.
 *
 * Values are read with the binary protocol (prepared statements, each column
 * bound by its real type) and formatted exactly as the binlog decoder formats
 * the same column (src/binlog/value.c, docs/binlog.md "Values"), so a document built
 * from a row image and one re-queried from MySQL are byte-identical: BIGINT
 * (unsigned too) and DECIMAL exact as text, FLOAT/DOUBLE shortest round-trip,
 * DATETIME/TIMESTAMP with exactly fsp digits (TIMESTAMP in UTC with Z; the
 * connection's time zone must be +00:00, as db_connect sets it), zero dates
 * null, ENUM label, SET array, binary strings base64, BIT integer, JSON the
 * value itself.
 *
 * Document ids (docs/mapping.md "Documents"): a root document's id is its key
 * value as text; a parent/child table's document id is `<join_name>-<key>`
 * (review-5). Root documents of an index with parent/child tables carry
 * `"<join_field>":{"name":<root join name>}`; child documents
 * `{"name":<join_name>,"parent":<parent document id>}` and the routing of
 * the root document they descend from (a grandchild's routing is the root's
 * id, found by walking up the parent tables in batched queries).
 *
 * Errors: 0 ok, -1 with the reason in err (query text named). */
#ifndef SS_DOCBUILD_H
#define SS_DOCBUILD_H
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "jsonw.h"
#include "sync/mapping/mapping.h"
#include "sbuf.h"

#define DOCBUILD_CHUNK 500
#define DOCBUILD_RANGE_SPAN 2 /* integer lists covering >= 1/2 of their span: one BETWEEN */
#define DOCBUILD_MAX_DEPTH 24 /* relation levels below a table */

/* One built document. body is compact JSON (not NUL-terminated: use len);
 * routing is NULL for root documents. Return non-zero to stop the build
 * (that value is returned by the build function). */
typedef int (*docbuild_doc_fn)(void *ctx, const char *id, const char *routing, const char *body,
                               size_t len);
/* A requested key with no row (the caller deletes that document). For child
 * tables, also a row whose chain of parents is broken (no root to route to).
 * No routing is known for an absent child: the caller deletes it with the
 * routing it had (e.g. from the binlog's before image). */
typedef int (*docbuild_absent_fn)(void *ctx, const char *id);
/* A child whose row exists but whose root row is outside the root's where
 * (or gone, the root having a where): absent, with the routing its
 * document had (its root's id), so the caller deletes it on that shard. */
typedef int (*docbuild_gone_fn)(void *ctx, const char *id, const char *routing);

struct docbuild_sink {
    docbuild_doc_fn doc;
    docbuild_absent_fn absent; /* may be NULL */
    void *ctx;
};

struct docbuild_stats {
    unsigned long long queries, rows, docs, absent;
    /* range reads of related rows by primary key after their keys were read
     * from the join column's index (docbuild_level.c); and such key reads
     * that found the keys too spread for one range */
    unsigned long long keyed, spread;
};

struct docbuild {
    MYSQL *db;
    const struct mp_index *ix; /* validated: mysql types filled in */
    size_t chunk;              /* keys per IN list (default DOCBUILD_CHUNK) */
    struct docbuild_stats stats;
    unsigned sql_errno;        /* the server's code for the last query that failed (0: none) */
    docbuild_gone_fn gone;     /* set after docbuild_init, called with the sink's ctx; NULL:
                                * such a child is reported absent */
};

void docbuild_init(struct docbuild *b, MYSQL *db, const struct mp_index *ix);

/* One keyset page of table ti (the root, or a parent/child table): its rows
 * with (cond), if any, and a key greater than after (NULL: from the start),
 * in key order, at most limit — read whole in one query, never looked up
 * again by key — built into documents. dense: cond is empty or a range of
 * the key, so every row with a key between the page's first and last is in
 * the page, and relations joined on the key read that key range instead of
 * a list of keys. 1 a page was built (*last = its last key, malloc'd;
 * *nrows its rows), 0 no rows are left, -1 error (err; also when a sink stops
 * the page). */
int docbuild_page(struct docbuild *b, size_t ti, const char *cond, const char *after,
                  size_t limit, bool dense, const struct docbuild_sink *sink, char **last,
                  size_t *nrows, char *err, size_t errlen);

/* The condition a row of table t must meet to be a document: its expiry
 * column (mp_table.expiry_column) unset or still ahead of the source's
 * clock, as "(`col` IS NULL OR `col` > NOW(6))" (the connection's time zone
 * is UTC); nothing when t has none. Appended to out. */
void docbuild_unexpired(const struct mp_table *t, sbuf *out);
/* The condition a row of document table t must meet to be a document: the
 * root's expiry (docbuild_unexpired, when root) and the table's where
 * (mp_table.where), joined by AND; nothing when neither. Appended to out.
 * The builder applies it to every read of a document table's rows (by key,
 * by page, and the parents a child's routing is walked through), so a row
 * outside it is reported absent (its document deleted) and its children
 * have no document either. */
void docbuild_row_filter(const struct mp_table *t, bool root, sbuf *out);
/* Sort keys[0..n) (key values as text) as the builder compares link values:
 * integers by value, before other text by its bytes. Keys that come as a
 * set in no order (the documents a transaction touched) are sorted before a
 * build, so that each chunk holds neighbouring keys: keys dense in their
 * span are read as one range, and so are the rows related to them (see
 * DOCBUILD_RANGE_SPAN). */
void docbuild_sort_keys(char **keys, size_t n);
/* Build the root documents of keys[0..n) (key values as text, e.g. "42").
 * Every requested key is reported, in request order within each chunk, as a
 * document or as absent (a key given twice is reported twice). */
int docbuild_roots(struct docbuild *b, const char *const *keys, size_t n,
                   const struct docbuild_sink *sink, char *err, size_t errlen);

/* One shard unit's part of docbuild_roots_units: its builder (the unit's
 * index config, docbuild_init), its keys and its sink. */
struct docbuild_unit {
    struct docbuild b;
    const char *const *keys;
    size_t n;
    const struct docbuild_sink *sink;
};
/* docbuild_roots for several units of one index config (over shard tables)
 * at once, in the order given: each unit's documents are exactly those its
 * own docbuild_roots would build, but each level of rows is read for all the
 * units in one statement (docbuild_units.c), so the statements do not grow
 * with the number of shards the keys fall on. The queries run on us[0].b's
 * connection (its sql_errno on failure). */
int docbuild_roots_units(struct docbuild_unit *us, size_t n, char *err, size_t errlen);

/* Build the documents of parent/child table ix->tables[table] (table >= 1,
 * with a parent) for its keys. */
int docbuild_children(struct docbuild *b, size_t table, const char *const *keys, size_t n,
                      const struct docbuild_sink *sink, char *err, size_t errlen);

/* ---------- pure parts (unit-tested without a server) ---------- */

/* Write one fetched value (binary protocol) as JSON, as the binlog decoder
 * would write the same column. f: the result field (type, flags, charsetnr,
 * decimals); bind: the buffer it was fetched into by docbuild_bind_for();
 * json_text: the column is a MariaDB JSON column (LONGTEXT): valid JSON text
 * is written as is. */
void docbuild_value_json(jsonw *w, const MYSQL_FIELD *f, const MYSQL_BIND *bind, bool json_text);
/* The bind buffer type docbuild uses for a result field type. */
enum enum_field_types docbuild_bind_type(const MYSQL_FIELD *f);
/* The JSON text of a MYSQL_TIME as §4.2 formats it for the field type
 * (DATE, DATETIME, TIMESTAMP with Z, TIME) with fsp digits; "null" for zero
 * dates. Appends to out. */
void docbuild_time_json(sbuf *out, enum enum_field_types type, const MYSQL_TIME *t,
                        unsigned fsp);

/* Query generation. SELECT [DISTINCT] cols FROM `db`.`table` WHERE `col` IN
 * (lits) [AND (where)] ORDER BY order. lits are raw values; numeric[i] says
 * whether lits[i] is written bare (integers) or as a quoted string literal.
 * order: column names, NULL-terminated (may be NULL). Strings are quoted by
 * the connection m (mysql_real_escape_string, which honours the server's
 * NO_BACKSLASH_ESCAPES), or as for utf8mb4 when m is NULL (db_quote). */
void docbuild_sql_select(sbuf *sql, MYSQL *m, const char *db, const char *table,
                         const char *const *cols, size_t ncols, bool distinct, const char *in_col,
                         const char *const *lits, const bool *numeric, size_t nlits,
                         const char *where, const char *const *order);
/* The ORDER BY of a relation's rows (order: room for ncolumns + 2 names,
 * NULL-terminated on return): the link column, then the relation's key
 * columns; without a key, its columns in mapping order, but only up to where
 * they complete the table's primary key (mp_relation.nprimary, from the
 * schema): later columns cannot change the order, and without them MariaDB
 * reads in index order instead of sorting. */
void docbuild_relation_order(const struct mp_relation *r, const char **order);
/* true if s is a plain decimal integer literal (safe to write bare). */
bool docbuild_is_integer(const char *s);

#endif
