/* daemon: `searchsync run` — incremental sync of one source.
 *
 * The walk of one change (docs/walkthrough.md):
 *
 *   binlog event ──bl_reader──► decoded row ──on_row──► router_add (seeds the
 *   join paths with the before and after images)
 *   ... COMMIT ──on_commit──► router_flush (affected documents, batched IN
 *   queries) ──► docbuild (re-query: whole documents from MySQL, batched) ──►
 *   deliver_submit (version = epoch | binlog file | commit position) ──►
 *   deliver_txn_end(position) ──► engine acknowledges ──► low-water mark ──►
 *   offsets table (checkpoint) ──► on restart the reader resumes there.
 *
 * Documents are rebuilt from MySQL at commit time (seed 004's strong
 * consistency), so the version of the commit always carries data at least as
 * new as that commit: replays and retries cannot put older data over newer.
 * One document is built once per transaction however many of its rows changed.
 *
 * Start-up: configuration, metadata schema (migrated), the mapping of this
 * source, the engine (detected; an index missing is created as <alias>_v1
 * behind its alias), delivery, then the reader from the saved checkpoint (or
 * [source] start). SIGTERM/SIGINT stop the reader at a transaction boundary,
 * drain delivery (bounded by drain_timeout_ms) and save the checkpoint.
 *
 * Three ways a document changes (docs/mapping.md "How changes reach documents"):
 *   re-query    the whole document is rebuilt from MySQL (the default);
 *   area-update a nested relation marked area_update: the changed elements are
 *               rebuilt from their own rows (no sibling is read) and a painless
 *               script replaces, adds or removes just them (one script per
 *               document and transaction, all its elements at once;
 *               sync/area_update.c);
 *   row-image   a root table in mode row-image (no relations): the document is
 *               the binlog's after image, no query at all.
 * Within a transaction a document rebuilt whole takes no element scripts.
 *
 * Changes of delay-effect tables become change snapshots for the delayed run
 * (sync/change_snapshots.c). Parent/child documents a delete or a moved
 * parent leaves under an old routing are found and deleted
 * (sync/child_copies.c).
 *
 * The mapping is reloaded from the metadata tables when it changes (checked
 * every reload_interval_ms between transactions): a valid edit takes effect at
 * the next transaction, an invalid one is logged and the running mapping kept.
 *
 * Reindexes (sync/reindex.c, sync/reindex_runner.c; the daemon's side in
 * sync/daemon_builds.c): an index config without a version gets its first
 * one through a reindex requested at start-up; while a version is built,
 * every change also goes to it (dual writes, switched on between two
 * transactions before its jobs start), and the jobs run in background
 * threads of this process.
 *
 * The state these files share is struct daemon (sync/daemon.h).
 *
 * The admin HTTP server (web/http_server.c) starts once the mapping is
 * checked, gets the engine client and delivery when they exist, and stops
 * before they are freed; its handlers use connections of their own.
 *
 * Not yet here: ZooKeeper (several nodes). */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binlog/binlog.h"
#include "binlog/reader.h"
#include "commands.h"
#include "config.h"
#include "daemon.h"
#include "db.h"
#include "deliver/deliver.h"
#include "deliver/store.h"
#include "docbuild.h"
#include "index_mapping.h"
#include "json_exact.h"
#include "log.h"
#include "mapping.h"
#include "reindex.h"
#include "router.h"
#include "sbuf.h"
#include "search/search.h"
#include "search/wait.h"
#include "strset.h"
#include "web/http_server.h"

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

/* ---------- checkpoint (called from delivery's checkpoint thread) ---------- */
static int save_checkpoint(void *ud, const char *position, uint64_t seq) {
    struct daemon *dm = ud;
    char err[512];
    /* called once an interval while saves fail (delivery's checkpoint
     * thread; a drain's last save from the main thread, one at a time): the
     * reason is said at the first failure, then once in 60; delivery says
     * every failure of the drain's save */
    if (db_ensure(&dm->ckpt, &dm->metap, err, sizeof err) < 0 ||
        offsets_save(dm->ckpt, dm->cfg->source.name, position, seq, err, sizeof err) < 0) {
        if (dm->ckpt_failed++ % 60 == 0)
            log_warn("run", "checkpoint not saved (will retry): %s", err);
        return -1;
    }
    dm->ckpt_failed = 0;
    return 0;
}

/* ---------- row values for the router ---------- */
const char *daemon_image_value(void *img, const char *column, size_t *len, bool *absent) {
    struct image *im = img;
    for (uint32_t i = 0; i < im->t->ncols; i++) {
        const bl_column *c = &im->t->cols[i];
        if (!c->name || strcmp(c->name, column) != 0) continue;
        const bl_cell *cell = &im->cells[i];
        *absent = cell->state == BL_ABSENT;
        if (cell->state != BL_VALUE) return NULL;
        struct daemon *dm = im->dm;
        sbuf_reset(&dm->val);
        jsonw w;
        jw_init(&w, &dm->val);
        bl_value_json(&dm->v, &w, c, cell, NULL);
        if (dm->val.len && dm->val.data[0] == '"') { /* a string: its text, unescaped */
            cJSON *j = json_exact_parse(dm->val.data, dm->val.len);
            sbuf_reset(&dm->text);
            if (j && cJSON_IsString(j)) sbuf_adds(&dm->text, j->valuestring);
            cJSON_Delete(j);
            *len = dm->text.len;
            return dm->text.data ? dm->text.data : "";
        }
        *len = dm->val.len;
        return dm->val.data;
    }
    *absent = true;
    return NULL;
}

/* ---------- the binlog sink ---------- */
/* The metadata's index_configs table, when the metadata lives on the source
 * server: a reindex request commits a change of it, and the daemon, which
 * reads that binlog anyway, starts the build at once instead of at its next
 * [reindex] poll_interval_ms poll. */
static bool is_build_signal(const struct daemon *dm, const char *db, const char *table) {
    return !strcmp(table, "index_configs") && !strcmp(db, dm->cfg->metadata.database);
}

/* The metadata's offsets table, when the metadata lives on the source
 * server: every checkpoint save (this daemon's, or another's sharing the
 * schema) is a transaction of it that the daemon reads back. A transaction
 * of nothing else ends quietly (deliver_txn_end_quiet): saving the position
 * after it would write the next such transaction, every interval, forever. */
