/* supervisor: the control plane of `searchsync run`, on a thread of its own.
 *
 * Runs the mapping generations (sync/node/supervisor_mapping.c): it looks
 * for edits of the mapping tables every [metadata] reload_interval_ms (one
 * CHECKSUM TABLE when nothing changed), loads an edited mapping, validates it against the source,
 * creates the indices it names (a first version through a reindex request)
 * and publishes it as a new immutable generation; the reader adopts it
 * between two transactions (daemon_between_txns), so a transaction is
 * always routed and built with one mapping. An invalid edit is said once
 * and the running generation stays. It also ticks the build table's poll
 * ([reindex] poll_interval_ms): the reader looks at the builds between
 * transactions, where dual writes can be switched on at a known position.
 *
 * The reader is never blocked by any of this: loading and validating run
 * here, on the supervisor's own connections; the reader only swaps a
 * pointer. SIGHUP (configuration reload) and SIGUSR1 (state dump) run here
 * too: the signal thread raises a flag and wakes this one
 * (supervisor_signals_attach), which runs them (sync/node/reload.c).
 *
 * Its calls run one way: into the build table (build_table.c), the index
 * configs' first versions (index_ensure.c) and stops (index_stop.c), and
 * reload.c; the reader reaches it only through the command queue and
 * supervisor_wake. Adding a cluster (ZooKeeper assignments, leadership) adds work
 * here and commands to the queue, not stages to the pipeline. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sync/node/index_ensure.h"
#include "sync/node/index_stop.h"
#include "sync/node/reload.h"
#include "sync/node/supervisor.h"
#include "monotime.h"
#include "sync/reindex/reindex.h"
#include "log.h"
#include "signals.h"

void supervisor_init(struct supervisor *sv, const struct ss_config *cfg, struct commands *cmds,
                     struct search_client *client, volatile sig_atomic_t *stop) {
    memset(sv, 0, sizeof *sv);
    sv->daemon_stop = stop;
    sv->cfg = cfg;
    sv->cmds = cmds;
    sv->client = client;
    sv->metap = db_params_metadata(cfg);
    sv->metap.database = cfg->metadata.database;
    sv->srcp = db_params_source(cfg);
    sv->next_id = 1;
    const char *hold = getenv("SEARCHSYNC_TEST_HOLD_EMPTIED_MS");
    sv->hold_emptied_ms = hold ? atoi(hold) : 0;
    pthread_mutex_init(&sv->mu, NULL);
    pthread_mutex_init(&sv->pub_mu, NULL);
    pthread_cond_init(&sv->cv, NULL);
}

/* A TRUNCATE or DROP TABLE emptied a table index config e->alias reads
 * (ddl_truncate.h): rebuild it into a new version; a build under way, which
 * may hold rows from before, is cancelled first. true when done (or nothing
 * to do), false to try again in a second (a build switching, a server away,
 * a dropped table not created again yet: said at the first try, then once a
 * minute). */
