/* daemon_source: the node's side of a source (sync/sources/source.h) — the
 * struct source_env the daemon hands to whichever source it reads, and the
 * callbacks behind it: between change sets the supervisor's commands are
 * applied (a mapping generation adopted, the build table followed), and the
 * reader waits there while its lock cannot be confirmed; what a
 * source reads that the supervisor must act on (a DDL: the tables it
 * empties and names; a query of the mapping refused) goes into the command
 * queue. Reader thread;
 * the command queue under its lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sync/node/daemon.h"
#include "sync/pipeline/ddl_tables.h"
#include "sync/mapping/mapping_shard.h"
#include "sync/mapping/mapping_source.h"
#include "sync/reindex/reindex.h"
#include "log.h"
#include "jsonw.h"
#include <cjson/cJSON.h>
#include "monotime.h"

/* While the reader lock cannot be confirmed (sync/cluster/leadership.h), the
 * reader reads nothing more: it waits here, at a transaction boundary,
 * until the lock is confirmed again, or lost, or a stop is asked. */
static void wait_for_the_lock(struct daemon *dm) {
    if (!leadership_holds_reads(&dm->lead)) return;
    liveness_wait(&dm->rs.live, READER_WAIT_LOCK);
    while (leadership_holds_reads(&dm->lead) && !daemon_stop_requested &&
           !atomic_load(&dm->sv.lost))
        sleep_ms(100);
    liveness_wait(&dm->rs.live, NULL);
}

/* Between transactions (and on idle heartbeats): what the supervisor asked
 * for — a new mapping generation, the build table to follow. true when a
 * generation was adopted. */
static void shard_gone(struct daemon *dm, const char *alias, const char *label);

bool daemon_between_txns(struct daemon *dm) {
    wait_for_the_lock(dm);
    pthread_mutex_lock(&dm->cmds.mu);
    struct mapping_gen *g = dm->cmds.adopt;
    struct build_table *t = dm->cmds.builds;
    char **gone = dm->cmds.shards_gone;
    size_t ngone = dm->cmds.nshards_gone;
    dm->cmds.adopt = NULL;
    dm->cmds.builds = NULL;
    dm->cmds.shards_gone = NULL;
    dm->cmds.nshards_gone = 0;
    pthread_mutex_unlock(&dm->cmds.mu);
    for (size_t i = 0; i < ngone; i++) { /* "alias\x1fdb.table" */
        char *sep = strchr(gone[i], '\x1f');
        if (sep) {
            *sep = '\0';
            shard_gone(dm, gone[i], sep + 1);
        }
        free(gone[i]);
    }
    free(gone);
    if (g) {
        struct mapping_gen *old = dm->gen;
        /* a shard routed from this boundary on: its rows so far read into the
         * live version (shard_join.h) */
        for (size_t i = 0; i < g->m.nindices; i++) {
            const struct mp_index *u = &g->m.indices[i];
            bool known = !u->unit;
            for (size_t j = 0; old && !known && j < old->m.nindices; j++)
                known = old->m.indices[j].unit && !strcmp(old->m.indices[j].unit, u->unit) &&
                        !strcmp(old->m.indices[j].alias, u->alias);
            if (!known && dm->joins.running) shard_joins_post(&dm->joins, u->alias, u->unit);
        }
        /* the run-time fields the reader keeps (see struct mapping_gen) */
        for (size_t i = 0; i < g->m.nindices; i++)
            for (size_t j = 0; old && j < old->m.nindices; j++)
                if (!strcmp(g->m.indices[i].alias, old->m.indices[j].alias)) {
                    struct mp_index *nx = &g->m.indices[i];
                    if (nx->current_version < old->m.indices[j].current_version)
                        nx->current_version = old->m.indices[j].current_version;
                    if (old->m.indices[j].deliveries_stopped && !nx->deliveries_stopped)
                        log_info("run", "%s: version %u is live: live changes are written "
                                 "through the alias again", nx->alias, nx->current_version);
                }
        dm->gen = g;
        pipeline_adopt(&dm->p, &g->m, router_new(&g->m));
        log_info("run", "mapping reloaded: %zu index config(s) (generation %lu); it applies "
                 "from this transaction on", g->m.nindices, g->id);
        if (builds_mapping_changed(dm, g)) {
            build_table_free(t); /* read before those builds changed: wait for the next */
            t = NULL;
        }
        mapping_gen_unref(old);
        dm->reloads++;
    }
    if (t) builds_apply(dm, t);
    build_table_free(t);
    return g != NULL;
}

