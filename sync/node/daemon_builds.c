/* daemon_builds: the versions a reindex builds, followed by the reader of
 * `searchsync run` between transactions (reader thread).
 *
 * Owns: which builds are under way, as the build table says (build_table.h:
 * read by the supervisor every poll, handed over in the command queue);
 * the dual writes to a build's index, switched on with the binlog position
 * recorded before its runner starts; the mapping generation each build
 * pins when it starts (its runner, sync/reindex/reindex_runner.c, builds
 * every page from it; an edit of its index config cancels it:
 * builds_mapping_changed); and the indices of builds that did not go live:
 * a failed build's is deleted here once the writes in flight for it are
 * delivered (a cancelled one's again, should they have re-created it).
 * An index config's first version, and indices a stop in between left
 * behind, are the supervisor's (index_ensure.c). What the reader needs of
 * the supervisor (a generation that routes a build's index config) is
 * asked through the command queue, and supervisor_wake. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sync/node/daemon.h"
#include "sync/pipeline/pipeline.h"
#include "log.h"
#include "sync/reindex/reindex.h"
#include "search/index_version.h"

void builds_stop(struct daemon *dm, size_t i, const char *why, bool cancelled) {
    struct pipeline *p = &dm->p;
    struct build *b = &p->builds[i];
    if (cancelled)
        reindex_runner_cancel_free(b->runner);
    else
        reindex_runner_free(b->runner);
    mapping_gen_unref(b->gen);
    log_info("run", "%s: live changes no longer written to %s (%s)", b->alias, b->phys, why);
    free(b->alias), free(b->phys);
    p->builds[i] = p->builds[--p->nbuilds];
}

/* A version that will never be live: once every write queued for it has
 * been delivered, delete it: a failed build's index is left to this
 * (rx_undo_build), and a cancelled one's, deleted at once, may have been
 * re-created by writes in flight: the dual writes, and the pages its
 * runner left in flight (reindex_runner_cancel_free), all within one
 * drain_timeout_ms. */
static void drop_leftover(struct daemon *dm, const char *phys) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int budget = dm->cfg->delivery.drain_timeout_ms;
    if (dm->p.last_txn) deliver_wait_txn(dm->p.d, dm->p.last_txn, budget);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long spent = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    if (deliver_hub_wait_abandoned(deliver_hub_of(dm->p.d),
                                   spent < budget ? budget - (int)spent : 0) == DELIVER_ETIMEOUT)
        log_warn("run", "%s: pages of its cancelled build are still in flight after "
                 "[delivery] drain_timeout_ms = %d; deleting it now, a page landing later "
                 "re-creates it, and the next start deletes it again", phys, budget);
    struct search_resp r;
    search_resp_init(&r);
    char path[700];
    snprintf(path, sizeof path, "/%s", phys);
    if (search_request(dm->p.k, "DELETE", path, NULL, NULL, 0, &r) == 0 && r.status == 200)
        log_info("run", "deleted %s, the index of a build that ended without going live, once "
                 "the writes in flight for it were delivered", phys);
    search_resp_free(&r);
}




/* Build b's dual writes are on from the reader's position now: recorded as
 * this source's part's start position, and (the first source's) the
 * version's and its run's. A failure is said; the part is planned anyway. */
