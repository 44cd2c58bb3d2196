/* daemon_reader: the source reader as one of the node's subsystems
 * (sync/node/daemon_subsystems.c's table): its start (wait to lead the
 * source, make the mapping's indices exist, open the source where the
 * checkpoint says), its run on the main thread (the source: the binlog,
 * sync/sources/binlog_source.c, or Kafka) and its stop (the reader's stream
 * drained and its checkpoint saved, the source given back to the next
 * reader; the exit code of `run` decided). */
#include <stdio.h>
#include <string.h>

#include "exit_codes.h"
#include "log.h"
#include "monotime.h"
#include "search/wait.h"
#include "service_notify.h"
#include "sync/node/daemon.h"

/* search_wait_ready's step once the engine answers */
static int prepare_indices(void *ud) {
    struct daemon *dm = ud;
    if (supervisor_prepare(&dm->sv, dm->gen) == 0) return 0;
    snprintf(dm->err, sizeof dm->err, "%s", dm->sv.err);
    return -1;
}

/* 0 this node reads, 1 it stopped while standing by, -1 error */
static int reader_start(void *st, void *ctx) {
    (void)ctx;
    struct daemon *dm = st;
    int lrc = leadership_acquire(&dm->lead, &daemon_stop_requested); /* a standby waits here */
    if (lrc < 0) {
        snprintf(dm->err, sizeof dm->err, "%s", dm->lead.err);
        return -1;
    }
    if (lrc == 0) {
        log_info("run", "stopped while standing by");
        dm->exit_code = EXIT_OK;
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
    if (daemon_load_mapping(dm) < 0) return -1;
    /* every index of the mapping exists, or its first build is queued */
    if (search_wait_ready(dm->client, dm->p.k, prepare_indices, dm, &daemon_stop_requested,
                          dm->err, sizeof dm->err) != 0) {
        if (daemon_stop_requested) dm->exit_code = EXIT_OK, dm->err[0] = '\0';
        return -1;
    }
    pipeline_adopt(&dm->p, &dm->gen->m, router_new(&dm->gen->m));
    daemon_source_env(dm); /* what the source is given (sync/sources/source.h) */
    daemon_owed_load(dm);  /* before the checkpoint moves: none is lost to it */
    if (dm->source->open(&dm->env, dm->from_current, &dm->source_state) < 0) {
        if (dm->env.usage) dm->exit_code = EXIT_USAGE; /* a checkpoint this server cannot resume */
        return -1;
    }
    return 0;
}

/* the main thread, until a stop or a failure */
static int reader_run(void *st) {
    struct daemon *dm = st;
    service_notify("STATUS=reading the binlog of source %s", dm->cfg->source.name);
    liveness_start(&dm->rs.live);
    int rc = daemon_stop_requested ? BL_STOP : dm->source->run(dm->source_state);
    liveness_end(&dm->rs.live, true); /* the node stops with it */
    dm->run_rc = rc;
    dm->ran = true;
    service_notify("STOPPING=1\nSTATUS=stopping: draining the delivery queues");
    if (rc == BL_ERR && strstr(dm->err, "not available on the server"))
        snprintf(dm->err + strlen(dm->err), sizeof dm->err - strlen(dm->err),
                 ". To go on without those changes: `searchsync run --config FILE "
                 "--from-current` starts at the binlog's end and rebuilds every index, which "
                 "covers what was skipped");
    if (rc == BL_ERR) log_error("run", "stopping: %s", dm->err);
    return rc;
}

/* after every subsystem before it in the drain order (the schedules, the
 * supervisor, cluster jobs, the admin server, the builds at their cursors):
 * the reader's stream drained, the leadership released; the exit code. A
 * reader that never ran (a later start failed) has nothing to drain. */
static void reader_stop(void *st) {
    struct daemon *dm = st;
    if (!dm->ran) return;
    dm->ran = false; /* once */
    const struct ss_config *cfg = dm->cfg;
    struct pipeline *p = &dm->p;
    int rc = dm->run_rc;
    dm->exit_code = EXIT_RUNTIME;
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
             "read while behind or %llu waited for), %llu documents (%llu slices of large "
             "fan-outs built while routing), %llu element scripts, %llu deletes, %llu child "
             "copy lookups (%llu builds' made with a later one's, read while behind), %llu "
             "change snapshots, %llu mapping reloads; drain %s",
             dm->env.counts.txns, dm->env.counts.grouped_txns, dm->env.counts.groups,
             dm->env.counts.waited, p->docs,
             p->slices, p->scripts, p->deletes, p->copy_lookups, p->copy_waits, p->snapshots,
             dm->reloads,
             drc == DELIVER_OK ? "complete"
             : ousted          ? "skipped (another node reads the source)"
             : held            ? "skipped (the reader lock is unconfirmed: what was queued is "
                                 "read again from the saved checkpoint at the next start)"
                               : "incomplete");
    if (rc != BL_ERR && drc == DELIVER_OK) dm->exit_code = EXIT_OK;
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
        dm->exit_code = EXIT_RUNTIME;
        if (atomic_load(&dm->sv.lost))
            snprintf(dm->err, sizeof dm->err, "this node no longer reads source %s: %.700s; "
                     "restart it to stand by", cfg->source.name, dm->lead.err);
        else
            snprintf(dm->err, sizeof dm->err, "this node no longer reads source %s (another "
                     "node took it over): restart it to stand by", cfg->source.name);
    }
}

/* The reader beats at every row, commit and idle heartbeat (the server
 * sends one every [source] heartbeat_ms), and at every poll of Kafka; the
 * waits it can name are the source away (reader_stats_link), the reader lock
 * unconfirmed (daemon_source.c) and delivery full (the engine slow or
 * away; the hub's own health says whether its senders go round). Before it
 * runs (a standby waiting to lead, the engine waited for) it has not
 * started: those waits are bounded loops of their own. */
static bool reader_healthy(void *st, char *why, size_t whylen) {
    struct daemon *dm = st;
    if (deliver_waiting_for_space(dm->p.d)) return true;
    return liveness_check(&dm->rs.live, "source reader", mono_ms(),
                          node_wedged_after_ms(dm->cfg), why, whylen);
}

const struct node_subsystem daemon_reader_subsystem = {
    .name = "source reader", .drain = NODE_DRAIN_READER, .start = reader_start,
    .run = reader_run, .stop = reader_stop, .healthy = reader_healthy};