static bool env_between(void *ud) { return daemon_between_txns(ud); }

static bool env_asks(void *ud) {
    struct daemon *dm = ud;
    pthread_mutex_lock(&dm->cmds.mu);
    bool asks = dm->cmds.adopt || dm->cmds.builds || dm->cmds.ntruncated;
    pthread_mutex_unlock(&dm->cmds.mu);
    /* a reader that must wait for its lock groups no more transactions */
    return asks || leadership_holds_reads(&dm->lead);
}

/* the rebuilds one statement owes, before they are recorded and posted */
struct owed {
    struct emptied *v;
    size_t n;
};

/* e owed, once per index config and key */
static void owe(struct owed *o, struct emptied e) {
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->v[i].alias, e.alias) && !strcmp(o->v[i].key, e.key)) {
            emptied_free(&e);
            return;
        }
    o->v = xrealloc(o->v, (o->n + 1) * sizeof *o->v);
    o->v[o->n++] = e;
}

/* db.table emptied by the statement read at `at` (reason says which and
 * where): every index config of the generation in force that reads it owes
 * a rebuild (dropped: once the table exists again). */
static void queue_emptied(struct daemon *dm, struct owed *o, const struct ddl_stmt *st,
                          const char *db, const char *table, bool dropped, const char *reason,
                          const char *at) {
    for (size_t i = 0; i < dm->gen->m.nindices; i++) {
        const struct mp_index *u = &dm->gen->m.indices[i];
        if (!ddl_index_reads(u, db, table)) continue;
        /* a shard whose root table the statement takes away goes whole
         * (shard_gone): nothing of it to rebuild */
        if (u->unit && ddl_takes_away(st, u->tables[0].db, u->tables[0].table)) continue;
        owe(o, emptied_make(u->alias, reason, dropped, NULL, 0, at));
    }
}

static void empty_in_db(struct daemon *dm, struct owed *o, const char *db, const char *reason,
                        const char *at) {
    /* every table of db the generation reads, once per index config */
    for (size_t i = 0; i < dm->gen->m.nindices; i++) {
        const struct mp_index *ix = &dm->gen->m.indices[i];
        if (ddl_index_reads_database(ix, db, NULL))
            owe(o, emptied_make(ix->alias, reason, true, NULL, 0, at));
    }
}

/* The rebuilds a statement owes, recorded in the metadata before the reader
 * reads on (a checkpoint past the statement cannot lose them then:
 * emptied_store.h), then handed to the supervisor. One recorded before (the
 * statement read again after a restart, another DROP of the same snapshot)
 * is queued already, or being judged. */
static void post_owed(struct daemon *dm, struct owed *o) {
    struct pipeline *p = &dm->p;
    for (size_t i = 0; i < o->n; i++) {
        struct emptied *e = &o->v[i];
        char err[512];
        bool had = false;
        int rc = db_ensure(&p->meta, &p->metap, err, sizeof err);
        if (rc == 0)
            rc = emptied_store_add(p->meta, dm->cfg->source.name, e, &had, err, sizeof err);
        if (rc < 0)
            log_warn("run", "index %s: the rebuild it is owed for %s could not be recorded in "
                     "the metadata (%s): it is queued, but should the daemon stop before the "
                     "rebuild is, the removed rows stay documents until `searchsync check "
                     "--repair` or `searchsync reindex`", e->alias, e->reason, err);
        e->recorded = rc == 0;
        pthread_mutex_lock(&dm->cmds.mu);
        bool queued = had;
        for (size_t k = 0; k < dm->cmds.ntruncated && !queued; k++)
            queued = !strcmp(dm->cmds.truncated[k].alias, e->alias) &&
                     !strcmp(dm->cmds.truncated[k].key, e->key);
        if (!queued) {
            dm->cmds.truncated = xrealloc(dm->cmds.truncated,
                                          (dm->cmds.ntruncated + 1) * sizeof *dm->cmds.truncated);
            dm->cmds.truncated[dm->cmds.ntruncated++] = *e;
        }
        pthread_mutex_unlock(&dm->cmds.mu);
        if (queued) emptied_free(e);
    }
    free(o->v);
    o->v = NULL;
    o->n = 0;
}

