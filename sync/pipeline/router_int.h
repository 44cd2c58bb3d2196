/* router_int: what the router's files share (router.c: the paths and a
 * flush; router_sql.c: the queries that walk a path up to its documents) —
 * the router's state — and nobody else. */
#ifndef SS_ROUTER_INT_H
#define SS_ROUTER_INT_H
#include <mysql.h>
#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"
#include "strset.h"
#include "sync/pipeline/router.h"

#define IN_CHUNK 500

/* a node of the paths: a table whose changes seed the walk up */
struct rnode {
    size_t index, doctable;
    const char *db, *table;
    const char *seed;       /* column of this table whose values seed the path */
    struct router_step *steps;
    size_t nsteps;
    int area;               /* -1, or the area-update relation this node is in */
    size_t area_depth;      /* 0: the area relation's own node; d: d steps below it */
    const char *watch[2];   /* descendant nodes: seeded only when a row appears,
                             * goes, or changes one of these (its key, its parent
                             * column): the routing of the documents below */
    const struct mp_table *filtered; /* ... or moves in or out of this table's where
                             * (the documents below exist only while it is in) */
    bool dormant;           /* a refresh_parent false relation: never seeded by a
                             * live change, only listed by router_paths */
};

/* An area-update relation (a nested relation of a root table edited element
 * by element): its changed elements as "doc key \x1f element key" pairs. */
struct area {
    size_t index;
    const struct mp_relation *rel;
    const char *key;        /* the relation table's key column */
};

struct target {
    size_t index, doctable;
    struct strset keys;
};

struct router {
    const struct mapping *m;
    struct rnode *nodes;
    size_t nnodes, capnodes;
    struct target *targets;
    size_t ntargets;
    struct area *areas;
    size_t nareas;
    router_area_fn area_fn; /* NULL: area relations refresh whole documents */
    router_slice_fn slice_fn; /* NULL: every document of a flush is emitted at its end */
    size_t slice;
    unsigned long queries;
};

/* values of `out` for owner rows whose `match` is in `in` */
int rt_step_query(struct router *r, MYSQL *src, const struct router_step *s, struct strset *in,
                  struct strset *outv, char *err, size_t errlen);
/* a step whose fan-out may be large: its values read in pages, the
 * documents emitted slice by slice (router_set_slice) */
int rt_sliced_step(struct router *r, MYSQL *src, const struct router_step *st,
                   struct strset *in, struct target *t, router_emit_fn emit, void *ctx,
                   char *err, size_t errlen);
/* (document, element) pairs of area a for element rows whose `match` column
 * is in `in`: SELECT join_column, key FROM area table WHERE match IN (...).
 * The relation's WHERE is not applied: a row that stops matching must still
 * be removed from its document. */
int rt_pair_query(struct router *r, MYSQL *src, struct area *a, struct strset *pairs,
                  const char *match, struct strset *in, char *err, size_t errlen);
void rt_add_pair(struct strset *pairs, const char *doc, size_t dl, const char *el,
                 size_t el_len);

#endif
