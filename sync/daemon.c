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
 * Changes of delay-effect tables become change snapshots for the delayed run.
 *
 * Not yet here (issue 5 goes on): area-update scripts, row-image mode, live
 * reload of the mapping, ZooKeeper. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binlog/binlog.h"
#include "binlog/reader.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "deliver/deliver.h"
#include "deliver/store.h"
#include "docbuild.h"
#include "index_mapping.h"
#include "json_exact.h"
#include "log.h"
#include "mapping.h"
#include "router.h"
#include "sbuf.h"
#include "search/search.h"

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

struct pending { /* documents of one (index, document table) to build at commit */
    size_t index, table;
    char **keys;
    size_t n, cap;
};

struct daemon {
    struct ss_config *cfg;
    struct mapping m;
    struct router *router;
    MYSQL *src, *meta, *ckpt;
    db_params srcp, metap;
    struct search_client *client;
    struct deliver *d;
    struct dl_store *dls;
    bl_valctx v;
    sbuf val, text;
    struct pending *pend;
    size_t npend;
    uint64_t version;       /* of the transaction being committed */
    size_t cur_index;       /* while building: which index config */
    bool child_build;       /* building parent/child documents: collect ids */
    struct copy { char *id, *routing; bool absent; } *copies;
    size_t ncopies, capcopies;
    uint64_t last_txn;      /* delivery's sequence of the last transaction */
    sbuf snaps;             /* VALUES rows of change snapshots of this transaction */
    unsigned long long snapshots;
    struct search_conn *k;  /* the main thread's engine connection */
    unsigned long long txns, docs, deletes;
    char err[1024];
};

/* ---------- checkpoint (called from delivery's checkpoint thread) ---------- */
static int save_checkpoint(void *ud, const char *position, uint64_t seq) {
    struct daemon *dm = ud;
    char err[512];
    if (db_ensure(&dm->ckpt, &dm->metap, err, sizeof err) < 0 ||
        offsets_save(dm->ckpt, dm->cfg->source.name, position, seq, err, sizeof err) < 0) {
        log_warn("run", "checkpoint not saved (will retry): %s", err);
        return -1;
    }
    return 0;
}

/* ---------- row values for the router ---------- */
struct image {
    struct daemon *dm;
    const bl_table *t;
    const bl_cell *cells;
};

static const char *image_value(void *img, const char *column, size_t *len, bool *absent) {
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
static bool want_table(void *ctx, const char *db, const char *table) {
    struct daemon *dm = ctx;
    return router_wants(dm->router, db, table);
}

/* A change of a delay-effect (metadata) table is not routed now: it becomes a
 * change snapshot (seed 004's "case scene"), refreshed by the delayed run.
 * Inserts and updates record the business id only (a later change of the same
 * row the same day folds into the same row); deletes keep the before image,
 * since the row is gone. Written at commit, before the transaction can be
 * checkpointed, so a crash replays rather than loses it. */
static int snapshot_row(struct daemon *dm, const bl_row *row) {
    const bl_table *t = row->table;
    const bl_cell *img = row->after ? row->after : row->before;
    sbuf id = SBUF_INIT;
    for (uint32_t i = 0; i < t->ncols; i++) {
        if (!t->cols[i].is_pk || !t->cols[i].name) continue;
        bool absent = false;
        size_t len = 0;
        struct image im = {dm, t, img};
        const char *v = image_value(&im, t->cols[i].name, &len, &absent);
        if (id.len) sbuf_addc(&id, ',');
        if (v) sbuf_add(&id, v, len);
    }
    if (!id.len) {
        sbuf_free(&id);
        return errf(dm->err, sizeof dm->err,
                    "%s.%s is delay-effect but has no primary key in the binlog's table map: "
                    "give it one (change snapshots are keyed by it)", t->db, t->name);
    }
    const char *op = row->kind == BL_INSERT ? "insert" : row->kind == BL_UPDATE ? "update" : "delete";
    sbuf *q = &dm->snaps;
    sbuf_adds(q, q->len ? ",(" : "(");
    db_quote(dm->meta, q, dm->cfg->source.name, strlen(dm->cfg->source.name));
    sbuf_addc(q, ',');
    db_quote(dm->meta, q, t->db, strlen(t->db));
    sbuf_addc(q, ',');
    db_quote(dm->meta, q, t->name, strlen(t->name));
    sbuf_printf(q, ",'%s',", op);
    db_quote(dm->meta, q, id.data, id.len);
    sbuf_adds(q, ",'init',UTC_DATE(),");
    if (row->kind == BL_DELETE) {
        sbuf img_json = SBUF_INIT;
        jsonw w;
        jw_init(&w, &img_json);
        bl_image_json(&dm->v, &w, t, row->before, NULL);
        db_quote(dm->meta, q, img_json.data, img_json.len);
        sbuf_free(&img_json);
    } else {
        sbuf_adds(q, "NULL");
    }
    sbuf_addc(q, ')');
    sbuf_free(&id);
    dm->snapshots++;
    return 0;
}

static int write_snapshots(struct daemon *dm) {
    if (!dm->snaps.len) return 0;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "INSERT INTO change_snapshots (source, db_name, table_name, operation, "
                  "business_id, status, attach_date, row_image) VALUES ");
    sbuf_add(&q, dm->snaps.data, dm->snaps.len);
    sbuf_adds(&q, " ON DUPLICATE KEY UPDATE row_image = VALUES(row_image), "
                  "updated_at = CURRENT_TIMESTAMP(3)");
    int rc = db_exec(dm->meta, q.data, dm->err, sizeof dm->err);
    sbuf_free(&q);
    sbuf_reset(&dm->snaps);
    return rc;
}

