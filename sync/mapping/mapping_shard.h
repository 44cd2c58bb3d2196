/* mapping_shard: table patterns — one index config fed by every table of a
 * sharded family (`shop.orders_07`, `shop_3.orders`, ...).
 *
 * A database or table name in the mapping may hold placeholders:
 * `{name:regex}` matches that part of a name (POSIX extended regex, the
 * whole part anchored) and binds it to `name`; `{name}` stands for the value
 * `name` is bound to. The root table (the first) binds them, every other table
 * and relation of the index config may use them:
 *
 *   root      shop.orders_{n:[0-9]+}      matches shop.orders_07 (n = 07)
 *   relation  shop.order_items_{n}        pairs with shop.order_items_07
 *   relation  shop.brands                 shared by every shard
 *
 * A table the source has that the root matches is a shard; with the
 * placeholders' values put in, the index config's other tables are that
 * shard's (the pairing rule: the same values). At validation the index
 * config is expanded into one unit per shard (mapping_expand): a copy of it
 * with the shard's concrete names (mp_index.unit), sharing its alias, state
 * and versions, routed and built like any index config. A shard whose other
 * tables do not all exist yet is left out until they do.
 *
 * Documents of different shards may share a key: a unit's document id is
 * made by the index config's id template (mp_index.id_template, default
 * `{db}.{table}:{key}` for a sharded config without "unique_keys": true,
 * then `{key}`): {db} and {table} are the shard's root table, {key} the id
 * the document would have without shards (the key, or `join-key`), any
 * placeholder its value. */
#ifndef SS_MAPPING_SHARD_H
#define SS_MAPPING_SHARD_H
#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"
#include "sync/mapping/mapping.h"

#define MP_ID_TEMPLATE_SHARDED "{db}.{table}:{key}"
/* an index config of several sources (sync/mapping/mapping_source.h): the
 * source first, so no two sources make one id */
#define MP_ID_TEMPLATE_SOURCES "{source}:{key}"
#define MP_ID_TEMPLATE_SOURCES_SHARDED "{source}:{db}.{table}:{key}"
/* the field of a unit's documents naming its shard ("db.table"), so that a
 * shard's documents are found again when it is dropped */
#define MP_SHARD_FIELD "ss_shard"

/* Does index config ix read shard tables (a table pattern anywhere), or is
 * it one shard's unit? */
bool mp_index_sharded(const struct mp_index *ix);

/* Does this database or table name hold a placeholder? */
bool mp_is_pattern(const char *name);

/* Check one name part: placeholders well formed ({name} or {name:regex},
 * name [a-z_][a-z0-9_]*, the regex compiles), and a bound name defined only
 * once; `defines` false: it may only use names (a relation's or a child's).
 * 0, or -1 with a reason in why. */
int mp_pattern_check(const char *part, bool defines, char *why, size_t whylen);

/* The names bound by a root pattern's parts: appended to *names (each
 * malloc'd; *n grows). */
void mp_pattern_names(const char *part, char ***names, size_t *n);

/* Match name against pattern part (anchored); bound values are appended
 * to binds as "name=value" strings (*nbinds grows, each malloc'd); a {name}
 * use must equal its bound value. true on a match. */
bool mp_pattern_match(const char *part, const char *name, char ***binds, size_t *nbinds);

/* part with every placeholder replaced by its value in binds ("name=value");
 * NULL (and why) when a name is not bound. */
char *mp_pattern_subst(const char *part, char *const *binds, size_t nbinds, char *why,
                       size_t whylen);

/* Is index config ix fed by several sources ("sources" lists two or more)? */
bool mp_index_multi(const struct mp_index *ix);

/* The id template of index config ix (its own, or the default: `{key}` with
 * unique_keys or without patterns and sources, MP_ID_TEMPLATE_SHARDED with
 * patterns, MP_ID_TEMPLATE_SOURCES(_SHARDED) with several sources); check
 * it: {key} exactly once, other placeholders source, db, table or a bound
 * name, and {source} there when several sources may share a key. 0 or -1
 * with why. */
const char *mp_id_template(const struct mp_index *ix);
int mp_id_template_check(const struct mp_index *ix, char *why, size_t whylen);

/* The ids of index config ix that is no unit (an index config of several
 * sources without patterns): id_pre and id_post from its template, {source}
 * its ix->source, {db} and {table} its root's. */
void mp_index_make_ids(struct mp_index *ix);

/* A table of the source, for expansion. */
struct mp_source_table {
    const char *db, *table;
};

/* Replace every index config of m with table patterns by one unit per shard
 * the source has (tables[0..ntables)), in shard order; an index config
 * without patterns stays as it is. A new shard whose other tables are not
 * all in the list yet is left out, said in skipped (one line each, may be
 * NULL). keep[0..nkeep): shards ("db.table") kept as units whatever the list
 * holds — the ones already followed, whose tables may be away for a moment
 * (an online schema change's swap): whether they are gone is decided from
 * the binlog (sync/node/schema_watch.c), not from one look at the source. */
void mapping_expand_with(struct mapping *m, const struct mp_source_table *tables, size_t ntables,
                         char *const *keep, size_t nkeep, sbuf *skipped);

/* The same against the source's information_schema (base tables of the
 * databases the patterns can match). 0, or -1 with err. */
struct st_mysql;
int mapping_expand(struct st_mysql *src, struct mapping *m, char *const *keep, size_t nkeep,
                   sbuf *skipped, char *err, size_t errlen);

/* Is db.table a shard the root pattern of index config ix (a unit, or the
 * config itself) would match? */
bool mp_index_matches_shard(const struct mp_index *ix, const char *db, const char *table);
/* ... or one of its other tables or relations would (a unit keeps their
 * patterns): a table that may complete a shard left out until it exists. */
bool mp_index_matches_shard_table(const struct mp_index *ix, const char *db, const char *table);

/* Are the ids of ix's documents made by a template (a unit's, an index
 * config's of several sources), not the plain key? */
static inline bool mp_ids_templated(const struct mp_index *ix) {
    return ix->id_pre || ix->id_post;
}

/* The document id of key `key` (as a document table's rows give it: the
 * key, or join-key) in unit ix: with its id template applied. */
void mp_doc_id(const struct mp_index *ix, const char *key, size_t len, sbuf *out);
/* The reverse: the key part of document id `id` of unit ix, or NULL when the
 * id is not of that unit. *len its length. */
const char *mp_doc_key(const struct mp_index *ix, const char *id, size_t *len);

#endif