static bool is_checkpoint_save(const struct daemon *dm, const char *db, const char *table) {
    return !strcmp(table, "offsets") && !strcmp(db, dm->cfg->metadata.database);
}

static bool want_table(void *ctx, const char *db, const char *table) {
    struct daemon *dm = ctx;
    return router_wants(dm->router, db, table) || is_build_signal(dm, db, table) ||
           is_checkpoint_save(dm, db, table);
}

static bool row_image_index(const struct mp_index *ix) {
    return ix->ntables && ix->tables[0].mode == MP_ROWIMAGE && !ix->tables[0].nrelations;
}

static void rowdoc_push(struct daemon *dm, size_t index, const char *id, size_t idlen,
                        sbuf *body) {
    if (dm->nrdocs == dm->caprdocs) {
        dm->caprdocs = dm->caprdocs ? dm->caprdocs * 2 : 64;
        dm->rdocs = xrealloc(dm->rdocs, dm->caprdocs * sizeof *dm->rdocs);
    }
    struct rowdoc *r = &dm->rdocs[dm->nrdocs++];
    r->index = index;
    r->id = xstrndup(id, idlen);
    r->body = body ? xstrndup(body->data, body->len) : NULL;
    r->len = body ? body->len : 0;
}

/* A row of a row-image root table: its document is the after image (the
 * mapping's columns, formatted as the builder would; DESIGN.md §4.2), or a
 * delete. A key change deletes the old id. The last image of a document in
 * the transaction wins (see submit_rowdocs). */
static int row_image_doc(struct daemon *dm, size_t index, const bl_row *row) {
    const struct mp_index *ix = &dm->m.indices[index];
    const struct mp_table *t = &ix->tables[0];
    const struct mp_column *key = key_of(t);
    const bl_table *bt = row->table;
    char *old_id = NULL;
    size_t len = 0;
    bool absent = false;
    if (row->before) {
        struct image im = {dm, bt, row->before};
        const char *v = daemon_image_value(&im, key->name, &len, &absent);
        if (v) old_id = xstrndup(v, len);
    }
    if (!row->after) {
        if (old_id) rowdoc_push(dm, index, old_id, strlen(old_id), NULL);
        free(old_id);
        return 0;
    }
    sbuf body = SBUF_INIT;
    jsonw w;
    jw_init(&w, &body);
    jw_obj_open(&w);
    for (size_t c = 0; c < t->ncolumns; c++) {
        const struct mp_column *mc = &t->columns[c];
        uint32_t i = 0;
        while (i < bt->ncols && (!bt->cols[i].name || strcmp(bt->cols[i].name, mc->name))) i++;
        if (i == bt->ncols || row->after[i].state == BL_ABSENT) {
            sbuf_free(&body);
            free(old_id);
            return errf(dm->err, sizeof dm->err,
                        "%s.%s is in mode row-image but column %s is not in the binlog's row "
                        "image: set binlog_row_image=FULL on the source (or use mode re-query)",
                        bt->db, bt->name, mc->name);
        }
        jw_key(&w, mc->name);
        bl_value_json(&dm->v, &w, &bt->cols[i], &row->after[i], NULL);
    }
    if (has_children(ix)) {
        jw_key(&w, ix->join_field ? ix->join_field : "relation");
        jw_obj_open(&w);
        jw_key(&w, "name");
        jw_str(&w, t->join_name ? t->join_name : t->table);
        jw_obj_close(&w);
    }
    jw_obj_close(&w);
    struct image im = {dm, bt, row->after};
    const char *v = daemon_image_value(&im, key->name, &len, &absent);
    int rc = 0;
    if (!v) {
        rc = errf(dm->err, sizeof dm->err, "%s.%s: a row without a value in key column %s",
                  bt->db, bt->name, key->name);
    } else {
        char *id = xstrndup(v, len);
        if (old_id && strcmp(old_id, id)) rowdoc_push(dm, index, old_id, strlen(old_id), NULL);
        rowdoc_push(dm, index, id, strlen(id), &body);
        free(id);
    }
    sbuf_free(&body);
    free(old_id);
    return rc;
}

static int on_row(void *ctx, const bl_row *row) {
    struct daemon *dm = ctx;
    if (is_checkpoint_save(dm, row->table->db, row->table->name) &&
        !router_wants(dm->router, row->table->db, row->table->name)) {
        dm->txn_saves = true;
        return 0;
    }
    dm->txn_other_rows = true;
    if (is_build_signal(dm, row->table->db, row->table->name)) {
        dm->builds_due_ms = 0; /* looked for at this transaction's commit */
        return 0;
    }
    struct image before = {dm, row->table, row->before}, after = {dm, row->table, row->after};
    dm->in_txn = true;
    if (router_delayed(dm->router, row->table->db, row->table->name))
        return snapshots_add_row(dm, row);
    for (size_t i = 0; i < dm->m.nindices; i++) {
        const struct mp_index *ix = &dm->m.indices[i];
        if (row_image_index(ix) && !strcmp(ix->tables[0].db, row->table->db) &&
            !strcmp(ix->tables[0].table, row->table->name) && row_image_doc(dm, i, row) != 0)
            return -1;
    }
    if (!dm->copies_may_move) copies_watch_row(dm, row);
    if (router_add(dm->router, row->table->db, row->table->name, daemon_image_value,
                   row->before ? &before : NULL, row->after ? &after : NULL, dm->err,
                   sizeof dm->err) != 0)
        return -1;
    return 0;
}

int daemon_collect(void *ctx, size_t index, size_t table, const char *key, size_t len) {
    struct daemon *dm = ctx;
    if (table == 0 && row_image_index(&dm->m.indices[index])) return 0; /* on_row built it */
    struct pending *p = NULL;
    for (size_t i = 0; i < dm->npend; i++)
        if (dm->pend[i].index == index && dm->pend[i].table == table) p = &dm->pend[i];
    if (!p) {
        dm->pend = xrealloc(dm->pend, (dm->npend + 1) * sizeof *dm->pend);
        p = &dm->pend[dm->npend++];
        memset(p, 0, sizeof *p);
        p->index = index, p->table = table;
    }
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        p->keys = xrealloc(p->keys, p->cap * sizeof *p->keys);
    }
    p->keys[p->n++] = xstrndup(key, len);
    return 0;
}

