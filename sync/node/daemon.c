/* daemon: `searchsync run` — incremental sync of one source: start-up, the
 * threads, shutdown.
 *
 * The walk of one change (docs/walkthrough.md):
 *
 *   binlog event ──bl_reader──► decoded row ──on_row (binlog_source.c)──►
 *   pipeline_route_row: the change set of the transaction (router.c: which
 *   documents and elements; row images; change snapshots)
 *   ... COMMIT ──on_commit──► read snapshot at or past the commit ──►
 *   pipeline_build (pipeline.c): documents rebuilt from MySQL (docbuild.c),
 *   element scripts (area_update.c), row-image documents (row_image.c),
 *   stale child copies (child_copies.c), each write to every target of its
 *   index with the commit's version ──► deliver_submit ──► pipeline_end:
 *   deliver_txn_end(position) ──► engine acknowledges ──► low-water mark
 *   ──► offsets table (checkpoint) ──► on restart the reader resumes there.
 *
 * Threads:
 *   main / reader   this file starts everything, then runs the source (the
 *                   binlog: sync/sources/binlog_source.c, or Kafka; picked
 *                   in daemon_run, given a struct source_env) until a stop or
 *                   a failure; between transactions the source has the node
 *                   apply the supervisor's commands (a mapping generation
 *                   to adopt, the builds to look at: daemon_source.c,
 *                   daemon_builds.c)
 *   supervisor      supervisor.c: mapping edits → validated generations,
 *                   the build poll timer
 *   signals         src/signals.c: SIGTERM/SIGINT set daemon_stop_requested;
 *                   the reader stops at the next transaction boundary;
 *                   SIGHUP / SIGUSR1 wake the supervisor (reload.c)
 *   delivery        src/deliver: helpers and the checkpoint thread
 *   admin server    web/: its own connections
 *   reindex runners sync/reindex/reindex_runner.c: a build's jobs
 *
 * Start-up: configuration, metadata schema (migrated), the mapping's first
 * generation (validated: an invalid one exits 2), the admin server, the
 * engine (detected), delivery, the election (a standby waits there), then,
 * as the reader only: the mapping read again, each index missing created as
 * <alias>_v1 behind its alias through a first build, the supervisor, and the
 * reader from the saved checkpoint (or [source] start). SIGTERM/SIGINT stop the
 * reader at a transaction boundary; the builds' runners stop at their
 * cursors; delivery drains (bounded by drain_timeout_ms) and saves the
 * checkpoint. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exit_codes.h"
#include "sync/node/daemon.h"
#include "sync/pipeline/gtid_version.h"
#include "sync/sources/binlog_source.h"
#include "sync/sources/kafka_source.h"
#include "log.h"
#include "search/wait.h"
#include "service_notify.h"
#include "signals.h"

volatile sig_atomic_t daemon_stop_requested;

/* ---------- delivery's callbacks ---------- */

/* called from delivery's checkpoint thread (a drain's last save from the
 * main thread, one at a time): once an interval while saves fail, the
 * reason is said at the first failure, then once in 60; delivery says every
 * failure of the drain's save */
static int save_checkpoint(void *ud, const char *position, uint64_t seq) {
    struct daemon *dm = ud;
    char err[512];
    uint64_t other = 0;
    /* once the lock is given back (its fence 0), a save would not be fenced
     * and could move the next reader's checkpoint: delivery's last
     * acknowledgements after a drain that timed out are not saved */
    if (atomic_load(&dm->released)) return -1;
    int rc = db_ensure(&dm->ckpt, &dm->ckptp, err, sizeof err);
    /* (the token is the node's for as long as it reads: a lock taken back
     * after a lost connection keeps it, sync/cluster/leadership.c) */
    uint64_t mine = dm->lead.fence;
    if (rc == 0)
        rc = offsets_save_fenced(dm->ckpt, dm->cfg->source.name, position, seq, mine, &other,
                                 err, sizeof err);
    if (rc < 0) {
        if (dm->ckpt_failed++ % 60 == 0)
            log_warn("run", "checkpoint not saved (will retry): %s", err);
        return -1;
    }
    if (rc == 1) { /* fenced out: another reader took the source over */
        if (!atomic_exchange(&dm->fenced, true)) {
            /* not one more write: what it has queued is the new reader's
             * to send (from the checkpoint, which this node never moved) */
            deliver_halt(dm->p.d);
            log_error("run", "source %s is read by another node now (its fencing token %llu is "
                      "newer than this node's %llu): this node's checkpoint saves no longer "
                      "land, and it stops reading", dm->cfg->source.name,
                      (unsigned long long)other, (unsigned long long)mine);
            daemon_stop_requested = 1;
        }
        return 0; /* nothing to retry: the checkpoint is the other reader's */
    }
    dm->ckpt_failed = 0;
    if (dm->source->saved) /* Kafka: the same offsets committed there */
        dm->source->saved(dm->source_state, position);
    return 0;
}

