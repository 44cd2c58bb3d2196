/* supervisor: the control plane of `searchsync run`, on a thread of its own.
 *
 * Owns the mapping generations: it looks for edits of the mapping tables
 * every [metadata] reload_interval_ms (one CHECKSUM TABLE when nothing
 * changed), loads an edited mapping, validates it against the source,
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

/* ---------- generations (sync/mapping/mapping_gen.h) ---------- */

/* What a reload compares: the canonical file and each index's epoch (state
 * and version are written by the daemon itself). */
static void mapping_signature(const struct mapping *m, sbuf *out) {
    sbuf_reset(out);
    mapping_write(m, out);
    for (size_t i = 0; i < m->nindices; i++)
        sbuf_printf(out, "\n%s epoch=%u stopped=%s", m->indices[i].alias, m->indices[i].epoch,
                    m->indices[i].stopped ? m->indices[i].stopped : "");
}

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
    pthread_mutex_init(&sv->mu, NULL);
    pthread_mutex_init(&sv->pub_mu, NULL);
    pthread_cond_init(&sv->cv, NULL);
}

/* Every index of g exists in the engine (or its first build is queued). */
int supervisor_prepare(struct supervisor *sv, struct mapping_gen *g) {
    if (!sv->k) sv->k = search_conn_new(sv->client);
    if (sv->ncancel_pending) index_stop_cancel_pending(sv);
    for (size_t i = 0; i < g->m.nindices; i++) {
        bool seen = false; /* the shards' units of one index config: once */
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(g->m.indices[j].alias, g->m.indices[i].alias);
        if (!seen && index_ensure(sv, &g->m.indices[i]) < 0) return -1;
    }
    return 0;
}

static void record_widened_cols(struct supervisor *sv, const char *db, const char *table,
                                struct mp_column *cols, size_t n) {
    for (size_t i = 0; i < n; i++) {
        struct mp_column *c = &cols[i];
        if (!c->widened_from) continue;
        char err[512];
        if (mapping_db_record_type(sv->meta, config_mapping_name(sv->cfg), db, table, c->name,
                                   c->widened_from, c->mysql_type, err, sizeof err) < 0)
            log_warn("run", "%s.%s.%s is now %s in the source (was %s): followed, but not "
                     "recorded in the mapping (%s); it is followed again at the next start",
                     db, table, c->name, c->mysql_type, c->widened_from, err);
        else
            log_info("run", "%s.%s.%s is now %s in the source (was %s): the mapping follows it "
                     "(engine type %s holds it; recorded)", db, table, c->name, c->mysql_type,
                     c->widened_from, c->type);
    }
}

static void record_widened_rels(struct supervisor *sv, struct mp_relation *r, size_t n) {
    for (size_t i = 0; i < n; i++) {
        record_widened_cols(sv, r[i].db, r[i].table, r[i].columns, r[i].ncolumns);
        record_widened_rels(sv, r[i].relations, r[i].nrelations);
    }
}

/* Columns the source widened under the mapping (ALTER TABLE ... MODIFY to a
 * longer VARCHAR, INT -> BIGINT, ...) are followed (mapping_type_widens)
 * and recorded in the metadata tables, so later starts and exports agree. */
static void record_widened(struct supervisor *sv, struct mapping *m) {
    for (size_t i = 0; i < m->nindices; i++)
        for (size_t t = 0; t < m->indices[i].ntables; t++) {
            struct mp_table *tb = &m->indices[i].tables[t];
            record_widened_cols(sv, tb->db, tb->table, tb->columns, tb->ncolumns);
            record_widened_rels(sv, tb->relations, tb->nrelations);
        }
}

/* Load this source's mapping from the metadata tables and validate it
 * against the source's schema. NULL with sv->err; *invalid when the mapping
 * itself is the problem (not a server). */
