/* delayed_resolve: a delayed run's change snapshots resolved into the root
 * ids of the documents they reach — table by table, level by level up the
 * relation chains (relation_tops.c), in keyset pages — staged into
 * delayed_run_ids, then cut into bucket jobs; and the snapshots marked done
 * or failed (delayed_run_int.h). delayed_run.c calls it, never the other
 * way round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "exit_codes.h"
#include "sync/delayed/delayed.h"
#include "jsonw.h"
#include "log.h"
#include "sync/pipeline/pipeline.h"

#include "sync/delayed/delayed_run_int.h"
#include "sync/mapping/mapping_shard.h"

/* ---------- the snapshots ---------- */

/* ` AND s.db_name = .. AND s.table_name = ..` for one table, or nothing */
void dr_table_cond(struct run *R, sbuf *q, const char *pfx, const char *db,
                   const char *table) {
    if (!db) return;
    sbuf_printf(q, " AND %sdb_name = ", pfx);
    qs(R->meta, q, db);
    sbuf_printf(q, " AND %stable_name = ", pfx);
    qs(R->meta, q, table);
}

/* Drop the rows a move of this run's running snapshots (of one table, or
 * all) to status `to` would collide with: the same change of the same day
 * already there in that status (the unique key has the status in it). The
 * moved row stands for both. */
static int drop_twins(struct run *R, const char *to, const char *attempts_cond, const char *db,
                      const char *table) {
    sbuf q = SBUF_INIT;
    sbuf_printf(&q,
                "DELETE t FROM change_snapshots t JOIN change_snapshots s ON s.source = "
                "t.source AND s.db_name = t.db_name AND s.table_name = t.table_name AND "
                "s.operation = t.operation AND s.business_id = t.business_id AND "
                "s.attach_date = t.attach_date AND s.id <> t.id WHERE s.run_id = %llu AND "
                "s.status = 'running' AND t.status = '%s'%s",
                R->id, to, attempts_cond ? attempts_cond : "");
    dr_table_cond(R, &q, "s.", db, table);
    int rc = exec(R, &q);
    sbuf_free(&q);
    return rc;
}

/* This run's running snapshots (of one table, or all) are done. */
int dr_snaps_done(struct run *R, const char *db, const char *table, const char *why) {
    if (drop_twins(R, "done", NULL, db, table) < 0) return -1;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "UPDATE change_snapshots SET status = 'done', error_text = ");
    qs(R->meta, &q, why);
    sbuf_printf(&q, " WHERE run_id = %llu AND status = 'running'", R->id);
    dr_table_cond(R, &q, "", db, table);
    int rc = exec(R, &q);
    sbuf_free(&q);
    return rc;
}

/* ... failed with `why`: tried again by the next run, or left in error once
 * they have failed max_attempts times. */
int dr_snaps_failed(struct run *R, const char *db, const char *table, const char *why) {
    char cond[128];
    snprintf(cond, sizeof cond, " AND s.attempts + 1 >= %d", R->o->max_attempts);
    if (drop_twins(R, "error", cond, db, table) < 0) return -1;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "UPDATE change_snapshots SET status = 'error', attempts = attempts + 1, "
                  "error_text = ");
    qs(R->meta, &q, why);
    sbuf_printf(&q, " WHERE run_id = %llu AND status = 'running' AND attempts + 1 >= %d", R->id,
                R->o->max_attempts);
    dr_table_cond(R, &q, "", db, table);
    long long n = exec_rows(R, &q);
    if (n > 0) R->st->left_error += (unsigned long long)n;
    snprintf(cond, sizeof cond, " AND s.attempts + 1 < %d", R->o->max_attempts);
    if (n >= 0) n = drop_twins(R, "init", cond, db, table);
    if (n >= 0) {
        sbuf_reset(&q);
        sbuf_adds(&q, "UPDATE change_snapshots SET status = 'init', attempts = attempts + 1, "
                      "run_id = NULL, error_text = ");
        qs(R->meta, &q, why);
        sbuf_printf(&q, " WHERE run_id = %llu AND status = 'running'", R->id);
        dr_table_cond(R, &q, "", db, table);
        n = exec_rows(R, &q);
        if (n > 0) R->st->retried += (unsigned long long)n;
    }
    sbuf_free(&q);
    return n < 0 ? -1 : 0;
}

/* The staged ids go in one INSERT, sent and left to run while the walk
 * reads its next page from the source (its own connection): resolving a
 * rename under 1M rows waited on both in turn. The answer is read
 * (stage_settle) before the metadata connection is used again: at the next
 * flush, before a page of snapshots is read, and at the end (stage_done). */
