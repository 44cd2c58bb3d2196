/* pipeline: route → build → deliver, shared by every producer of change sets
 * (the design is in pipeline.h; docs/walkthrough.md follows one change).
 *
 * Invariants upheld here:
 *   I2 no stale write: a change set's documents are written with the version
 *      of its position (epoch | binlog file | position), and are read from
 *      MySQL no earlier than that position (the producer's read snapshot), so
 *      a version always carries data at least as new as its position and an
 *      older write can never win over it in the engine (external versions).
 *   Every target: a change of an index config goes to its live alias and to
 *      a version being built (dual writes), with the same version, so a
 *      build switched live holds every change made while it was built.
 * No loss (I1) and the checkpoint (I4) are delivery's: a change set's
 * transaction is ended only after all its changes are submitted, and the
 * checkpoint moves past it only when the engine acknowledged them all
 * (src/deliver). Documents are built once per change set however many of
 * their rows changed. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "sync/pipeline/docbuild.h"
#include "sync/pipeline/gtid_version.h"
#include "invariant.h"
#include "log.h"
#include "sync/pipeline/pipeline.h"
#include "sync/mapping/mapping_gen.h"
#include "sync/mapping/mapping_shard.h"
#include "strset.h"

void pipeline_init(struct pipeline *p, const struct ss_config *cfg) {
    memset(p, 0, sizeof *p);
    p->cfg = cfg;
    bl_valctx_init(&p->v);
    pthread_mutex_init(&p->miss_mu, NULL);
    p->rv_kind = RV_UNKNOWN;
}

void pipeline_free(struct pipeline *p) {
    router_free(p->router);
    p->router = NULL;
    bl_valctx_free(&p->v);
    sbuf_free(&p->val);
    rv_tables_clear(&p->rv);
    for (size_t i = 0; i < p->nmissing; i++) free(p->missing[i]);
    free(p->missing);
    p->missing = NULL, p->nmissing = p->capmissing = 0;
    copies_clear(p);
    free(p->last_pos);
    p->last_pos = NULL;
    pthread_mutex_destroy(&p->miss_mu);
}

static int build_slice(void *ctx, size_t index, size_t table);

void pipeline_adopt(struct pipeline *p, const struct mapping *m, struct router *router) {
    router_free(p->router);
    p->m = m;
    p->router = router;
    router_set_area(p->router, area_collect);
    /* tests slice small fan-outs (t_run_grouped: the oracle run with every
     * route of more than a few documents in slices) */
    const char *ts = getenv("SEARCHSYNC_TEST_ROUTE_SLICE");
    router_set_slice(p->router, build_slice, ts && atoi(ts) > 0 ? (size_t)atoi(ts) : ROUTE_SLICE);
}

/* ---------- route ---------- */

int pipeline_route_row(struct pipeline *p, struct changeset *cs, const bl_row *row) {
    struct image before = {p, row->table, row->before}, after = {p, row->table, row->after};
    cs->rows = true;
    if (router_delayed(p->router, row->table->db, row->table->name))
        return snapshots_add_row(p, cs, row);
    for (size_t i = 0; i < p->m->nindices; i++) {
        const struct mp_index *ix = &p->m->indices[i];
        if (row_image_index(ix) && !strcmp(ix->tables[0].db, row->table->db) &&
            !strcmp(ix->tables[0].table, row->table->name) && row_image_doc(p, cs, i, row) != 0)
            return -1;
    }
    if (!cs->copies_may_move) copies_watch_row(p, cs, row);
    return router_add(p->router, &cs->seeds, row->table->db, row->table->name, image_value,
                      row->before ? &before : NULL, row->after ? &after : NULL, p->err,
                      sizeof p->err);
}

/* router_flush's document collector */
static int collect_doc(void *ctx, size_t index, size_t table, const char *key, size_t len) {
    struct route_ctx *rc = ctx;
    if (table == 0 && row_image_index(&rc->p->m->indices[index])) return 0; /* routed as a row */
    changeset_add_doc(rc->cs, index, table, key, len);
    return 0;
}