static struct mapping_gen *load_gen(struct supervisor *sv, bool *invalid) {
    *invalid = false;
    struct mapping_gen *g = mapping_gen_new(NULL);
    if (db_ensure(&sv->meta, &sv->metap, sv->err, sizeof sv->err) < 0 ||
        mapping_db_load_config(sv->meta, sv->cfg, &g->m, sv->err, sizeof sv->err) < 0)
        goto fail;
    mapping_signature(&g->m, &g->sig); /* as stored, before validation fills in defaults */
    for (size_t i = 0; i < g->m.nindices; i++) /* routed, judged later (schema_watch.c) */
        g->m.indices[i].deferred = schema_watch_deferred(&sv->watch, g->m.indices[i].alias);
    if (db_ensure(&sv->src, &sv->srcp, sv->err, sizeof sv->err) < 0) goto fail;
    char **keep = NULL; /* shards followed already stay until judged gone */
    size_t nkeep = 0;
    if (sv->published) schema_watch_keep(&sv->watch, &sv->published->m, &keep, &nkeep);
    int bad = mapping_check_source_keep(sv->src, &g->m, keep, nkeep, sv->err, sizeof sv->err);
    for (size_t i = 0; i < nkeep; i++) free(keep[i]);
    free(keep);
    if (bad) {
        *invalid = bad > 0;
        goto fail;
    }
    record_widened(sv, &g->m);
    if (g->m.nindices == 0) {
        *invalid = true;
        snprintf(sv->err, sizeof sv->err, "it has no index configs for source %s",
                 sv->cfg->source.name);
        goto fail;
    }
    g->id = sv->next_id++;
    return g;
fail:
    mapping_gen_unref(g);
    return NULL;
}

/* (the admin server reads it from its threads: supervisor_published) */
static void set_published(struct supervisor *sv, struct mapping_gen *g) {
    pthread_mutex_lock(&sv->pub_mu);
    struct mapping_gen *old = sv->published;
    sv->published = g;
    pthread_mutex_unlock(&sv->pub_mu);
    mapping_gen_unref(old);
}

struct mapping_gen *supervisor_published(void *sv_) {
    struct supervisor *sv = sv_;
    pthread_mutex_lock(&sv->pub_mu);
    struct mapping_gen *g = mapping_gen_ref(sv->published);
    pthread_mutex_unlock(&sv->pub_mu);
    return g;
}

struct mapping_gen *supervisor_load(struct supervisor *sv, bool *invalid) {
    /* the source changed while no daemon read it: index configs it no longer
     * fits are stopped, a table missing is waited for (schema_watch.c), the
     * others start */
    size_t stopped = 0;
    *invalid = false;
    if (schema_watch_judge(sv, NULL, true, &stopped) < 0) return NULL;
    struct mapping_gen *g = load_gen(sv, invalid);
    if (!g) return NULL;
    char e2[256];
    if (mapping_db_checksum(sv->meta, sv->mapping_sum, sizeof sv->mapping_sum, e2, sizeof e2) < 0)
        sv->mapping_sum[0] = '\0';
    set_published(sv, mapping_gen_ref(g));
    return g;
}

static void publish(struct supervisor *sv, struct mapping_gen *g) {
    pthread_mutex_lock(&sv->cmds->mu);
    mapping_gen_unref(sv->cmds->adopt); /* never adopted: a newer one replaces it */
    sv->cmds->adopt = mapping_gen_ref(g);
    pthread_mutex_unlock(&sv->cmds->mu);
    set_published(sv, g);
    sv->reloads++;
}

/* A TRUNCATE or DROP TABLE emptied a table index config e->alias reads
 * (ddl_truncate.h): rebuild it into a new version; a build under way, which
 * may hold rows from before, is cancelled first. true when done (or nothing
 * to do), false to try again in a second (a build switching, a server away,
 * a dropped table not created again yet: said at the first try, then once a
 * minute). */
static bool rebuild_emptied(struct supervisor *sv, struct emptied *e) {
    if (db_ensure(&sv->meta, &sv->metap, sv->err, sizeof sv->err) < 0 ||
        db_ensure(&sv->src, &sv->srcp, sv->err, sizeof sv->err) < 0)
        return false;
    char err[1024];
    struct reindex_request req = {e->alias, 0, false, e->reason};
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
    return true;
}

static void rebuild_all_truncated(struct supervisor *sv) {
    pthread_mutex_lock(&sv->cmds->mu);
    struct emptied *v = sv->cmds->truncated;
    size_t n = sv->cmds->ntruncated;
    sv->cmds->truncated = NULL;
    sv->cmds->ntruncated = 0;
    pthread_mutex_unlock(&sv->cmds->mu);
    size_t keep = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rebuild_emptied(sv, &v[i])) v[keep++] = v[i];
        else free(v[i].alias), free(v[i].reason);
    }
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

/* Does an index config routed in one generation stand out of routing in the
 * other (mp_index.unusable), or the other way round? */
static bool usability_changed(const struct mapping *a, const struct mapping *b) {
    for (size_t i = 0; i < a->nindices; i++)
        for (size_t j = 0; j < b->nindices; j++)
            if (!strcmp(a->indices[i].alias, b->indices[j].alias) &&
                a->indices[i].unusable != b->indices[j].unusable)
                return true;
    return false;
}