static int stage_settle(struct run *R) {
    if (!R->stage_sent) return 0;
    R->stage_sent = false;
    if (mysql_read_query_result(R->meta) != 0)
        return errf(R->err, R->errlen, "query failed: %s (%u): staging the run's ids in "
                    "delayed_run_ids", mysql_error(R->meta), mysql_errno(R->meta));
    db_drain(R->meta);
    return 0;
}

static int stage_flush(struct run *R) {
    if (stage_settle(R) < 0) return -1;
    if (!R->nstage) return 0;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "INSERT IGNORE INTO delayed_run_ids (run_id, index_id, bucket, doc_table, "
                  "doc_key) VALUES ");
    sbuf_add(&q, R->stage.data, R->stage.len);
    int rc = 0;
    if (mysql_send_query(R->meta, q.data, (unsigned long)q.len) != 0)
        rc = errf(R->err, R->errlen, "query failed: %s (%u): staging the run's ids in "
                  "delayed_run_ids", mysql_error(R->meta), mysql_errno(R->meta));
    else
        R->stage_sent = true;
    sbuf_free(&q);
    sbuf_reset(&R->stage);
    R->nstage = 0;
    return rc;
}

/* everything staged written, its answer read */
static int stage_done(struct run *R) {
    int rc = stage_flush(R);
    int sc = stage_settle(R);
    return rc < 0 ? rc : sc;
}

/* The bucket of a document: its key MOD N for an integer key (as MySQL's
 * CAST(key AS UNSIGNED): a negative one wraps), else CRC32(key) MOD N
 * (zlib's crc32 is MySQL's CRC32()). Computed here, not by the server: the
 * statement that stages a million ids then carries literals only, and a
 * key always lands in the same bucket (the primary key holds it). */
static bool integer_key(const struct mp_index *ix, size_t doctable) {
    const struct mp_column *k = mp_table_key(&ix->tables[doctable]);
    return k && k->mysql_type && mapping_is_integer_type(k->mysql_type);
}

unsigned delayed_bucket(const char *key, bool integer, int buckets) {
    if (buckets <= 1) return 0;
    unsigned long long v = integer ? strtoull(key, NULL, 10)
                                   : crc32(0L, (const Bytef *)key, (uInt)strlen(key));
    return (unsigned)(v % (unsigned long long)buckets);
}

/* ids staged before one INSERT: larger statements cost the server less a
 * row (2.8 s against 3.1 s for 1M ids at 5,000 against 500). A walk's page
 * (5,000 ids by default) goes as one statement once it holds STAGE_ROWS,
 * sent while the next page is read; STAGE_MAX bounds a statement. */
#define STAGE_ROWS 2000
#define STAGE_MAX 10000

/* root keys of a chain: staged once each (the primary key), or counted */
static int sink(struct run *R, const struct rt_chain *c, char *const *keys, size_t n) {
    R->st->pages++;
    if (R->o->dry_run) {
        for (size_t i = 0; i < n; i++) {
            sbuf k = SBUF_INIT;
            sbuf_printf(&k, "%zu\x1f%zu\x1f%s", c->index, c->doctable, keys[i]);
            strset_add(&R->dry_all, k.data, k.len);
            strset_add(&R->dry_one, k.data, k.len);
            sbuf_free(&k);
        }
        return 0;
    }
    const struct mp_index *ix = &R->p->m->indices[c->index];
    bool num = integer_key(ix, c->doctable);
    for (size_t i = 0; i < n; i++) {
        sbuf *s = &R->stage;
        sbuf_printf(s, "%s(%llu,%llu,%u,%zu,", R->nstage ? "," : "", R->id,
                    R->index_ids[c->index], delayed_bucket(keys[i], num, R->buckets),
                    c->doctable);
        if (mp_ids_templated(ix)) { /* a shard's (or source's) key: staged as the document's
                                      * id, which names it */
            sbuf id = SBUF_INIT;
            mp_doc_id(ix, keys[i], strlen(keys[i]), &id);
            qs(R->meta, s, id.data);
            sbuf_free(&id);
        } else {
            qs(R->meta, s, keys[i]);
        }
        sbuf_addc(s, ')');
        if (++R->nstage >= STAGE_MAX && stage_flush(R) < 0) return -1;
    }
    return R->nstage >= STAGE_ROWS ? stage_flush(R) : 0;
}

static int sink_cb(void *ud, const struct rt_chain *c, char *const *keys, size_t n) {
    return sink(ud, c, keys, n);
}

static void level_rows(void *ud, size_t level, size_t n) {
    struct run *R = ud;
    R->st->level_ids[level < DELAYED_MAX_LEVELS ? level : DELAYED_MAX_LEVELS] += n;
}