void daemon_owed_load(struct daemon *dm) {
    struct pipeline *p = &dm->p;
    struct emptied *v = NULL;
    size_t n = 0;
    char err[512];
    if (db_ensure(&p->meta, &p->metap, err, sizeof err) < 0 ||
        emptied_store_load(p->meta, dm->cfg->source.name, &v, &n, err, sizeof err) < 0) {
        log_warn("run", "the rebuilds owed for tables emptied before the last stop cannot be "
                 "read from the metadata (%s): they are tried at the next start", err);
        return;
    }
    for (size_t i = 0; i < n; i++)
        log_info("run", "index %s: %s, read before the last stop, is still owed a rebuild: "
                 "queued", v[i].alias, v[i].reason);
    pthread_mutex_lock(&dm->cmds.mu);
    dm->cmds.truncated = xrealloc(dm->cmds.truncated,
                                  (dm->cmds.ntruncated + n + 1) * sizeof *dm->cmds.truncated);
    for (size_t i = 0; i < n; i++) dm->cmds.truncated[dm->cmds.ntruncated++] = v[i];
    pthread_mutex_unlock(&dm->cmds.mu);
    free(v);
    if (n) supervisor_wake(&dm->sv);
}

/* Is db.table the root table of one of m's shard units? */
static bool shard_root(const struct mapping *m, const char *db, const char *table) {
    for (size_t i = 0; i < m->nindices; i++)
        if (m->indices[i].unit && !strcmp(m->indices[i].tables[0].db, db) &&
            !strcmp(m->indices[i].tables[0].table, table))
            return true;
    return false;
}

/* Does the statement create (or rename into place) a table a pattern of ix
 * would take into a new shard (mapping_shard.h)? Its root table, or another
 * of its tables: a shard whose tables are created one by one is left out
 * until the last of them exists, whichever that is. */
static bool ddl_adds_shard(const struct ddl_stmt *st, const struct mp_index *ix) {
    for (size_t i = 0; i < st->n; i++)
        if ((st->t[i].effect == DDL_CREATED || st->t[i].effect == DDL_RENAMED_TO) &&
            mp_index_matches_shard_table(ix, st->t[i].db, st->t[i].table))
            return true;
    return false;
}

/* The changes read after a DDL naming mapped tables are routed with the
 * verdict on it (a generation without the index configs it stopped): the
 * reader waits for the supervisor to judge it (a mapping and a schema read,
 * tens of milliseconds), at most DDL_JUDGE_WAIT_MS (a metadata server away:
 * then it goes on, and the verdict applies from the boundary it is adopted
 * at, as any generation). */