/* ---------- build ---------- */

static int build_docs(struct pipeline *p, size_t index, size_t table, const char *const *keys,
                      size_t n, bool copies_may_move, const bl_pos *end, bool after);

/* router_flush's slices of a large fan-out (router_set_slice): the root
 * documents collected so far are built and delivered now, in the change
 * set's snapshot and with its version, and forgotten; memory stays bounded
 * by the slice and delivery's high-water mark however many documents one
 * row reaches (a renamed category under a million products). Documents of
 * parent/child tables (their stale copies are looked for over the whole
 * set) and of row-image indices stay for the end. */
static int build_slice(void *ctx, size_t index, size_t table) {
    struct route_ctx *rc = ctx;
    if (table != 0 || !rc->end) return 0;
    struct changeset *cs = rc->cs;
    for (size_t i = 0; i < cs->npend; i++) {
        struct cs_pending *pd = &cs->pend[i];
        if (pd->index != index || pd->table != 0 || !pd->n) continue;
        docbuild_sort_keys(pd->keys, pd->n);
        int r = build_docs(rc->p, index, 0, (const char *const *)pd->keys, pd->n, false, rc->end,
                           rc->after);
        for (size_t k = 0; k < pd->n; k++) free(pd->keys[k]);
        pd->n = 0;
        rc->p->slices++;
        return r;
    }
    return 0;
}

static int submit_doc(void *ctx, const char *id, const char *routing, const char *body,
                      size_t len) {
    struct build_ctx *b = ctx;
    struct change c = {.index = b->ix->alias, .doc_id = id, .routing = routing,
                       .version = b->version, .op = CHANGE_INDEX, .body = body, .body_len = len};
    b->p->docs++;
    if (b->copies) copies_note(b->copies, id, routing, false);
    return targets_submit(b->p, b->ix, &c);
}

static int submit_delete(void *ctx, const char *id) {
    struct build_ctx *b = ctx;
    if (b->copies) { /* its routing is known only to the engine: see copies_fix */
        copies_note(b->copies, id, NULL, true);
        return 0;
    }
    struct change c = {.index = b->ix->alias, .doc_id = id, .version = b->version,
                       .op = CHANGE_DELETE};
    b->p->deletes++;
    return targets_submit(b->p, b->ix, &c);
}

/* A child under a root outside the root's where: its document, if any, is
 * where its root's id routes it. Deleted there with the build's version, so
 * a root that only moved out needs no copy lookup; noted as absent too, for
 * the lookup of a transaction where rows moved (the child may have come
 * from another root in it: its copy there goes as well). */
static int submit_gone(void *ctx, const char *id, const char *routing) {
    struct build_ctx *b = ctx;
    if (b->copies) copies_note(b->copies, id, NULL, true);
    struct change c = {.index = b->ix->alias, .doc_id = id, .routing = routing,
                       .version = b->version, .op = CHANGE_DELETE};
    b->p->deletes++;
    return targets_submit(b->p, b->ix, &c);
}

/* Documents of table `table` of index config `index` with keys[0..n),
 * rebuilt whole with the version of `end`. */
static int build_docs(struct pipeline *p, size_t index, size_t table, const char *const *keys,
                      size_t n, bool copies_may_move, const bl_pos *end, bool after) {
    const struct mp_index *ix = &p->m->indices[index];
    struct copy_list *copies = table ? copies_list(p, index) : NULL;
    struct build_ctx bc = {p, ix, targets_version(p, ix, end, after), copies};
    if (!bc.version) return -1;
    if (copies) {
        copies->version = bc.version;
        if (copies_may_move) copies->moved = true;
    }
    struct docbuild b;
    docbuild_init(&b, p->src, ix);
    struct docbuild_sink sink = {submit_doc, submit_delete, &bc};
    b.gone = submit_gone;
    int rc;
    if (table == 0) {
        rc = docbuild_roots(&b, keys, n, &sink, p->err, sizeof p->err);
    } else {
        rc = docbuild_children(&b, table, keys, n, &sink, p->err, sizeof p->err);
    }
    if (rc != 0 && b.sql_errno) p->src_errno = b.sql_errno;
    return rc;
}