static void record_start(struct daemon *dm, const struct build *b) {
    struct pipeline *p = &dm->p;
    sbuf q = SBUF_INIT;
    char err[512];
    char pos[sizeof dm->env.start_pos + BL_FILE_MAX + 64];
    bl_pos last;
    if (dm->source->last_end && dm->source->last_end(dm->source_state, &last))
        snprintf(pos, sizeof pos, "%s:%llu", last.file, (unsigned long long)last.pos);
    else
        snprintf(pos, sizeof pos, "%s",
                 dm->env.start_pos[0] ? dm->env.start_pos : "start");
    /* the source's binlog here: each page of this part is read after it.
     * Recorded before the start position, which says the part has begun
     * (sync/reindex/reindex_read_from.c reads the two together) */
    char from[BL_FILE_MAX + 32] = "";
    if (db_ensure(&p->src, &p->srcp, err, sizeof err) < 0 ||
        reindex_record_read_from(dm->cfg, p->meta, p->src, b->alias, b->version, from,
                                 sizeof from, err, sizeof err) < 0)
        log_warn("run", "where %s is read from in the binlog of [source] is not recorded (%s): "
                 "a DROP of a producer's snapshot rebuilds it once more", b->phys, err);
    /* this source's part of it, and (the first source's) the version's */
    const char *tabs[] = {"reindex_parts", "index_versions", "reindex_runs"};
    const char *mapping = config_mapping_name(dm->cfg), *me = dm->cfg->source.name;
    for (int k = 0; k < 3; k++) {
        sbuf_reset(&q);
        sbuf_printf(&q, "UPDATE %s SET start_position = COALESCE(start_position, ", tabs[k]);
        db_quote(p->meta, &q, pos, strlen(pos));
        sbuf_printf(&q, ") WHERE version = %u AND index_id = (SELECT id FROM index_configs "
                        "WHERE source = ", b->version);
        db_quote(p->meta, &q, mapping, strlen(mapping));
        sbuf_adds(&q, " AND alias = ");
        db_quote(p->meta, &q, b->alias, strlen(b->alias));
        sbuf_addc(&q, ')');
        if (k == 0) {
            sbuf_adds(&q, " AND source = ");
            db_quote(p->meta, &q, me, strlen(me));
        }
        if (db_exec(p->meta, q.data, err, sizeof err) < 0)
            log_warn("run", "start position of %s not recorded: %s", b->phys, err);
    }
    log_info("run", "%s: live changes from %s on are also written to %s (mapping "
             "generation %lu pinned for its pages; the source's binlog at %s)", b->alias, pos,
             b->phys, b->gen->id, from[0] ? from : "?");
    sbuf_free(&q);
}

/* This source's part of build b planned (reindex_plan_part), or said once
 * why not: true once it is. */
static bool plan_part(struct daemon *dm, struct build *b) {
    struct pipeline *p = &dm->p;
    char err[512];
    int prc = REINDEX_ERR;
    if (db_ensure(&p->src, &p->srcp, err, sizeof err) == 0 &&
        db_ensure(&p->meta, &p->metap, err, sizeof err) == 0)
        prc = reindex_plan_part(dm->cfg, p->meta, p->src, &b->gen->m, b->alias, b->version, err,
                                sizeof err);
    b->planned = prc == REINDEX_OK;
    if (!b->planned && !b->plan_said) {
        log_warn("run", "%s: version %u: the part of source %s is not planned yet (%s): tried "
                 "again at the next poll; the switch waits for it", b->alias, b->version,
                 dm->cfg->source.name, err);
        b->plan_said = true;
    }
    return b->planned;
}

/* The supervisor asked for a new mapping generation (as after a schema
 * change), and woken. */
static void ask_generation(struct daemon *dm) {
    pthread_mutex_lock(&dm->cmds.mu);
    dm->cmds.schema_changed = true;
    pthread_mutex_unlock(&dm->cmds.mu);
    supervisor_wake(&dm->sv);
}

/* The live version and the stop of index config ix as build table row bw
 * says, on every one of its units (its shards' units share its state:
 * sync/mapping/mapping_shard.h). Stopped by the supervisor
 * (sync/node/index_stop.c), or lifted by a build that went live: at the
 * same boundary as the switch itself. */
static void index_state_apply(struct daemon *dm, struct mapping *m, struct mp_index *ix,
                              const struct build_want *bw) {
    for (size_t i = (size_t)(ix - m->indices) + 1; i < m->nindices; i++)
        if (!strcmp(m->indices[i].alias, bw->alias)) {
            m->indices[i].current_version = bw->current;
            m->indices[i].deliveries_stopped = bw->stopped;
        }
    ix->current_version = bw->current;
    if (ix->deliveries_stopped && !bw->stopped) {
        log_info("run", "%s: version %u is live: live changes are written through the "
                 "alias again", ix->alias, ix->current_version);
        if (ix->unusable) ask_generation(dm); /* (a generation that fits follows: asked for now) */
    }
    ix->deliveries_stopped = bw->stopped;
}

/* Build bi of ix ended (why): its dual writes stopped; a version that went
 * live has its shards recorded and holds element scripts until the writes
 * before it landed; one that did not (cancelled, failed) is deleted. */
static void build_ended(struct daemon *dm, size_t bi, const struct mp_index *ix,
                        const char *why) {
    struct pipeline *p = &dm->p;
    char err[512];
    char *phys = xstrdup(p->builds[bi].phys);
    bool live = ix->current_version == p->builds[bi].version;
    if (live && ix->unit) { /* the shards it was built from: read whole */
        if (shards_read_set(p->meta, config_mapping_name(dm->cfg), ix->alias,
                            &p->builds[bi].gen->m, err, sizeof err) < 0)
            log_warn("run", "%s: the shards of version %u are not recorded (%s): those "
                     "that joined since are read again at the next start", ix->alias,
                     p->builds[bi].version, err);
    }
    builds_stop(dm, bi, why, !live);
    if (!live) /* cancelled or failed */
        drop_leftover(dm, phys);
    else /* switched: no element script until the writes before it landed */
        pipeline_hold_scripts(p);
    free(phys);
}

