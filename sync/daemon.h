/* daemon: the state of `searchsync run`, shared by the files of its
 * pipeline (the design is described at the top of sync/daemon.c):
 *
 *   daemon.c            the binlog sink, commits, replays, mapping reloads,
 *                       start-up and shutdown (cmd_run)
 *   change_snapshots.c  rows of delay-effect tables kept for the delayed run
 *   child_copies.c      parent/child documents left under an old routing
 *   area_update.c       element scripts for relations marked area_update
 *   daemon_builds.c     versions being built: first versions, dual writes,
 *                       the reindex job runners
 *
 * Everything here runs on the reader's thread, except where a field says
 * otherwise (missing: delivery's helpers; ckpt: delivery's checkpoint
 * thread). */
#ifndef SS_DAEMON_H
#define SS_DAEMON_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "binlog/binlog.h"
#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "mapping.h"
#include "router.h"
#include "sbuf.h"
#include "search/search.h"
#include "strset.h"

struct pending { /* documents of one (index, document table) to build at commit */
    size_t index, table;
    char **keys;
    size_t n, cap;
};

/* one changed element of an area-update relation */
struct area_op {
    size_t index;
    const struct mp_relation *rel;
    char *doc, *elem;
    const char *body; /* while building: the element's JSON, NULL = remove */
};

/* a version being built by a reindex: live changes go to it too */
struct build {
    char *alias, *phys;
    unsigned version;
    struct reindex_runner *runner;
};

/* one document of a row-image table, from this transaction's rows */
struct rowdoc {
    size_t index;
    char *id;
    char *body; /* NULL = delete */
    size_t len;
};

struct daemon {
    struct ss_config *cfg;
    struct mapping m;
    struct router *router;
    struct bl_reader *reader; /* asked to filter its tables again when router changes */
    MYSQL *src, *meta, *ckpt;
    unsigned ckpt_failed;   /* checkpoint saves failed in a row (save_checkpoint) */
    db_params srcp, metap;
    struct search_client *client;
    struct deliver *d;
    struct dl_store *dls;
    bl_valctx v;
    sbuf val, text;
    struct pending *pend;
    size_t npend;
    uint64_t version;       /* of the transaction being committed */
    size_t cur_index;       /* while building: which index config */
    bool child_build;       /* building parent/child documents: collect ids */
    struct copy { char *id, *routing; bool absent; } *copies;
    size_t ncopies, capcopies;
    uint64_t last_txn;      /* delivery's sequence of the last transaction */
    sbuf snaps;             /* VALUES rows of change snapshots of this transaction */
    unsigned long long snapshots;
    struct search_conn *k;  /* the main thread's engine connection */
    struct area_op *aops;   /* this transaction's changed elements */
    size_t naops, capaops;
    struct rowdoc *rdocs;   /* this transaction's row-image documents */
    size_t nrdocs, caprdocs;
    bool in_txn;            /* rows seen since the last commit */
    bool txn_saves;         /* this transaction writes checkpoint saves (offsets) */
    bool txn_other_rows;    /* and rows of anything else this daemon reads */
    bool replay;            /* the failed transaction lost a connection: read it again */
    unsigned replays;       /* ... how many times in a row, since a commit went through */
    bool copies_may_move;   /* this transaction can leave child copies behind */
    pthread_mutex_t miss_mu; /* guards missing: filled by delivery's helpers */
    char **missing;         /* "alias\x1fid": scripts that found no document */
    size_t nmissing, capmissing;
    bl_commit last_commit;  /* the newest transaction handed to delivery */
    bool have_last;
    int snap; /* the source reports snapshot positions: -1 not known yet, 0 no, 1 yes */
    bool in_snap; /* a read snapshot is open on src (read_snapshot_begin) */
    char start_pos[600];    /* where the reader started ("" = unknown) */
    struct build *builds;   /* reindexes running */
    size_t nbuilds;
    sbuf sig, bad_sig;      /* signatures: the running mapping, the last refused edit */
    char mapping_sum[512];  /* the mapping tables' checksums when last loaded ("" unknown) */
    bool sum_warned;        /* said once that CHECKSUM TABLE fails here */
    int64_t reload_due_ms;
    int64_t builds_due_ms; /* next look for queued reindexes */
    unsigned long long txns, docs, deletes, scripts, reloads;
    char err[1024];
};

/* a row image the router reads its values from (daemon_image_value) */
struct image {
    struct daemon *dm;
    const bl_table *t;
    const bl_cell *cells;
};

static inline bool has_children(const struct mp_index *ix) {
    for (size_t i = 1; i < ix->ntables; i++)
        if (ix->tables[i].parent_table) return true;
    return false;
}

static inline const struct mp_column *key_of(const struct mp_table *t) {
    for (size_t i = 0; i < t->ncolumns; i++)
        if (t->columns[i].is_key) return &t->columns[i];
    return NULL;
}

/* ---------- daemon.c ---------- */
/* A column's value in a row image, as text (the router's and the builder's
 * form); NULL with *absent when the image lacks the column. The buffer is
 * reused by the next call. */
const char *daemon_image_value(void *img, const char *column, size_t *len, bool *absent);
/* The router's collector: key of document table `table` of index config
 * `index` to rebuild at this commit. */
int daemon_collect(void *ctx, size_t index, size_t table, const char *key, size_t len);
/* One change of index config ix: to the live version behind the alias and to
 * a version being built. 0 or -1. */
int daemon_submit(struct daemon *dm, const struct mp_index *ix, const struct change *c);
/* The version of this transaction's changes of ix; 0 with dm->err when its
 * position does not fit a version. */
uint64_t daemon_txn_version(struct daemon *dm, const struct mp_index *ix, const bl_commit *cm);

/* ---------- change_snapshots.c ---------- */
int snapshots_add_row(struct daemon *dm, const bl_row *row);
/* the transaction's snapshots, in one INSERT on dm->meta; 0 or -1 */
int snapshots_write(struct daemon *dm);

/* ---------- child_copies.c ---------- */
/* Sets dm->copies_may_move when this row can leave a copy behind. */
void copies_watch_row(struct daemon *dm, const bl_row *row);
void copies_note(struct daemon *dm, const char *id, const char *routing, bool absent);
void copies_free(struct daemon *dm);
int copies_fix(struct daemon *dm, const struct mp_index *ix);

/* ---------- area_update.c ---------- */
/* The router's element collector (router_set_area). */
int area_collect(void *ctx, size_t index, const struct mp_relation *rel, const char *doc,
                 const char *elem);
int area_submit(struct daemon *dm, const struct strset *full, const bl_commit *cm);
void area_free(struct daemon *dm);

/* ---------- daemon_builds.c ---------- */
const struct build *builds_find(const struct daemon *dm, const char *alias);
int builds_ensure_index(struct daemon *dm, struct search_conn *k, struct mp_index *ix);
void builds_poll(struct daemon *dm);
void builds_stop(struct daemon *dm, size_t i, const char *why);

#endif
