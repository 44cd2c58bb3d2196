/* reindex: full rebuild of an index config into a new version behind its
 * alias, in resumable buckets (docs/operations.md "Reindex").
 *
 * The life of a build (index_configs.state, all transitions in the metadata
 * schema, each decided by one conditional UPDATE so that exactly one caller
 * wins it):
 *
 *   available|unavailable ──reindex_request──► changing (building_version N:
 *       engine index <alias>_vN created with refresh off, no replicas and
 *       its translog written asynchronously (its primary terms recorded),
 *       one job per bucket, a reindex_runs row)
 *   changing ──daemon: dual writes on, binlog position recorded, the
 *       mapping generation in force pinned──► jobs run (reindex_runner:
 *       keyset pages of page_size rows per job, each page built whole from
 *       the pinned generation, delivered, acknowledged, then its cursor saved)
 *   changing ──the last job done (the UPDATE that finds no unfinished job
 *       wins)──► switching ──settings restored, flushed, primary terms as
 *       recorded, alias moved in one _aliases call──► available
 *       (current_version N; the old version becomes history, versions
 *       beyond history_retention are deleted)
 *   changing|switching ──a primary term moved (the engine restarted: writes
 *       it acknowledged may be lost)──► previous state, <alias>_vN deleted,
 *       <alias>_v(N+1) queued in its place (not after 3 such builds in a row)
 *   changing ──failure, or rejected documents > max_rejected──► previous
 *       state; <alias>_vN deleted; the reason in reindex_runs and sync_log
 *   changing ──reindex_reset (reindex --reset)──► previous state, cancelled
 *   changing ──its index config edited (the daemon adopts a generation that
 *       differs from the pinned one)──► cancelled, the next version queued
 *       under the new generation (builds_mapping_changed)
 *
 * Versions: every page is read in a consistent snapshot (a job
 * keeps one for up to 500 ms of pages), and its documents carry the version
 * of the binlog position that snapshot matches (MySQL: the binlog status, db_binlog_status,
 * read just before it). Live changes carry
 * their transaction's commit position and are re-read from MySQL when
 * processed. A live change older than the page loses to it, and its data was
 * already in the page (committed before the page was read); a live change
 * newer than the page wins, and its data is newer. So neither stream puts
 * older data over newer, whatever order they reach the engine in.
 *
 * Without ZooKeeper the daemon that reads a source runs its jobs; with it a
 * rebalance spreads them over the source's nodes (docs/cluster.md,
 * "Rebalance"). */
#ifndef SS_REINDEX_H
#define SS_REINDEX_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mysql.h>

#include "config.h"
#include "sync/mapping/mapping.h"

struct search_client;
struct search_conn;

enum reindex_rc {
    REINDEX_OK = 0,
    REINDEX_ERR = -1,     /* server or engine failure (err says which) */
    REINDEX_REFUSED = -2, /* the index config's state does not allow it (err says why) */
    REINDEX_UNKNOWN = -3, /* no such index config */
};

struct reindex_request {
    const char *alias;
    int buckets;  /* <= 0: [reindex] buckets */
    bool by_mod;  /* MOD(bucket_column, buckets) instead of key ranges */
    const char *reason; /* for sync_log ("reindex command", "first sync", ...) */
    unsigned above; /* the new version is above this one too: a version the
                     * engine holds that the metadata does not record */
};

/* Queue a build of the next version (see above). meta: metadata schema
 * selected; src: the source. *version receives N. */
int reindex_request(const struct ss_config *cfg, struct search_client *client,
                    struct search_conn *k, MYSQL *meta, MYSQL *src,
                    const struct reindex_request *req, unsigned *version, char *err,
                    size_t errlen);
/* Cancel a build in state changing: jobs removed, <alias>_vN deleted, the
 * previous state back; `by` (e.g. "reindex --reset") goes to the sync log.
 * REINDEX_REFUSED when nothing is being built. */
int reindex_reset(const struct ss_config *cfg, struct search_conn *k, MYSQL *meta,
                  const char *alias, const char *by, char *err, size_t errlen);
/* The same for build `version` only: REINDEX_REFUSED when it is no longer
 * the one being built (with several sources, another source's daemon may
 * have cancelled it and queued the next one already). */
int reindex_cancel_version(const struct ss_config *cfg, struct search_conn *k, MYSQL *meta,
                           const char *alias, unsigned version, const char *by, char *err,
                           size_t errlen);
/* Plan this source's part of build `version` of alias (docs/cluster.md, "A
 * build across sources"): its buckets read from src with the units of alias
 * in m (the generation the build pinned), its jobs recorded and the part
 * marked planned in one transaction. The reader calls it once its dual
 * writes to the version are on. REINDEX_OK (planned now or before),
 * REINDEX_REFUSED (the build is gone, or has no part for this source),
 * REINDEX_ERR, with err. */
int reindex_plan_part(const struct ss_config *cfg, MYSQL *meta, MYSQL *src,
                      const struct mapping *m, const char *alias, unsigned version, char *err,
                      size_t errlen);
/* Where this source's part of build `version` of alias is read from: src's
 * binlog end now (into where, "file:pos"), added to the version's read_from
 * (sync/reindex/reindex_read_from.c). Called as the source's dual writes to
 * the version begin, before any page of its part is read. 0, or -1 with err. */