/* The root documents of cs->pend[at] and of every later pending group of
 * root keys of another shard unit of the same index config, built together
 * (docbuild_roots_units: the statements do not grow with the number of
 * shards a change set touches), each unit with its own version and sink;
 * done[] marks the groups taken. */
static int build_units(struct pipeline *p, struct changeset *cs, size_t at, bool *done,
                       const bl_pos *end, bool after) {
    const char *alias = p->m->indices[cs->pend[at].index].alias;
    size_t n = 0;
    for (size_t i = at; i < cs->npend; i++) {
        const struct mp_index *ix = &p->m->indices[cs->pend[i].index];
        if (!done[i] && cs->pend[i].table == 0 && ix->unit && !strcmp(ix->alias, alias)) n++;
    }
    struct docbuild_unit *us = xcalloc(n, sizeof *us);
    struct build_ctx *bc = xcalloc(n, sizeof *bc);
    struct docbuild_sink *sinks = xcalloc(n, sizeof *sinks);
    size_t m = 0;
    int rc = 0;
    for (size_t i = at; i < cs->npend && rc == 0; i++) {
        const struct mp_index *ix = &p->m->indices[cs->pend[i].index];
        if (done[i] || cs->pend[i].table != 0 || !ix->unit || strcmp(ix->alias, alias)) continue;
        done[i] = true;
        bc[m] = (struct build_ctx){p, ix, targets_version(p, ix, end, after), NULL};
        if (!bc[m].version) {
            rc = -1;
            break;
        }
        sinks[m] = (struct docbuild_sink){submit_doc, submit_delete, &bc[m]};
        docbuild_init(&us[m].b, p->src, ix);
        us[m].b.gone = submit_gone;
        us[m].keys = (const char *const *)cs->pend[i].keys;
        us[m].n = cs->pend[i].n;
        us[m].sink = &sinks[m];
        m++;
    }
    if (rc == 0 && m) rc = docbuild_roots_units(us, m, p->err, sizeof p->err);
    if (rc != 0 && m && us[0].b.sql_errno) p->src_errno = us[0].b.sql_errno;
    free(sinks);
    free(bc);
    free(us);
    return rc;
}

static int build(struct pipeline *p, struct changeset *cs, const bl_pos *end, bool after) {
    if (cs->snaps.len && (db_ensure(&p->meta, &p->metap, p->err, sizeof p->err) < 0 ||
                          snapshots_write(p, cs) < 0))
        return -1;
    struct route_ctx rctx = {p, cs, end, after};
    p->src_errno = 0;
    if (router_flush(p->router, &cs->seeds, p->src, collect_doc, &rctx, p->err, sizeof p->err) != 0) {
        p->src_errno = mysql_errno(p->src);
        return -1;
    }
    int rc = 0;
    row_image_requery(p, cs);
    bool *done = xcalloc(cs->npend ? cs->npend : 1, sizeof *done);
    for (size_t i = 0; i < cs->npend; i++) docbuild_sort_keys(cs->pend[i].keys, cs->pend[i].n);
    for (size_t i = 0; i < cs->npend && rc == 0; i++) {
        struct cs_pending *pd = &cs->pend[i];
        if (done[i]) continue;
        if (pd->table == 0 && p->m->indices[pd->index].unit)
            rc = build_units(p, cs, i, done, end, after);
        else
            rc = build_docs(p, pd->index, pd->table, (const char *const *)pd->keys, pd->n,
                            cs->copies_may_move, end, after);
    }
    free(done);
    if (rc == 0) rc = copies_settle(p); /* after every table's: one lookup an index */
    if (rc == 0 && cs->nelems) {
        struct strset full = {0}; /* "index\x1fkey" of root documents rebuilt whole */
        sbuf fk = SBUF_INIT;
        for (size_t i = 0; i < cs->npend; i++) {
            if (cs->pend[i].table != 0) continue;
            for (size_t k = 0; k < cs->pend[i].n; k++) {
                sbuf_reset(&fk);
                sbuf_printf(&fk, "%zu\x1f%s", cs->pend[i].index, cs->pend[i].keys[k]);
                strset_add(&full, fk.data, fk.len);
            }
        }
        sbuf_free(&fk);
        rc = area_submit(p, cs, &full, end, after);
        strset_clear(&full);
    }
    if (rc == 0 && cs->nrdocs) rc = row_image_submit(p, cs, end, after);
    if (rc == 0 && pipeline_has_missing(p)) rc = pipeline_rebuild_missing(p, end);
    return rc;
}