static bool rebuild_emptied(struct supervisor *sv, struct emptied *e, unsigned *built) {
    if (sv->hold_emptied_ms && mono_ms() - e->queued_ms < sv->hold_emptied_ms) return false;
    if (db_ensure(&sv->meta, &sv->metap, sv->err, sizeof sv->err) < 0 ||
        db_ensure(&sv->src, &sv->srcp, sv->err, sizeof sv->err) < 0)
        return false;
    char err[1024];
    if (e->replayed_file[0] && !e->tries) {
        /* a producer's snapshot describing the schema: the tables were not
         * emptied; only an index read before it can miss rows removed
         * between (sync/reindex/reindex_read_from.c) */
        char why[600];
        int after = reindex_read_after(sv->cfg, sv->meta, e->alias, e->replayed_file,
                                       e->replayed_pos, why, sizeof why, err, sizeof err);
        if (after < 0) /* not known: rebuilt, as for a statement the server ran */
            log_warn("run", "index %s: where its versions were read from cannot be read (%s): "
                     "%s, a statement of the producer's snapshot, rebuilds it", e->alias, err,
                     e->reason);
        else if (after) {
            log_info("run", "index %s: %s, a statement of the producer's snapshot at %s:%llu "
                     "(the tables were not emptied), is not a reason to rebuild it: %s (its pages "
                     "come after the snapshot)", e->alias, e->reason, e->replayed_file,
                     e->replayed_pos, why);
            return true;
        } else
            log_info("run", "index %s: %s is a statement of the producer's snapshot at %s:%llu, "
                     "and %s: rows deleted before the snapshot may still be documents; rebuilt",
                     e->alias, e->reason, e->replayed_file, e->replayed_pos, why);
    }
    struct reindex_request req = {e->alias, 0, false, e->reason, 0};
    unsigned v = 0;
    int rc = reindex_request(sv->cfg, sv->client, sv->k, sv->meta, sv->src, &req, &v, err,
                             sizeof err);
    if (rc == REINDEX_REFUSED && !e->tries) { /* a build under way: it may hold the rows that went */
        if (reindex_reset(sv->cfg, sv->k, sv->meta, e->alias, e->reason, err, sizeof err) ==
            REINDEX_OK)
            rc = reindex_request(sv->cfg, sv->client, sv->k, sv->meta, sv->src, &req, &v, err,
                                 sizeof err);
    }
    if (rc == REINDEX_UNKNOWN) return true;
    if (rc != REINDEX_OK) {
        if (e->tries++ % 60 == 0)
            log_warn("run", "index %s: %s emptied a table it reads, but it cannot be rebuilt "
                     "yet (%s)%s: its documents stay as they were until then; trying again",
                     e->alias, e->reason, err,
                     e->dropped ? " — it is rebuilt once the table exists again; if it is gone "
                                  "for good, import a mapping without it" : "");
        return false;
    }
    log_warn("run", "index %s: %s (no rows are logged for it): its documents are rebuilt "
             "from MySQL as version %u, live changes written to both meanwhile", e->alias,
             e->reason, v);
    *built = v;
    return true;
}

/* Is e covered by a version queued for its index config by one of the
 * first n entries of this round (built[i], 0: none)? Said when it is. */
static bool covered(const struct emptied *v, const unsigned *built, size_t n,
                    const struct emptied *e) {
    for (size_t i = 0; i < n; i++)
        if (built[i] && !strcmp(v[i].alias, e->alias)) {
            log_info("run", "index %s: %s is covered by its rebuild as version %u, queued after "
                     "it was read", e->alias, e->reason, built[i]);
            return true;
        }
    return false;
}

static void rebuild_all_truncated(struct supervisor *sv) {
    pthread_mutex_lock(&sv->cmds->mu);
    struct emptied *v = sv->cmds->truncated;
    size_t n = sv->cmds->ntruncated;
    sv->cmds->truncated = NULL;
    sv->cmds->ntruncated = 0;
    pthread_mutex_unlock(&sv->cmds->mu);
    /* Every entry was read before this round: a rebuild queued now reads
     * its pages after all of them, so one per index config covers the
     * others (statements dropping its tables one by one, waiting together
     * for the tables to be back), instead of each cancelling or following
     * the last one's build. */
    unsigned *built = xcalloc(n ? n : 1, sizeof *built);
    bool *done = xcalloc(n ? n : 1, sizeof *done);
    for (size_t i = 0; i < n; i++)
        done[i] = covered(v, built, i, &v[i]) || rebuild_emptied(sv, &v[i], &built[i]);
    for (size_t i = 0; i < n; i++) /* one left to try again, a later one queued since */
        done[i] = done[i] || covered(v, built, n, &v[i]);
    size_t keep = 0;
    for (size_t i = 0; i < n; i++) {
        if (!done[i]) {
            v[keep++] = v[i];
            continue;
        }
        /* queued, covered or none owed: a restart need not owe it again */
        char err[512];
        if (emptied_store_done(sv->meta, sv->cfg->source.name, &v[i], err, sizeof err) < 0)
            log_warn("run", "index %s: the record of the rebuild it was owed for %s could not "
                     "be removed (%s): the next start of the daemon rebuilds it once more",
                     v[i].alias, v[i].reason, err);
        emptied_free(&v[i]);
    }
    free(built);
    free(done);
    if (!keep) {
        free(v);
        return;
    }
    pthread_mutex_lock(&sv->cmds->mu); /* the ones to try again, before any newer */
    v = xrealloc(v, (keep + sv->cmds->ntruncated) * sizeof *v);
    for (size_t i = 0; i < sv->cmds->ntruncated; i++) v[keep + i] = sv->cmds->truncated[i];
    free(sv->cmds->truncated);
    sv->cmds->truncated = v;
    sv->cmds->ntruncated += keep;
    pthread_mutex_unlock(&sv->cmds->mu);
}