/* Version bv of ix waits: this generation leaves the index config out of
 * routing (stopped: a table it reads was gone when it was made), so dual
 * writes from here would carry nothing until the next one: changes between
 * the recorded position and that generation would reach neither version (a
 * joined table dropped and created again asks for its rebuild as soon as it
 * is back). Not started until the reader routes it: the supervisor is
 * asked for that generation (once per generation); the pages are read
 * after the position recorded then, so they hold everything before it. */
static void wait_for_routing(struct daemon *dm, const struct mp_index *ix, unsigned bv) {
    if (dm->build_wait_gen == dm->gen->id) return;
    dm->build_wait_gen = dm->gen->id;
    log_info("run", "%s: version %u waits for a mapping generation that routes "
             "the index again (generation %lu leaves it out: the source did not "
             "fit it) before its live changes are written to it", ix->alias, bv,
             dm->gen->id);
    ask_generation(dm);
}

/* Version bv of ix gets dual writes from here: a build pinning the
 * generation in force (its runner builds every page from it, a restarted
 * runner too), its start position recorded. false when the metadata server
 * cannot record it yet (tried again at the next poll). */
static bool build_begin(struct daemon *dm, const struct mp_index *ix, unsigned bv) {
    struct pipeline *p = &dm->p;
    char err[512];
    if (db_ensure(&p->meta, &p->metap, err, sizeof err) < 0) {
        log_warn("run", "%s: version %u is built, but its start position cannot be "
                 "recorded yet (%s): tried again at the next poll", ix->alias, bv, err);
        return false;
    }
    p->builds = xrealloc(p->builds, (p->nbuilds + 1) * sizeof *p->builds);
    struct build *b = &p->builds[p->nbuilds++];
    *b = (struct build){.alias = xstrdup(ix->alias),
                        .phys = index_version_dup(ix->alias, bv), .version = bv,
                        .gen = mapping_gen_ref(dm->gen)};
    record_start(dm, b);
    return true;
}

/* Between transactions (reader thread): the build table the supervisor
 * read. A new build gets dual writes from the next transaction on — its
 * position recorded, the generation in force pinned — and only then its
 * runner, so no page is read before live changes reach it; a build that ended (live, failed, cancelled) stops
 * its dual writes, and the index of one that did not go live is deleted
 * once the writes in flight for it are delivered. */
void builds_apply(struct daemon *dm, const struct build_table *t) {
    struct pipeline *p = &dm->p;
    struct mapping *m = &dm->gen->m;
    char err[512];
    bool *seen = xcalloc(p->nbuilds + 1, sizeof *seen);
    size_t nb0 = p->nbuilds;
    for (size_t r = 0; r < t->n; r++) {
        const struct build_want *bw = &t->v[r];
        struct mp_index *ix = NULL;
        for (size_t i = 0; i < m->nindices && !ix; i++)
            if (!strcmp(m->indices[i].alias, bw->alias)) ix = &m->indices[i];
        if (!ix) continue;
        index_state_apply(dm, m, ix, bw);
        unsigned bv = bw->building;
        bool want = bv && (!strcmp(bw->state, "changing") || !strcmp(bw->state, "switching"));
        size_t bi = 0;
        while (bi < p->nbuilds && strcmp(p->builds[bi].alias, ix->alias)) bi++;
        if (bi < p->nbuilds && (!want || p->builds[bi].version != bv)) {
            build_ended(dm, bi, ix, want ? "another version is built" : bw->state);
            if (bi < nb0) seen[bi] = true;
            bi = p->nbuilds;
        }
        if (bi < nb0) seen[bi] = true;
        if (!want) continue;
        if (bi == p->nbuilds && ix->unusable) {
            wait_for_routing(dm, ix, bv);
            continue;
        }
        if (bi == p->nbuilds && !build_begin(dm, ix, bv)) continue;
        struct build *b = &p->builds[bi];
        /* this source's part: planned once its dual writes are on, from its
         * own server's keys, before any of its jobs is read (a source down
         * holds it here, and the version's switch with it, not the others) */
        if (!b->planned && !plan_part(dm, b)) continue;
        if (b->runner && reindex_runner_done(b->runner)) {
            reindex_runner_free(b->runner);
            b->runner = NULL;
            b->ran = true;
        }
        /* this source's part ran to its end and the build still changes:
         * the other sources' parts are left, the last of them switches; a
         * runner started again here would find nothing to do. Only a switch
         * left halfway (its switcher gone) is this runner's to finish. */
        if (b->ran && strcmp(bw->state, "switching") != 0) continue;
        /* in a cluster, rebalances give the jobs to the nodes
         * (sync/cluster/cluster_jobs.c); the reader keeps the dual writes */
        if (!b->runner && !dm->cluster.started) {
            b->runner = reindex_runner_start(dm->cfg, dm->client, dm->hub, b->gen, b->alias,
                                             b->version, err, sizeof err);
            if (!b->runner) log_error("run", "%s: reindex jobs not started (will retry): %s",
                                      b->alias, err);
        }
    }
    for (size_t i = nb0; i-- > 0;) /* builds whose index config is gone */
        if (!seen[i] && i < p->nbuilds) builds_stop(dm, i, "its index config is gone", false);
    free(seen);
}

