/* daemon_subsystems: `searchsync run`'s subsystems, one static table
 * (sync/node/node.h): each with its start, its stop, its health and its
 * place in the drain order. The node starts them in the table's order, runs
 * the source reader on the main thread (node_main), and stops them in drain
 * order; a start that fails stops the node with the ones started before it.
 *
 * Start order, and why:
 *   connections        the metadata schema, the source, its binlog format,
 *                      the mapping's first generation (validated: an
 *                      invalid one exits 2) before anything else
 *   admin server       before the engine is waited for: a standby and a
 *                      node waiting for the engine answer status calls, and
 *                      a bad listen address is a configuration error (exit 2)
 *   watchdog           systemd may consider the service started once the
 *                      start-up checks passed
 *   delivery           the engine (waited for) and the node's hub, with
 *                      the reader's stream: every producer below is handed
 *                      the hub
 *   election           whether this node may read the source (the lock, or
 *                      a ZooKeeper election); its release is the reader's
 *   cluster jobs       a standby runs the jobs rebalances give it too
 *   node state         this node's live state, written every 2 s
 *   source reader      waits to lead (a standby stands by here), makes the
 *                      mapping's indices exist, opens the source where its
 *                      checkpoint says; runs on the main thread
 *   build workers      the builds the table holds (a first sync, a build
 *                      resumed after a restart)
 *   shard joins, supervisor, scheduled checks, scheduled delayed runs,
 *   retention, scheduled replays of dead letters
 *                      only once this node reads the source
 *
 * A new subsystem: a file with its `struct node_subsystem` (its state
 * allocated by the node: state_size), declared and listed below. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "exit_codes.h"
#include "log.h"
#include "search/wait.h"
#include "service_notify.h"
#include "sync/node/daemon.h"
#include "sync/pipeline/gtid_version.h"
#include "sync/reindex/reindex.h"

/* ---------- connections: the metadata schema, the source, the mapping ---------- */

/* where the user must act, exit 2: a binlog format, GTIDs off with
 * [source] versions = gtid, an invalid mapping */
static int connect_start(void *st, void *ctx) {
    (void)ctx;
    struct daemon *dm = st;
    const struct ss_config *cfg = dm->cfg;
    struct pipeline *p = &dm->p;
    p->stop = &daemon_stop_requested;
    p->live = &dm->rs.live; /* its waits for a server away, named in its health */
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
        if (rowfmt == 1) dm->exit_code = EXIT_USAGE;
        return -1;
    }
    return daemon_load_mapping(dm);
}

/* ---------- the admin server (web/, registered by cmd/main.c) ---------- */

static int admin_start(void *st, void *ctx) {
    (void)ctx;
    struct daemon *dm = st;
    if (node_admin() &&
        node_admin()->start(dm->cfg, &dm->nd, &dm->nd.admin, dm->err, sizeof dm->err) < 0) {
        dm->exit_code = EXIT_USAGE;
        return -1;
    }
    return 0;
}

/* its connection reaper goes round, and no handler outlives its deadline
 * by the node's bound (web/admission.c) */
static bool admin_healthy(void *st, char *why, size_t whylen) {
    struct daemon *dm = st;
    if (!dm->nd.admin || !node_admin() || !node_admin()->healthy) return true;
    return node_admin()->healthy(dm->nd.admin, node_wedged_after_ms(dm->cfg), why, whylen);
}

static void admin_stop(void *st) { /* before what its handlers use is freed */
    struct daemon *dm = st;
    if (dm->nd.admin && node_admin()) node_admin()->stop(dm->nd.admin);
    dm->nd.admin = dm->sv.admin = NULL;
}

/* ---------- systemd's watchdog: every subsystem well ---------- */

static bool node_alive(void *ud, char *why, size_t whylen) {
    return node_healthy(ud, why, whylen);
}