/* a look at the source owed again at the next round (a server failed) */
static void ask_again(struct supervisor *sv) {
    pthread_mutex_lock(&sv->cmds->mu);
    sv->cmds->schema_changed = true;
    pthread_mutex_unlock(&sv->cmds->mu);
}

/* Do two generations hold different shards of a config over shard tables
 * (a unit joined or left: mapping_shard.h)? Said in the log when they do. */
static bool units_changed(const struct mapping *a, const struct mapping *b) {
    bool changed = false;
    for (int pass = 0; pass < 2; pass++) {
        const struct mapping *x = pass ? b : a, *y = pass ? a : b;
        for (size_t i = 0; i < x->nindices; i++) {
            const struct mp_index *u = &x->indices[i];
            if (!u->unit) continue;
            bool found = false;
            for (size_t j = 0; j < y->nindices && !found; j++)
                found = y->indices[j].unit && !strcmp(y->indices[j].alias, u->alias) &&
                        !strcmp(y->indices[j].unit, u->unit);
            if (found) continue;
            changed = true;
            if (pass)
                log_info("run", "index %s: shard %s joins: its changes are written from the next "
                         "transaction on", u->alias, u->unit);
            else
                log_info("run", "index %s: shard %s is no longer read", u->alias, u->unit);
        }
    }
    return changed;
}

/* Every reload_interval_ms, and at once when the source is to be judged
 * (schema_changed: a DDL read named a mapped table, something deferred is
 * due, the reader waits for a verdict — forced then, with the refused
 * query's note): if the mapping in the metadata tables changed, validate it
 * and publish it. A mapping that fails validation, or a server that fails,
 * leaves the running one in place; the problem is logged once per edit.
 * When the source is judged, its verdict comes first (schema_watch.c: the
 * index configs it no longer fits are stopped, those it may fit are
 * deferred), whatever else changed in the tables since the last look (an
 * edit, a stop lifted by a switch, a widened type recorded). true when a
 * judgement was made and published (or needed no new generation); false when
 * it is looked at again. */
/* A metadata server that cannot be read is said once (every look fails
 * alike while it is down, one a reload_interval_ms), and its return once. */
static void edits_failed(struct supervisor *sv) {
    if (!sv->edits_warned)
        log_warn("run", "looking for mapping edits: %s (will try again every [metadata] "
                 "reload_interval_ms; said again once it works)", sv->err);
    sv->edits_warned = true;
}
static void edits_work(struct supervisor *sv) {
    if (sv->edits_warned) log_info("run", "looking for mapping edits works again");
    sv->edits_warned = false;
}

