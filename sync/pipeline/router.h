/* router: which documents does a row change touch? (docs/design.md, "Data
 * flow": route by document, not by row.)
 *
 * Every place a table appears in an index config is a node: a document table
 * (the root, or a parent/child table whose rows are documents of their own),
 * or a relation under one (an object or nested array at any depth). From each
 * relation node a path of join steps leads up to its document table:
 *
 *   shop.tags.id = product_tags.tag_id  ->  product_tags.product_id = products.id
 *
 * A row change seeds the nodes of its table with the join-column values of its
 * before AND after images (so a child moved from one parent to another
 * refreshes both). router_flush() then walks every seeded path upwards, one
 * `SELECT DISTINCT up FROM owner WHERE col IN (...)` per step and per chunk of
 * values — never a query per row, so a 100k-row UPDATE costs a few hundred
 * queries — and reports each affected document once: (index, document table,
 * key). A step whose column already is the one needed above (products.id) needs
 * no query. Relation WHERE conditions are not evaluated here: a row that stops
 * matching must still refresh the document that embedded it.
 *
 * Area-update relations (router_set_area; a nested relation of the root,
 * joined on the root's key, with a key of its own): a change of the
 * relation's row, or of any row below it, reports the element instead of the
 * document — (index, relation, document key, element key). The element's own
 * row gives both from each image (a moved SKU is reported under its old and
 * its new product); a row below it is walked up to the element rows and one
 * `SELECT join_column, key FROM element table WHERE col IN (...)` per chunk
 * finds their documents. The caller edits just those elements.
 *
 * Parent/child documents are routed by their root and exist only while
 * their chain of parents does: a row of a parent/child table (or the root)
 * that appears, goes, or changes its key or parent column also reaches every
 * child document below it (a review moved to another product re-routes its
 * replies; a deleted review takes its replies' documents with it). So does
 * a row of a table with a `where` that changes a column the where reads: it
 * may have moved in or out, and its children with it.
 *
 * A relation with refresh_parent false has no node: changes of its own rows
 * reach no document (rows of relations below it still do, through it).
 *
 * Tables marked delay-effect are not routed: router_delayed() tells the caller
 * to record a change snapshot instead (the delayed run refreshes later). */
#ifndef SS_ROUTER_H
#define SS_ROUTER_H
#include <stdbool.h>
#include <stddef.h>

#include "sync/mapping/mapping.h"

struct st_mysql;
struct router;

/* A column's value in a row image as text; NULL when the value is SQL NULL.
 * *absent is set when the column is not in the image (MINIMAL row images). */
typedef const char *(*router_value_fn)(void *image, const char *column, size_t *len,
                                       bool *absent);
/* One affected document: index config (position in the mapping), its document
 * table (0 = root, > 0 a parent/child table) and the document row's key. */
typedef int (*router_emit_fn)(void *ctx, size_t index, size_t table, const char *key, size_t len);

/* One changed element of an area-update relation `rel` of index config
 * `index`: the root document's key and the element's key (texts). */
typedef int (*router_area_fn)(void *ctx, size_t index, const struct mp_relation *rel,
                              const char *doc_key, const char *elem_key);

/* A slice of a large fan-out was emitted (router_set_slice): the caller
 * builds and delivers the documents of (index, table) it has collected so
 * far, now. Non-zero: stop (an error). */
typedef int (*router_slice_fn)(void *ctx, size_t index, size_t table);

/* The mapping must outlive the router. */
struct router *router_new(const struct mapping *m);
void router_free(struct router *r); /* NULL-safe */
/* Report area-update relations element by element through fn (called by
 * router_flush with its ctx). Without it they refresh whole documents. Set it
 * before the first router_add. */
void router_set_area(struct router *r, router_area_fn fn);
/* Large fan-outs in slices: the keys of a document table found by a path's
 * last query are emitted `slice` at a time (the first query of each chunk
 * of values asks for at most slice + 1; a larger chunk is read value by
 * value in keyset pages) and fn is called after each slice, so memory stays
 * bounded by the slice however many documents a row reaches. Without it
 * every key is gathered first and emitted at the end of router_flush. */
void router_set_slice(struct router *r, router_slice_fn fn, size_t slice);

/* Is this table read by any index config at all? */
bool router_wants(const struct router *r, const char *db, const char *table);
/* Is it a delay-effect table (record a snapshot, do not route)? */
bool router_delayed(const struct router *r, const char *db, const char *table);

/* What one change set seeded and router_flush resolves: per node of the
 * router the join values, per area relation the (document, element) pairs.
 * It belongs to the change set (struct changeset.seeds): the routing state
 * travels with the rows, the router holds only the mapping's paths. Sized
 * by router_add. */
struct strset;
struct route_seeds {
    struct strset *nodes;
    size_t nnodes;
    struct strset *pairs;
    size_t npairs;
};
void route_seeds_clear(struct route_seeds *sd); /* empty; keeps the arrays */
void route_seeds_free(struct route_seeds *sd);

/* Seed the changes of one row (before and/or after may be NULL). -1 with err
 * when a needed column is absent from the image: the message names the table
 * and column and says to use binlog_row_image=FULL (nothing is lost: the caller
 * stops at this row). */
int router_add(struct router *r, struct route_seeds *sd, const char *db, const char *table,
               router_value_fn get, void *before, void *after, char *err, size_t errlen);
/* Resolve every seeded path against the source and emit each affected
 * document once; then forget the seeds. -1 with err on a query failure. */
int router_flush(struct router *r, struct route_seeds *sd, struct st_mysql *src,
                 router_emit_fn emit, void *ctx, char *err, size_t errlen);
/* Whether router_flush has anything to resolve or emit that is read from the
 * source: seeded paths, or changed area elements (their rows are read for the
 * element scripts, or the whole document while a version is built). The
 * caller opens a read snapshot that holds the transaction first. */
bool router_pending(const struct router *r, const struct route_seeds *sd);
/* Mark (mark[index] = true, for index < n) every index config whose
 * documents router_flush would read from what sd holds: the tables a read
 * snapshot for it opens (sync/pipeline/read_view.h). */
void router_seeded_indices(const struct router *r, const struct route_seeds *sd, bool *mark,
                           size_t n);
/* Statistics: queries run by router_flush so far. */
unsigned long router_queries(const struct router *r);

/* One join step of a path: rows of owner table db.table whose column `match`
 * equals the values so far give the values of column `out` above (the
 * document table's key at the top). match == out: the values pass through. */
struct router_step {
    const char *db, *table;
    const char *match;
    const char *out;
};
/* One path from a table's column `seed` up to document table `doctable` of
 * index config `index`, its steps from the bottom up. */
typedef int (*router_path_fn)(void *ctx, size_t index, size_t doctable, const char *seed,
                              const struct router_step *steps, size_t nsteps);
/* Every path from rows of db.table up to documents of index config `index`
 * that embed them (the delayed run's relation tops, sync/delayed/relation_tops.c):
 * relations with refresh_parent false and delay-effect tables included,
 * parent/child descendant routing not. The number of paths, or -1 when fn
 * refused one. */
int router_paths(const struct router *r, size_t index, const char *db, const char *table,
                 router_path_fn fn, void *ctx);

/* For tests and docs: the paths, one line each ("shop.tags -> ... -> root"). */
void router_describe(const struct router *r, sbuf *out);

#endif