static void free_rdocs(struct daemon *dm) {
    for (size_t i = 0; i < dm->nrdocs; i++) free(dm->rdocs[i].id), free(dm->rdocs[i].body);
    dm->nrdocs = 0;
}

static uint32_t file_number(const char *file) {
    const char *dot = strrchr(file, '.');
    return dot ? (uint32_t)strtoul(dot + 1, NULL, 10) : 0;
}

/* One change of index config `ix`: to the live version behind the alias (if
 * there is one yet) and to a version being built (dual writes, seed 004's
 * floating changes). */
int daemon_submit(struct daemon *dm, const struct mp_index *ix, const struct change *c) {
    if (ix->current_version > 0) {
        /* to the alias only: if someone deleted it, the writes fail (dead
         * letters) rather than auto-create a concrete index of that name */
        struct change c1 = *c;
        c1.require_alias = true;
        /* queued by the physical index the alias points at, with the dual
         * writes to it by name once it is a switched build's (one FIFO) */
        char phys[600];
        snprintf(phys, sizeof phys, "%s_v%u", ix->alias, ix->current_version);
        c1.target = phys;
        if (deliver_submit(dm->d, &c1) != DELIVER_OK) return -1;
    }
    const struct build *b = builds_find(dm, ix->alias);
    if (b) {
        struct change c2 = *c;
        c2.index = b->phys;
        c2.target = b->phys;
        if (deliver_submit(dm->d, &c2) != DELIVER_OK) return -1;
    }
    return 0;
}

/* Delivery's dead letters go to the dead-letter table, except a dual write
 * to a build's index (written by name, never through an alias) that the
 * engine no longer has: that build was cancelled or failed and its index
 * deleted while the write was in flight, so there is nothing to repair. */
static int live_dead_letter(void *ud, const struct dead_letter *dl) {
    struct daemon *dm = ud;
    if (!dl->require_alias && dl->status == 404 && dl->error &&
        strstr(dl->error, "index_not_found_exception")) {
        log_info("run", "dropped a write to %s (id %s): the index of that cancelled or failed "
                 "build is gone", dl->index, dl->doc_id);
        return 1;
    }
    return dl_store_put(dm->dls, dl);
}

static int submit_doc(void *ctx, const char *id, const char *routing, const char *body,
                      size_t len) {
    struct daemon *dm = ctx;
    const struct mp_index *ix = &dm->m.indices[dm->cur_index];
    struct change c = {.index = ix->alias, .doc_id = id, .routing = routing,
                       .version = dm->version, .op = CHANGE_INDEX, .body = body, .body_len = len};
    dm->docs++;
    if (dm->child_build) copies_note(dm, id, routing, false);
    return daemon_submit(dm, ix, &c);
}

static int submit_delete(void *ctx, const char *id) {
    struct daemon *dm = ctx;
    if (dm->child_build) { /* its routing is known only to the engine: see copies_fix */
        copies_note(dm, id, NULL, true);
        return 0;
    }
    const struct mp_index *ix = &dm->m.indices[dm->cur_index];
    struct change c = {.index = ix->alias, .doc_id = id, .version = dm->version,
                       .op = CHANGE_DELETE};
    dm->deletes++;
    return daemon_submit(dm, ix, &c);
}

static int on_commit_read(struct daemon *dm, const bl_commit *cm);
/* This transaction's row-image documents: the last image of each wins. */
static int submit_rowdocs(struct daemon *dm, const bl_commit *cm) {
    struct strset seen = {0};
    sbuf k = SBUF_INIT;
    int rc = 0;
    for (size_t i = dm->nrdocs; i-- > 0 && rc == 0;) {
        struct rowdoc *r = &dm->rdocs[i];
        sbuf_reset(&k);
        sbuf_printf(&k, "%zu\x1f%s", r->index, r->id);
        if (!strset_add(&seen, k.data, k.len)) continue;
        const struct mp_index *ix = &dm->m.indices[r->index];
        struct change c = {.index = ix->alias, .doc_id = r->id,
                           .version = daemon_txn_version(dm, ix, cm),
                           .op = r->body ? CHANGE_INDEX : CHANGE_DELETE, .body = r->body,
                           .body_len = r->len};
        if (r->body) dm->docs++;
        else dm->deletes++;
        if (!c.version || daemon_submit(dm, ix, &c) != 0) rc = -1;
    }
    strset_clear(&seen);
    sbuf_free(&k);
    free_rdocs(dm);
    return rc;
}

uint64_t daemon_txn_version(struct daemon *dm, const struct mp_index *ix, const bl_commit *cm) {
    uint64_t v = version_make(ix->epoch, file_number(cm->end.file), cm->end.pos);
    if (!v)
        snprintf(dm->err, sizeof dm->err, "position %s:%llu does not fit a version",
                 cm->end.file, (unsigned long long)cm->end.pos);
    return v;
}

/* ---------- the mapping: load, validate, reload ---------- */

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What a reload compares: the canonical file and each index's epoch (state
 * and version are written by the daemon itself). */
static void mapping_signature(const struct mapping *m, sbuf *out) {
    sbuf_reset(out);
    mapping_write(m, out);
    for (size_t i = 0; i < m->nindices; i++)
        sbuf_printf(out, "\n%s epoch=%u", m->indices[i].alias, m->indices[i].epoch);
}

/* Load this source's mapping from the metadata tables and validate it
 * against the source's schema. -1 with dm->err; *invalid set when the mapping
 * itself is the problem (not a server). */
static int load_mapping(struct daemon *dm, struct mapping *out, sbuf *sig, bool *invalid) {
    *invalid = false;
    if (db_ensure(&dm->meta, &dm->metap, dm->err, sizeof dm->err) < 0 ||
        mapping_db_load(dm->meta, dm->cfg->source.name, out, dm->err, sizeof dm->err) < 0)
        return -1;
    mapping_signature(out, sig); /* as stored, before validation fills in defaults */
    if (db_ensure(&dm->src, &dm->srcp, dm->err, sizeof dm->err) < 0) return -1;
    int bad = mapping_check_source(dm->src, out, dm->err, sizeof dm->err);
    *invalid = bad > 0;
    return bad ? -1 : 0;
}