/* chain c from values of `level` to the documents (rt_walk) */
static int resolve(struct run *R, const struct rt_chain *c, size_t level, char *const *in,
                   size_t nin) {
    char what[400];
    snprintf(what, sizeof what, "the relation top of %s.%s", R->plan->db, R->plan->table);
    struct rt_walk w = {.src = R->src, .chunk = IN_CHUNK, .page = (size_t)R->o->page,
                        .sink = sink_cb, .level_rows = level_rows, .ud = R, .what = what,
                        .err = R->err, .errlen = R->errlen};
    int rc = rt_walk(&w, c, level, in, nin);
    if (rc < 0) R->sql_failed = w.sql_failed;
    return rc;
}

/* A page of snapshots of one table through every chain of its plan:
 * business ids in at level 0, or a deleted row's joined value (from its
 * row image) past a chain's start level. */
static int resolve_snapshots(struct run *R, const struct rt_plan *plan, char **bids, size_t nb,
                             char **ops, char **imgs) {
    R->st->level_ids[0] += nb;
    for (size_t ci = 0; ci < plan->nchains; ci++) {
        const struct rt_chain *c = &plan->chains[ci];
        if (c->whole) continue; /* once per run, not per page */
        if (!c->start) {
            if (resolve(R, c, 0, bids, nb) < 0) return -1;
            continue;
        }
        char **keep = xcalloc(nb ? nb : 1, sizeof *keep), **gone = xcalloc(nb ? nb : 1,
                                                                           sizeof *gone);
        size_t nk = 0, ng = 0;
        for (size_t i = 0; i < nb; i++) {
            if (strcmp(ops[i], "delete")) keep[nk++] = bids[i];
            else if (imgs[i]) gone[ng++] = imgs[i];
        }
        int rc = resolve(R, c, 0, keep, nk);
        if (rc == 0 && ng) rc = resolve(R, c, 1, gone, ng);
        free(keep);
        free(gone);
        if (rc < 0) return -1;
    }
    return 0;
}

/* the snapshots of one table, in keyset pages by id (status: this run's
 * running ones, or for a dry run one snapshot by id) */
int dr_resolve_table(struct run *R, const struct rt_plan *plan, unsigned long long only_id) {
    R->plan = plan;
    for (size_t ci = 0; ci < plan->nchains; ci++)
        if (plan->chains[ci].whole && resolve(R, &plan->chains[ci], 0, NULL, 0) < 0) return -1;
    const char *start_col = NULL;
    for (size_t ci = 0; ci < plan->nchains; ci++)
        if (plan->chains[ci].start) start_col = plan->chains[ci].start_column;
    unsigned long long last = 0;
    for (;;) {
        sbuf q = SBUF_INIT;
        sbuf_adds(&q, "SELECT id, operation, business_id, ");
        if (start_col) {
            sbuf_adds(&q, "JSON_UNQUOTE(JSON_EXTRACT(row_image, ");
            sbuf s = SBUF_INIT;
            sbuf_printf(&s, "$.\"%s\"", start_col);
            qs(R->meta, &q, s.data);
            sbuf_free(&s);
            sbuf_adds(&q, "))");
        } else {
            sbuf_adds(&q, "NULL");
        }
        if (only_id)
            sbuf_printf(&q, " FROM change_snapshots WHERE id = %llu", only_id);
        else
            sbuf_printf(&q, " FROM change_snapshots WHERE run_id = %llu AND status = 'running'",
                        R->id);
        dr_table_cond(R, &q, "", plan->db, plan->table);
        sbuf_printf(&q, " AND id > %llu ORDER BY id LIMIT %d", last, R->o->page);
        if (stage_settle(R) < 0) return sbuf_free(&q), -1;
        MYSQL_RES *res = db_query(R->meta, q.data, q.len, R->err, R->errlen);
        sbuf_free(&q);
        if (!res) return -1;
        size_t n = (size_t)mysql_num_rows(res), i = 0;
        char **bids = xcalloc(n ? n : 1, sizeof *bids), **ops = xcalloc(n ? n : 1, sizeof *ops),
             **imgs = xcalloc(n ? n : 1, sizeof *imgs);
        MYSQL_ROW row;
        while ((row = mysql_fetch_row(res))) {
            last = strtoull(row[0], NULL, 10);
            ops[i] = xstrdup(row[1]);
            bids[i] = xstrdup(row[2]);
            imgs[i] = row[3] && strcmp(row[3], "null") ? xstrdup(row[3]) : NULL;
            i++;
        }
        mysql_free_result(res);
        int rc = i ? resolve_snapshots(R, plan, bids, i, ops, imgs) : 0;
        for (size_t j = 0; j < i; j++) free(bids[j]), free(ops[j]), free(imgs[j]);
        free(bids), free(ops), free(imgs);
        if (rc < 0) return -1;
        if (n < (size_t)R->o->page || only_id) break;
    }
    return stage_done(R);
}