int pipeline_build(struct pipeline *p, struct changeset *cs, const bl_pos *end) {
    return build(p, cs, end, false);
}

int pipeline_build_after(struct pipeline *p, struct changeset *cs, const bl_pos *end) {
    return build(p, cs, end, true);
}

void pipeline_position(const struct pipeline *p, const bl_pos *end, const char *gtids,
                       sbuf *out) {
    sbuf_printf(out, "%s:%llu", end->file, (unsigned long long)end->pos);
    /* [source] versions = gtid: the reader resumes after this set, on this
     * server or another of its topology (binlog_start.c) */
    if (config_gtid_versions(p->cfg)) sbuf_printf(out, "%s%s", GTID_TOKEN_MARK, gtids ? gtids : "");
}

static uint64_t end_txn(struct pipeline *p, struct changeset *cs, const char *position,
                        bool quiet) {
    p->last_txn = quiet ? deliver_txn_end_quiet(p->d, position) : deliver_txn_end(p->d, position);
    if (position != p->last_pos) {
        char *at = xstrdup(position);
        free(p->last_pos);
        p->last_pos = at;
    }
    changeset_reset(cs);
    return p->last_txn;
}

uint64_t pipeline_end(struct pipeline *p, struct changeset *cs, const bl_pos *end,
                      const struct pipeline_resume *rs, bool quiet) {
    /* lookups put off by earlier builds are done before the checkpoint may
     * pass them; a build that put them off ends at the hold */
    if (p->copies_hold && !p->copies_put_off && copies_release(p) < 0)
        log_warn("run", "%s; the checkpoint stays before the transactions whose child "
                 "copies were not looked up (read again at the next start)", p->err);
    p->copies_put_off = false;
    if (rs && rs->hold) return end_txn(p, cs, rs->hold, quiet); /* the older of the two */
    if (p->copies_hold) return end_txn(p, cs, p->copies_hold, quiet);
    sbuf pos = SBUF_INIT;
    pipeline_position(p, end, rs ? rs->gtids : NULL, &pos);
    uint64_t seq = end_txn(p, cs, pos.data, quiet);
    sbuf_free(&pos);
    return seq;
}

void pipeline_hold_scripts(struct pipeline *p) { p->scripts_after = p->last_txn; }

uint64_t pipeline_end_at(struct pipeline *p, struct changeset *cs, const char *position,
                         bool quiet) {
    /* a producer that ends at its own token never puts lookups off (only the
     * binlog reader says the next transaction waits); held anyway if so */
    return end_txn(p, cs, p->copies_hold ? p->copies_hold : position, quiet);
}

/* ---------- documents a script did not find ---------- */

void pipeline_note_missing(struct pipeline *p, const char *index, const char *doc_id) {
    sbuf k = SBUF_INIT;
    sbuf_printf(&k, "%s\x1f%s", index, doc_id);
    pthread_mutex_lock(&p->miss_mu);
    if (p->nmissing == p->capmissing) {
        p->capmissing = p->capmissing ? p->capmissing * 2 : 16;
        p->missing = xrealloc(p->missing, p->capmissing * sizeof *p->missing);
    }
    p->missing[p->nmissing++] = k.data;
    pthread_mutex_unlock(&p->miss_mu);
}