static int watchdog_start(void *st, void *ctx) {
    (void)ctx;
    struct daemon *dm = st;
    /* the start-up checks passed: systemd may consider the service started */
    service_notify("READY=1\nSTATUS=waiting for the search engine");
    if (service_watchdog_start(node_alive, &dm->nd) < 0)
        log_warn("systemd", "the watchdog thread could not start: systemd's WatchdogSec will "
                 "restart the service");
    return 0;
}

static void watchdog_stop(void *st) {
    (void)st;
    service_watchdog_stop();
}

/* ---------- delivery: the engine, the node's hub, the reader's stream ---------- */

static int delivery_start(void *st, void *ctx) {
    (void)ctx;
    struct daemon *dm = st;
    const struct ss_config *cfg = dm->cfg;
    struct pipeline *p = &dm->p;
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
        if (daemon_stop_requested) dm->exit_code = EXIT_OK, dm->err[0] = '\0';
        return -1;
    }
    dm->ckpt = db_connect(&dm->ckptp, dm->err, sizeof dm->err);
    dm->dls = dm->ckpt ? dl_store_new(&dm->ckptp, cfg->source.name, dm->err, sizeof dm->err)
                       : NULL;
    if (!dm->dls) return -1;
    dl_store_set_mapping(dm->dls, config_mapping_name(cfg));
    struct deliver_opts dopts;
    deliver_opts_from_config(&dopts, cfg);
    daemon_delivery_callbacks(dm, &dopts);
    /* the process's one delivery: every producer of this node (the reader
     * below, builds, delayed runs, checks' repairs, resyncs, replays) is
     * handed it and opens its stream on it (src/deliver/stream.c) */
    dm->hub = deliver_hub_new(&dopts, dm->client, dm->err, sizeof dm->err);
    if (!dm->hub) return -1;
    /* the binlog gives one document's changes in version order (I5); a
     * Kafka topic's partitions need not */
    dopts.ordered_versions = dm->source->ordered_versions;
    p->d = deliver_stream_open(dm->hub, &dopts, "live", DELIVER_LIVE, dm->err, sizeof dm->err);
    if (!p->d) return -1;
    if (dm->nd.admin) {
        node_admin()->attach(dm->nd.admin, dm->client, p->d, &dm->rs);
        node_admin()->generation(dm->nd.admin, supervisor_published, &dm->sv);
    }
    dm->sv.d = p->d;
    dm->sv.admin = dm->nd.admin;
    return 0;
}

/* the senders and the checkpoint thread go round (src/deliver/health.c) */
static bool delivery_healthy(void *st, char *why, size_t whylen) {
    struct daemon *dm = st;
    return deliver_hub_healthy(dm->hub, node_wedged_after_ms(dm->cfg), why, whylen);
}

static void delivery_stop(void *st) { /* every producer above closed its stream */
    struct daemon *dm = st;
    deliver_free(dm->p.d);
    dm->p.d = NULL;
    deliver_hub_free(dm->hub);
    dm->hub = NULL;
}

/* ---------- the election, cluster jobs, node state ---------- */

static int election_start(void *st, void *ctx) {
    (void)ctx;
    struct daemon *dm = st;
    /* this node reads the source only once it leads it (the admin server is
     * up meanwhile): the source reader waits for that */
    if (leadership_init(&dm->lead, dm->cfg, dm->no_wait) == 0) return 0;
    snprintf(dm->err, sizeof dm->err, "%s", dm->lead.err);
    return -1;
}

static int cluster_start(void *st, void *ctx) {
    (void)ctx;
    struct daemon *dm = st;
    /* with ZooKeeper, every node runs the reindex jobs rebalances give it,
     * standing by or reading */
    if (cluster_jobs_start(&dm->cluster, dm->cfg, dm->client, dm->hub, &dm->lead) == 0) return 0;
    snprintf(dm->err, sizeof dm->err, "%s", dm->cluster.err);
    return -1;
}

static void cluster_stop(void *st) { cluster_jobs_stop(&((struct daemon *)st)->cluster); }

