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
 * Start-up is the node's table of subsystems (sync/node/daemon_subsystems.c),
 * in order: configuration, metadata schema (migrated), the mapping's first
 * generation (validated: an invalid one exits 2), the admin server, the
 * engine (detected), delivery, the election (a standby waits there), then,
 * as the reader only: the mapping read again, each index missing created as
 * <alias>_v1 behind its alias through a first build, the supervisor, and the
 * reader from the saved checkpoint (or [source] start: daemon_reader.c).
 * SIGTERM/SIGINT stop the reader at a transaction boundary; the node stops
 * the subsystems in drain order: the builds' runners stop at their cursors;
 * delivery drains (bounded by drain_timeout_ms) and saves the checkpoint.
 * This file: delivery's callbacks, the mapping's load, daemon_run (the
 * front end, `run`'s options, is cmd/cmd_run.c) and what is freed at the
 * end. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exit_codes.h"
#include "sync/node/daemon.h"
#include "sync/sources/binlog_source.h"
#include "sync/sources/kafka_source.h"
#include "log.h"
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

void daemon_delivery_callbacks(struct daemon *dm, struct deliver_opts *o) {
    o->checkpoint = save_checkpoint;
    o->checkpoint_ud = dm;
    o->dead_letter = live_dead_letter;
    o->dead_letter_ud = dm;
    /* a full write that lands supersedes the document's older dead letters:
     * replayed after the delete's tombstone is gone, they would bring a
     * deleted document back (docs/delivery.md, Tombstones) */
    o->written = dl_store_written;
    o->written_ud = dm->dls;
    o->missing = on_missing;
    o->missing_ud = dm;
}

int daemon_load_mapping(struct daemon *dm) {
    bool invalid = false;
    dm->gen = supervisor_load(&dm->sv, &invalid);
    if (dm->gen) return 0;
    snprintf(dm->err, sizeof dm->err, "%s", dm->sv.err);
    if (invalid) {
        dm->exit_code = EXIT_USAGE;
        if (strstr(dm->err, "has no index configs"))
            snprintf(dm->err, sizeof dm->err,
                     "source %s has no index configs in %s: import a mapping first "
                     "(searchsync mapping import --config %s FILE --yes)",
                     dm->cfg->source.name, dm->cfg->metadata.database, dm->config);
    }
    return -1;
}

/* what is still running, in drain order, delivery last; then the rest */
static void run_free(struct daemon *dm) {
    struct pipeline *p = &dm->p;
    signals_on_stop(NULL, NULL);
    node_free(&dm->nd); /* what is still running, in drain order */
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
        emptied_free(&dm->cmds.truncated[i]);
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
    dm->config = config_path;
    dm->no_wait = no_wait;
    dm->from_current = from_current;
    dm->exit_code = EXIT_RUNTIME;
    /* the source read (sync/sources/source.h): the one place it is picked */
    dm->source = config_kafka_source(cfg) ? &kafka_source_kind : &binlog_source_kind;
    pthread_mutex_init(&dm->cmds.mu, NULL);
    pipeline_init(&dm->p, cfg);
    supervisor_init(&dm->sv, cfg, &dm->cmds, NULL, &daemon_stop_requested);
    signals_on_stop(&daemon_stop_requested, NULL);
    if (node_init(&dm->nd, cfg, dm->err, sizeof dm->err) < 0) {
        fprintf(stderr, "searchsync run: %s\n", dm->err);
        free(dm);
        return EXIT_RUNTIME;
    }
    /* the node's subsystems (sync/node/daemon_subsystems.c), the source
     * reader on this thread until a stop or a failure, then every
     * subsystem stopped in drain order: the reader's stop sets the exit
     * code */
    if (daemon_start(dm) == 0) node_main(&dm->nd);
    node_stop_all(&dm->nd);
    int exit_code = dm->exit_code;
    if (exit_code != EXIT_OK && dm->err[0]) fprintf(stderr, "searchsync run: %s\n", dm->err);
    run_free(dm);
    return exit_code;
}