/* Between transactions, every reload_interval_ms: if the mapping in the
 * metadata tables changed, validate it and switch to it (new indices are
 * created). A mapping that fails validation, or a server that fails, leaves
 * the running mapping in place; the problem is logged once per edit. */
static int maybe_reload(struct daemon *dm) {
    int64_t now = now_ms();
    if (now >= dm->builds_due_ms && now < dm->reload_due_ms) {
        /* queued reindexes are looked for (one indexed query) between
         * transactions, and on the source's heartbeats when idle: a build
         * starts within [reindex] poll_interval_ms, or at once when the
         * request's transaction is in the binlog read (is_build_signal) */
        dm->builds_due_ms = now + dm->cfg->reindex.poll_interval_ms;
        builds_poll(dm);
        return 0;
    }
    if (now < dm->reload_due_ms) return 0;
    dm->builds_due_ms = now + dm->cfg->reindex.poll_interval_ms;
    dm->reload_due_ms = now + dm->cfg->metadata.reload_interval_ms;
    struct mapping m2 = {0};
    sbuf sig = SBUF_INIT;
    char sum[sizeof dm->mapping_sum] = "", e2[256];
    /* set once what the tables hold is running, refused, or applied here;
     * not when applying failed for a reason that may pass */
    bool settled = false;
    if (db_ensure(&dm->meta, &dm->metap, dm->err, sizeof dm->err) < 0) {
        log_warn("run", "looking for mapping edits: %s (will try again)", dm->err);
        goto out;
    }
    /* one CHECKSUM TABLE instead of loading the whole mapping (a query per
     * table and relation) when nothing was edited; read before the load, so
     * an edit made during it shows at the next look */
    if (mapping_db_checksum(dm->meta, sum, sizeof sum, e2, sizeof e2) < 0) {
        sum[0] = '\0';
        if (!dm->sum_warned)
            log_warn("run", "%s; mapping edits are looked for by reading the whole mapping "
                     "every [metadata] reload_interval_ms instead (grant SELECT on the "
                     "metadata tables to make it cheap)", e2);
        dm->sum_warned = true;
    }
    if (sum[0] && !strcmp(sum, dm->mapping_sum)) goto out;
    if (mapping_db_load(dm->meta, dm->cfg->source.name, &m2, dm->err, sizeof dm->err) < 0) {
        log_warn("run", "looking for mapping edits: %s (will try again)", dm->err);
        goto out;
    }
    mapping_signature(&m2, &sig);
    settled = true;
    if (sig.len == dm->sig.len && !memcmp(sig.data, dm->sig.data, sig.len)) goto out;
    if (dm->bad_sig.len == sig.len && !memcmp(sig.data, dm->bad_sig.data, sig.len)) goto out;
    mapping_free(&m2);
    bool invalid = false;
    int ok = load_mapping(dm, &m2, &sig, &invalid) == 0;
    if (ok && m2.nindices == 0) {
        ok = 0, invalid = true;
        snprintf(dm->err, sizeof dm->err, "it has no index configs for source %s",
                 dm->cfg->source.name);
    }
    for (size_t i = 0; ok && i < m2.nindices; i++)
        ok = builds_ensure_index(dm, dm->k, &m2.indices[i]) == 0;
    if (!ok) {
        for (char *nl = strchr(dm->err, '\n'); nl; nl = strchr(nl, '\n')) *nl = ' ';
        log_error("run", "the edited mapping is not applied (the running one stays): %s",
                  dm->err);
        if (invalid) { /* say it once per edit */
            sbuf_reset(&dm->bad_sig);
            sbuf_add(&dm->bad_sig, sig.data, sig.len);
        }
        settled = invalid;
        goto out;
    }
    router_free(dm->router);
    mapping_free(&dm->m);
    dm->m = m2;
    memset(&m2, 0, sizeof m2);
    dm->router = router_new(&dm->m);
    router_set_area(dm->router, area_collect);
    sbuf_reset(&dm->sig);
    sbuf_add(&dm->sig, sig.data, sig.len);
    dm->reloads++;
    log_info("run", "mapping reloaded: %zu index config(s); it applies from the next transaction",
             dm->m.nindices);
out:
    if (settled) snprintf(dm->mapping_sum, sizeof dm->mapping_sum, "%s", sum);
    dm->err[0] = '\0';
    mapping_free(&m2);
    sbuf_free(&sig);
    builds_poll(dm);
    return 0;
}

/* ---------- documents a script did not find ---------- */

/* Delivery's helpers: an element script found no document (never indexed,
 * or deleted meanwhile). Rebuild it whole with the next transaction. */
static void on_missing(void *ud, const char *index, const char *doc_id, const char *routing,
                       uint64_t version) {
    (void)version;
    struct daemon *dm = ud;
    if (routing) return; /* element scripts go to root documents only */
    sbuf k = SBUF_INIT;
    sbuf_printf(&k, "%s\x1f%s", index, doc_id);
    pthread_mutex_lock(&dm->miss_mu);
    if (dm->nmissing == dm->capmissing) {
        dm->capmissing = dm->capmissing ? dm->capmissing * 2 : 16;
        dm->missing = xrealloc(dm->missing, dm->capmissing * sizeof *dm->missing);
    }
    dm->missing[dm->nmissing++] = k.data;
    pthread_mutex_unlock(&dm->miss_mu);
}

/* Rebuild the documents scripts did not find, as part of the transaction
 * being committed (its version: the content is read now, at least as new). */
static bool has_missing(struct daemon *dm) {
    pthread_mutex_lock(&dm->miss_mu);
    bool any = dm->nmissing > 0;
    pthread_mutex_unlock(&dm->miss_mu);
    return any;
}