bool pipeline_has_missing(struct pipeline *p) {
    pthread_mutex_lock(&p->miss_mu);
    bool any = p->nmissing > 0;
    pthread_mutex_unlock(&p->miss_mu);
    return any;
}

bool pipeline_build_reads(struct pipeline *p, const struct changeset *cs) {
    return router_pending(p->router, &cs->seeds) || changeset_reads(cs) ||
           pipeline_has_missing(p);
}

/* Rebuild the documents scripts did not find, with the version of `end` (the
 * content is read now, at least as new). */
int pipeline_rebuild_missing(struct pipeline *p, const bl_pos *end) {
    pthread_mutex_lock(&p->miss_mu);
    char **miss = p->missing;
    size_t n = p->nmissing;
    p->missing = NULL, p->nmissing = p->capmissing = 0;
    pthread_mutex_unlock(&p->miss_mu);
    int rc = 0;
    size_t rebuilt = 0;
    const char **keys = xcalloc(n ? n : 1, sizeof *keys);
    for (size_t x = 0; x < p->m->nindices && rc == 0; x++) { /* one batched build per index */
        const struct mp_index *ix = &p->m->indices[x];
        size_t nk = 0;
        char **owned = xcalloc(n ? n : 1, sizeof *owned);
        for (size_t i = 0; i < n; i++) {
            char *sep = strchr(miss[i], '\x1f');
            size_t kl = 0;
            const char *k = sep && (size_t)(sep - miss[i]) == strlen(ix->alias) &&
                                    !memcmp(miss[i], ix->alias, (size_t)(sep - miss[i]))
                                ? mp_doc_key(ix, sep + 1, &kl) /* of this shard, if any */
                                : NULL;
            if (k) {
                owned[nk] = xstrndup(k, kl);
                keys[nk] = owned[nk];
                nk++;
            }
        }
        if (nk) rc = build_docs(p, x, 0, keys, nk, false, end, false);
        for (size_t i = 0; i < nk; i++) free(owned[i]);
        free(owned);
        if (!nk) continue;
        rebuilt += nk;
    }
    free(keys);
    if (rc == 0 && rebuilt)
        log_info("run", "%zu document(s) were not in the engine for an element update: rebuilt "
                        "whole", rebuilt);
    if (rc != 0) { /* kept for the next attempt (all of them: rebuilding twice is harmless) */
        pthread_mutex_lock(&p->miss_mu); /* with those that came meanwhile */
        miss = xrealloc(miss, (n + p->nmissing + 1) * sizeof *miss);
        for (size_t i = 0; i < p->nmissing; i++) miss[n + i] = p->missing[i];
        free(p->missing);
        p->nmissing += n;
        p->capmissing = p->nmissing + 1;
        p->missing = miss;
        pthread_mutex_unlock(&p->miss_mu);
        return rc;
    }
    for (size_t i = 0; i < n; i++) free(miss[i]);
    free(miss);
    return rc;
}

static bool same_unit(const struct mp_index *a, const struct mp_index *b) {
    if (strcmp(a->alias, b->alias) != 0) return false;
    return !a->unit || !b->unit || !strcmp(a->unit, b->unit);
}

/* the tables of index config (or shard unit) ix, in force and in its
 * version being built (whose mapping may read others) */
static void unit_tables(struct pipeline *p, const struct mp_index *ix) {
    if (!ix->unusable) rv_tables_add_index(&p->rv, ix);
    for (size_t b = 0; b < p->nbuilds; b++) {
        if (strcmp(p->builds[b].alias, ix->alias) != 0 || !p->builds[b].gen) continue;
        const struct mapping *bm = &p->builds[b].gen->m;
        for (size_t i = 0; i < bm->nindices; i++)
            if (same_unit(&bm->indices[i], ix)) rv_tables_add_index(&p->rv, &bm->indices[i]);
    }
}