/* its thread, and the ZooKeeper session (sync/cluster/cluster_jobs.c); on
 * a standby, whose reader (and so the build workers row) has not started,
 * the workers of the jobs rebalances gave it too */
static bool cluster_healthy(void *st, char *why, size_t whylen) {
    struct daemon *dm = st;
    int64_t bound = node_wedged_after_ms(dm->cfg);
    if (!cluster_jobs_healthy(&dm->cluster, bound, why, whylen)) return false;
    return !dm->cluster.started || atomic_load(&dm->builds_row) ||
           reindex_runners_healthy(bound, why, whylen);
}

static int node_state_begin(void *st, void *ctx) {
    (void)ctx;
    struct daemon *dm = st;
    service_notify("STATUS=waiting to read the binlog of source %s", dm->cfg->source.name);
    if (node_state_start(&dm->node, dm->cfg, dm->p.d, &dm->rs, &dm->lead, &dm->nd,
                         &daemon_stop_requested) < 0)
        log_warn("run", "the node state thread could not start: status shows no live state "
                 "of this node");
    return 0;
}

static void node_state_end(void *st) { /* (role stopped) */
    node_state_stop(&((struct daemon *)st)->node);
}

/* a look every second, one write to the metadata at most: a run that lasts
 * past the node's bound is wedged */
static bool node_state_healthy(void *st, char *why, size_t whylen) {
    struct daemon *dm = st;
    int64_t bound = node_wedged_after_ms(dm->cfg);
    return !dm->node.cfg ||
           schedule_healthy(&dm->node.sch, "node state", bound, bound, why, whylen);
}

/* ---------- the build workers ---------- */

static int builds_begin(void *st, void *ctx) {
    (void)ctx;
    struct daemon *dm = st;
    /* reindexes (a first sync, or one resumed after a restart) */
    struct build_table *bt = build_table_read(&dm->sv.meta, &dm->sv.metap,
                                              config_mapping_name(dm->cfg), dm->sv.err,
                                              sizeof dm->sv.err);
    if (!bt) {
        snprintf(dm->err, sizeof dm->err, "reading the build table: %.900s", dm->sv.err);
        return -1;
    }
    builds_apply(dm, bt);
    build_table_free(bt);
    atomic_store(&dm->builds_row, true);
    return 0;
}

static void builds_end(void *st) { /* the jobs resume from their cursors */
    struct daemon *dm = st;
    while (dm->p.nbuilds)
        builds_stop(dm, dm->p.nbuilds - 1, "stopping; the jobs resume from their cursors", false);
}

/* every worker of every build this process runs (its own, and in a
 * cluster the jobs rebalances gave it) reads, hands over or waits on a page
 * within the node's bound: each of those steps ends by a timeout of the
 * configuration, so only a stall reaches it, never a long table
 * (sync/reindex/reindex_health.c). No build: well */
static bool builds_healthy(void *st, char *why, size_t whylen) {
    struct daemon *dm = st;
    return reindex_runners_healthy(node_wedged_after_ms(dm->cfg), why, whylen);
}

/* ---------- shard joins ---------- */

static int joins_start(void *st, void *ctx) {
    (void)ctx;
    struct daemon *dm = st;
    /* shards the live versions have not read (mapping_shard.h): read into them */
    if (shard_joins_start(&dm->joins, dm->cfg, dm->hub) < 0)
        log_warn("run", "the shard joins thread could not start: shards that join are not read "
                 "into the live version (searchsync check --repair finds their documents)");
    else if (shard_joins_at_start(&dm->joins, dm->p.meta, config_mapping_name(dm->cfg),
                                  &dm->gen->m, dm->err, sizeof dm->err) < 0)
        log_warn("run", "the shards the live versions have read are not known (%s): those "
                 "that joined while no daemon ran are read at the next start", dm->err);
    return 0;
}

static void joins_stop(void *st) { shard_joins_stop(&((struct daemon *)st)->joins); }