void supervisor_poll_builds(struct supervisor *sv) {
    struct build_table *t = build_table_read(&sv->meta, &sv->metap, config_mapping_name(sv->cfg),
                                             sv->err, sizeof sv->err);
    if (!t) {
        if (!sv->poll_warned) log_warn("run", "looking for reindexes: %s (will try again)", sv->err);
        sv->poll_warned = true;
        return;
    }
    if (sv->poll_warned) log_info("run", "looking for reindexes works again");
    sv->poll_warned = false;
    /* a build asked for since the last poll: an edit of the mapping made
     * before it (`mapping import` then `reindex`) is published first, so the
     * build starts from it rather than from the generation it replaces (and
     * is then cancelled for it) */
    sbuf sig = SBUF_INIT;
    bool building = false;
    for (size_t i = 0; i < t->n; i++) {
        sbuf_printf(&sig, "%s %s %u\n", t->v[i].alias, t->v[i].state, t->v[i].building);
        building |= t->v[i].building != 0;
    }
    bool changed = sig.len != sv->builds_sig.len ||
                   (sig.len && memcmp(sig.data, sv->builds_sig.data, sig.len) != 0);
    sbuf_free(&sv->builds_sig);
    sv->builds_sig = sig;
    if (changed && building) (void)supervisor_look_for_edits(sv, false, NULL);
    pthread_mutex_lock(&sv->cmds->mu);
    build_table_free(sv->cmds->builds); /* not applied yet: the newer one replaces it */
    sv->cmds->builds = t;
    pthread_mutex_unlock(&sv->cmds->mu);
}

/* Is the source to be judged now (a DDL read, a look asked for, a verdict
 * the reader waits for, something deferred due)? Under sv->mu. */
static bool judgement_owed(struct supervisor *sv, int64_t now) {
    pthread_mutex_lock(&sv->cmds->mu);
    bool owed = sv->cmds->schema_changed || sv->cmds->nddls ||
                sv->cmds->verdict_asked > sv->cmds->verdict_given;
    pthread_mutex_unlock(&sv->cmds->mu);
    return owed || schema_watch_due(&sv->watch, now);
}

/* The reader lock checked (a node of a cluster whose lock has a fence):
 * lost, this node steps down; unconfirmed past the send window, what is
 * queued waits until it is confirmed again. */
static void lead_check(struct supervisor *sv) {
    enum lead_state ls = sv->lead && sv->lead->fence && !atomic_load(&sv->lost)
                             ? leadership_check(sv->lead)
                             : LEAD_HELD;
    if (ls == LEAD_LOST) {
        /* another node reads the source, or may already: nothing more
         * of this one's queue is sent (that one replays it from the
         * checkpoint) */
        deliver_halt(sv->d);
        log_error("cluster", "%s: this node steps down: it stops reading the binlog (the "
                  "node that holds the lock reads from the saved checkpoint; restart this "
                  "one to stand by)", sv->lead->err);
        atomic_store(&sv->lost, true);
        *sv->daemon_stop = 1;
    } else if (sv->lead && !atomic_load(&sv->lost)) {
        /* unconfirmed (the reader waits: leadership_holds_reads): what
         * it read is sent until another node could be given the source,
         * then held until the lock is confirmed again */
        bool hold = ls == LEAD_UNCONFIRMED &&
                    leadership_unconfirmed_ms(sv->lead) >= leadership_send_window_ms(sv->lead);
        if (hold != atomic_load(&sv->sends_held)) {
            long queued = deliver_hold_sends(sv->d, hold);
            atomic_store(&sv->sends_held, hold);
            if (hold)
                log_warn("run", "the reader lock of source %s is still unconfirmed %lld ms "
                         "after it was last confirmed: the %ld change(s) still queued wait "
                         "too, and are sent once it is", sv->cfg->source.name,
                         (long long)leadership_unconfirmed_ms(sv->lead), queued);
        }
    }
}