/* Every table of the run's snapshots: its plan, its ids staged; then the
 * jobs, one per (index config, bucket) with ids, and resolved = 1, in one
 * transaction. */
int dr_resolve_run(struct run *R) {
    sbuf q = SBUF_INIT;
    sbuf_printf(&q, "SELECT DISTINCT db_name, table_name FROM change_snapshots WHERE run_id = "
                    "%llu AND status = 'running' ORDER BY db_name, table_name", R->id);
    MYSQL_RES *res = db_query(R->meta, q.data, q.len, R->err, R->errlen);
    if (!res) return sbuf_free(&q), -1;
    size_t nt = (size_t)mysql_num_rows(res), t = 0;
    char **dbs = xcalloc(nt ? nt : 1, sizeof *dbs), **tbs = xcalloc(nt ? nt : 1, sizeof *tbs);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res))) dbs[t] = xstrdup(row[0]), tbs[t++] = xstrdup(row[1]);
    mysql_free_result(res);
    int rc = 0;
    for (size_t i = 0; i < nt && rc == 0; i++) {
        struct rt_plan plan;
        rc = rt_plan_build(R->src, R->p->m, R->p->router, dbs[i], tbs[i], R->only, &plan, R->err,
                           R->errlen);
        if (rc == 0)
            rc = rt_plan_save(R->meta, R->source, &plan, R->p->m, R->index_ids, R->err,
                              R->errlen);
        if (rc == 0 && plan.note) log_info("delayed", "run %llu: %s", R->id, plan.note);
        if (rc == 0 && !plan.nchains) {
            log_info("delayed", "run %llu: no index config reads %s.%s any more: its snapshots "
                     "are done with nothing to refresh", R->id, dbs[i], tbs[i]);
            rc = dr_snaps_done(R, dbs[i], tbs[i], "no index config reads this table");
        } else if (rc == 0) {
            R->sql_failed = false;
            rc = dr_resolve_table(R, &plan, 0);
            if (rc < 0 && R->sql_failed) { /* this table's snapshots fail, the others go on */
                char why[1024];
                snprintf(why, sizeof why, "%s", R->err);
                log_error("delayed", "run %llu: %s", R->id, why);
                if (!*R->unresolved) snprintf(R->unresolved, sizeof R->unresolved, "%s", why);
                R->st->errors++;
                rc = stage_done(R);
                if (rc == 0) rc = dr_snaps_failed(R, dbs[i], tbs[i], why);
            }
        }
        rt_plan_free(&plan);
    }
    for (size_t i = 0; i < nt; i++) free(dbs[i]), free(tbs[i]);
    free(dbs), free(tbs);
    if (rc < 0) { /* an INSERT sent before the failure answered, the rest dropped */
        char keep[1024];
        snprintf(keep, sizeof keep, "%s", R->err);
        stage_settle(R);
        sbuf_reset(&R->stage);
        R->nstage = 0;
        snprintf(R->err, R->errlen, "%s", keep);
        return sbuf_free(&q), -1;
    }
    rc = db_exec(R->meta, "START TRANSACTION", R->err, R->errlen);
    sbuf_reset(&q);
    sbuf_adds(&q, "INSERT INTO jobs (source, index_id, version, type, status, total_buckets, "
                  "bucket, params) SELECT ");
    qs(R->meta, &q, R->source);
    sbuf_printf(&q, ", index_id, 0, 'job', 'init', %d, bucket, '{\"delayed_run\":%llu}' FROM "
                    "delayed_run_ids WHERE run_id = %llu GROUP BY index_id, bucket "
                    "ORDER BY index_id, bucket", R->buckets, R->id, R->id);
    if (rc == 0) rc = exec(R, &q);
    sbuf_reset(&q);
    sbuf_printf(&q, "UPDATE delayed_runs SET resolved = 1, ids = (SELECT COUNT(*) FROM "
                    "delayed_run_ids WHERE run_id = %llu), error_text = ", R->id);
    qs(R->meta, &q, *R->unresolved ? R->unresolved : NULL);
    sbuf_printf(&q, " WHERE id = %llu", R->id);
    if (rc == 0) rc = exec(R, &q);
    if (rc == 0) rc = db_exec(R->meta, "COMMIT", R->err, R->errlen);
    else mysql_query(R->meta, "ROLLBACK");
    sbuf_free(&q);
    return rc;
}