/* a join reads and delivers a page within the node's bound (a page's
 * delivery is bounded by [delivery] drain_timeout_ms, which the bound
 * counts); idle between joins (sync/node/shard_join.h) */
static bool joins_healthy(void *st, char *why, size_t whylen) {
    struct daemon *dm = st;
    return shard_joins_healthy(&dm->joins, node_wedged_after_ms(dm->cfg), why, whylen);
}

/* ---------- the supervisor ---------- */

static int supervisor_begin(void *st, void *ctx) {
    (void)ctx;
    struct daemon *dm = st;
    if (supervisor_start(&dm->sv) < 0) {
        snprintf(dm->err, sizeof dm->err, "%s", dm->sv.err);
        return -1;
    }
    /* SIGHUP: reload, SIGUSR1: state dump (sync/node/reload.c) */
    supervisor_signals_attach(&dm->sv);
    return 0;
}

static void supervisor_end(void *st) {
    struct daemon *dm = st;
    supervisor_signals_detach();
    supervisor_stop(&dm->sv);
}

/* systemd's watchdog is pinged while the supervisor goes round (it does,
 * at least once a second, whatever the reader waits for); before it starts
 * (start-up, a standby node) the waits are bounded loops themselves */
static bool supervisor_alive(void *st, char *why, size_t whylen) {
    struct daemon *dm = st;
    if (!dm->sv.running) return true;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    long long quiet = now - atomic_load(&dm->sv.ticked_ms);
    long long limit = service_notify_watchdog_ms() / 2;
    if (limit < 5000) limit = 5000;
    if (quiet <= limit) return true;
    /* the bound, not the time: status writes the node's state when it changes */
    snprintf(why, whylen, "the supervisor thread has not gone round for more than %lld ms "
             "(wedged)", limit);
    return false;
}

/* ---------- schedules: their state is their own (state_size) ---------- */

static int checks_start(void *st, void *ctx) {
    struct daemon *dm = ctx;
    if (check_schedule_start(st, dm->cfg, dm->hub, &daemon_stop_requested, dm->lead.node_id) < 0)
        log_warn("run", "the scheduled check could not start: checks run from cron only");
    return 0;
}
static void checks_stop(void *st) { check_schedule_stop(st); }

/* a schedule's run (a check, a delayed run, a prune) lasts as long as its
 * tables need: its thread is held to the node's bound between runs only */
static bool checks_healthy(void *st, char *why, size_t whylen) {
    struct check_schedule *c = st;
    return !c->cfg || schedule_healthy(&c->sch, "scheduled checks", 0,
                                       node_wedged_after_ms(c->cfg), why, whylen);
}

static int delayed_start(void *st, void *ctx) {
    struct daemon *dm = ctx;
    if (delayed_schedule_start(st, dm->cfg, dm->hub, &daemon_stop_requested) < 0)
        log_warn("run", "the scheduled delayed run could not start: run searchsync delayed-run "
                 "from cron");
    return 0;
}
static void delayed_stop(void *st) { delayed_schedule_stop(st); }
static bool delayed_healthy(void *st, char *why, size_t whylen) {
    struct delayed_schedule *s = st;
    return !s->cfg || schedule_healthy(&s->sch, "scheduled delayed runs", 0,
                                       node_wedged_after_ms(s->cfg), why, whylen);
}

static int retention_start(void *st, void *ctx) {
    struct daemon *dm = ctx;
    if (retention_schedule_start(st, dm->cfg, &daemon_stop_requested) < 0)
        log_warn("run", "retention: its thread could not start: the metadata's history is not "
                 "cleaned by this run");
    return 0;
}
static void retention_stop(void *st) { retention_schedule_stop(st); }
static bool retention_healthy(void *st, char *why, size_t whylen) {
    struct retention_schedule *r = st;
    return !r->cfg || schedule_healthy(&r->sch, "retention", 0, node_wedged_after_ms(r->cfg),
                                       why, whylen);
}

/* ---------- the table ---------- */