/* Wait under sv->mu for a wake or ms (at most a second: a round once a
 * second). */
static void wait_round(struct supervisor *sv, int64_t ms) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t wait = ms > 1000 ? 1000 : ms;
    ts.tv_sec += wait / 1000;
    ts.tv_nsec += (wait % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&sv->cv, &sv->mu, &ts);
}

/* A judgement made: a reader waiting for the verdict it asked for (asked,
 * when owed) and for the DDLs posted up to posted goes on. */
static void verdict_given(struct supervisor *sv, bool owed, unsigned long asked,
                          unsigned long posted) {
    pthread_mutex_lock(&sv->cmds->mu);
    if (owed && sv->cmds->verdict_given < asked) sv->cmds->verdict_given = asked;
    if (sv->cmds->ddls_judged < posted) sv->cmds->ddls_judged = posted;
    pthread_mutex_unlock(&sv->cmds->mu);
}

static void *supervisor_main(void *arg) {
    struct supervisor *sv = arg;
    int64_t reload_due = mono_ms() + sv->cfg->metadata.reload_interval_ms;
    int64_t poll_due = mono_ms() + sv->cfg->reindex.poll_interval_ms;
    int64_t trunc_due = 0; /* truncated tables' rebuilds: at the DDL, retried once a second */
    int64_t look_after = 0; /* a judgement that failed is tried again from then */
    pthread_mutex_lock(&sv->mu);
    while (!sv->stop) {
        atomic_store(&sv->ticked_ms, mono_ms());
        /* SIGHUP / SIGUSR1 (sync/node/reload.c): checked under sv->mu, which the
         * signal thread's wake takes, so none is missed before the wait */
        bool hup = atomic_exchange(&sv->hup_requested, false);
        bool dump = atomic_exchange(&sv->dump_requested, false);
        if (hup || dump) {
            pthread_mutex_unlock(&sv->mu);
            if (hup) reload_config(sv);
            if (dump) reload_dump(sv);
            pthread_mutex_lock(&sv->mu);
            continue;
        }
        int64_t now = mono_ms();
        int64_t next = reload_due < poll_due ? reload_due : poll_due;
        if (now < next && !(now >= look_after && judgement_owed(sv, now))) {
            wait_round(sv, next - now);
            continue;
        }
        pthread_mutex_unlock(&sv->mu);
        lead_check(sv);
        if (now >= poll_due) {
            /* the build table (one indexed query); the reader follows it
             * between transactions, or at its next heartbeat when idle: a
             * build starts within [reindex] poll_interval_ms of its request */
            supervisor_poll_builds(sv);
            poll_due = mono_ms() + sv->cfg->reindex.poll_interval_ms;
        }
        pthread_mutex_lock(&sv->cmds->mu);
        bool look = sv->cmds->schema_changed;
        sv->cmds->schema_changed = false;
        struct ddl_read *ddls = sv->cmds->ddls;
        size_t nddls = sv->cmds->nddls;
        sv->cmds->ddls = NULL;
        sv->cmds->nddls = 0;
        unsigned long posted = sv->cmds->ddls_posted;
        bool owed_emptied = sv->cmds->ntruncated > 0;
        unsigned long asked = sv->cmds->verdict_asked;
        bool owed = asked > sv->cmds->verdict_given;
        char forced[sizeof sv->cmds->verdict_note];
        snprintf(forced, sizeof forced, "%s", sv->cmds->verdict_note);
        pthread_mutex_unlock(&sv->cmds->mu);
        /* what the reader read, in its order: tables taken away and put
         * back, index configs named (judged at this look) */
        for (size_t i = 0; i < nddls; i++) {
            schema_watch_ddl(&sv->watch, &sv->published->m, &ddls[i]);
            ddl_read_free(&ddls[i]);
        }
        free(ddls);
        bool judge = look || owed || schema_watch_due(&sv->watch, mono_ms());
        if (now >= reload_due || judge) {
            bool verdict = supervisor_look_for_edits(sv, judge, owed ? forced : NULL);
            reload_due = mono_ms() + sv->cfg->metadata.reload_interval_ms;
            look_after = judge && !verdict ? mono_ms() + 1000 : 0; /* a server failed */
            if (verdict) verdict_given(sv, owed, asked, posted);
        }
        bool ddl = nddls || look;
        /* at a statement read, else once a second (owed rebuilds loaded at
         * the reader's start are the first to meet an empty schedule) */
        if (ddl || (owed_emptied && (!trunc_due || now >= trunc_due))) {
            rebuild_all_truncated(sv);
            pthread_mutex_lock(&sv->cmds->mu);
            trunc_due = sv->cmds->ntruncated ? mono_ms() + 1000 : 0;
            pthread_mutex_unlock(&sv->cmds->mu);
        }
        pthread_mutex_lock(&sv->mu);
    }
    pthread_mutex_unlock(&sv->mu);
    return NULL;
}