#define DDL_JUDGE_WAIT_MS 10000
static void wait_judged(struct daemon *dm, unsigned long seq) {
    int64_t t0 = mono_ms();
    for (;;) {
        pthread_mutex_lock(&dm->cmds.mu);
        bool judged = dm->cmds.ddls_judged >= seq;
        pthread_mutex_unlock(&dm->cmds.mu);
        if (judged || daemon_stop_requested) return;
        if (mono_ms() - t0 > DDL_JUDGE_WAIT_MS) {
            log_warn("run", "the schema change read is not judged after %d s (the supervisor "
                     "or a server slow?): reading goes on, the verdict applies from the "
                     "transaction boundary it is adopted at", DDL_JUDGE_WAIT_MS / 1000);
            return;
        }
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
}

/* Shard `label` of index config `alias` is gone (its root table dropped):
 * its documents are deleted from the live version and a version being
 * built, found by their shard field. Every write queued before (the shard's
 * last changes) is delivered first, so none lands after the delete; no
 * write of the shard can come after it (its table is gone, and a table
 * created under its name later is a new shard, read from the binlog after
 * this). Reader thread, at the statement's position. */
static void shard_gone(struct daemon *dm, const char *alias, const char *label) {
    struct pipeline *p = &dm->p;
    /* several sources: this source's shard of that name only */
    const struct mp_index *ix = mapping_gen_index(dm->gen, alias);
    const char *src = ix && mp_index_multi(ix) ? dm->cfg->source.name : NULL;
    int drc = deliver_drain(p->d, dm->cfg->delivery.drain_timeout_ms);
    if (drc != DELIVER_OK)
        log_warn("run", "index %s: the writes queued before shard %s went were not all "
                 "delivered within [delivery] drain_timeout_ms; its documents are deleted now "
                 "anyway (`searchsync check --repair` finds one written after)", alias, label);
    const struct build *b = targets_build_of(p, alias);
    sbuf path = SBUF_INIT, body = SBUF_INIT;
    sbuf_printf(&path, "/%s%s%s/_delete_by_query?refresh=true&conflicts=proceed", alias,
                b ? "," : "", b ? b->phys : "");
    jsonw w;
    jw_init(&w, &body);
    jw_obj_open(&w);
    jw_key(&w, "query");
    jw_obj_open(&w);
    jw_key(&w, "bool");
    jw_obj_open(&w);
    jw_key(&w, "filter");
    jw_arr_open(&w);
    jw_obj_open(&w);
    jw_key(&w, "term");
    jw_obj_open(&w);
    jw_key(&w, MP_SHARD_FIELD);
    jw_str(&w, label);
    jw_obj_close(&w);
    jw_obj_close(&w);
    if (src) { /* another source may have a shard of that name */
        jw_obj_open(&w);
        jw_key(&w, "term");
        jw_obj_open(&w);
        jw_key(&w, MP_SOURCE_FIELD);
        jw_str(&w, src);
        jw_obj_close(&w);
        jw_obj_close(&w);
    }
    jw_arr_close(&w);
    jw_obj_close(&w);
    jw_obj_close(&w);
    jw_obj_close(&w);
    struct search_resp r;
    search_resp_init(&r);
    int rc = search_request(p->k, "POST", path.data, "application/json", body.data, body.len, &r);
    if (rc == 0 && r.status == 200) {
        cJSON *j = cJSON_ParseWithLength(r.body.data, r.body.len);
        double n = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "deleted"));
        cJSON_Delete(j);
        log_info("run", "index %s: shard %s is gone: its %.0f document(s) deleted", alias, label,
                 n == n ? n : 0);
    } else {
        log_error("run", "index %s: shard %s is gone, but deleting its documents failed (%s): "
                  "run `searchsync check --config FILE %s --repair` to remove them", alias, label,
                  rc == 0 ? r.body.data ? r.body.data : "" : r.err, alias);
    }
    search_resp_free(&r);
    sbuf_free(&path);
    sbuf_free(&body);
    char e[512];
    sbuf l = SBUF_INIT;
    if (src) sbuf_printf(&l, "%s/", src);
    sbuf_adds(&l, label);
    int arc = shards_read_add(p->meta, config_mapping_name(dm->cfg), alias, l.data, false, e,
                              sizeof e);
    sbuf_free(&l);
    if (arc < 0)
        log_warn("run", "index %s: shard %s is gone, but not recorded so (%s)", alias, label, e);
}

/* A DROP TABLE or DROP DATABASE a producer replayed to describe the schema
 * (Debezium's snapshot, before its CREATEs): the tables are all there, so no
 * shard goes and nothing is emptied; each index config reading one of them,
 * shards too, once, is queued for the supervisor to rebuild only if its
 * pages were read before the snapshot (supervisor.c). */
static void replayed_emptied(struct daemon *dm, struct owed *o, const struct ddl_target *t,
                             const char *at, const bl_pos *replayed) {
    if (t->effect != DDL_DROPPED && t->effect != DDL_DB_DROPPED && t->effect != DDL_TRUNCATED)
        return;
    char reason[512];
    if (t->effect == DDL_DB_DROPPED)
        snprintf(reason, sizeof reason, "DROP DATABASE %s read from %s", t->db, at);
    else
        snprintf(reason, sizeof reason, "%s %s.%s read from %s",
                 t->effect == DDL_DROPPED ? "DROP TABLE" : "TRUNCATE TABLE", t->db, t->table, at);
    /* keyed by the snapshot's position: its DROPs owe each config one judgement */
    for (size_t i = 0; i < dm->gen->m.nindices; i++) {
        const struct mp_index *u = &dm->gen->m.indices[i];
        if (t->effect == DDL_DB_DROPPED ? ddl_index_reads_database(u, t->db, NULL)
                                        : ddl_index_reads(u, t->db, t->table))
            owe(o, emptied_make(u->alias, reason, false, replayed->file, replayed->pos, NULL));
    }
}

/* A DDL statement read: rows it removed without row events (TRUNCATE, DROP,
 * partitions) have their index configs rebuilt (a replayed one: see
 * replayed_emptied); if it names a table the
 * mapping reads (or cannot be read, in a database the mapping reads), the
 * supervisor judges the mappings at this position (schema_watch.c). */