static int on_row(void *ctx, const bl_row *row) {
    struct daemon *dm = ctx;
    struct image before = {dm, row->table, row->before}, after = {dm, row->table, row->after};
    if (router_delayed(dm->router, row->table->db, row->table->name))
        return snapshot_row(dm, row);
    if (router_add(dm->router, row->table->db, row->table->name, image_value,
                   row->before ? &before : NULL, row->after ? &after : NULL, dm->err,
                   sizeof dm->err) != 0)
        return -1;
    return 0;
}

static int collect(void *ctx, size_t index, size_t table, const char *key, size_t len) {
    struct daemon *dm = ctx;
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

static void note_copy(struct daemon *dm, const char *id, const char *routing, bool absent);

static uint32_t file_number(const char *file) {
    const char *dot = strrchr(file, '.');
    return dot ? (uint32_t)strtoul(dot + 1, NULL, 10) : 0;
}

static int submit_doc(void *ctx, const char *id, const char *routing, const char *body,
                      size_t len) {
    struct daemon *dm = ctx;
    const struct mp_index *ix = &dm->m.indices[dm->cur_index];
    struct change c = {.index = ix->alias, .doc_id = id, .routing = routing,
                       .version = dm->version, .op = CHANGE_INDEX, .body = body, .body_len = len};
    dm->docs++;
    if (dm->child_build) note_copy(dm, id, routing, false);
    return deliver_submit(dm->d, &c) == DELIVER_OK ? 0 : -1;
}

static int submit_delete(void *ctx, const char *id) {
    struct daemon *dm = ctx;
    if (dm->child_build) { /* its routing is known only to the engine: see fix_copies */
        note_copy(dm, id, NULL, true);
        return 0;
    }
    const struct mp_index *ix = &dm->m.indices[dm->cur_index];
    struct change c = {.index = ix->alias, .doc_id = id, .version = dm->version,
                       .op = CHANGE_DELETE};
    dm->deletes++;
    return deliver_submit(dm->d, &c) == DELIVER_OK ? 0 : -1;
}

static void note_copy(struct daemon *dm, const char *id, const char *routing, bool absent) {
    if (dm->ncopies == dm->capcopies) {
        dm->capcopies = dm->capcopies ? dm->capcopies * 2 : 64;
        dm->copies = xrealloc(dm->copies, dm->capcopies * sizeof *dm->copies);
    }
    dm->copies[dm->ncopies++] =
        (struct copy){xstrdup(id), routing ? xstrdup(routing) : NULL, absent};
}

static void free_copies(struct daemon *dm) {
    for (size_t i = 0; i < dm->ncopies; i++) free(dm->copies[i].id), free(dm->copies[i].routing);
    dm->ncopies = 0;
}

/* Parent/child documents live on their root's shard (routing). A child whose
 * row is gone, or whose parent changed, may have a copy under a routing we no
 * longer know: ask the engine where copies of these ids are and delete every
 * copy that is not the one just written. Earlier transactions are delivered
 * and the index refreshed first, so no copy is missed because it was still
 * queued. Only transactions touching parent/child tables pay for this. */
static int fix_copies(struct daemon *dm, const struct mp_index *ix) {
    if (!dm->ncopies) return 0;
    if (dm->last_txn && deliver_wait_txn(dm->d, dm->last_txn, dm->cfg->delivery.drain_timeout_ms) !=
                            DELIVER_OK)
        return errf(dm->err, sizeof dm->err,
                    "delivery did not catch up within drain_timeout_ms before checking "
                    "child document copies of %s", ix->alias);
    struct search_resp r;
    search_resp_init(&r);
    sbuf path = SBUF_INIT, body = SBUF_INIT;
    int rc = 0;
    sbuf_printf(&path, "/%s/_refresh", ix->alias);
    if (search_request(dm->k, "POST", path.data, NULL, NULL, 0, &r) != 0)
        rc = errf(dm->err, sizeof dm->err, "engine: %s", r.err);
    for (size_t at = 0; rc == 0 && at < dm->ncopies; at += 500) {
        size_t n = dm->ncopies - at < 500 ? dm->ncopies - at : 500;
        sbuf_reset(&body);
        jsonw w;
        jw_init(&w, &body);
        jw_obj_open(&w);
        jw_key(&w, "size");
        jw_int(&w, (int64_t)(4 * n + 16));
        jw_key(&w, "_source");
        jw_bool(&w, false);
        jw_key(&w, "query");
        jw_obj_open(&w);
        jw_key(&w, "ids");
        jw_obj_open(&w);
        jw_key(&w, "values");
        jw_arr_open(&w);
        for (size_t i = at; i < at + n; i++) jw_str(&w, dm->copies[i].id);
        jw_arr_close(&w);
        jw_obj_close(&w);
        jw_obj_close(&w);
        jw_obj_close(&w);
        sbuf_reset(&path);
        sbuf_printf(&path, "/%s/_search", ix->alias);
        if (search_request(dm->k, "POST", path.data, NULL, body.data, body.len, &r) != 0 ||
            r.status != 200) {
            rc = errf(dm->err, sizeof dm->err, "looking up child document copies in %s: HTTP %ld %.200s",
                      ix->alias, r.status, r.body.data ? r.body.data : r.err);
            break;
        }
        cJSON *j = json_exact_parse(r.body.data, r.body.len);
        cJSON *hits = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "hits"), "hits");
        cJSON *h;
        cJSON_ArrayForEach(h, hits) {
            const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(h, "_id"));
            const char *routing = cJSON_GetStringValue(cJSON_GetObjectItem(h, "_routing"));
            if (!id) continue;
            for (size_t i = at; i < at + n; i++) {
                struct copy *c = &dm->copies[i];
                if (strcmp(c->id, id) != 0) continue;
                bool same = routing && c->routing && !strcmp(routing, c->routing);
                if (!c->absent && same) break; /* the copy just written */
                struct change del = {.index = ix->alias, .doc_id = id, .routing = routing,
                                     .version = dm->version, .op = CHANGE_DELETE};
                dm->deletes++;
                if (deliver_submit(dm->d, &del) != DELIVER_OK) rc = -1;
                break;
            }
        }
        cJSON_Delete(j);
    }
    sbuf_free(&path);
    sbuf_free(&body);
    search_resp_free(&r);
    free_copies(dm);
    return rc;
}