int pipeline_read_view(struct pipeline *p, const struct changeset *cs, const char *alias,
                       const char *unit, char *file, size_t filelen, unsigned long long *pos) {
    rv_tables_clear(&p->rv);
    size_t n = p->m ? p->m->nindices : 0;
    bool *mark = xcalloc(n ? n : 1, sizeof *mark);
    if (cs) { /* the units its builds read: over shard tables, only theirs */
        router_seeded_indices(p->router, &cs->seeds, mark, n);
        for (size_t i = 0; i < cs->npend; i++)
            if (cs->pend[i].index < n) mark[cs->pend[i].index] = true;
        for (size_t i = 0; i < cs->nelems; i++)
            if (cs->elems[i].index < n) mark[cs->elems[i].index] = true;
        /* documents a script did not find: every unit of their alias */
        pthread_mutex_lock(&p->miss_mu);
        for (size_t k = 0; k < p->nmissing; k++) {
            const char *us = strchr(p->missing[k], '\x1f');
            size_t al = us ? (size_t)(us - p->missing[k]) : strlen(p->missing[k]);
            for (size_t i = 0; i < n; i++)
                if (strlen(p->m->indices[i].alias) == al &&
                    !memcmp(p->m->indices[i].alias, p->missing[k], al))
                    mark[i] = true;
        }
        pthread_mutex_unlock(&p->miss_mu);
    } else {
        for (size_t i = 0; i < n; i++) {
            const struct mp_index *ix = &p->m->indices[i];
            mark[i] = (!alias || !strcmp(ix->alias, alias)) &&
                      (!unit || !ix->unit || !strcmp(ix->unit, unit));
        }
    }
    for (size_t i = 0; i < n; i++)
        if (mark[i]) unit_tables(p, &p->m->indices[i]);
    free(mark);
    int s = read_view_begin(p->src, &p->rv, &p->rv_kind, file, filelen, pos, &p->src_errno,
                            p->err, sizeof p->err);
    return s;
}

int pipeline_snapshot_begin(struct pipeline *p, const char *alias, const char *unit,
                            bl_pos *end) {
    memset(end, 0, sizeof *end);
    char file[BL_FILE_MAX];
    unsigned long long before = 0, pos = 0;
    /* the binlog's end first: on a server that reports no snapshot position
     * it is the version, read before any row is */
    if (db_binlog_status(p->src, end->file, sizeof end->file, &before, p->err, sizeof p->err) !=
        1) {
        snprintf(p->err + strlen(p->err), sizeof p->err - strlen(p->err),
                 " (documents rebuilt here are versioned by the source's binlog position)");
        return -1;
    }
    end->pos = before;
    /* [source] versions = gtid: the ordinal before the snapshot likewise
     * (MySQL); MariaDB's at the snapshot's position below */
    bool gtid = config_gtid_versions(p->cfg);
    if (gtid && gtid_server_ordinal(p->src, NULL, 0, &end->ordinal, p->err, sizeof p->err) < 0)
        return -1;
    /* MySQL: that position is the version only once everything binlogged up
     * to it is committed, and so in the snapshot below (db.h) */
    sbuf owned = SBUF_INIT;
    int c = db_wait_binlogged_committed(p->src, 5, &owned, p->err, sizeof p->err);
    if (c == 0)
        log_warn("run", "GTID(s) %.300s owned for over 5 s and not executed (a session holding "
                 "gtid_next?): documents read now may miss a transaction that commits just "
                 "after; they are read anyway", owned.data ? owned.data : "");
    sbuf_free(&owned);
    if (c < 0) return -1;
    /* the binlog's end read before it. Where the server reports the
     * snapshot's own position (MariaDB), that position is the version, so
     * a snapshot behind the end read first is no stale read: a commit that
     * was binlogged but not yet visible when the snapshot began is left out
     * of it, and its version is above the one these documents carry (the
     * reader sends it after them). I2 holds by construction there, and
     * asserting "not behind" would abort on every such commit in flight.
     * Without a snapshot position (MySQL) nothing is compared: the wait for
     * binlogged commits above stands for it. */
    bl_pos at = *end, snap;
    int s = pipeline_snapshot_at(p, NULL, alias, unit, &at, 0, true, &snap);
    if (s < 0) return -1;
    if (s >= 1) { /* MariaDB: exactly what the snapshot holds */
        snprintf(end->file, sizeof end->file, "%s", snap.file);
        end->pos = snap.pos;
        snprintf(file, sizeof file, "%s", snap.file);
        pos = snap.pos;
        if (gtid && gtid_server_ordinal(p->src, file, pos, &end->ordinal, p->err,
                                        sizeof p->err) < 0) {
            db_snapshot_end(p->src);
            return -1;
        }
    }
    return 0;
}