static int rebuild_missing(struct daemon *dm, const bl_commit *cm) {
    pthread_mutex_lock(&dm->miss_mu);
    char **miss = dm->missing;
    size_t n = dm->nmissing;
    dm->missing = NULL, dm->nmissing = dm->capmissing = 0;
    pthread_mutex_unlock(&dm->miss_mu);
    int rc = 0;
    size_t rebuilt = 0;
    const char **keys = xcalloc(n ? n : 1, sizeof *keys);
    for (size_t x = 0; x < dm->m.nindices && rc == 0; x++) { /* one batched build per index */
        const struct mp_index *ix = &dm->m.indices[x];
        size_t nk = 0;
        for (size_t i = 0; i < n; i++) {
            char *sep = strchr(miss[i], '\x1f');
            if ((size_t)(sep - miss[i]) == strlen(ix->alias) &&
                !memcmp(miss[i], ix->alias, (size_t)(sep - miss[i])))
                keys[nk++] = sep + 1;
        }
        if (!nk) continue;
        dm->cur_index = x;
        dm->version = daemon_txn_version(dm, ix, cm);
        struct docbuild b;
        docbuild_init(&b, dm->src, ix);
        struct docbuild_sink sink = {submit_doc, submit_delete, dm};
        rc = dm->version ? docbuild_roots(&b, keys, nk, &sink, dm->err, sizeof dm->err) : -1;
        rebuilt += nk;
    }
    free(keys);
    if (rc == 0 && rebuilt)
        log_info("run", "%zu document(s) were not in the engine for an element update: rebuilt "
                        "whole", rebuilt);
    if (rc != 0) { /* kept for the next attempt (all of them: rebuilding twice is harmless) */
        pthread_mutex_lock(&dm->miss_mu); /* with those that came meanwhile */
        miss = xrealloc(miss, (n + dm->nmissing + 1) * sizeof *miss);
        for (size_t i = 0; i < dm->nmissing; i++) miss[n + i] = dm->missing[i];
        free(dm->missing);
        dm->nmissing += n;
        dm->capmissing = dm->nmissing + 1;
        dm->missing = miss;
        pthread_mutex_unlock(&dm->miss_mu);
        return rc;
    }
    for (size_t i = 0; i < n; i++) free(miss[i]);
    free(miss);
    return rc;
}

static unsigned long file_seq(const char *file) {
    const char *dot = strrchr(file, '.');
    return dot ? strtoul(dot + 1, NULL, 10) : 0;
}

/* Open a read snapshot of the source that holds this transaction. A
 * transaction reaches the binlog (and so this reader) a moment before its
 * rows are visible to other sessions; a document re-read in that moment
 * would carry the transaction's version with the rows from before it, and
 * win over nothing later. So the documents are read in a snapshot whose
 * binlog position (MariaDB's Binlog_snapshot_position) is at or past the
 * transaction's end, taken again until it is. Without such a server
 * (MySQL), reads go on outside a snapshot, as they would anyway. 0 ok,
 * -1 error (dm->err). */
static int read_snapshot_begin(struct daemon *dm, const bl_commit *cm) {
    if (dm->snap == 0) return 0;
    if (!router_pending(dm->router) && !has_missing(dm)) {
        dm->in_snap = false; /* nothing to read (row images only, or nothing) */
        return 0;
    }
    unsigned long want_file = file_seq(cm->end.file);
    for (int tries = 0;; tries++) {
        char file[BL_FILE_MAX];
        unsigned long long pos = 0;
        int s = db_snapshot_begin(dm->src, file, sizeof file, &pos, dm->err, sizeof dm->err);
        if (s < 0) return -1;
        if (s == 0) {
            db_snapshot_end(dm->src);
            dm->snap = 0;
            dm->in_snap = false;
            log_warn("run", "the source does not report the binlog position of a consistent "
                     "snapshot (Binlog_snapshot_position: MariaDB and Percona Server do); "
                     "documents are re-read without waiting for their transaction to be visible");
            return 0;
        }
        dm->snap = 1;
        dm->in_snap = true;
        unsigned long have_file = file_seq(file);
        if (have_file > want_file || (have_file == want_file && pos >= cm->end.pos)) return 0;
        if (tries == 5000) { /* about 5 s: not a commit in progress */
            log_warn("run", "the source's snapshot is at %s:%llu, behind the transaction read "
                     "from its binlog (%s:%llu) after 5 s; reading it anyway (is [source] the "
                     "server whose binlog is read?)", file, pos, cm->end.file,
                     (unsigned long long)cm->end.pos);
            return 0;
        }
        db_snapshot_end(dm->src);
        dm->in_snap = false;
        struct timespec ts = {0, tries < 20 ? 100000 : 1000000};
        nanosleep(&ts, NULL);
    }
}

/* The source connection for a transaction's reads. A restarting server
 * refuses connections for a moment after the binlog reader may already have
 * read a transaction from it: that is waited out (backing off to 2 s, said
 * once a minute) rather than a reason to stop; nothing moves on meanwhile.
 * Only a stop request ends the wait. */
static int src_ensure(struct daemon *dm) {
    long delay_ms = 100;
    int attempts = 0;
    while (db_ensure(&dm->src, &dm->srcp, dm->err, sizeof dm->err) < 0) {
        if (stop_requested) return -1;
        if (attempts++ % 30 == 0)
            log_warn("run", "%s; waiting for the source (the transaction read from its binlog "
                     "is not lost)", dm->err);
        struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        delay_ms = delay_ms * 2 > 2000 ? 2000 : delay_ms * 2;
    }
    if (attempts) log_info("run", "the source is reachable again after %d attempt(s)", attempts);
    return 0;
}

#define REPLAYS_MAX 10 /* a transaction read again after lost connections, in a row */

/* Forget what a failed transaction had gathered (its rows are read again). */
static void txn_discard(struct daemon *dm) {
    for (size_t i = 0; i < dm->npend; i++) {
        for (size_t k = 0; k < dm->pend[i].n; k++) free(dm->pend[i].keys[k]);
        free(dm->pend[i].keys);
    }
    free(dm->pend);
    dm->pend = NULL, dm->npend = 0;
    area_free(dm);
    free_rdocs(dm);
    copies_free(dm);
    sbuf_reset(&dm->snaps);
    dm->in_txn = false;
    dm->txn_saves = dm->txn_other_rows = false;
    dm->copies_may_move = false;
    dm->child_build = false;
}