/* Delivery's dead letters go to the dead-letter table, except a dual write
 * to a build's index (written by name, never through an alias) that is no
 * longer a version: that build was cancelled or failed and its index
 * deleted while the write was in flight, so there is nothing to repair.
 * The engine says so with a 404, or, when the write landed after the
 * delete and created the index anew with a guessed mapping, with whatever
 * that mapping refused (a BIGINT UNSIGNED above 2^63 in a long): the
 * metadata decides then (dl_store_put_if_version), and the leftover index
 * is deleted once the writes in flight are delivered (daemon_builds.c). */
static int live_dead_letter(void *ud, const struct dead_letter *dl) {
    struct daemon *dm = ud;
    char at[64];
    if (!dl->require_alias && dl->status == 404 && dl->error &&
        strstr(dl->error, "index_not_found_exception")) {
        log_info("run", "dropped a write to %s (id %s, %s): the index of that cancelled or "
                 "failed build is gone", dl->index, dl->doc_id,
                 version_describe(dl->version, at, sizeof at));
        return 1;
    }
    if (dl->require_alias) return dl_store_put(dm->dls, dl);
    int rc = dl_store_put_if_version(dm->dls, dl);
    if (rc == 1)
        log_info("run", "dropped a write to %s (id %s, %s): that build was cancelled or failed "
                 "while the write was in flight (the engine answered %d)", dl->index, dl->doc_id,
                 version_describe(dl->version, at, sizeof at), dl->status);
    return rc;
}

/* An element script found no document (never indexed, or deleted
 * meanwhile): rebuilt whole with the next change set. */
static void on_missing(void *ud, const char *index, const char *doc_id, const char *routing,
                       uint64_t version) {
    (void)version;
    struct daemon *dm = ud;
    if (routing) return; /* element scripts go to root documents only */
    pipeline_note_missing(&dm->p, index, doc_id);
}

/* The mapping of the source, loaded and validated (sync/node/supervisor.c); -1
 * with dm->err and *exit_code EXIT_USAGE when the mapping is at fault. */
static int load_mapping(struct daemon *dm, const char *config, int *exit_code) {
    bool invalid = false;
    dm->gen = supervisor_load(&dm->sv, &invalid);
    if (dm->gen) return 0;
    snprintf(dm->err, sizeof dm->err, "%s", dm->sv.err);
    if (invalid) {
        *exit_code = EXIT_USAGE;
        if (strstr(dm->err, "has no index configs"))
            snprintf(dm->err, sizeof dm->err,
                     "source %s has no index configs in %s: import a mapping first "
                     "(searchsync mapping import --config %s FILE --yes)",
                     dm->cfg->source.name, dm->cfg->metadata.database, config);
    }
    return -1;
}

/* search_wait_ready's step once the engine answers */
static int prepare_indices(void *ud) {
    struct daemon *dm = ud;
    if (supervisor_prepare(&dm->sv, dm->gen) == 0) return 0;
    snprintf(dm->err, sizeof dm->err, "%s", dm->sv.err);
    return -1;
}

/* systemd's watchdog is pinged while the supervisor goes round (it does,
 * at least once a second, whatever the reader waits for); before it starts
 * (start-up, a standby node) the waits are bounded loops themselves */