/* Rows without health: connections, the election and the watchdog run no
 * thread of their own after their start (a wedged watchdog thread stops the
 * pings by itself). */

/* (closed with the process: run_free) */
static const struct node_subsystem CONNECT = {.name = "connections", .drain = NODE_DRAIN_READER,
                                              .start = connect_start};
static const struct node_subsystem ADMIN = {
    .name = "admin server", .drain = NODE_DRAIN_ADMIN, .start = admin_start, .stop = admin_stop,
    .healthy = admin_healthy};
static const struct node_subsystem WATCHDOG = {.name = "watchdog", .drain = NODE_DRAIN_WATCHDOG,
                                               .start = watchdog_start, .stop = watchdog_stop};
static const struct node_subsystem DELIVERY = {
    .name = "delivery", .drain = NODE_DRAIN_DELIVERY, .start = delivery_start,
    .stop = delivery_stop, .healthy = delivery_healthy};
static const struct node_subsystem ELECTION = {.name = "election", .drain = NODE_DRAIN_READER,
                                               .start = election_start};
static const struct node_subsystem CLUSTER = {
    .name = "cluster jobs", .drain = NODE_DRAIN_CLUSTER, .start = cluster_start,
    .stop = cluster_stop, .healthy = cluster_healthy};
static const struct node_subsystem NODE_STATE = {
    .name = "node state", .drain = NODE_DRAIN_CLUSTER, .start = node_state_begin,
    .stop = node_state_end, .healthy = node_state_healthy};
static const struct node_subsystem BUILDS = {
    .name = "build workers", .drain = NODE_DRAIN_BUILDS, .start = builds_begin,
    .stop = builds_end, .healthy = builds_healthy};
static const struct node_subsystem JOINS = {
    .name = "shard joins", .drain = NODE_DRAIN_SCHEDULES, .start = joins_start,
    .stop = joins_stop, .healthy = joins_healthy};
static const struct node_subsystem SUPERVISOR = {
    .name = "supervisor", .drain = NODE_DRAIN_CONTROL, .start = supervisor_begin,
    .stop = supervisor_end, .healthy = supervisor_alive};
static const struct node_subsystem CHECKS = {
    .name = "scheduled checks", .drain = NODE_DRAIN_SCHEDULES,
    .state_size = sizeof(struct check_schedule), .start = checks_start, .stop = checks_stop,
    .healthy = checks_healthy};
static const struct node_subsystem DELAYED = {
    .name = "scheduled delayed runs", .drain = NODE_DRAIN_SCHEDULES,
    .state_size = sizeof(struct delayed_schedule), .start = delayed_start, .stop = delayed_stop,
    .healthy = delayed_healthy};
static const struct node_subsystem RETENTION = {
    .name = "retention", .drain = NODE_DRAIN_SCHEDULES,
    .state_size = sizeof(struct retention_schedule), .start = retention_start,
    .stop = retention_stop, .healthy = retention_healthy};

/* in files of their own */
extern const struct node_subsystem daemon_reader_subsystem; /* daemon_reader.c */
extern const struct node_subsystem replay_schedule_subsystem; /* replay_schedule.c */

/* in start order (see the top of this file) */
static const struct node_subsystem *const TABLE[] = {
    &CONNECT,
    &ADMIN,
    &WATCHDOG,
    &DELIVERY,
    &ELECTION,
    &CLUSTER,
    &NODE_STATE,
    &daemon_reader_subsystem,
    &BUILDS,
    &JOINS,
    &SUPERVISOR,
    &CHECKS,
    &DELAYED,
    &RETENTION,
    &replay_schedule_subsystem,
};

int daemon_start(struct daemon *dm) {
    int rc = node_start(&dm->nd, TABLE, sizeof TABLE / sizeof TABLE[0], dm);
    if (rc == 0) {
        char subs[512];
        node_describe(&dm->nd, subs, sizeof subs);
        log_debug("run", "node subsystems, in drain order: %s", subs);
    }
    return rc;
}