static int on_commit(void *ctx, const bl_commit *cm) {
    struct daemon *dm = ctx;
    if (src_ensure(dm) < 0) return -1;
    bool uses_meta = dm->snaps.len > 0; /* the only metadata write of on_commit_read */
    int rc = read_snapshot_begin(dm, cm);
    if (rc == 0) rc = on_commit_read(dm, cm);
    /* a connection lost midway (a restart, a KILL) is no reason to stop:
     * run() reads the transaction again (replay_transaction). A statement
     * that drops its connection every time (one running past
     * read_timeout_ms, a packet over max_allowed_packet) is not an outage:
     * after REPLAYS_MAX attempts in a row the daemon stops with its error. */
    if (rc != 0 && !stop_requested &&
        (db_conn_lost(dm->src) || (uses_meta && db_conn_lost(dm->meta)))) {
        if (++dm->replays <= REPLAYS_MAX)
            dm->replay = true;
        else
            errf(dm->err + strlen(dm->err), sizeof dm->err - strlen(dm->err),
                 " (the connection was lost at this transaction %d times in a row, the server "
                 "answering in between: not an outage. A statement running longer than [source] "
                 "read_timeout_ms? Nothing is lost: the transaction is read again at the next "
                 "start)", REPLAYS_MAX + 1);
    }
    if (dm->in_snap) db_snapshot_end(dm->src);
    dm->in_snap = false;
    if (rc != 0) return -1;
    dm->replays = 0;
    char pos[BL_FILE_MAX + 64];
    snprintf(pos, sizeof pos, "%s:%llu", cm->end.file, (unsigned long long)cm->end.pos);
    dm->last_txn = dm->txn_saves && !dm->txn_other_rows ? deliver_txn_end_quiet(dm->d, pos)
                                                         : deliver_txn_end(dm->d, pos);
    dm->txn_saves = dm->txn_other_rows = false;
    dm->txns++;
    dm->in_txn = false;
    dm->copies_may_move = false;
    dm->last_commit = *cm;
    dm->last_commit.gtid_executed = NULL;
    dm->have_last = true;
    return maybe_reload(dm);
}

/* on_commit's reads and submits, inside the transaction's read snapshot */
static int on_commit_read(struct daemon *dm, const bl_commit *cm) {
    int rc = 0;
    if (dm->snaps.len && (db_ensure(&dm->meta, &dm->metap, dm->err, sizeof dm->err) < 0 ||
                          snapshots_write(dm) < 0))
        return -1;
    if (router_flush(dm->router, dm->src, daemon_collect, dm, dm->err, sizeof dm->err) != 0)
        return -1;
    for (size_t i = 0; i < dm->npend && rc == 0; i++) {
        struct pending *p = &dm->pend[i];
        const struct mp_index *ix = &dm->m.indices[p->index];
        dm->cur_index = p->index;
        dm->version = daemon_txn_version(dm, ix, cm);
        if (!dm->version) {
            rc = -1;
            break;
        }
        struct docbuild b;
        docbuild_init(&b, dm->src, ix);
        struct docbuild_sink sink = {submit_doc, submit_delete, dm};
        if (p->table == 0)
            rc = docbuild_roots(&b, (const char *const *)p->keys, p->n, &sink, dm->err,
                                sizeof dm->err);
        else {
            dm->child_build = true;
            rc = docbuild_children(&b, p->table, (const char *const *)p->keys, p->n, &sink,
                                   dm->err, sizeof dm->err);
            dm->child_build = false;
            if (rc == 0 && dm->copies_may_move) rc = copies_fix(dm, ix);
            copies_free(dm);
        }
    }
    struct strset full = {0}; /* "index\x1fkey" of root documents rebuilt whole */
    sbuf fk = SBUF_INIT;
    for (size_t i = 0; i < dm->npend; i++) {
        for (size_t k = 0; k < dm->pend[i].n; k++) {
            if (dm->pend[i].table == 0 && dm->naops) {
                sbuf_reset(&fk);
                sbuf_printf(&fk, "%zu\x1f%s", dm->pend[i].index, dm->pend[i].keys[k]);
                strset_add(&full, fk.data, fk.len);
            }
            free(dm->pend[i].keys[k]);
        }
        free(dm->pend[i].keys);
    }
    sbuf_free(&fk);
    free(dm->pend);
    dm->pend = NULL, dm->npend = 0;
    if (rc == 0 && dm->naops) rc = area_submit(dm, &full, cm);
    strset_clear(&full);
    if (rc == 0 && dm->nrdocs) rc = submit_rowdocs(dm, cm);
    area_free(dm);
    free_rdocs(dm);
    if (rc == 0 && has_missing(dm)) rc = rebuild_missing(dm, cm);
    return rc;
}

static int on_heartbeat(void *ctx, const bl_pos *at) {
    (void)at;
    struct daemon *dm = ctx;
    if (dm->in_txn) return 0;
    if (dm->have_last && has_missing(dm)) { /* idle: rebuild them on their own */
        if (src_ensure(dm) < 0) return -1;
        if (rebuild_missing(dm, &dm->last_commit) < 0) {
            if (stop_requested || !db_conn_lost(dm->src)) return -1;
            log_warn("run", "%s; tried again at the next heartbeat", dm->err); /* kept */
            dm->err[0] = '\0';
            return maybe_reload(dm);
        }
        char pos[BL_FILE_MAX + 64];
        snprintf(pos, sizeof pos, "%s:%llu", dm->last_commit.end.file,
                 (unsigned long long)dm->last_commit.end.pos);
        dm->last_txn = deliver_txn_end(dm->d, pos);
    }
    return maybe_reload(dm);
}

/* A transaction whose reads lost the source or the metadata server midway
 * (a restart, a killed connection) is read again from its start, as a
 * restart of the daemon would read it, without one: once the source answers
 * again the reader reopens at the end of the last transaction handed to
 * delivery (the metadata connection is re-made where a transaction uses
 * it). Documents the failed attempt had already submitted are submitted
 * again with the same versions (a version is its commit's position), so
 * nothing is lost and nothing older wins. 0, or -1 (a stop request, or the
 * reader cannot start again: its error in dm->err). */