static bool look_for_edits(struct supervisor *sv, bool schema_changed, const char *forced) {
    char sum[sizeof sv->mapping_sum] = "", e2[256];
    struct mapping m2 = {0};
    sbuf sig = SBUF_INIT;
    /* set once what the tables hold is running, refused, or applied here;
     * not when applying failed for a reason that may pass */
    bool settled = false, verdict = false;
    size_t stopped = 0;
    if (db_ensure(&sv->meta, &sv->metap, sv->err, sizeof sv->err) < 0) {
        edits_failed(sv);
        if (schema_changed) ask_again(sv); /* the verdict is still owed */
        goto out;
    }
    if (schema_changed && schema_watch_judge(sv, forced, false, &stopped) < 0) {
        log_warn("run", "judging the mapping against the source after a schema change: %s "
                 "(looked at again in a moment; nothing is stopped meanwhile)", sv->err);
        ask_again(sv);
        goto out;
    }
    /* one CHECKSUM TABLE instead of loading the whole mapping (a query per
     * table and relation) when nothing was edited; read before the load, so
     * an edit made during it shows at the next look */
    if (mapping_db_checksum(sv->meta, sum, sizeof sum, e2, sizeof e2) < 0) {
        sum[0] = '\0';
        if (!sv->sum_warned)
            log_warn("run", "%s; mapping edits are looked for by reading the whole mapping "
                     "every [metadata] reload_interval_ms instead (grant SELECT on the "
                     "metadata tables to make it cheap)", e2);
        sv->sum_warned = true;
    }
    if (sum[0]) edits_work(sv);
    if (sum[0] && !strcmp(sum, sv->mapping_sum) && !schema_changed) goto out;
    if (mapping_db_load_config(sv->meta, sv->cfg, &m2, sv->err, sizeof sv->err) < 0) {
        edits_failed(sv);
        if (schema_changed) ask_again(sv);
        goto out;
    }
    edits_work(sv);
    mapping_signature(&m2, &sig);
    settled = true;
    const sbuf *cur = &sv->published->sig;
    bool same = sig.len == cur->len && !memcmp(sig.data, cur->data, sig.len);
    if (schema_changed) {
        /* the source changed: does the mapping still hold? Not only when the
         * tables hold what runs: a switch that lifted a stop, or a widened
         * type recorded, changes them too until the next look, and a DDL in
         * between must still stop what it breaks */
        bool invalid = false;
        struct mapping_gen *g = load_gen(sv, &invalid);
        bool usable = g && usability_changed(&sv->published->m, &g->m);
        bool shards = g && units_changed(&sv->published->m, &g->m);
        bool publishing = g && (!same || usable || shards);
        if (publishing && supervisor_prepare(sv, g) < 0) {
            mapping_gen_unref(g);
            g = NULL;
        }
        if (!g) {
            for (char *nl = strchr(sv->err, '\n'); nl; nl = strchr(nl, '\n')) *nl = ' ';
            log_error("run", "after a schema change in the source: %s. The running mapping "
                      "stays (looked at again in a moment); if the mapping is at fault, fix it "
                      "(searchsync mapping import) and reindex the index", sv->err);
            ask_again(sv);
            settled = false;
            goto out;
        }
        verdict = true;
        if (stopped) {
            /* the stopped ones left out of routing: published at once */
            log_info("run", "mapping generation %lu handed to the reader without the "
                     "stopped index config(s)", g->id);
            publish(sv, g);
            goto out;
        }
        if (!same) {
            /* edited meanwhile (or a stop lifted, a type recorded): what the
             * tables hold, valid against the source as it is now */
            log_info("run", "mapping edited: generation %lu validated and handed to the "
                     "reader, which applies it at the next transaction boundary", g->id);
            publish(sv, g);
            goto out;
        }
        if (publishing) {
            /* a stopped index config the source fits again (its rebuild is
             * queued: index_stop_refit) is routed again at once, so that
             * the build gets its dual writes */
            if (usable)
                log_info("run", "mapping generation %lu handed to the reader: it routes again "
                         "the stopped index config(s) the source fits again, for their rebuild",
                         g->id);
            else
                log_info("run", "mapping generation %lu handed to the reader, with the shards "
                         "the source has now", g->id);
            publish(sv, g);
            goto out;
        }
        mapping_gen_unref(g); /* widened columns were recorded: the next look reloads */
        settled = false;
        goto out;
    }
    if (same) goto out;
    if (sv->bad_sig.len == sig.len && !memcmp(sig.data, sv->bad_sig.data, sig.len)) goto out;
    bool invalid = false;
    struct mapping_gen *g = load_gen(sv, &invalid);
    if (g && supervisor_prepare(sv, g) < 0) {
        mapping_gen_unref(g);
        g = NULL;
    }
    if (!g) {
        for (char *nl = strchr(sv->err, '\n'); nl; nl = strchr(nl, '\n')) *nl = ' ';
        log_error("run", "the edited mapping is not applied (the running one stays): %s",
                  sv->err);
        if (invalid) { /* say it once per edit */
            sbuf_reset(&sv->bad_sig);
            sbuf_add(&sv->bad_sig, sig.data, sig.len);
        }
        settled = invalid;
        goto out;
    }
    log_info("run", "mapping edited: generation %lu validated and handed to the reader, which "
             "applies it at the next transaction boundary", g->id);
    publish(sv, g);
out:
    if (settled) snprintf(sv->mapping_sum, sizeof sv->mapping_sum, "%s", sum);
    sv->err[0] = '\0';
    mapping_free(&m2);
    sbuf_free(&sig);
    return verdict;
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
    if (changed && building) (void)look_for_edits(sv, false, NULL);
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
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            int64_t wait = next - now > 1000 ? 1000 : next - now; /* round once a second */
            ts.tv_sec += wait / 1000;
            ts.tv_nsec += (wait % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&sv->cv, &sv->mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&sv->mu);
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
            bool verdict = look_for_edits(sv, judge, owed ? forced : NULL);
            reload_due = mono_ms() + sv->cfg->metadata.reload_interval_ms;
            look_after = judge && !verdict ? mono_ms() + 1000 : 0; /* a server failed */
            if (verdict) { /* a reader waiting for it goes on */
                pthread_mutex_lock(&sv->cmds->mu);
                if (owed && sv->cmds->verdict_given < asked) sv->cmds->verdict_given = asked;
                if (sv->cmds->ddls_judged < posted) sv->cmds->ddls_judged = posted;
                pthread_mutex_unlock(&sv->cmds->mu);
            }
        }
        bool ddl = nddls || look;
        if (ddl || (trunc_due && now >= trunc_due)) {
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
    set_published(sv, NULL);
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