int reindex_record_read_from(const struct ss_config *cfg, MYSQL *meta, MYSQL *src,
                             const char *alias, unsigned version, char *where, size_t wherelen,
                             char *err, size_t errlen);
/* Was every page of alias's newest version (the one being built, else the
 * live one) read from this source at or after binlog position file:pos? 1
 * yes, 0 no or not known (why says which, in both cases), -1 the metadata
 * could not be read (err). */
int reindex_read_after(const struct ss_config *cfg, MYSQL *meta, const char *alias,
                       const char *file, unsigned long long pos, char *why, size_t whylen,
                       char *err, size_t errlen);
/* source's entry of a read_from list ("a=file:pos b=file:pos"), false when
 * none. Its first: a reader restarted while the version is built appends
 * another, later one, and every page is after the first. */
bool reindex_read_from_entry(const char *list, const char *source, char *file, size_t filelen,
                             unsigned long long *pos);
/* The order of two positions of one server's binlog (*order -1, 0, 1); -1
 * when the file names are of two series (two servers' binlogs, or a
 * renamed log_bin): they do not compare. */
int reindex_binlog_cmp(const char *fa, unsigned long long pa, const char *fb,
                       unsigned long long pb, int *order);
/* Delete every version of the index config (and so its alias); only from
 * available or unavailable. The config stays, unavailable. */
int reindex_delete_all(const struct ss_config *cfg, struct search_conn *k, MYSQL *meta,
                       const char *alias, char *err, size_t errlen);

/* ---------- the runner (inside `searchsync run`) ---------- */
struct reindex_runner;
struct mapping_gen;
struct deliver_hub;
/* Start running the jobs of build `version` of `alias` in background
 * threads ([reindex] parallel_jobs), every page built from alias's index
 * config as generation gen holds it: the build's pinned generation
 * (sync/mapping/mapping_gen.h), of which the runner holds a reference of its own
 * until it is freed. If every job is already done (a switch interrupted by
 * a crash), the first thread finishes the switch. The pages go through hub,
 * the node's delivery (NULL: one of the build's own). */
struct reindex_runner *reindex_runner_start(const struct ss_config *cfg,
                                            struct search_client *client,
                                            struct deliver_hub *hub,
                                            struct mapping_gen *gen, const char *alias,
                                            unsigned version, char *err, size_t errlen);
/* The same, in a cluster: only the jobs given to owner_node by rebalance
 * session (sync/cluster/cluster_jobs.c), every write on a job row conditional on
 * both, so a node whose jobs a later rebalance moved elsewhere moves none
 * of them. */
struct reindex_runner *reindex_runner_start_owned(const struct ss_config *cfg,
                                                  struct search_client *client,
                                                  struct deliver_hub *hub,
                                                  struct mapping_gen *gen, const char *alias,
                                                  unsigned version, const char *owner_node,
                                                  const char *session, char *err,
                                                  size_t errlen);
/* All threads have ended (the build finished, failed or was cancelled). */
bool reindex_runner_done(struct reindex_runner *r);
/* Stop the threads (between pages; cursors stay) and free. NULL-safe. A
 * build that failed or whose jobs were gone (cancelled) is freed as by
 * reindex_runner_cancel_free. */
void reindex_runner_free(struct reindex_runner *r);
/* The same for a build that will never go live (cancelled, failed,
 * superseded): its pages are not drained and its bulk requests in flight
 * are not waited for (deliver_abandon): a hung engine does not hold the
 * caller. NULL-safe. */
void reindex_runner_cancel_free(struct reindex_runner *r);
/* The build workers of every runner of this process (started, not yet
 * freed) make progress: each has read, handed over or waited on a page
 * within bound_ms (the node's bound: node_wedged_after_ms), or is in a wait
 * it can name (a server away, delivery full), or has ended; else false
 * with why naming the build and the worker (sync/reindex/reindex_health.c).
 * No runner: well. Any thread. */
bool reindex_runners_healthy(int64_t bound_ms, char *why, size_t whylen);

/* ---------- pure parts (unit-tested) ---------- */

/* The WHERE condition of bucket b of n of a table whose single key column
 * holds integers, given the n-1 boundary keys (bounds[k-1] begins bucket k;
 * NULL: the table had fewer rows, and the buckets from there on are empty):
 * the first bucket has no lower bound and the last no upper bound, so rows
 * inserted after planning still fall into one. Appends to out: "" (every
 * row), "`k` < 250", "`k` >= 250 AND `k` < 500", "0=1". -1 for a boundary
 * that is not an integer literal. */
int reindex_bucket_cond(const char *key, char *const *bounds, int b, int n, struct sbuf *out);
/* The primary terms of index's shards, in shard order ("1,1,1"), from the
 * engine's answer to GET /_cluster/state/metadata/<index>
 * ?filter_path=metadata.indices.*.primary_terms, appended to out: the number
 * of shards, or -1 when the answer does not hold them. */
int reindex_parse_primary_terms(const char *json, size_t len, const char *index,
                                struct sbuf *out);
/* The highest version of alias among the indices the engine's answer to
 * GET /_alias/<alias> names (index_version_of: 0 when none is an
 * "<alias>_v<N>", or the answer is not JSON); their names, ", "-separated,
 * appended to names unless it is NULL. */
unsigned reindex_alias_version(const char *alias, const char *json, size_t len,
                               struct sbuf *names);

#endif