static bool daemon_alive(void *ud, char *why, size_t whylen) {
    struct daemon *dm = ud;
    if (!dm->sv.running) return true;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    long long quiet = now - atomic_load(&dm->sv.ticked_ms);
    long long limit = service_notify_watchdog_ms() / 2;
    if (limit < 5000) limit = 5000;
    if (quiet <= limit) return true;
    snprintf(why, whylen, "the supervisor thread has not gone round for %lld ms", quiet);
    return false;
}

/* ---------- the node's subsystems (sync/node/node.h), in drain order ---------- */

static void sub_check_stop(void *st) { check_schedule_stop(st); }
static void sub_joins_stop(void *st) { shard_joins_stop(st); }
static void sub_delayed_stop(void *st) { delayed_schedule_stop(st); }
static void sub_retention_stop(void *st) { retention_schedule_stop(st); }
static void sub_supervisor_stop(void *st) {
    struct daemon *dm = st;
    supervisor_signals_detach();
    supervisor_stop(&dm->sv);
}
static void sub_cluster_stop(void *st) { cluster_jobs_stop(st); }
static void sub_node_state_stop(void *st) { node_state_stop(st); } /* (role stopped) */
static void sub_admin_stop(void *st) { /* before what its handlers use is freed */
    struct daemon *dm = st;
    if (dm->nd.admin && node_admin()) node_admin()->stop(dm->nd.admin);
    dm->nd.admin = dm->sv.admin = NULL;
}
static void sub_builds_stop(void *st) { /* the jobs resume from their cursors */
    struct daemon *dm = st;
    while (dm->p.nbuilds)
        builds_stop(dm, dm->p.nbuilds - 1, "stopping; the jobs resume from their cursors", false);
}
static void sub_delivery_stop(void *st) { /* every producer above closed its stream */
    struct daemon *dm = st;
    deliver_free(dm->p.d);
    dm->p.d = NULL;
    deliver_hub_install(NULL);
    deliver_hub_free(dm->hub);
    dm->hub = NULL;
}

static const struct node_subsystem SUB_CHECKS = {"scheduled checks", NODE_DRAIN_SCHEDULES,
                                                 sub_check_stop, NULL};
static const struct node_subsystem SUB_JOINS = {"shard joins", NODE_DRAIN_SCHEDULES,
                                                sub_joins_stop, NULL};
static const struct node_subsystem SUB_DELAYED = {"scheduled delayed runs", NODE_DRAIN_SCHEDULES,
                                                  sub_delayed_stop, NULL};
static const struct node_subsystem SUB_RETENTION = {"retention", NODE_DRAIN_SCHEDULES,
                                                    sub_retention_stop, NULL};
static const struct node_subsystem SUB_SUPERVISOR = {"supervisor", NODE_DRAIN_CONTROL,
                                                     sub_supervisor_stop, daemon_alive};
static const struct node_subsystem SUB_CLUSTER = {"cluster jobs", NODE_DRAIN_CLUSTER,
                                                  sub_cluster_stop, NULL};
static const struct node_subsystem SUB_NODE_STATE = {"node state", NODE_DRAIN_CLUSTER,
                                                     sub_node_state_stop, NULL};
static const struct node_subsystem SUB_ADMIN = {"admin server", NODE_DRAIN_ADMIN, sub_admin_stop,
                                                NULL};
static const struct node_subsystem SUB_BUILDS = {"build workers", NODE_DRAIN_BUILDS,
                                                 sub_builds_stop, NULL};
static const struct node_subsystem SUB_DELIVERY = {"delivery", NODE_DRAIN_DELIVERY,
                                                   sub_delivery_stop, NULL};

/* the watchdog: every subsystem well */
static bool node_alive(void *ud, char *why, size_t whylen) {
    return node_healthy(ud, why, whylen);
}

/* ---------- `searchsync run`: the node's start, in phases ---------- */