static int on_commit(void *ctx, const bl_commit *cm) {
    struct daemon *dm = ctx;
    int rc = 0;
    if (db_ensure(&dm->src, &dm->srcp, dm->err, sizeof dm->err) < 0) return -1;
    if (dm->snaps.len && (db_ensure(&dm->meta, &dm->metap, dm->err, sizeof dm->err) < 0 ||
                          write_snapshots(dm) < 0))
        return -1;
    if (router_flush(dm->router, dm->src, collect, dm, dm->err, sizeof dm->err) != 0) return -1;
    for (size_t i = 0; i < dm->npend && rc == 0; i++) {
        struct pending *p = &dm->pend[i];
        const struct mp_index *ix = &dm->m.indices[p->index];
        dm->cur_index = p->index;
        dm->version = version_make(ix->epoch, file_number(cm->end.file), cm->end.pos);
        if (!dm->version) {
            rc = -1;
            snprintf(dm->err, sizeof dm->err, "position %s:%llu does not fit a version",
                     cm->end.file, (unsigned long long)cm->end.pos);
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
            if (rc == 0) rc = fix_copies(dm, ix);
            free_copies(dm);
        }
    }
    for (size_t i = 0; i < dm->npend; i++) {
        for (size_t k = 0; k < dm->pend[i].n; k++) free(dm->pend[i].keys[k]);
        free(dm->pend[i].keys);
    }
    free(dm->pend);
    dm->pend = NULL, dm->npend = 0;
    if (rc != 0) return -1;
    char pos[BL_FILE_MAX + 64];
    snprintf(pos, sizeof pos, "%s:%llu", cm->end.file, (unsigned long long)cm->end.pos);
    dm->last_txn = deliver_txn_end(dm->d, pos);
    dm->txns++;
    return 0;
}

