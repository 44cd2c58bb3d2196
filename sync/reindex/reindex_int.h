/* reindex_int: what sync/reindex/reindex.c (a build's requests, and its start
 * in the metadata), sync/reindex/reindex_end.c (its end there),
 * sync/reindex/reindex_buckets.c (its buckets) and
 * sync/reindex/reindex_runner.c (its jobs and its switch) share.
 * Not for other files: the interface is reindex.h. */
#ifndef SS_REINDEX_INT_H
#define SS_REINDEX_INT_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <mysql.h>

#include "config.h"
#include "sync/mapping/mapping.h"
#include "sbuf.h"
#include "search/search.h"

/* A bucket's condition (jobs.params): "" (all rows), "0=1" (none), a range
 * of the key, or MOD_BUCKET "..." (reindex --by-mod). Every one but the
 * last is an interval of the key: a keyset page of it holds every row
 * between its first and last key (docbuild_page's dense). */
#define MOD_BUCKET "MOD("
bool rx_bucket_is_key_interval(const char *cond);
/* A job of a config over shard tables names its shard first (jobs.params:
 * "@db.table\n", then its tables' lines): the unit whose rows it reads. */
#define RX_UNIT_LINE "@"

/* Table t's rows are documents of the index (its root, or a parent/child
 * table): the tables a build's jobs read. */
bool rx_doc_table(const struct mp_index *ix, size_t t);

/* ---- reindex_buckets.c ---- */
/* the name of table t's key column, NULL without one */
const char *rx_key_col(const struct mp_table *t);
/* The buckets of every unit of m->indices[at]'s alias (one per shard, or the
 * index config itself) cut into n, shared out among the shards (at least
 * one each), read from src: their jobs' params
 * (0x1e between them) into params, the number of jobs into *njobs. 0, or -1
 * with err. */
int rx_plan_buckets(MYSQL *src, const struct mapping *m, size_t at, int n, bool by_mod,
                    sbuf *params, int *njobs, char *err, size_t errlen);

/* s as a quoted SQL string literal, appended to q */
void rx_sq(MYSQL *m, sbuf *q, const char *s);
/* A statement on the jobs of a build, run again when InnoDB picks it as a
 * deadlock victim. Rows changed, or -1. */
long long rx_exec_retry(MYSQL *m, const char *sql, char *err, size_t errlen);
/* Sleep ms in steps of at most 200 ms; false as soon as *stop is set. */
bool rx_nap_unless(const _Atomic int *stop, long ms);
/* The end of a metadata transaction the caller began: COMMIT when rc is
 * REINDEX_OK (REINDEX_ERR, with err, if that fails), else ROLLBACK, whose own
 * error is appended to err's; the outcome. */
int rx_txn_end(MYSQL *meta, int rc, char *err, size_t errlen);
/* One engine request; -1 with err on a transport error (an HTTP error
 * status is the caller's to judge). */
int rx_engine(struct search_conn *k, const char *method, const char *path, const char *body,
              struct search_resp *r, char *err, size_t errlen);
/* The primary terms of phys's shards now ("1,1,1", into out): 0, or -1 with
 * err (a transport error, or an engine that does not say them: a secured
 * cluster without the monitor privilege, say). A term greater than when the
 * version was created means its primary was assigned again since (a node
 * restarted): writes acknowledged before, not yet on disk, may be lost. */
int rx_primary_terms(struct search_conn *k, const char *phys, sbuf *out, char *err,
                     size_t errlen);
/* A sync_log row (start, end, counts, errors of builds); failures only logged. */
void rx_sync_log(MYSQL *meta, const char *source, const char *index_id, const char *event,
                 const char *detail);
/* The index config of alias with its validated model: REINDEX_OK, _ERR or
 * _UNKNOWN; m->indices[*pos] is it. src NULL: not checked against the source. */
int rx_load_index(const struct ss_config *cfg, MYSQL *meta, MYSQL *src, const char *alias,
                  struct mapping *m, size_t *pos, char *err, size_t errlen);
/* index_configs' id, state, current_version, building_version and
 * history_retention of alias into row[0..5). */
int rx_index_id_of(MYSQL *meta, const char *source, const char *alias, char **row, char *err,
                   size_t errlen);
/* Move the jobs' bookkeeping into reindex_run_jobs, close the run, delete the
 * jobs, keep keep_runs runs. Inside the caller's transaction. */
int rx_close_run(MYSQL *meta, const struct ss_config *cfg, const char *id, unsigned v,
                 const char *status, const char *error, char *err, size_t errlen);
/* Undo build v (failure or cancel) if it is still the one building: the
 * conditional UPDATE decides; the winner deletes <alias>_vN when
 * delete_index. A build that fails inside the daemon leaves the deleting to
 * it (sync/node/daemon_builds.c): it first stops the dual writes and waits for
 * those in flight, which would otherwise re-create the index with dynamic
 * mappings (and some fail against them, as dead letters). */
int rx_undo_build(const struct ss_config *cfg, struct search_conn *k, MYSQL *meta,
                  const char *alias, const char *id, unsigned v, const char *status,
                  const char *reason, bool delete_index, char *err, size_t errlen);

#endif