/* connections, the binlog format, the mapping (exit 2 where the user must act) */
static int run_connect(struct daemon *dm, const char *config, int *exit_code) {
    const struct ss_config *cfg = dm->cfg;
    struct pipeline *p = &dm->p;
    p->stop = &daemon_stop_requested;
    p->srcp = db_params_source(cfg);
    p->metap = db_params_metadata(cfg);
    p->metap.database = cfg->metadata.database;
    dm->ckptp = p->metap;
    p->meta = metadb_open(cfg, dm->err, sizeof dm->err);
    if (!p->meta) return -1;
    p->src = db_connect(&p->srcp, dm->err, sizeof dm->err);
    if (!p->src) return -1;
    /* before a build is queued or a checkpoint saved */
    int rowfmt = dm->source->check ? dm->source->check(p->src, dm->err, sizeof dm->err) : 0;
    if (rowfmt == 0 && config_gtid_versions(cfg)) /* [source] versions = gtid: GTIDs on */
        rowfmt = gtid_server_check(p->src, dm->err, sizeof dm->err);
    if (rowfmt != 0) {
        if (rowfmt == 1) *exit_code = EXIT_USAGE;
        return -1;
    }
    return load_mapping(dm, config, exit_code);
}

/* the admin server, the engine, the process's delivery and the reader's
 * stream on it */
static int run_delivery(struct daemon *dm, int *exit_code) {
    const struct ss_config *cfg = dm->cfg;
    struct pipeline *p = &dm->p;
    /* the admin API (web/, registered by cmd/main.c) */
    if (node_admin() && node_admin()->start(cfg, &dm->nd.admin, dm->err, sizeof dm->err) < 0) {
        *exit_code = EXIT_USAGE;
        return -1;
    }
    node_started(&dm->nd, &SUB_ADMIN, dm);
    /* the start-up checks passed: systemd may consider the service started */
    service_notify("READY=1\nSTATUS=waiting for the search engine");
    if (service_watchdog_start(node_alive, &dm->nd) < 0)
        log_warn("systemd", "the watchdog thread could not start: systemd's WatchdogSec will "
                 "restart the service");
    struct search_opts so;
    deliver_search_opts(&so, cfg);
    dm->client = search_client_new(&so, dm->err, sizeof dm->err);
    if (!dm->client) return -1;
    dm->sv.client = dm->client;
    p->k = search_conn_new(dm->client);
    /* an engine that is down or starting is waited for (src/search/wait.c):
     * delivery and the jobs of a standby need its version */
    if (search_wait_ready(dm->client, p->k, NULL, NULL, &daemon_stop_requested, dm->err,
                          sizeof dm->err) != 0) {
        if (daemon_stop_requested) *exit_code = EXIT_OK, dm->err[0] = '\0';
        return -1;
    }
    dm->ckpt = db_connect(&dm->ckptp, dm->err, sizeof dm->err);
    dm->dls = dm->ckpt ? dl_store_new(&dm->ckptp, cfg->source.name, dm->err, sizeof dm->err)
                       : NULL;
    if (!dm->dls) return -1;
    struct deliver_opts dopts;
    deliver_opts_from_config(&dopts, cfg);
    dopts.checkpoint = save_checkpoint;
    dopts.checkpoint_ud = dm;
    dopts.dead_letter = live_dead_letter;
    dopts.dead_letter_ud = dm;
    /* a full write that lands supersedes the document's older dead letters:
     * replayed after the delete's tombstone is gone, they would bring a
     * deleted document back (docs/delivery.md, Tombstones) */
    dopts.written = dl_store_written;
    dopts.written_ud = dm->dls;
    dopts.missing = on_missing;
    dopts.missing_ud = dm;
    /* the process's one delivery: every producer of this node (the reader
     * below, builds, delayed runs, checks' repairs, resyncs, replays) opens
     * its stream on it (src/deliver/stream.c) */
    dm->hub = deliver_hub_new(&dopts, dm->client, dm->err, sizeof dm->err);
    if (!dm->hub) return -1;
    deliver_hub_install(dm->hub);
    /* the binlog gives one document's changes in version order (I5); a
     * Kafka topic's partitions need not */
    dopts.ordered_versions = dm->source->ordered_versions;
    p->d = deliver_stream_open(dm->hub, &dopts, "live", DELIVER_LIVE, dm->err, sizeof dm->err);
    node_started(&dm->nd, &SUB_DELIVERY, dm);
    if (!p->d) return -1;
    node_started(&dm->nd, &SUB_BUILDS, dm);
    if (dm->nd.admin) {
        node_admin()->attach(dm->nd.admin, dm->client, p->d, &dm->rs);
        node_admin()->generation(dm->nd.admin, supervisor_published, &dm->sv);
    }
    dm->sv.d = p->d;
    dm->sv.admin = dm->nd.admin;
    return 0;
}