void pipeline_snapshot_end(struct pipeline *p) { db_snapshot_end(p->src); }

/* the number of a binlog file name (mysql-bin.000042 → 42) */
static unsigned long long binlog_file_no(const char *f) {
    const char *dot = strrchr(f, '.');
    return dot ? strtoull(dot + 1, NULL, 10) : 0;
}

int pipeline_snapshot_at(struct pipeline *p, const struct changeset *cs, const char *alias,
                         const char *unit, const bl_pos *at, int wait_ms, bool read_behind,
                         bl_pos *snap) {
    unsigned long long want = binlog_file_no(at->file);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(snap, 0, sizeof *snap);
    bool asked = false;
    for (int tries = 0;; tries++) {
        char file[BL_FILE_MAX];
        unsigned long long pos = 0;
        /* the tables its documents are read from opened first (read_view.h) */
        int s = pipeline_read_view(p, cs, alias, unit, file, sizeof file, &pos);
        if (s <= 0) return s;
        snprintf(snap->file, sizeof snap->file, "%s", file);
        snap->pos = pos;
        unsigned long long have = binlog_file_no(file);
        bool behind = have < want || (have == want && pos < at->pos);
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long waited = (now.tv_sec - t0.tv_sec) * 1000LL + (now.tv_nsec - t0.tv_nsec) / 1000000;
        /* lossless semi-sync holds a commit binlogged (and sent to readers
         * of the binlog) until a replica acknowledges it, up to its timeout:
         * then that long is waited for, asked once the wait runs out */
        if (behind && wait_ms > 0 && waited >= wait_ms && !asked) {
            asked = true;
            long long hold = db_commit_hold_ms(p->src);
            if (hold > 0 && hold + 1000 > wait_ms) {
                log_info("read", "the source's snapshot is still behind %s:%llu after %lld ms: "
                         "it holds commits up to %lld ms after their binlog write (semi-sync, "
                         "wait point AFTER_SYNC), so the reads wait for up to that", at->file,
                         (unsigned long long)at->pos, waited, hold);
                wait_ms = (int)(hold + 1000 < INT_MAX ? hold + 1000 : INT_MAX);
            }
        }
        if (!behind || waited >= wait_ms) {
            if (!behind || !read_behind) pipeline_version_check(at->file, at->pos, file, pos);
            return behind ? 2 : 1;
        }
        db_snapshot_end(p->src);
        /* a commit in progress: visible within microseconds, mostly; one
         * held longer is asked about less often (each try is a snapshot) */
        struct timespec ts = {0, tries < 20 ? 100000 : waited < 100 ? 1000000 : 20000000};
        nanosleep(&ts, NULL);
    }
}

void pipeline_version_check(const char *before_file, unsigned long long before_pos,
                            const char *snap_file, unsigned long long snap_pos) {
    unsigned long long bf = binlog_file_no(before_file), sf = binlog_file_no(snap_file);
    SS_INVARIANT(bf < sf || (bf == sf && before_pos <= snap_pos), "I2",
                 "the binlog position read before a snapshot (%s:%llu) is after the "
                 "snapshot's (%s:%llu)", before_file, before_pos, snap_file, snap_pos);
}