static void env_ddl(void *ud, const char *db, const char *sql, size_t len, const char *at,
                    const bl_pos *replayed) {
    struct daemon *dm = ud;
    struct ddl_read d = {0};
    enum ddl_kind kind = ddl_parse(sql, len, db, &d.stmt);
    if (kind == DDL_NONE) return;
    /* the statement, on one line and cut short, for the messages it causes */
    char stmt[200];
    size_t n = len < sizeof stmt - 1 ? len : sizeof stmt - 1;
    for (size_t i = 0; i < n; i++) stmt[i] = sql[i] == '\n' || sql[i] == '\r' ? ' ' : sql[i];
    stmt[n] = '\0';
    snprintf(d.note, sizeof d.note, "after `%s%s` read from %s", stmt, len > n ? "..." : "", at);
    char *text = kind == DDL_UNKNOWN ? xstrndup(sql, len) : NULL;
    const struct mapping *m = &dm->gen->m;
    for (size_t i = 0; i < m->nindices; i++) {
        bool names = kind == DDL_TABLES ? ddl_names_index_table(&d.stmt, &m->indices[i]) ||
                                              ddl_adds_shard(&d.stmt, &m->indices[i])
                                        : ddl_index_reads_database(&m->indices[i],
                                                                   db ? db : "", text);
        if (!names) continue;
        bool dup = false; /* the units of one config over shard tables: once */
        for (size_t a = 0; a < d.naliases && !dup; a++)
            dup = !strcmp(d.aliases[a], m->indices[i].alias);
        if (dup) continue;
        d.aliases = xrealloc(d.aliases, (d.naliases + 1) * sizeof *d.aliases);
        d.aliases[d.naliases++] = xstrdup(m->indices[i].alias);
    }
    free(text);
    struct owed o = {0};
    for (size_t i = 0; i < d.stmt.n && replayed; i++)
        replayed_emptied(dm, &o, &d.stmt.t[i], at, replayed);
    for (size_t i = 0; i < d.stmt.n && !replayed; i++) {
        const struct ddl_target *t = &d.stmt.t[i];
        char reason[512];
        if (t->effect == DDL_DB_DROPPED) {
            snprintf(reason, sizeof reason, "DROP DATABASE %s read from %s", t->db, at);
            empty_in_db(dm, &o, t->db, reason, at);
        } else if (t->effect == DDL_TRUNCATED) {
            snprintf(reason, sizeof reason, "%s %s.%s read from %s",
                     d.stmt.t[0].effect == DDL_ALTERED ? "a partition emptied by ALTER TABLE"
                                                       : "TRUNCATE TABLE",
                     t->db, t->table, at);
            queue_emptied(dm, &o, &d.stmt, t->db, t->table, false, reason, at);
        } else if (t->effect == DDL_DROPPED && !shard_root(m, t->db, t->table)) {
            snprintf(reason, sizeof reason, "DROP TABLE %s.%s read from %s", t->db, t->table, at);
            queue_emptied(dm, &o, &d.stmt, t->db, t->table,
                          ddl_takes_away(&d.stmt, t->db, t->table), reason, at);
        }
    }
    post_owed(dm, &o); /* before the judgement it may lift a stop for (index_stop.c) */
    pthread_mutex_lock(&dm->cmds.mu);
    unsigned long seq = 0;
    if (d.naliases) {
        dm->cmds.ddls = xrealloc(dm->cmds.ddls, (dm->cmds.nddls + 1) * sizeof *dm->cmds.ddls);
        dm->cmds.ddls[dm->cmds.nddls++] = d;
        seq = ++dm->cmds.ddls_posted;
    }
    pthread_mutex_unlock(&dm->cmds.mu);
    /* a shard whose root table goes takes its documents with it (not a
     * rebuild of the whole index, as for a table every document reads) */
    for (size_t i = 0; i < d.stmt.n && !replayed; i++) {
        const struct ddl_target *t = &d.stmt.t[i];
        for (size_t x = 0; x < m->nindices; x++) {
            const struct mp_index *u = &m->indices[x];
            if (!u->unit || !ddl_takes_away(&d.stmt, u->tables[0].db, u->tables[0].table) ||
                (t->effect == DDL_DB_DROPPED ? strcmp(t->db, u->tables[0].db)
                                             : strcmp(t->db, u->tables[0].db) ||
                                                   strcmp(t->table, u->tables[0].table)) ||
                t->effect == DDL_RENAMED_FROM) /* (renamed: gone only if it stays away) */
                continue;
            shard_gone(dm, u->alias, u->unit);
        }
    }
    if (!d.naliases) ddl_read_free(&d);
    supervisor_wake(&dm->sv);
    if (seq) wait_judged(dm, seq);
}