/* A mapping generation is adopted. A version being built reads its pages
 * with the generation its build pinned, and gets dual writes built with the
 * reader's: an edit of its index config would leave a version built from
 * two mappings. So a build whose index config in the new generation differs
 * from the one it pinned is cancelled (its index deleted) and queued again
 * under the new generation, said in the log; other builds go on, pinned to
 * theirs (same index config: only other index configs were edited).
 * docs/operations.md "Editing the mapping during a reindex". */
bool builds_mapping_changed(struct daemon *dm, const struct mapping_gen *nw) {
    struct pipeline *p = &dm->p;
    bool changed = false;
    sbuf a = SBUF_INIT, b = SBUF_INIT;
    for (size_t i = p->nbuilds; i-- > 0;) {
        const char *alias = p->builds[i].alias;
        const struct mp_index *o = mapping_gen_index(p->builds[i].gen, alias);
        const struct mp_index *n = mapping_gen_index(nw, alias);
        if (!o || !n) continue; /* gone: builds_apply stops it */
        sbuf_reset(&a), sbuf_reset(&b);
        /* every unit of it: a shard that joined or went is an edit too (the
         * pages would miss it) */
        mapping_gen_index_write(p->builds[i].gen, alias, &a);
        mapping_gen_index_write(nw, alias, &b);
        /* the epoch too: pages of the old one would lose to every dual write */
        if (o->epoch == n->epoch && a.len == b.len && !memcmp(a.data, b.data, a.len)) continue;
        char err[512];
        char *al = xstrdup(alias);
        unsigned was = p->builds[i].version;
        changed = true;
        builds_stop(dm, i, "its index config was edited", false);
        /* that version only: with several sources, the first daemon to see
         * the edit cancels it and queues the next; the others find it gone */
        int crc = db_ensure(&p->meta, &p->metap, err, sizeof err) < 0
                      ? REINDEX_ERR
                      : reindex_cancel_version(dm->cfg, p->k, p->meta, al, was,
                                               "mapping edited during the build", err,
                                               sizeof err);
        if (crc == REINDEX_REFUSED) {
            log_info("run", "%s: the mapping was edited while version %u was built: that build "
                     "was cancelled already (%s)", al, was, err);
            free(al);
            continue;
        }
        if (crc != REINDEX_OK) {
            log_error("run", "%s: the mapping was edited while version %u was built, and that "
                      "build could not be cancelled (%s): run `searchsync reindex --reset` "
                      "and reindex again, or its documents may follow two mappings",
                      al, was, err);
            free(al);
            continue;
        }
        unsigned v = 0;
        struct reindex_request req = {al, 0, false, "mapping edited during the build", 0};
        if (db_ensure(&p->src, &p->srcp, err, sizeof err) < 0 ||
            reindex_request(dm->cfg, dm->client, p->k, p->meta, p->src, &req, &v, err,
                            sizeof err) != REINDEX_OK)
            log_error("run", "%s: the mapping was edited while version %u was built: that build "
                      "is cancelled, but a new one could not be queued (%s): run `searchsync "
                      "reindex` for it", al, was, err);
        else
            log_warn("run", "%s: the mapping was edited while version %u was built: that build "
                     "is cancelled and version %u is built with the new mapping", al, was, v);
        free(al);
    }
    sbuf_free(&a);
    sbuf_free(&b);
    return changed;
}
