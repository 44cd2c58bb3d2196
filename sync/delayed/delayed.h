/* delayed: the delayed run — one more
 * producer of change sets, refreshing later the documents that changes of
 * delay-effect (metadata) tables affect.
 *
 *   change_snapshots (init)  ── claimed under a lock ──►  running
 *      │ relation tops (relation_tops.c): per delay-effect table and index
 *      │ config, a chain of level SQL from the changed rows' keys up to the
 *      │ root documents, resolved level by level in keyset pages
 *      ▼
 *   delayed_run_ids (each document once, in bucket MOD(expr, N))
 *      │ one job row per (index config, bucket) (jobs.type = 'job')
 *      ▼
 *   changeset_add_doc + pipeline_build + pipeline_end, page by page, each
 *   page versioned by the binlog position read before its rows are
 *      ▼
 *   snapshots done (or back to init / error after max attempts)
 *
 * relation_tops.c owns the chains; delayed_run.c the run; cmd_delayed.c the
 * command line. */
#ifndef SS_DELAYED_H
#define SS_DELAYED_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sync/mapping/mapping.h"
#include "sync/pipeline/router.h"
#include "sbuf.h"

struct st_mysql;
struct pipeline;

/* ---------- relation_tops.c ---------- */

/* One level: SQL run in database `db` taking the values so far as a bound
 * list (`?`, expanded to quoted values) and returning them one level up in
 * column `output`. Generated levels keep their parts (table, match) and are
 * paged natively; hand-written ones are wrapped in a keyset query. */
struct rt_level {
    char *db, *sql, *output;
    char *table, *match; /* generated: SELECT DISTINCT output FROM db.table WHERE match IN (?) */
};

/* One chain from a delay-effect table to document table `doctable` of index
 * config `index`. whole: no path (scheme 1), every document of the index is
 * refreshed. start: level 0 turns the changed rows' primary keys into the
 * column the path starts from (levels[0]); a deleted row gives that column's
 * value from its snapshot's row image instead (start_column). */
struct rt_chain {
    size_t index, doctable;
    bool whole, from_mapping, start;
    char *start_column;
    struct rt_level *levels;
    size_t nlevels;
};

struct rt_plan {
    char *db, *table;
    struct rt_chain *chains;
    size_t nchains;
    char *note; /* why a chain is whole, NULL if none is */
};

/* The chains of delay-effect table db.table: per index config (all, or only
 * `only` when >= 0) the hand-written relation top of the mapping file if the
 * table's entry in that index has one, else one chain per path of the
 * router, else — for an index that lists the table as delay-effect — the
 * whole index. src: the source, for the table's primary key. 0 or -1. */
int rt_plan_build(struct st_mysql *src, const struct mapping *m, const struct router *r,
                  const char *db, const char *table, long only, struct rt_plan *out, char *err,
                  size_t errlen);
void rt_plan_free(struct rt_plan *p);
/* the plan as text, one line per level */
void rt_plan_describe(const struct rt_plan *p, const struct mapping *m, sbuf *out);
/* Replace the generated rows of relation_tops for this table (the mapping's
 * own rows are written by a mapping import). index_ids: index_configs.id of
 * each index config of m. */
int rt_plan_save(struct st_mysql *meta, const char *source, const struct rt_plan *p,
                 const struct mapping *m, const unsigned long long *index_ids, char *err,
                 size_t errlen);
/* Append sql with its one `?` (outside quotes and comments) replaced by the
 * quoted values. -1 with why when it has no `?` or more than one. */
int rt_expand(struct st_mysql *m, const char *sql, char *const *vals, size_t n, sbuf *out,
              char *why, size_t whylen);
/* The query of one page of a level: its DISTINCT outputs for input vals,
 * above `after` (NULL: from the start), in order, at most `limit`. */
void rt_level_query(struct st_mysql *src, const struct rt_level *l, char *const *vals, size_t n,
                    const char *after, size_t limit, sbuf *out);
/* The one relation-chain walker (the delayed run, the check's window of a
 * related table): from values of level `level` of chain ch up to the
 * document keys it reaches, each page of them handed to sink. A level that
 * takes every key of its table (scheme 1: a table without a match) runs
 * once without input. chunk: values per IN list; page: rows per query.
 * 0, or -1 with err naming the level and what (and *sql_failed when the
 * SQL failed, not the connection). */
struct rt_walk {
    struct st_mysql *src;
    size_t chunk, page;
    int (*sink)(void *ud, const struct rt_chain *ch, char *const *keys, size_t n);
    void (*level_rows)(void *ud, size_t level, size_t n); /* optional: rows a level gave */
    void *ud;
    const char *what; /* "the relation top of db.table", for errors */
    bool sql_failed;
    char *err;
    size_t errlen;
};
int rt_walk(struct rt_walk *w, const struct rt_chain *ch, size_t level, char *const *in,
            size_t nin);
