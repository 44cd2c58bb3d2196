/* supervisor_mapping: the mapping generations the supervisor publishes.
 * Owns a generation loaded from the metadata tables and validated against
 * the source (columns the source widened followed and recorded), its
 * indices made to exist (supervisor_prepare), its publication to the reader
 * and the admin API, and the look for edits every [metadata]
 * reload_interval_ms or when the source is judged after a schema change
 * (supervisor_look_for_edits). The thread that runs these looks is
 * sync/node/supervisor.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/node/index_ensure.h"
#include "sync/node/index_stop.h"
#include "sync/node/supervisor.h"
#include "log.h"

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

/* look_for_edits when the source is to be judged (its verdict made, stopped
 * index configs stopped by it): a new generation of what the tables hold
 * (same: what runs), validated against the source as it is now, published
 * when it differs from what runs, routes a stopped index config again or
 * holds other shards. true when a judgement was made (published, or none
 * needed); false, with *settled cleared, when it is looked at again. */
static bool judge_published(struct supervisor *sv, bool same, size_t stopped, bool *settled) {
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
        *settled = false;
        return false;
    }
    if (stopped) {
        /* the stopped ones left out of routing: published at once */
        log_info("run", "mapping generation %lu handed to the reader without the "
                 "stopped index config(s)", g->id);
        publish(sv, g);
        return true;
    }
    if (!same) {
        /* edited meanwhile (or a stop lifted, a type recorded): what the
         * tables hold, valid against the source as it is now */
        log_info("run", "mapping edited: generation %lu validated and handed to the "
                 "reader, which applies it at the next transaction boundary", g->id);
        publish(sv, g);
        return true;
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
        return true;
    }
    mapping_gen_unref(g); /* widened columns were recorded: the next look reloads */
    *settled = false;
    return true;
}

/* look_for_edits of an edit (signature sig, not what runs): a new
 * generation validated and published; one that fails stays refused, said
 * once per edit (sv->bad_sig). true when what the tables hold is settled
 * (applied, or refused); false when applying failed for a reason that may
 * pass. */
static bool apply_edit(struct supervisor *sv, const sbuf *sig) {
    if (sv->bad_sig.len == sig->len && !memcmp(sig->data, sv->bad_sig.data, sig->len))
        return true;
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
            sbuf_add(&sv->bad_sig, sig->data, sig->len);
        }
        return invalid;
    }
    log_info("run", "mapping edited: generation %lu validated and handed to the reader, which "
             "applies it at the next transaction boundary", g->id);
    publish(sv, g);
    return true;
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
bool supervisor_look_for_edits(struct supervisor *sv, bool schema_changed, const char *forced) {
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
        verdict = judge_published(sv, same, stopped, &settled);
        goto out;
    }
    if (!same) settled = apply_edit(sv, &sig);
out:
    if (settled) snprintf(sv->mapping_sum, sizeof sv->mapping_sum, "%s", sum);
    sv->err[0] = '\0';
    mapping_free(&m2);
    sbuf_free(&sig);
    return verdict;
}