/* ---------- start-up ---------- */

/* Create <alias>_v1 behind the alias when neither exists. */
static int ensure_index(struct daemon *dm, struct search_conn *k, const struct mp_index *ix) {
    struct search_resp r;
    search_resp_init(&r);
    char path[600];
    snprintf(path, sizeof path, "/%s", ix->alias);
    int rc = 0;
    if (search_request(k, "HEAD", path, NULL, NULL, 0, &r) != 0) {
        rc = errf(dm->err, sizeof dm->err, "engine: %s", r.err);
        goto out;
    }
    if (r.status == 200) goto out;
    sbuf body = SBUF_INIT;
    if (index_mapping_body(ix, search_client_dialect(dm->client), false, &body, dm->err,
                           sizeof dm->err) != 0) {
        sbuf_free(&body);
        rc = -1;
        goto out;
    }
    unsigned v = ix->current_version ? ix->current_version : 1;
    snprintf(path, sizeof path, "/%s_v%u", ix->alias, v);
    if (search_request(k, "PUT", path, NULL, body.data, body.len, &r) != 0 ||
        (r.status != 200 && r.status != 400)) {
        rc = errf(dm->err, sizeof dm->err, "creating index %s: HTTP %ld %.300s", path + 1,
                  r.status, r.body.data ? r.body.data : r.err);
        sbuf_free(&body);
        goto out;
    }
    sbuf_reset(&body);
    sbuf_printf(&body, "{\"actions\":[{\"add\":{\"index\":\"%s_v%u\",\"alias\":\"%s\"}}]}",
                ix->alias, v, ix->alias);
    if (search_request(k, "POST", "/_aliases", NULL, body.data, body.len, &r) != 0 ||
        r.status != 200) {
        rc = errf(dm->err, sizeof dm->err, "pointing alias %s at %s_v%u: HTTP %ld %.300s",
                  ix->alias, ix->alias, v, r.status, r.body.data ? r.body.data : r.err);
        sbuf_free(&body);
        goto out;
    }
    sbuf_free(&body);
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "UPDATE index_configs SET state = 'available', current_version = %u "
                    "WHERE source = ", v);
    db_quote(dm->meta, &q, dm->cfg->source.name, strlen(dm->cfg->source.name));
    sbuf_adds(&q, " AND alias = ");
    db_quote(dm->meta, &q, ix->alias, strlen(ix->alias));
    rc = db_exec(dm->meta, q.data, dm->err, sizeof dm->err);
    sbuf_free(&q);
    log_info("run", "created index %s_v%u behind alias %s", ix->alias, v, ix->alias);
out:
    search_resp_free(&r);
    return rc;
}