/* Check a hand-written level against the source: one `?`, it runs (with an
 * empty input) and returns column `output`. 0, 1 with why (a problem of
 * the SQL), -1 with why (the connection failed). */
int rt_level_check(struct st_mysql *src, const char *db, const char *sql, const char *output,
                   char *why, size_t whylen);
/* Every hand-written relation top of m checked (rt_level_check): problems
 * appended to errs one per line, with their JSON path; their number, or -1. */
int rt_check_mapping(struct st_mysql *src, const struct mapping *m, sbuf *errs, char *err,
                     size_t errlen);

/* ---------- delayed_run.c ---------- */

struct delayed_opts {
    const char *alias;   /* NULL: every index config */
    bool dry_run;
    int buckets;         /* N of MOD(expr, N) */
    int page;            /* ids per keyset page and per change set */
    int max_attempts;    /* a snapshot failing this often stays in error */
    int pause_ms;        /* tests: sleep after each page's position is read */
    /* asked between pages (NULL: never): true stops the run there, its jobs'
     * cursors saved and the run left running, so that the next run takes
     * it over from them (a daemon or a cron run that is stopped) */
    bool (*stopping)(void *ud);
    void *stopping_ud;
    /* [cluster] zookeeper: the run's bucket jobs are handed to the nodes of
     * the cluster (sync/cluster/cluster_jobs.c runs them, split by a rebalance):
     * this pass only claims and resolves, and takes over only runs whose
     * process died before their jobs existed */
    bool cluster;
};

#define DELAYED_MAX_LEVELS 16
struct delayed_stats {
    unsigned long long runs, snapshots, ids, docs, deletes, stale, dead_letters, errors,
        pages, left_error, retried;
    unsigned long long level_ids[DELAYED_MAX_LEVELS + 1];
    double ms_claim, ms_resolve, ms_build, ms_finish;
    bool lock_busy;
    bool stopped;        /* stopped midway (opts.stopping): the next run takes it over */
};

/* One delayed pass on pipeline p (connections, delivery and mapping set up
 * by the caller): resume a run whose process died, then claim and run the
 * init snapshots. Exit code (0 all done, 1 failure, 3 some snapshots left in
 * error); what it did in *st, a summary and the dry run's plan on out. */
int delayed_run(struct pipeline *p, const unsigned long long *index_ids,
                const struct delayed_opts *o, struct delayed_stats *st, FILE *out, char *err,
                size_t errlen);
/* index_configs.id of every index config of m, in m's order (what
 * delayed_run takes), m being mapping `mapping`'s ([source] mapping); NULL
 * with err. */
unsigned long long *delayed_index_ids(struct st_mysql *meta, const char *mapping,
                                      const struct mapping *m, char *err, size_t errlen);
/* The bucket (0..buckets-1) a document key is staged in: an integer key
 * MOD buckets (MySQL's CAST(key AS UNSIGNED)), any other CRC32(key) MOD
 * buckets; the same key always gives the same bucket. */
unsigned delayed_bucket(const char *key, bool integer, int buckets);
/* ---------- a run's jobs on the nodes of a cluster ---------- */

/* One bucket job of a delayed run, as a node was given it. */
struct delayed_job {
    unsigned long long id, run, index_id;
    unsigned bucket;
    char *cursor; /* "doc_table:doc_key" of its last page acknowledged, or NULL */
    int page, max_attempts; /* its run's --page and --max-attempts (0: the defaults) */
};
/* Run job j on pipeline p as node owner under rebalance session session:
 * every write on its row is conditional on both (the fencing of
 * sync/cluster/job_assign.c). 0 done, 1 stopped by o->stopping (cursor kept), 2
 * given to another node by a later rebalance (its writes refused), 3 the
 * source's server went away (the job back to init at its last acknowledged
 * page, still owner's, no attempt counted: run it again once the server
 * answers, delayed_job_reload), -1 failed (the job left in error; err). */
int delayed_job_run(struct pipeline *p, const unsigned long long *index_ids,
                    const struct delayed_opts *o, const struct delayed_job *j, const char *owner,
                    const char *session, struct delayed_stats *st, char *err, size_t errlen);
/* Job j's cursor as its row holds it now (j->cursor replaced), when the job
 * is still unfinished and owner's under session: 1; 0 it is not (done, or
 * given to another node by a later rebalance); -1 error (err). */
int delayed_job_reload(struct st_mysql *meta, struct delayed_job *j, const char *owner,
                       const char *session, char *err, size_t errlen);
/* Settle delayed run `run` (its snapshots, its row, its ids, sync_log) once
 * none of its jobs is left to run: 1 this call settled it, 0 not (jobs
 * left, or another node settled it first: the run's row is locked and
 * checked), -1 error (err). */
int delayed_run_finish(struct st_mysql *meta, const char *source, const char *node,
                       unsigned long long run, int max_attempts, char *err, size_t errlen);

void delayed_stats_print(const struct delayed_stats *st, FILE *out);
void delayed_stats_json(const struct delayed_stats *st, sbuf *out);

#endif
