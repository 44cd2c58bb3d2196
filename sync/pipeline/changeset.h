/* changeset: the one record the sync pipeline's stages pass on.
 *
 * A change set is a unit of work that ends in one delivery transaction: a
 * source transaction read from the binlog, a set of documents to rebuild
 * (the ones an element script did not find, a resync), and later a delayed
 * run's slice, a repair batch or a Kafka message batch. A producer fills it
 * (route: which documents, which elements, which row-image documents, which
 * change snapshots), then the back half (sync/pipeline/pipeline.c) builds and
 * delivers it and closes its delivery transaction at `end`:
 *
 *   producer ──changeset_*──► struct changeset ──pipeline_commit──► builder
 *       ──► delivery (one transaction, ended at the change set's position)
 *
 * Everything a stage needs is in the change set or in the build context
 * (struct build_ctx, sync/pipeline/pipeline.h) it is handed: no stage reads inputs
 * another left in shared state. A change set is owned by its producer,
 * reset after each commit (changeset_reset) and reused. */
#ifndef SS_CHANGESET_H
#define SS_CHANGESET_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binlog/binlog.h"
#include "sync/mapping/mapping.h"
#include "sync/pipeline/router.h"
#include "sbuf.h"

/* documents of one (index config, document table) to build */
struct cs_pending {
    size_t index, table;
    char **keys;
    size_t n, cap;
};

/* one changed element of an area-update relation */
struct cs_element {
    size_t index;
    const struct mp_relation *rel;
    char *doc, *elem;
    const char *body; /* while building: the element's JSON, NULL = remove */
};

/* Where a row image is in the source's history, when its producer knows:
 * a Kafka message's binlog coordinates (sync/sources/kafka_source.c). Messages of
 * several partitions are read interleaved, not in the source's order: a
 * row's images are ordered by these, and a document taken from an image is
 * versioned by them (its own position, not the change set's largest). */
struct cs_at {
    bool known;    /* binlog coordinates: file, pos, row */
    uint32_t file; /* binlog file number (bl_file_seq) */
    uint64_t pos;
    uint32_t row;  /* order within pos: Debezium source.row, Maxwell xoffset */
};

/* one document of a row-image table, from the change set's rows */
struct cs_rowdoc {
    size_t index;
    char *id;
    char *body; /* NULL = delete */
    size_t len;
    struct cs_at at; /* the change set's `at` when it was added */
    bool requery;    /* its row filter is the server's to decide: when this image wins,
                      * the document is rebuilt from MySQL as in re-query mode */
};

struct changeset {
    struct cs_pending *pend; /* documents rebuilt whole */
    size_t npend;
    struct cs_element *elems; /* elements edited by a script */
    size_t nelems, capelems;
    struct cs_rowdoc *rdocs; /* documents taken from row images */
    size_t nrdocs, caprdocs;
    size_t nrequery;         /* of them, to be rebuilt from MySQL (cs_rowdoc.requery) */
    sbuf snaps;               /* VALUES rows of change snapshots (delay-effect tables) */
    unsigned long long nsnaps;
    bool copies_may_move;     /* a parent/child row moved or went: look for stale copies */
    bool rows;                /* any row routed since the last reset */
    bool saves;               /* it holds checkpoint saves read back (offsets) */
    bool other_rows;          /* ... and rows of anything else, or a transaction of
                               * anything else (a group's: binlog_source.c on_commit) */
    struct cs_at at;          /* where the rows routed now are (unknown: read order) */
    struct route_seeds seeds; /* what its rows seeded in the router (router_add), resolved
                               * by pipeline_build (router_flush) */
};

/* Key `key` of document table `table` of index config `index` is to be
 * rebuilt whole. */
void changeset_add_doc(struct changeset *cs, size_t index, size_t table, const char *key,
                       size_t len);
void changeset_add_element(struct changeset *cs, size_t index, const struct mp_relation *rel,
                           const char *doc, const char *elem);
/* body NULL: the document is deleted; at cs->at. See changeset_rowdoc_winners. */
void changeset_add_rowdoc(struct changeset *cs, size_t index, const char *id, size_t idlen,
                          const char *body, size_t len);
/* The image of document id of a row-image index whose row filter the
 * server must decide (row_filter.h, RF_UNDECIDED): when it wins, the
 * document is rebuilt by key from MySQL with the filter in the query. */
void changeset_add_rowdoc_requery(struct changeset *cs, size_t index, const char *id,
                                  size_t idlen);
/* Which of cs->rdocs are written: one per (index, id), its indices in
 * win[0..n) (win has room for cs->nrdocs), n returned. Of one document's
 * images the one latest in the source wins: by coordinates when both images
 * have them (images of one row read from two partitions, in any order),
 * else the one read last (one partition, one binlog: read order is the
 * source's). A delete is an image like any other. */
size_t changeset_rowdoc_winners(const struct changeset *cs, size_t *win);
/* <0, 0, >0: a before, at, after b (both known) */
int cs_at_cmp(const struct cs_at *a, const struct cs_at *b);
/* true when documents or elements are to be read from the source (row-image
 * documents to rebuild from MySQL included) */
bool changeset_reads(const struct changeset *cs);
/* Forget everything gathered (after a commit, or to read it again). */
void changeset_reset(struct changeset *cs);
/* reset and free its buffers */
void changeset_free(struct changeset *cs);

#endif