static void run_usage(FILE *out) {
    fprintf(out, "usage: searchsync run --config FILE\n\n"
                 "The daemon: follows the source's binlog and keeps every index of its\n"
                 "mapping (searchsync mapping import) in step. SIGTERM drains delivery and\n"
                 "saves the checkpoint; a restart resumes exactly there.\n");
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
    bl_valctx_init(&dm.v);
    dm.srcp = db_params_source(&cfg);
    dm.metap = db_params_metadata(&cfg);
    dm.metap.database = cfg.metadata.database;

    db_params bare = db_params_metadata(&cfg);
    dm.meta = db_connect(&bare, dm.err, sizeof dm.err);
    if (!dm.meta || metadb_migrate(dm.meta, cfg.metadata.database, dm.err, sizeof dm.err) < 0)
        goto out;
    if (mapping_db_load(dm.meta, cfg.source.name, &dm.m, dm.err, sizeof dm.err) < 0) goto out;
    if (dm.m.nindices == 0) {
        snprintf(dm.err, sizeof dm.err,
                 "source %s has no index configs in %s: import a mapping first "
                 "(searchsync mapping import --config %s FILE --yes)",
                 cfg.source.name, cfg.metadata.database, path);
        exit_code = EXIT_USAGE;
        goto out;
    }
    dm.src = db_connect(&dm.srcp, dm.err, sizeof dm.err);
    if (!dm.src) goto out;
    struct mp_schema schema = {0};
    sbuf verrs = SBUF_INIT;
    int bad = mapping_schema_load(dm.src, &dm.m, &schema, dm.err, sizeof dm.err) < 0
                  ? -1
                  : mapping_validate(&dm.m, &schema, &verrs);
    mp_schema_free(&schema);
    if (bad != 0) {
        if (bad > 0) snprintf(dm.err, sizeof dm.err, "the mapping no longer matches the source:\n%s",
                              verrs.data);
        sbuf_free(&verrs);
        exit_code = EXIT_USAGE;
        goto out;
    }
    sbuf_free(&verrs);
    dm.router = router_new(&dm.m);

    struct search_opts so;
    deliver_search_opts(&so, &cfg);
    dm.client = search_client_new(&so, dm.err, sizeof dm.err);
    if (!dm.client) goto out;
    dm.k = search_conn_new(dm.client);
    int ok = search_detect(dm.client, dm.k, dm.err, sizeof dm.err) == 0;
    for (size_t i = 0; ok && i < dm.m.nindices; i++) ok = ensure_index(&dm, dm.k, &dm.m.indices[i]) == 0;
    if (!ok) goto out;

    dm.ckpt = db_connect(&dm.metap, dm.err, sizeof dm.err);
    dm.dls = dm.ckpt ? dl_store_new(&dm.metap, cfg.source.name, dm.err, sizeof dm.err) : NULL;
    if (!dm.dls) goto out;
    struct deliver_opts dopts;
    deliver_opts_from_config(&dopts, &cfg);
    dopts.checkpoint = save_checkpoint;
    dopts.checkpoint_ud = &dm;
    dopts.dead_letter = dl_store_put;
    dopts.dead_letter_ud = dm.dls;
    dm.d = deliver_new(&dopts, dm.client, dm.err, sizeof dm.err);
    if (!dm.d) goto out;

    /* where to start: the checkpoint, else [source] start */
    bl_reader_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.host = cfg.source.host, ro.port = cfg.source.port, ro.socket = cfg.source.socket;
    ro.user = cfg.source.user, ro.password = cfg.source.password;
    ro.server_id = (uint32_t)cfg.source.server_id;
    ro.heartbeat_ms = cfg.source.heartbeat_ms;
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
    } else {
        ro.start = strcmp(cfg.source.start, "beginning") == 0 ? BL_START_BEGINNING : BL_START_NOW;
        log_info("run", "source %s has no checkpoint: starting at %s", cfg.source.name,
                 cfg.source.start);
    }
    bl_sink sink = {.ctx = &dm, .want_table = want_table, .row = on_row, .commit = on_commit};
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
    int rc = bl_reader_run(&r);
    if (rc == BL_ERR) {
        if (!dm.err[0]) snprintf(dm.err, sizeof dm.err, "%s", r.err);
        log_error("run", "stopping: %s", dm.err);
    }
    int drc = deliver_drain(dm.d, cfg.delivery.drain_timeout_ms);
    log_info("run",
             "stopped after %llu transactions, %llu documents, %llu deletes, %llu change "
             "snapshots; drain %s",
             dm.txns, dm.docs, dm.deletes, dm.snapshots, drc == DELIVER_OK ? "complete" : "incomplete");
    if (rc != BL_ERR && drc == DELIVER_OK) exit_code = EXIT_OK;
    if (rc != BL_ERR) dm.err[0] = '\0';
out:
    if (exit_code != EXIT_OK && dm.err[0]) fprintf(stderr, "searchsync run: %s\n", dm.err);
    if (reader_open) bl_reader_close(&r);
    deliver_free(dm.d);
    dl_store_free(dm.dls);
    search_conn_free(dm.k);
    search_client_free(dm.client);
    free_copies(&dm);
    free(dm.copies);
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