/* cluster membership and the reader's leadership: 0 this node reads, 1 it
 * stopped while standing by, -1 error */
static int run_lead(struct daemon *dm, const char *config, bool no_wait, int *exit_code) {
    const struct ss_config *cfg = dm->cfg;
    /* this node reads the source only once it leads it (the admin server is
     * up meanwhile); a standby waits here */
    if (leadership_init(&dm->lead, cfg, no_wait) < 0) {
        snprintf(dm->err, sizeof dm->err, "%s", dm->lead.err);
        return -1;
    }
    /* with ZooKeeper, every node runs the reindex jobs rebalances give it,
     * standing by or reading */
    int cjrc = cluster_jobs_start(&dm->cluster, cfg, dm->client, &dm->lead);
    node_started(&dm->nd, &SUB_CLUSTER, &dm->cluster);
    if (cjrc < 0) {
        snprintf(dm->err, sizeof dm->err, "%s", dm->cluster.err);
        return -1;
    }
    service_notify("STATUS=waiting to read the binlog of source %s", cfg->source.name);
    node_started(&dm->nd, &SUB_NODE_STATE, &dm->node);
    if (node_state_start(&dm->node, cfg, dm->p.d, &dm->rs, &dm->lead, &daemon_stop_requested) < 0)
        log_warn("run", "the node state thread could not start: status shows no live state "
                 "of this node");
    int lrc = leadership_acquire(&dm->lead, &daemon_stop_requested);
    if (lrc < 0) {
        snprintf(dm->err, sizeof dm->err, "%s", dm->lead.err);
        return -1;
    }
    if (lrc == 0) {
        log_info("run", "stopped while standing by");
        *exit_code = EXIT_OK;
        return 1;
    }
    dm->sv.lead = &dm->lead;
    /* Only the reader makes the indices of the mapping exist (a first build
     * queued, an alias adopted): nodes started together would each queue the
     * same first version and meet each other's index in the engine. The
     * mapping is read again first: a standby's may be hours old, and
     * another reader may have queued or built versions meanwhile. */
    mapping_gen_unref(dm->gen);
    dm->gen = NULL;
    if (load_mapping(dm, config, exit_code) < 0) return -1;
    /* every index of the mapping exists, or its first build is queued */
    if (search_wait_ready(dm->client, dm->p.k, prepare_indices, dm, &daemon_stop_requested,
                          dm->err, sizeof dm->err) != 0) {
        if (daemon_stop_requested) *exit_code = EXIT_OK, dm->err[0] = '\0';
        return -1;
    }
    pipeline_adopt(&dm->p, &dm->gen->m, router_new(&dm->gen->m));
    return 0;
}

