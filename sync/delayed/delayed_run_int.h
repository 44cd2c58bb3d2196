/* delayed_run_int.h: what the delayed run's files share (private to
 * sync/delayed/): the state of one run (struct run) and its small helpers.
 * delayed_run.c resolves and drives a run; delayed_job.c builds one bucket
 * job page by page. */
#ifndef SS_DELAYED_RUN_INT_H
#define SS_DELAYED_RUN_INT_H
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "strset.h"
#include "sync/delayed/delayed.h"
#include "sync/pipeline/pipeline.h"

#define IN_CHUNK 500

struct run {
    struct pipeline *p;
    MYSQL *meta, *src;
    const struct delayed_opts *o;
    struct delayed_stats *st;
    const unsigned long long *index_ids;
    FILE *out;
    char *err;
    size_t errlen;
    const char *source;
    char node[200];
    unsigned long long id; /* the run */
    int buckets;
    long only;             /* index filter, -1 none */
    sbuf stage;            /* VALUES of delayed_run_ids not written yet */
    size_t nstage;
    bool stage_sent;       /* an INSERT of them sent, its answer not read (stage_settle) */
    bool sql_failed;       /* a level's SQL failed (not the connection) */
    char unresolved[1024]; /* why a table's snapshots were not resolved: the run fails */
    struct strset dry_all, dry_one; /* dry run: root ids, all and of one snapshot */
    const struct rt_plan *plan; /* the table being resolved */
    const char *owned;     /* a cluster node's job: " AND owner_node = .. AND
                            * rebalance_session = .." on every write of it */
    bool fenced;           /* such a write was refused: the job is another's */
    bool source_gone;      /* the source's server went away midway (source_lost):
                            * standalone, the run is left running for the next one;
                            * a cluster node's job waits at its cursor for the server */
};

static inline bool stopping(struct run *R) {
    if (!R->o->stopping || !R->o->stopping(R->o->stopping_ud)) return false;
    R->st->stopped = true;
    return true;
}

static inline double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline void qs(MYSQL *m, sbuf *q, const char *s) {
    if (s) db_quote(m, q, s, strlen(s));
    else sbuf_adds(q, "NULL");
}

static inline int exec(struct run *R, sbuf *q) { return db_exec(R->meta, q->data, R->err, R->errlen); }

static inline long long exec_rows(struct run *R, sbuf *q) {
    return db_exec_rows(R->meta, q->data, R->err, R->errlen);
}

static inline char *scalar(struct run *R, const sbuf *q) {
    char e[512] = "";
    char *v = db_scalar(R->meta, q->data, e, sizeof e);
    if (!v && *e) errf(R->err, R->errlen, "%s", e);
    return v;
}

/* A failure of the run that is the source's server going away (killed,
 * restarted, unreachable) rather than something of the snapshots: nothing
 * about their changes is wrong, so it must not count as one of their
 * attempts (after --max-attempts they would be left in error, their
 * documents never refreshed). Standalone, the run stays running, its jobs
 * at their cursors, and the next run takes it over once the server answers;
 * a cluster node's job goes back to waiting at its cursor, still the node's,
 * and the node runs it again once the server answers (sync/cluster/
 * cluster_delayed.c), so the run is not settled without it. */
static inline bool source_lost(struct run *R) {
    if (!R->src || !db_conn_lost(R->src)) return false;
    R->source_gone = true;
    return true;
}

/* the index config's position in the mapping, from its index_configs id */
static inline long index_pos(struct run *R, unsigned long long id) {
    for (size_t i = 0; i < R->p->m->nindices; i++)
        if (R->index_ids[i] == id) return (long)i;
    return -1;
}

/* one bucket job of run R, page by page from its cursor (delayed_job.c):
 * 0 done, 1 left at its cursor (stopping), -1 error */
int delayed_run_job(struct run *R, unsigned long long job, unsigned long long index_id,
                    unsigned bucket, const char *cursor);

/* delayed_resolve.c: ` AND <pfx>db_name = .. AND <pfx>table_name = ..` for
 * one table (db NULL: nothing) */
void dr_table_cond(struct run *R, sbuf *q, const char *pfx, const char *db, const char *table);
/* This run's running snapshots (of one table, or all) are done. */
int dr_snaps_done(struct run *R, const char *db, const char *table, const char *why);
/* ... failed with `why`: tried again by the next run, or left in error once
 * they have failed max_attempts times. */
int dr_snaps_failed(struct run *R, const char *db, const char *table, const char *why);
/* the snapshots of one table, in keyset pages by id (status: this run's
 * running ones, or for a dry run one snapshot by id) (delayed_resolve.c) */
int dr_resolve_table(struct run *R, const struct rt_plan *plan, unsigned long long only_id);
/* Every table of the run's snapshots: its plan, its ids staged; then the
 * jobs, one per (index config, bucket) with ids, and resolved = 1, in one
 * transaction (delayed_resolve.c). */
int dr_resolve_run(struct run *R);

#endif