static int replay_transaction(struct daemon *dm, bl_reader *r, bl_reader_opts *ro,
                              const bl_sink *sink, char file[BL_FILE_MAX]) {
    bl_pos from = dm->have_last ? dm->last_commit.end : r->start;
    log_warn("run", "%s; a connection was lost in the middle of the transaction's reads: it "
             "is read again from %s:%llu once the source answers (nothing is lost)", dm->err,
             from.file, (unsigned long long)from.pos);
    dm->replay = false;
    dm->err[0] = '\0';
    txn_discard(dm);
    bl_reader_close(r);
    snprintf(file, BL_FILE_MAX, "%s", from.file);
    ro->start = BL_START_FILEPOS, ro->file = file, ro->pos = from.pos;
    long delay_ms = 100;
    for (int attempt = 0, refused = 0;; attempt++) {
        if (src_ensure(dm) < 0) return -1; /* the metadata: where a transaction needs it */
        if (bl_reader_open(r, ro, sink) == BL_OK) break;
        snprintf(dm->err, sizeof dm->err, "%s", r->err);
        bl_reader_close(r);
        /* a server that answers queries but refuses the replica for a minute
         * (purged binlog, privileges) will not change its mind; for a moment
         * after a restart it may (too many connections) */
        if (mysql_ping(dm->src) == 0 && ++refused > 30) return -1;
        if (stop_requested) return -1;
        if (attempt % 30 == 0) log_warn("run", "%s; trying again", dm->err);
        struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        delay_ms = delay_ms * 2 > 2000 ? 2000 : delay_ms * 2;
    }
    r->stop_flag = &stop_requested;
    dm->err[0] = '\0';
    return 0;
}

static void run_usage(FILE *out) {
    fprintf(out, "usage: searchsync run --config FILE\n\n"
                 "The daemon: follows the source's binlog and keeps every index of its\n"
                 "mapping (searchsync mapping import) in step. SIGTERM drains delivery and\n"
                 "saves the checkpoint; a restart resumes exactly there.\n");
}

static int ensure_indices(void *ud) {
    struct daemon *dm = ud;
    for (size_t i = 0; i < dm->m.nindices; i++)
        if (builds_ensure_index(dm, dm->k, &dm->m.indices[i]) != 0) return -1;
    return 0;
}