/* where reading starts, the builds, the supervisor and the schedules */
static int run_subsystems(struct daemon *dm, bool from_current, int *exit_code) {
    const struct ss_config *cfg = dm->cfg;
    daemon_source_env(dm); /* what the source is given (sync/sources/source.h) */
    if (dm->source->open(&dm->env, from_current, &dm->source_state) < 0) {
        if (dm->env.usage) *exit_code = EXIT_USAGE; /* a checkpoint this server cannot resume */
        return -1;
    }
    /* reindexes (a first sync, or one resumed after a restart) */
    struct build_table *bt = build_table_read(&dm->sv.meta, &dm->sv.metap, config_mapping_name(cfg),
                                              dm->sv.err, sizeof dm->sv.err);
    if (!bt) {
        snprintf(dm->err, sizeof dm->err, "reading the build table: %.900s", dm->sv.err);
        return -1;
    }
    builds_apply(dm, bt);
    build_table_free(bt);
    /* shards the live versions have not read (mapping_shard.h): read into them */
    node_started(&dm->nd, &SUB_JOINS, &dm->joins);
    if (shard_joins_start(&dm->joins, cfg) < 0)
        log_warn("run", "the shard joins thread could not start: shards that join are not read "
                 "into the live version (searchsync check --repair finds their documents)");
    else if (shard_joins_at_start(&dm->joins, dm->p.meta, config_mapping_name(cfg), &dm->gen->m,
                                  dm->err, sizeof dm->err) < 0)
        log_warn("run", "the shards the live versions have read are not known (%s): those "
                 "that joined while no daemon ran are read at the next start", dm->err);
    node_started(&dm->nd, &SUB_SUPERVISOR, dm);
    if (supervisor_start(&dm->sv) < 0) {
        snprintf(dm->err, sizeof dm->err, "%s", dm->sv.err);
        return -1;
    }
    /* SIGHUP: reload, SIGUSR1: state dump (sync/node/reload.c) */
    supervisor_signals_attach(&dm->sv);
    node_started(&dm->nd, &SUB_CHECKS, &dm->check);
    if (check_schedule_start(&dm->check, cfg, &daemon_stop_requested, dm->lead.node_id) < 0)
        log_warn("run", "the scheduled check could not start: checks run from cron only");
    node_started(&dm->nd, &SUB_DELAYED, &dm->delayed);
    if (delayed_schedule_start(&dm->delayed, cfg, &daemon_stop_requested) < 0)
        log_warn("run", "the scheduled delayed run could not start: run searchsync delayed-run "
                 "from cron");
    node_started(&dm->nd, &SUB_RETENTION, &dm->retention);
    if (retention_schedule_start(&dm->retention, cfg, &daemon_stop_requested) < 0)
        log_warn("run", "retention: its thread could not start: the metadata's history is not "
                 "cleaned by this run");
    char subs[512];
    node_describe(&dm->nd, subs, sizeof subs);
    log_debug("run", "node subsystems, in drain order: %s", subs);
    return 0;
}

/* after the source stopped (rc): every subsystem in drain order, the
 * reader's stream drained, the leadership released; the exit code */
static int run_stop(struct daemon *dm, int rc) {
    const struct ss_config *cfg = dm->cfg;
    struct pipeline *p = &dm->p;
    int exit_code = EXIT_RUNTIME;
    service_notify("STOPPING=1\nSTATUS=stopping: draining the delivery queues");
    if (rc == BL_ERR && strstr(dm->err, "not available on the server"))
        snprintf(dm->err + strlen(dm->err), sizeof dm->err - strlen(dm->err),
                 ". To go on without those changes: `searchsync run --config FILE "
                 "--from-current` starts at the binlog's end and rebuilds every index, which "
                 "covers what was skipped");
    if (rc == BL_ERR) log_error("run", "stopping: %s", dm->err);
    /* every subsystem before delivery, in drain order: the schedules (a
     * check under way gives up, its repair is delivered), the supervisor,
     * cluster jobs, the admin server, the builds at their cursors */
    node_stop_through(&dm->nd, NODE_DRAIN_BUILDS);
    /* fenced out (another node reads the source): delivery was halted when
     * that was learnt, and nothing of the queue is sent now either */
    bool ousted = atomic_load(&dm->sv.lost) || atomic_load(&dm->fenced);
    /* stopped while its sends were held for an unconfirmed lock: they
     * could not go, nor could a checkpoint be saved without the lock's
     * server; the next start reads them again from the saved checkpoint */
    bool held = !ousted && atomic_load(&dm->sv.sends_held);
    struct deliver_stats ds = {0};
    if (held) deliver_get_stats(p->d, &ds);
    if (ousted || held) deliver_halt(p->d);
    int drc = deliver_drain(p->d, cfg->delivery.drain_timeout_ms);
    log_info("run",
             "stopped after %llu transactions (%llu of them built together in %llu groups, "
             "read while behind), %llu documents (%llu slices of large fan-outs built while "
             "routing), %llu element scripts, %llu deletes, %llu "
             "change snapshots, %llu mapping reloads; drain %s",
             dm->env.counts.txns, dm->env.counts.grouped_txns, dm->env.counts.groups, p->docs,
             p->slices, p->scripts, p->deletes, p->snapshots, dm->reloads,
             drc == DELIVER_OK ? "complete"
             : ousted          ? "skipped (another node reads the source)"
             : held            ? "skipped (the reader lock is unconfirmed: what was queued is "
                                 "read again from the saved checkpoint at the next start)"
                               : "incomplete");
    if (rc != BL_ERR && drc == DELIVER_OK) exit_code = EXIT_OK;
    if (rc != BL_ERR) dm->err[0] = '\0';
    if (rc != BL_ERR && held)
        snprintf(dm->err, sizeof dm->err, "stopped while the reader lock of source %s could not "
                 "be confirmed: %ld change(s) it had queued were not sent, and no checkpoint was "
                 "saved; the next start reads them again from the saved checkpoint",
                 cfg->source.name, ds.queued);
    if (!atomic_load(&dm->sv.lost) && !atomic_load(&dm->fenced)) { /* (a save may have learnt it) */
        atomic_store(&dm->released, true);
        leadership_release(&dm->lead); /* after the drain's checkpoint: the next reader starts there */
    } else {
        exit_code = EXIT_RUNTIME;
        if (atomic_load(&dm->sv.lost))
            snprintf(dm->err, sizeof dm->err, "this node no longer reads source %s: %.700s; "
                     "restart it to stand by", cfg->source.name, dm->lead.err);
        else
            snprintf(dm->err, sizeof dm->err, "this node no longer reads source %s (another "
                     "node took it over): restart it to stand by", cfg->source.name);
    }
    return exit_code;
}

