/* mapping_generate: a mapping proposed from the live schema of one root
 * table (`searchsync mapping generate`, docs/mapping.md "Generating a
 * mapping"). */
#ifndef SS_MAPPING_GENERATE_H
#define SS_MAPPING_GENERATE_H
#include <stddef.h>

#include "sbuf.h"
#include "sync/mapping/mapping.h"

struct search_dialect;

struct st_mysql;

struct mg_opts {
    int depth;                  /* relation levels below the root (0: the root only) */
    const char *const *include; /* NULL or the tables relations may read ("t" or "db.t") */
    size_t ninclude;
    int replicas;               /* -1: none in the file (mapping import takes the engine's
                                 * default then, search/replicas.h) */
    const struct search_dialect *engine; /* the engine the mapping is for (NULL: not known):
                                          * BIGINT UNSIGNED becomes unsigned_long where it
                                          * has that type, else long (with a note) */
    bool relations_only;        /* only the table's relations are wanted (the admin UI looking
                                 * at a link table): a composite primary key is not refused, its
                                 * first column alone is the root's column (not to import) */
};

/* Build a one-index mapping for db.table from the source's information_schema:
 * every column (left for validation to fill from the schema), the primary
 * key marked, relations along foreign keys — many-to-one as objects,
 * one-to-many as nested arrays, many-to-many through link tables (a table
 * whose columns are two references and its key) — and, for `<name>_id`
 * columns without a foreign key, along guesses, each guess noted in notes as
 * one line. 0, 1 (err: no such table, or one without a primary key), -1
 * (err: the server failed). */
int mapping_generate(struct st_mysql *src, const char *db, const char *table,
                     const struct mg_opts *o, struct mapping *out, sbuf *notes, char *err,
                     size_t errlen);

/* What `mapping generate` prints and the admin API returns: the mapping
 * proposed for db.table, validated against the source (types filled, the
 * related tables' primary keys marked "key"), as the canonical file into
 * file; the guesses into notes; one document built with it from the
 * table's first row into sample (empty, with the reason in err, when the
 * table has no rows or the build failed: not an error). 0, 1 (err: no such
 * table, no primary key), -1 (err: the server failed, or the proposal does
 * not validate: a bug to report). */
int mapping_propose(struct st_mysql *src, const char *db, const char *table,
                    const struct mg_opts *o, sbuf *file, sbuf *notes, sbuf *sample, char *err,
                    size_t errlen);

#endif