int cmd_run(int argc, char **argv) {
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *path = NULL;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        if (o == 'c') path = optarg;
        else if (o == 'h') return run_usage(stdout), EXIT_OK;
        else return run_usage(stderr), EXIT_USAGE;
    }
    if (!path || optind != argc) return run_usage(stderr), EXIT_USAGE;

    struct ss_config cfg;
    struct daemon dm;
    memset(&dm, 0, sizeof dm);
    dm.snap = -1;
    pthread_mutex_init(&dm.miss_mu, NULL);
    if (config_load(&cfg, path, dm.err, sizeof dm.err) < 0) {
        fprintf(stderr, "searchsync: %s\n", dm.err);
        config_free(&cfg);
        return EXIT_USAGE;
    }
    dm.cfg = &cfg;
    log_set_level(log_parse_level(cfg.log.level));
    if (cfg.log.file && log_open_file(cfg.log.file, dm.err, sizeof dm.err) < 0) {
        fprintf(stderr, "searchsync: %s\n", dm.err);
        config_free(&cfg);
        return EXIT_USAGE;
    }
    int exit_code = EXIT_RUNTIME;
    bl_reader r;
    bool reader_open = false;
    struct http_server *admin = NULL;
    bl_valctx_init(&dm.v);
    dm.srcp = db_params_source(&cfg);
    dm.metap = db_params_metadata(&cfg);
    dm.metap.database = cfg.metadata.database;

    db_params bare = db_params_metadata(&cfg);
    dm.meta = db_connect(&bare, dm.err, sizeof dm.err);
    if (!dm.meta || metadb_migrate(dm.meta, cfg.metadata.database, dm.err, sizeof dm.err) < 0)
        goto out;
    dm.src = db_connect(&dm.srcp, dm.err, sizeof dm.err);
    if (!dm.src) goto out;
    bool invalid = false;
    if (load_mapping(&dm, &dm.m, &dm.sig, &invalid) < 0) {
        if (invalid) exit_code = EXIT_USAGE;
        goto out;
    }
    if (dm.m.nindices == 0) {
        snprintf(dm.err, sizeof dm.err,
                 "source %s has no index configs in %s: import a mapping first "
                 "(searchsync mapping import --config %s FILE --yes)",
                 cfg.source.name, cfg.metadata.database, path);
        exit_code = EXIT_USAGE;
        goto out;
    }
    if (http_server_start(&cfg, &admin, dm.err, sizeof dm.err) < 0) { /* web/: the admin API */
        exit_code = EXIT_USAGE;
        goto out;
    }
    dm.router = router_new(&dm.m);
    router_set_area(dm.router, area_collect);
    dm.reload_due_ms = now_ms() + cfg.metadata.reload_interval_ms;

    struct search_opts so;
    deliver_search_opts(&so, &cfg);
    dm.client = search_client_new(&so, dm.err, sizeof dm.err);
    if (!dm.client) goto out;
    dm.k = search_conn_new(dm.client);
    /* an engine that is down or starting is waited for (src/search/wait.c) */
    if (search_wait_ready(dm.client, dm.k, ensure_indices, &dm, &stop_requested, dm.err,
                          sizeof dm.err) != 0)
        goto out;

    dm.ckpt = db_connect(&dm.metap, dm.err, sizeof dm.err);
    dm.dls = dm.ckpt ? dl_store_new(&dm.metap, cfg.source.name, dm.err, sizeof dm.err) : NULL;
    if (!dm.dls) goto out;
    struct deliver_opts dopts;
    deliver_opts_from_config(&dopts, &cfg);
    dopts.checkpoint = save_checkpoint;
    dopts.checkpoint_ud = &dm;
    dopts.dead_letter = live_dead_letter;
    dopts.dead_letter_ud = &dm;
    dopts.missing = on_missing;
    dopts.missing_ud = &dm;
    dm.d = deliver_new(&dopts, dm.client, dm.err, sizeof dm.err);
    if (!dm.d) goto out;
    http_server_attach(admin, dm.client, dm.d);

    /* where to start: the checkpoint, else [source] start */
    bl_reader_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.host = cfg.source.host, ro.port = cfg.source.port, ro.socket = cfg.source.socket;
    ro.user = cfg.source.user, ro.password = cfg.source.password;
    ro.server_id = (uint32_t)cfg.source.server_id;
    /* idle, the heartbeats are when mapping edits and queued reindexes are
     * looked for */
    ro.heartbeat_ms = cfg.source.heartbeat_ms < cfg.metadata.reload_interval_ms
                          ? cfg.source.heartbeat_ms
                          : cfg.metadata.reload_interval_ms;
    if (ro.heartbeat_ms > cfg.reindex.poll_interval_ms)
        ro.heartbeat_ms = cfg.reindex.poll_interval_ms;
    ro.connect_timeout_ms = cfg.source.connect_timeout_ms;
    ro.read_timeout_ms = cfg.source.read_timeout_ms;
    ro.max_reconnects = -1;
    char pos[4200], file[BL_FILE_MAX];
    int found = offsets_load(dm.meta, cfg.source.name, pos, sizeof pos, dm.err, sizeof dm.err);
    if (found < 0) goto out;
    unsigned long long at = 0;
    if (found == 0) {
        char *colon = strrchr(pos, ':');
        if (!colon || (size_t)(colon - pos) >= sizeof file) {
            snprintf(dm.err, sizeof dm.err,
                     "the saved checkpoint of source %s (\"%.100s\") is not a binlog position",
                     cfg.source.name, pos);
            goto out;
        }
        memcpy(file, pos, (size_t)(colon - pos));
        file[colon - pos] = '\0';
        at = strtoull(colon + 1, NULL, 10);
        ro.start = BL_START_FILEPOS, ro.file = file, ro.pos = at;
        log_info("run", "resuming source %s at %s:%llu", cfg.source.name, file, at);
        snprintf(dm.start_pos, sizeof dm.start_pos, "%s:%llu", file, at);
    } else if (strcmp(cfg.source.start, "beginning") == 0) {
        ro.start = BL_START_BEGINNING;
        snprintf(dm.start_pos, sizeof dm.start_pos, "%s", cfg.source.start);
        log_info("run", "source %s has no checkpoint: starting at the oldest binlog",
                 cfg.source.name);
    } else {
        /* "now" becomes a position, saved at once: a restart before the
         * first transaction must not skip what happened meanwhile */
        ro.start = BL_START_NOW;
        if (mysql_real_query(dm.src, "SHOW MASTER STATUS", 18) == 0) {
            MYSQL_RES *res = mysql_store_result(dm.src);
            MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
            if (row && row[0] && row[1] && strlen(row[0]) < sizeof file) {
                snprintf(file, sizeof file, "%s", row[0]);
                at = strtoull(row[1], NULL, 10);
                ro.start = BL_START_FILEPOS, ro.file = file, ro.pos = at;
            }
            if (res) mysql_free_result(res);
        }
        if (ro.start == BL_START_FILEPOS) {
            snprintf(dm.start_pos, sizeof dm.start_pos, "%s:%llu", file, at);
            if (offsets_save(dm.ckpt, cfg.source.name, dm.start_pos, 0, dm.err, sizeof dm.err) < 0)
                goto out;
        } else {
            snprintf(dm.start_pos, sizeof dm.start_pos, "now");
        }
        log_info("run", "source %s has no checkpoint: starting now, at %s", cfg.source.name,
                 dm.start_pos);
    }
    builds_poll(&dm); /* reindexes (a first sync, or one resumed after a restart) */
    bl_sink sink = {.ctx = &dm, .want_table = want_table, .row = on_row, .commit = on_commit,
                    .heartbeat = on_heartbeat};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (bl_reader_open(&r, &ro, &sink) != BL_OK) {
        snprintf(dm.err, sizeof dm.err, "%s", r.err);
        goto out;
    }
    reader_open = true;
    r.stop_flag = &stop_requested;
    log_info("run", "syncing %zu index config(s) of source %s", dm.m.nindices, cfg.source.name);
    int rc;
    char replay_file[BL_FILE_MAX];
    while ((rc = bl_reader_run(&r)) == BL_ERR && dm.replay) {
        if (replay_transaction(&dm, &r, &ro, &sink, replay_file) == 0) continue;
        if (stop_requested) rc = BL_STOP; /* the transaction is read on the next start */
        break;
    }
    if (rc == BL_ERR) {
        if (!dm.err[0]) snprintf(dm.err, sizeof dm.err, "%s", r.err);
        log_error("run", "stopping: %s", dm.err);
    }
    while (dm.nbuilds)
        builds_stop(&dm, dm.nbuilds - 1, "stopping; the jobs resume from their cursors");
    int drc = deliver_drain(dm.d, cfg.delivery.drain_timeout_ms);
    log_info("run",
             "stopped after %llu transactions, %llu documents, %llu element scripts, %llu "
             "deletes, %llu change snapshots, %llu mapping reloads; drain %s",
             dm.txns, dm.docs, dm.scripts, dm.deletes, dm.snapshots, dm.reloads,
             drc == DELIVER_OK ? "complete" : "incomplete");
    if (rc != BL_ERR && drc == DELIVER_OK) exit_code = EXIT_OK;
    if (rc != BL_ERR) dm.err[0] = '\0';
out:
    if (exit_code != EXIT_OK && dm.err[0]) fprintf(stderr, "searchsync run: %s\n", dm.err);
    if (reader_open) bl_reader_close(&r);
    http_server_stop(admin); /* before what its handlers use is freed */
    while (dm.nbuilds) builds_stop(&dm, dm.nbuilds - 1, "stopping");
    free(dm.builds);
    deliver_free(dm.d);
    dl_store_free(dm.dls);
    search_conn_free(dm.k);
    search_client_free(dm.client);
    copies_free(&dm);
    free(dm.copies);
    area_free(&dm);
    free(dm.aops);
    free_rdocs(&dm);
    free(dm.rdocs);
    sbuf_free(&dm.sig);
    sbuf_free(&dm.bad_sig);
    for (size_t i = 0; i < dm.nmissing; i++) free(dm.missing[i]);
    free(dm.missing);
    pthread_mutex_destroy(&dm.miss_mu);
    router_free(dm.router);
    mapping_free(&dm.m);
    bl_valctx_free(&dm.v);
    sbuf_free(&dm.val);
    sbuf_free(&dm.text);
    sbuf_free(&dm.snaps);
    db_close(dm.src);
    db_close(dm.meta);
    db_close(dm.ckpt);
    config_free(&cfg);
    mysql_library_end();
    return exit_code;
}