int supervisor_start(struct supervisor *sv) {
    sv->stop = false;
    atomic_store(&sv->ticked_ms, mono_ms());
    if (pthread_create(&sv->thread, NULL, supervisor_main, sv) != 0)
        return errf(sv->err, sizeof sv->err, "cannot start the supervisor thread: %s",
                    strerror(errno));
    sv->running = true;
    return 0;
}

void supervisor_wake(struct supervisor *sv) {
    pthread_mutex_lock(&sv->mu);
    pthread_cond_signal(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
}

/* ---------- SIGHUP and SIGUSR1: the signal thread's side ----------
 * A flag raised and the supervisor woken; it runs reload_config or
 * reload_dump (sync/node/reload.c) on its own thread. */

static pthread_mutex_t sig_mu = PTHREAD_MUTEX_INITIALIZER;
static struct supervisor *sig_sv; /* guarded by sig_mu */

static void raise_flag(bool hup) {
    pthread_mutex_lock(&sig_mu);
    if (sig_sv) {
        atomic_store(hup ? &sig_sv->hup_requested : &sig_sv->dump_requested, true);
        supervisor_wake(sig_sv);
    }
    pthread_mutex_unlock(&sig_mu);
}
static void on_hup(void) { raise_flag(true); }
static void on_usr1(void) { raise_flag(false); }

void supervisor_signals_attach(struct supervisor *sv) {
    pthread_mutex_lock(&sig_mu);
    sig_sv = sv;
    pthread_mutex_unlock(&sig_mu);
    signals_on_hup(on_hup);
    signals_on_usr1(on_usr1);
}

void supervisor_signals_detach(void) {
    signals_on_hup(NULL);
    signals_on_usr1(NULL);
    pthread_mutex_lock(&sig_mu); /* a callback in flight has finished */
    sig_sv = NULL;
    pthread_mutex_unlock(&sig_mu);
}

void supervisor_stop(struct supervisor *sv) {
    if (!sv->running) return;
    pthread_mutex_lock(&sv->mu);
    sv->stop = true;
    pthread_cond_signal(&sv->cv);
    pthread_mutex_unlock(&sv->mu);
    pthread_join(sv->thread, NULL);
    sv->running = false;
}

void supervisor_free(struct supervisor *sv) {
    supervisor_stop(sv);
    /* under pub_mu, as supervisor_published reads it from other threads */
    pthread_mutex_lock(&sv->pub_mu);
    struct mapping_gen *published = sv->published;
    sv->published = NULL;
    pthread_mutex_unlock(&sv->pub_mu);
    mapping_gen_unref(published);
    sbuf_free(&sv->bad_sig);
    sbuf_free(&sv->builds_sig);
    schema_watch_free(&sv->watch);
    for (size_t i = 0; i < sv->ncancel_pending; i++) free(sv->cancel_pending[i]);
    free(sv->cancel_pending);
    search_conn_free(sv->k);
    db_close(sv->meta);
    db_close(sv->src);
    pthread_mutex_destroy(&sv->mu);
    pthread_mutex_destroy(&sv->pub_mu);
    pthread_cond_destroy(&sv->cv);
    memset(sv, 0, sizeof *sv);
}