static unsigned long env_verdict_ask(void *ud, const char *note) {
    struct daemon *dm = ud;
    pthread_mutex_lock(&dm->cmds.mu);
    unsigned long asked = ++dm->cmds.verdict_asked;
    snprintf(dm->cmds.verdict_note, sizeof dm->cmds.verdict_note, "%s", note);
    pthread_mutex_unlock(&dm->cmds.mu);
    supervisor_wake(&dm->sv);
    return asked;
}

static bool env_verdict_given(void *ud, unsigned long asked) {
    struct daemon *dm = ud;
    pthread_mutex_lock(&dm->cmds.mu);
    bool answered = dm->cmds.verdict_given >= asked;
    pthread_mutex_unlock(&dm->cmds.mu);
    return answered;
}

static int env_save_start(void *ud, const char *token, uint64_t *other, char *err,
                          size_t errlen) {
    struct daemon *dm = ud;
    return offsets_save_fenced(dm->ckpt, dm->cfg->source.name, token, 0, dm->lead.fence, other,
                               err, errlen);
}

/* run --from-current, or a purged binlog with [source] on_purged = rebuild:
 * every index config rebuilt, so the versions built now hold what was
 * skipped (each page is read after the new start, and dual writes cover
 * what comes after); said in the sync log (the source's line, which
 * `searchsync status` shows) */
static int env_rebuild_all(void *ud, const char *why, const char *skipped) {
    struct daemon *dm = ud;
    const struct ss_config *cfg = dm->cfg;
    struct pipeline *p = &dm->p;
    const struct mapping *m = &dm->gen->m;
    sbuf built = SBUF_INIT;
    for (size_t i = 0; i < m->nindices; i++) {
        unsigned v = 0;
        char err[1024];
        struct reindex_request req = {m->indices[i].alias, 0, false, why, 0};
        int r = reindex_request(cfg, dm->client, p->k, p->meta, p->src, &req, &v, err, sizeof err);
        if (r == REINDEX_OK) {
            log_info("run", "%s: %s version %u queued", why, m->indices[i].alias, v);
            sbuf_printf(&built, "%s%s v%u", built.len ? ", " : "", m->indices[i].alias, v);
        } else if (r == REINDEX_REFUSED) { /* one is being built already: its pages are read later */
            log_info("run", "%s: %s: %s", why, m->indices[i].alias, err);
            sbuf_printf(&built, "%s%s (a build under way)", built.len ? ", " : "",
                        m->indices[i].alias);
        } else {
            sbuf_free(&built);
            return errf(dm->err, sizeof dm->err, "%s: the reindex of %s could not be queued: %s; "
                        "nothing is skipped until it is (the next start tries again)", why,
                        m->indices[i].alias, err);
        }
    }
    sbuf q = SBUF_INIT, detail = SBUF_INIT;
    sbuf_printf(&detail, "%s: the binlog %s was skipped; rebuilt: %s", why, skipped,
                built.len ? built.data : "none");
    sbuf_adds(&q, "INSERT INTO sync_log (source, event, detail, node) VALUES (");
    db_quote(p->meta, &q, cfg->source.name, strlen(cfg->source.name));
    sbuf_adds(&q, ", 'binlog skipped', ");
    db_quote(p->meta, &q, detail.data, detail.len);
    sbuf_adds(&q, ", ");
    db_quote(p->meta, &q, dm->lead.node_id, strlen(dm->lead.node_id));
    sbuf_adds(&q, ")");
    char e[512];
    if (db_exec(p->meta, q.data, e, sizeof e) < 0) log_warn("run", "sync_log not written: %s", e);
    sbuf_free(&q);
    sbuf_free(&detail);
    sbuf_free(&built);
    return 0;
}

void daemon_source_env(struct daemon *dm) {
    struct source_env *env = &dm->env;
    env->cfg = dm->cfg;
    env->p = &dm->p;
    env->cs = &dm->cs;
    env->gen = &dm->gen;
    env->dls = dm->dls;
    env->rs = &dm->rs;
    env->stop = &daemon_stop_requested;
    env->err = dm->err;
    env->errlen = sizeof dm->err;
    env->ud = dm;
    env->between = env_between;
    env->asks = env_asks;
    env->ddl = env_ddl;
    env->verdict_ask = env_verdict_ask;
    env->verdict_given = env_verdict_given;
    env->save_start = env_save_start;
    env->rebuild_all = env_rebuild_all;
}