/* what is still running, in drain order, delivery last; then the rest */
static void run_free(struct daemon *dm) {
    struct pipeline *p = &dm->p;
    signals_on_stop(NULL, NULL);
    service_watchdog_stop();
    node_free(&dm->nd);
    free(p->builds);
    dm->source->close(dm->source_state); /* after delivery: Kafka's last checkpoint commits */
    dm->source_state = NULL;
    dl_store_free(dm->dls);
    search_conn_free(p->k);
    changeset_free(&dm->cs);
    pipeline_free(p);
    supervisor_free(&dm->sv);
    leadership_free(&dm->lead);
    search_client_free(dm->client);
    mapping_gen_unref(dm->gen);
    pthread_mutex_lock(&dm->cmds.mu);
    mapping_gen_unref(dm->cmds.adopt);
    build_table_free(dm->cmds.builds);
    for (size_t i = 0; i < dm->cmds.ntruncated; i++)
        free(dm->cmds.truncated[i].alias), free(dm->cmds.truncated[i].reason);
    free(dm->cmds.truncated);
    pthread_mutex_unlock(&dm->cmds.mu);
    pthread_mutex_destroy(&dm->cmds.mu);
    db_close(p->src);
    db_close(p->meta);
    db_close(dm->ckpt);
    reader_stats_destroy(&dm->rs);
    free(dm);
}

int daemon_run(struct ss_config *cfg, const char *config_path, bool no_wait,
               bool from_current) {
    struct daemon *dm = xcalloc(1, sizeof *dm);
    reader_stats_init(&dm->rs);
    dm->cfg = cfg;
    /* the source read (sync/sources/source.h): the one place it is picked */
    dm->source = config_kafka_source(cfg) ? &kafka_source_kind : &binlog_source_kind;
    pthread_mutex_init(&dm->cmds.mu, NULL);
    pipeline_init(&dm->p, cfg);
    supervisor_init(&dm->sv, cfg, &dm->cmds, NULL, &daemon_stop_requested);
    signals_on_stop(&daemon_stop_requested, NULL);
    int exit_code = EXIT_RUNTIME;
    if (node_init(&dm->nd, cfg, dm->err, sizeof dm->err) < 0) {
        fprintf(stderr, "searchsync run: %s\n", dm->err);
        free(dm);
        return EXIT_RUNTIME;
    }
    if (run_connect(dm, config_path, &exit_code) == 0 && run_delivery(dm, &exit_code) == 0 &&
        run_lead(dm, config_path, no_wait, &exit_code) == 0 &&
        run_subsystems(dm, from_current, &exit_code) == 0) {
        service_notify("STATUS=reading the binlog of source %s", cfg->source.name);
        int rc = daemon_stop_requested ? BL_STOP : dm->source->run(dm->source_state);
        exit_code = run_stop(dm, rc);
    }
    if (exit_code != EXIT_OK && dm->err[0]) fprintf(stderr, "searchsync run: %s\n", dm->err);
    run_free(dm);
    return exit_code;
}
