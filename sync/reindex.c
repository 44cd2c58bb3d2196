/* reindex: versioned rebuilds in resumable buckets (see reindex.h).
 *
 * Job rows (metadata table jobs, type 'index'):
 *   params       one line per document table of the index config:
 *                "<table position>\t<SQL condition of this bucket>" ("" = all
 *                rows, "0=1" = none: a key that is not an integer puts the
 *                whole table into bucket 0)
 *   data_cursor  "<table position>" (start of that table) or
 *                "<table position>\t<last key delivered>"
 * A job reads each table with
 *   SELECT columns FROM t WHERE (cond) AND key > cursor ORDER BY key LIMIT page
 * (keyset pagination, never OFFSET: across all buckets the rows examined
 * stay close to the table's size; with --by-mod each bucket examines the
 * whole table, as seed 004's MOD buckets do), builds the page's documents
 * whole from those rows (sync/docbuild.c docbuild_page: relations joined on
 * the key of a range bucket's page read that key range), delivers them
 * through its own delivery instance
 * and waits for the acknowledgement before it saves the cursor — so a crash
 * reads again at most the page in flight. */
#include "reindex.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "deliver/deliver.h"
#include "docbuild.h"
#include "index_mapping.h"
#include "json_exact.h"
#include "log.h"
#include "sbuf.h"
#include "search/search.h"

/* ---------- small helpers ---------- */

static const char *key_col(const struct mp_table *t) {
    for (size_t i = 0; i < t->ncolumns; i++)
        if (t->columns[i].is_key) return t->columns[i].name;
    return NULL;
}

/* SQL orders and compares its values as numbers (a string key holding "18"
 * does neither) */
static bool key_is_integer(const struct mp_table *t) {
    for (size_t i = 0; i < t->ncolumns; i++)
        if (t->columns[i].is_key) return mapping_is_integer_type(t->columns[i].mysql_type);
    return false;
}

/* A bucket's condition (params, below): "" (all rows), "0=1" (none), a range
 * of the key, or MOD_BUCKET "..." (seed 004's MOD buckets). Every one but the
 * last is an interval of the key: a keyset page of it holds every row
 * between its first and last key (docbuild_page's dense). */
#define MOD_BUCKET "MOD("
static bool bucket_is_key_interval(const char *cond) {
    return strncmp(cond, MOD_BUCKET, strlen(MOD_BUCKET)) != 0;
}

static bool doc_table(const struct mp_index *ix, size_t t) {
    return t == 0 || ix->tables[t].parent_table != NULL;
}

static void sq(MYSQL *m, sbuf *q, const char *s) { db_quote(m, q, s, strlen(s)); }

/* A statement on the jobs of a build: jobs finishing at the same moment can
 * deadlock in InnoDB (one job's UPDATE against another's NOT EXISTS check);
 * the victim simply runs again. Rows changed, or -1. */
static long long exec_retry(MYSQL *m, const char *sql, char *err, size_t errlen) {
    for (int attempt = 0;; attempt++) {
        long long n = db_exec_rows(m, sql, err, errlen);
        unsigned e = mysql_errno(m);
        if (n >= 0 || attempt >= 8 || (e != 1213 && e != 1205)) return n;
        struct timespec ts = {0, (long)(5 + 20 * attempt) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* Sleep ms in steps of at most 200 ms; false as soon as *stop is set. */
static bool nap_unless(const _Atomic int *stop, long ms) {
    while (ms > 0 && !*stop) {
        long step = ms < 200 ? ms : 200;
        struct timespec ts = {0, step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
    return !*stop;
}

/* SELECT one row; fills up to n columns (malloc'd, NULL for SQL NULL).
 * 1 row, 0 none, -1 error. */
static int row1(MYSQL *m, const char *sql, char **out, int n, char *err, size_t errlen) {
    for (int i = 0; i < n; i++) out[i] = NULL;
    if (mysql_real_query(m, sql, strlen(sql)) != 0)
        return errf(err, errlen, "%s (%u) in: %.200s", mysql_error(m), mysql_errno(m), sql);
    MYSQL_RES *res = mysql_store_result(m);
    if (!res) return mysql_errno(m) ? errf(err, errlen, "%s", mysql_error(m)) : 0;
    MYSQL_ROW row = mysql_fetch_row(res);
    if (row)
        for (int i = 0; i < n && i < (int)mysql_num_fields(res); i++)
            out[i] = row[i] ? xstrdup(row[i]) : NULL;
    mysql_free_result(res);
    return row ? 1 : 0;
}

static void free_row(char **r, int n) {
    for (int i = 0; i < n; i++) free(r[i]), r[i] = NULL;
}

static int engine(struct search_conn *k, const char *method, const char *path, const char *body,
                  struct search_resp *r, char *err, size_t errlen) {
    if (search_request(k, method, path, NULL, body, body ? strlen(body) : 0, r) != 0)
        return errf(err, errlen, "engine: %s %s: %s", method, path, r->err);
    return 0;
}

static void sync_log(MYSQL *meta, const char *source, const char *index_id, const char *event,
                     const char *detail) {
    sbuf q = SBUF_INIT;
    char err[256];
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    sbuf_adds(&q, "INSERT INTO sync_log (source, index_id, event, detail, node) VALUES (");
    sq(meta, &q, source);
    sbuf_printf(&q, ", %s, ", index_id ? index_id : "NULL");
    sq(meta, &q, event);
    sbuf_adds(&q, ", ");
    if (detail) sq(meta, &q, detail);
    else sbuf_adds(&q, "NULL");
    sbuf_printf(&q, ", '%s:%d')", host, (int)getpid());
    if (db_exec(meta, q.data, err, sizeof err) < 0)
        log_warn("reindex", "sync_log not written: %s", err);
    sbuf_free(&q);
}

/* The index config of alias with its validated model (types filled in). */
static int load_index(const struct ss_config *cfg, MYSQL *meta, MYSQL *src, const char *alias,
                      struct mapping *m, size_t *pos, char *err, size_t errlen) {
    if (mapping_db_load(meta, cfg->source.name, m, err, errlen) < 0) return REINDEX_ERR;
    size_t i = 0;
    while (i < m->nindices && strcmp(m->indices[i].alias, alias)) i++;
    if (i == m->nindices) {
        errf(err, errlen, "source %s has no index config \"%s\" (see searchsync mapping export)",
             cfg->source.name, alias);
        return REINDEX_UNKNOWN;
    }
    *pos = i;
    if (!src) return REINDEX_OK;
    return mapping_check_source(src, m, err, errlen) ? REINDEX_ERR : REINDEX_OK;
}

static int index_id_of(MYSQL *meta, const char *source, const char *alias, char **row, char *err,
                       size_t errlen) {
    /* id, state, current_version, building_version, history_retention */
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT id, state, current_version, building_version, history_retention "
                  "FROM index_configs WHERE source = ");
    sq(meta, &q, source);
    sbuf_adds(&q, " AND alias = ");
    sq(meta, &q, alias);
    int rc = row1(meta, q.data, row, 5, err, errlen);
    sbuf_free(&q);
    if (rc == 0) {
        errf(err, errlen, "source %s has no index config \"%s\"", source, alias);
        return REINDEX_UNKNOWN;
    }
    return rc < 0 ? REINDEX_ERR : REINDEX_OK;
}

/* ---------- bucket conditions ---------- */

static bool parse_i128(const char *s, __int128 *v) {
    if (!docbuild_is_integer(s)) return false;
    bool neg = *s == '-';
    if (neg || *s == '+') s++;
    unsigned __int128 x = 0;
    for (; *s; s++) x = x * 10 + (unsigned)(*s - '0');
    *v = neg ? -(__int128)x : (__int128)x;
    return true;
}

static void put_i128(sbuf *out, __int128 v) {
    char b[48];
    int n = 0;
    bool neg = v < 0;
    unsigned __int128 x = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
    do {
        b[n++] = (char)('0' + (int)(x % 10));
        x /= 10;
    } while (x);
    if (neg) sbuf_addc(out, '-');
    while (n) sbuf_addc(out, b[--n]);
}

int reindex_range_cond(const char *key, const char *min, const char *max, int b, int n,
                       sbuf *out) {
    __int128 lo, hi;
    if (!parse_i128(min, &lo) || !parse_i128(max, &hi) || hi < lo || n < 1 || b < 0 || b >= n)
        return -1;
    __int128 span = hi - lo + 1;
    __int128 from = lo + span * b / n, to = lo + span * (b + 1) / n;
    if (b > 0) {
        db_ident(out, key);
        sbuf_adds(out, " >= ");
        put_i128(out, from);
    }
    if (b < n - 1) {
        if (b > 0) sbuf_adds(out, " AND ");
        db_ident(out, key);
        sbuf_adds(out, " < ");
        put_i128(out, to);
    }
    return 0;
}

/* params of bucket b for every document table */
static int bucket_params(MYSQL *src, const struct mp_index *ix, int b, int n, bool by_mod,
                         sbuf *out, char *err, size_t errlen) {
    for (size_t t = 0; t < ix->ntables; t++) {
        if (!doc_table(ix, t)) continue;
        const struct mp_table *tb = &ix->tables[t];
        const char *key = key_col(tb);
        sbuf_printf(out, "%zu\t", t);
        if (n == 1) {
            sbuf_addc(out, '\n');
            continue;
        }
        if (!by_mod && !key_is_integer(tb)) { /* no ranges of a string key: all in bucket 0 */
            sbuf_adds(out, b != 0 ? "0=1\n" : "\n");
            continue;
        }
        if (by_mod) {
            const char *col = tb->bucket_column ? tb->bucket_column : key;
            sbuf_adds(out, MOD_BUCKET "ABS(COALESCE(");
            db_ident(out, col);
            sbuf_printf(out, ", 0)), %d) = %d\n", n, b);
            continue;
        }
        sbuf q = SBUF_INIT;
        sbuf_adds(&q, "SELECT MIN(");
        db_ident(&q, key);
        sbuf_adds(&q, "), MAX(");
        db_ident(&q, key);
        sbuf_adds(&q, ") FROM ");
        db_ident(&q, tb->db);
        sbuf_addc(&q, '.');
        db_ident(&q, tb->table);
        char *mm[2];
        int rc = row1(src, q.data, mm, 2, err, errlen);
        sbuf_free(&q);
        if (rc < 0) return -1;
        sbuf cond = SBUF_INIT;
        if (mm[0] && mm[1] && reindex_range_cond(key, mm[0], mm[1], b, n, &cond) == 0)
            sbuf_adds(out, cond.data ? cond.data : "");
        else if (b != 0) /* empty, or keys that are not integers: all in bucket 0 */
            sbuf_adds(out, "0=1");
        sbuf_addc(out, '\n');
        sbuf_free(&cond);
        free_row(mm, 2);
    }
    return 0;
}

/* ---------- request / reset / delete-all ---------- */

int reindex_request(const struct ss_config *cfg, struct search_client *client,
                    struct search_conn *k, MYSQL *meta, MYSQL *src,
                    const struct reindex_request *req, unsigned *version, char *err,
                    size_t errlen) {
    const char *source = cfg->source.name;
    struct mapping m = {0};
    size_t at = 0;
    int rc = load_index(cfg, meta, src, req->alias, &m, &at, err, errlen);
    if (rc != REINDEX_OK) {
        mapping_free(&m);
        return rc;
    }
    const struct mp_index *ix = &m.indices[at];
    for (size_t t = 0; t < ix->ntables; t++)
        if (doc_table(ix, t) && !key_col(&ix->tables[t])) {
            mapping_free(&m);
            return errf(err, errlen, "%s.%s has no key column", ix->tables[t].db,
                        ix->tables[t].table),
                   REINDEX_REFUSED;
        }
    char *row[5];
    rc = index_id_of(meta, source, req->alias, row, err, errlen);
    if (rc != REINDEX_OK) {
        mapping_free(&m);
        return rc;
    }
    char *id = row[0];
    if (!strcmp(row[1], "changing") || !strcmp(row[1], "switching")) {
        errf(err, errlen,
             "index %s is already being rebuilt (version %s, state %s): wait for it "
             "(searchsync status), or cancel it with searchsync reindex --reset %s",
             req->alias, row[3], row[1], req->alias);
        free_row(row, 5);
        mapping_free(&m);
        return REINDEX_REFUSED;
    }
    sbuf q = SBUF_INIT, body = SBUF_INIT, build = SBUF_INIT, params = SBUF_INIT;
    struct search_resp r;
    search_resp_init(&r);
    char *mx[1] = {NULL};
    int n = req->buckets > 0 ? req->buckets : cfg->reindex.buckets;
    unsigned v = 0;
    bool created = false;
    rc = REINDEX_ERR;
    sbuf_printf(&q, "SELECT GREATEST(%s, COALESCE((SELECT MAX(version) FROM index_versions WHERE "
                    "index_id = %s), 0), COALESCE((SELECT MAX(version) FROM reindex_runs WHERE "
                    "index_id = %s), 0)) + 1",
                row[2], id, id);
    if (row1(meta, q.data, mx, 1, err, errlen) < 1) goto out;
    v = (unsigned)strtoul(mx[0], NULL, 10);
    char phys[600];
    snprintf(phys, sizeof phys, "%s_v%u", req->alias, v);
    /* the version records the body it will serve with; it is created with
     * no refreshes and no replicas, restored at the switch */
    if (index_mapping_body(ix, search_client_dialect(client), false, &body, err, errlen) != 0 ||
        index_mapping_build_body(ix, search_client_dialect(client), &build, err, errlen) != 0)
        goto out;
    char path[700];
    snprintf(path, sizeof path, "/%s", phys);
    /* a leftover of a request that died before its metadata commit */
    if (engine(k, "DELETE", path, NULL, &r, err, errlen) < 0) goto out;
    if (engine(k, "PUT", path, build.data, &r, err, errlen) < 0) goto out;
    if (r.status != 200) {
        errf(err, errlen, "creating index %s: HTTP %ld %.400s", phys, r.status,
             r.body.data ? r.body.data : "");
        goto out;
    }
    created = true;
    for (int b = 0; b < n; b++) {
        sbuf_printf(&params, "%s", b ? "\x1e" : "");
        if (bucket_params(src, ix, b, n, req->by_mod, &params, err, errlen) < 0) goto out;
    }
    /* one transaction: the version, the run, the jobs, the state */
    if (db_exec(meta, "START TRANSACTION", err, errlen) < 0) goto out;
    sbuf_reset(&q);
    sbuf_printf(&q, "UPDATE index_configs SET state = 'changing', building_version = %u WHERE "
                    "id = %s AND state NOT IN ('changing', 'switching')",
                v, id);
    long long changed = db_exec_rows(meta, q.data, err, errlen);
    if (changed < 0) goto rollback;
    if (changed != 1) {
        errf(err, errlen, "index %s started changing meanwhile (another reindex request)",
             req->alias);
        rc = REINDEX_REFUSED;
        goto rollback;
    }
    sbuf_reset(&q);
    sbuf_printf(&q, "INSERT INTO index_versions (index_id, version, physical_name, state, body, "
                    "buckets, bucketing) VALUES (%s, %u, ",
                id, v);
    sq(meta, &q, phys);
    sbuf_adds(&q, ", 'changing', ");
    db_quote(meta, &q, body.data, body.len);
    sbuf_printf(&q, ", %d, '%s')", n, req->by_mod ? "mod" : "range");
    if (db_exec(meta, q.data, err, errlen) < 0) goto rollback;
    sbuf_reset(&q);
    sbuf_adds(&q, "INSERT INTO reindex_runs (source, index_id, alias, version, buckets) VALUES (");
    sq(meta, &q, source);
    sbuf_printf(&q, ", %s, ", id);
    sq(meta, &q, req->alias);
    sbuf_printf(&q, ", %u, %d)", v, n);
    if (db_exec(meta, q.data, err, errlen) < 0) goto rollback;
    const char *p = params.data;
    for (int b = 0; b < n; b++) {
        const char *e = strchr(p, '\x1e');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        sbuf_reset(&q);
        sbuf_adds(&q, "INSERT INTO jobs (source, index_id, version, type, status, total_buckets, "
                      "bucket, data_cursor, params) VALUES (");
        sq(meta, &q, source);
        sbuf_printf(&q, ", %s, %u, 'index', 'init', %d, %d, '0', ", id, v, n, b);
        db_quote(meta, &q, p, len);
        sbuf_addc(&q, ')');
        if (db_exec(meta, q.data, err, errlen) < 0) goto rollback;
        p = e ? e + 1 : p + len;
    }
    if (db_exec(meta, "COMMIT", err, errlen) < 0) goto out;
    {
        char detail[800];
        snprintf(detail, sizeof detail, "version %u requested (%s): %d bucket(s) by %s", v,
                 req->reason ? req->reason : "reindex", n, req->by_mod ? "MOD" : "key range");
        sync_log(meta, source, id, "reindex requested", detail);
    }
    log_info("reindex", "%s: version %u queued in %d bucket(s) (%s)", req->alias, v, n,
             req->reason ? req->reason : "reindex");
    *version = v;
    created = false;
    rc = REINDEX_OK;
    goto out;
rollback:
    db_exec(meta, "ROLLBACK", err + strlen(err), errlen - strlen(err));
out:
    if (created) {
        char e2[256];
        snprintf(path, sizeof path, "/%s_v%u", req->alias, v);
        engine(k, "DELETE", path, NULL, &r, e2, sizeof e2);
    }
    search_resp_free(&r);
    free(mx[0]);
    free_row(row, 5);
    sbuf_free(&q);
    sbuf_free(&body);
    sbuf_free(&build);
    sbuf_free(&params);
    mapping_free(&m);
    return rc;
}

/* Move the jobs' bookkeeping into reindex_run_jobs, close the run, delete the
 * jobs, keep keep_runs runs. Inside the caller's transaction. */
static int close_run(MYSQL *meta, const struct ss_config *cfg, const char *id, unsigned v,
                     const char *status, const char *error, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    int rc = -1;
    sbuf_printf(&q, "INSERT INTO reindex_run_jobs (run_id, bucket, status, error_text, rows_read, "
                    "docs_written, rejected, started_at, finished_at) SELECT r.id, j.bucket, "
                    "j.status, j.error_text, j.rows_read, j.docs_written, j.rejected, j.started_at, "
                    "j.finished_at FROM jobs j JOIN "
                    "reindex_runs r ON r.index_id = j.index_id AND r.version = j.version WHERE "
                    "j.index_id = %s AND j.version = %u AND j.type = 'index'",
                id, v);
    if (db_exec(meta, q.data, err, errlen) < 0) goto out;
    sbuf_reset(&q);
    sbuf_printf(&q, "UPDATE reindex_runs r SET status = '%s', finished_at = NOW(3), "
                    "rows_read = (SELECT COALESCE(SUM(rows_read), 0) FROM jobs WHERE index_id = %s "
                    "AND version = %u AND type = 'index'), docs_written = (SELECT "
                    "COALESCE(SUM(docs_written), 0) FROM jobs WHERE index_id = %s AND version = %u "
                    "AND type = 'index'), rejected = (SELECT COALESCE(SUM(rejected), 0) FROM jobs "
                    "WHERE index_id = %s AND version = %u AND type = 'index'), error_text = ",
                status, id, v, id, v, id, v);
    if (error) sq(meta, &q, error);
    else sbuf_adds(&q, "NULL");
    sbuf_printf(&q, " WHERE index_id = %s AND version = %u", id, v);
    if (db_exec(meta, q.data, err, errlen) < 0) goto out;
    sbuf_reset(&q);
    sbuf_printf(&q, "DELETE FROM jobs WHERE index_id = %s AND version = %u AND type = 'index'", id,
                v);
    if (db_exec(meta, q.data, err, errlen) < 0) goto out;
    /* bookkeeping of older runs beyond keep_runs */
    sbuf_reset(&q);
    sbuf_printf(&q, "SELECT id FROM reindex_runs WHERE index_id = %s ORDER BY id DESC LIMIT 1 "
                    "OFFSET %d",
                id, cfg->reindex.keep_runs - 1);
    char *cut[1];
    int got = row1(meta, q.data, cut, 1, err, errlen);
    if (got < 0) goto out;
    if (got == 1) {
        const char *del[] = {"DELETE FROM job_errors WHERE run_id IN (SELECT id FROM reindex_runs "
                             "WHERE index_id = %s AND id < %s)",
                             "DELETE FROM reindex_run_jobs WHERE run_id IN (SELECT id FROM "
                             "reindex_runs WHERE index_id = %s AND id < %s)",
                             "DELETE FROM reindex_runs WHERE index_id = %s AND id < %s"};
        for (int i = 0; i < 3 && got >= 0; i++) {
            sbuf_reset(&q);
            sbuf_printf(&q, del[i], id, cut[0]);
            if (db_exec(meta, q.data, err, errlen) < 0) got = -1;
        }
        free(cut[0]);
        if (got < 0) goto out;
    }
    rc = 0;
out:
    sbuf_free(&q);
    return rc;
}

/* Undo a build (failure or cancel) if it is still the one building:
 * the conditional UPDATE decides; the winner deletes <alias>_vN. */
static int undo_build(const struct ss_config *cfg, struct search_conn *k, MYSQL *meta,
                      const char *alias, const char *id, unsigned v, const char *status,
                      const char *reason, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    int rc = REINDEX_ERR;
    if (db_exec(meta, "START TRANSACTION", err, errlen) < 0) goto out;
    sbuf_printf(&q, "UPDATE index_configs SET state = IF(current_version > 0, 'available', "
                    "'unavailable'), building_version = 0 WHERE id = %s AND building_version = "
                    "%u AND state = 'changing'",
                id, v);
    long long changed = db_exec_rows(meta, q.data, err, errlen);
    if (changed < 0) goto rollback;
    if (changed != 1) {
        db_exec(meta, "ROLLBACK", err, errlen);
        rc = REINDEX_REFUSED;
        errf(err, errlen, "version %u of %s is no longer being built", v, alias);
        goto out;
    }
    sbuf_reset(&q);
    sbuf_printf(&q, "DELETE FROM index_versions WHERE index_id = %s AND version = %u", id, v);
    if (db_exec(meta, q.data, err, errlen) < 0) goto rollback;
    if (close_run(meta, cfg, id, v, status, reason, err, errlen) < 0) goto rollback;
    if (db_exec(meta, "COMMIT", err, errlen) < 0) goto out;
    char detail[1400];
    snprintf(detail, sizeof detail, "version %u %s: %s", v, status, reason ? reason : "");
    sync_log(meta, cfg->source.name, id, !strcmp(status, "failed") ? "reindex failed"
                                                                    : "reindex cancelled",
             detail);
    struct search_resp r;
    search_resp_init(&r);
    char path[700], e2[256];
    snprintf(path, sizeof path, "/%s_v%u", alias, v);
    if (engine(k, "DELETE", path, NULL, &r, e2, sizeof e2) < 0)
        log_warn("reindex", "%s_v%u not deleted (delete it by hand): %s", alias, v, e2);
    search_resp_free(&r);
    rc = REINDEX_OK;
    goto out;
rollback:
    db_exec(meta, "ROLLBACK", err + strlen(err), errlen - strlen(err));
out:
    sbuf_free(&q);
    return rc;
}

int reindex_reset(const struct ss_config *cfg, struct search_conn *k, MYSQL *meta,
                  const char *alias, const char *by, char *err, size_t errlen) {
    char *row[5];
    int rc = index_id_of(meta, cfg->source.name, alias, row, err, errlen);
    if (rc != REINDEX_OK) return rc;
    if (strcmp(row[1], "changing") != 0) {
        errf(err, errlen, "index %s is %s: there is no build to cancel%s", alias, row[1],
             !strcmp(row[1], "switching") ? " (the alias is being switched to the new version)"
                                          : "");
        free_row(row, 5);
        return REINDEX_REFUSED;
    }
    unsigned v = (unsigned)strtoul(row[3], NULL, 10);
    rc = undo_build(cfg, k, meta, alias, row[0], v, "cancelled", by, err, errlen);
    if (rc == REINDEX_OK) log_info("reindex", "%s: build of version %u cancelled", alias, v);
    free_row(row, 5);
    return rc;
}

int reindex_delete_all(const struct ss_config *cfg, struct search_conn *k, MYSQL *meta,
                       const char *alias, char *err, size_t errlen) {
    char *row[5];
    int rc = index_id_of(meta, cfg->source.name, alias, row, err, errlen);
    if (rc != REINDEX_OK) return rc;
    if (strcmp(row[1], "available") && strcmp(row[1], "unavailable") && strcmp(row[1], "history")) {
        errf(err, errlen, "index %s is %s: --delete-all works from available or history only "
                          "(cancel the build first with --reset)",
             alias, row[1]);
        free_row(row, 5);
        return REINDEX_REFUSED;
    }
    sbuf q = SBUF_INIT;
    struct search_resp r;
    search_resp_init(&r);
    rc = REINDEX_ERR;
    /* the state first, so a daemon stops writing before the indices go */
    sbuf_printf(&q, "UPDATE index_configs SET state = 'unavailable', current_version = 0 WHERE "
                    "id = %s AND state IN ('available', 'unavailable', 'history')",
                row[0]);
    long long changed = db_exec_rows(meta, q.data, err, errlen);
    if (changed < 0) goto out;
    if (changed == 0 && strcmp(row[1], "unavailable")) {
        errf(err, errlen, "index %s changed state meanwhile", alias);
        rc = REINDEX_REFUSED;
        goto out;
    }
    char path[700];
    snprintf(path, sizeof path, "/%s_v*?expand_wildcards=all", alias);
    if (engine(k, "DELETE", path, NULL, &r, err, errlen) < 0) goto out;
    if (r.status != 200 && r.status != 404) {
        errf(err, errlen, "deleting %s_v*: HTTP %ld %.300s", alias, r.status,
             r.body.data ? r.body.data : "");
        goto out;
    }
    sbuf_reset(&q);
    sbuf_printf(&q, "DELETE FROM index_versions WHERE index_id = %s", row[0]);
    if (db_exec(meta, q.data, err, errlen) < 0) goto out;
    sync_log(meta, cfg->source.name, row[0], "indices deleted", "reindex --delete-all");
    log_info("reindex", "%s: every version deleted", alias);
    rc = REINDEX_OK;
out:
    search_resp_free(&r);
    sbuf_free(&q);
    free_row(row, 5);
    return rc;
}

/* ---------- the runner ---------- */

struct job {
    unsigned long long id;
    int bucket;
    char *params, *cursor;
    bool done;
};

struct reindex_runner;

/* A page read and built but not yet handed to delivery: its documents wait
 * here while the page before it is being acknowledged, so at most one page
 * per job is ever delivered beyond the saved cursor (a restart reads at most
 * that page twice) while reading the next page overlaps the engine's work. */
struct page_doc {
    size_t id, routing, body, body_len; /* offsets into text; routing SIZE_MAX = none */
};
struct page {
    size_t t;        /* the table (index into the index config's tables) */
    char *last;      /* its last key: the cursor once it is acknowledged */
    size_t rows;
    uint64_t version; /* the binlog position read before the page */
    sbuf text;
    struct page_doc *docs;
    size_t ndocs, cap;
};
/* the page delivered and not yet acknowledged */
struct sent_page {
    bool on;
    uint64_t seq;
    size_t t, rows;
    char *last;
    unsigned long long docs;
};

struct worker {
    struct reindex_runner *r;
    pthread_t th;
    MYSQL *src, *meta;
    struct deliver *d;
    _Atomic(struct job *) job;   /* the job it runs now (read by delivery's helpers) */
    _Atomic unsigned long long rejected; /* of the current job */
    struct page next;            /* read and built, waiting for the page before it */
    int snap;                    /* the source reports snapshot positions: -1 not known yet, 0 no, 1 yes */
    unsigned pages;              /* read by the current job (RAMP_PAGES ramp up) */
    struct sent_page sent;
    char err[1024];
};

struct reindex_runner {
    const struct ss_config *cfg;
    struct search_client *client;
    char *alias, *phys, *id;
    unsigned version;
    struct mapping m;
    size_t at;
    db_params srcp, metap;
    pthread_mutex_t mu;
    struct job *jobs;
    size_t njobs, next;
    struct worker *w;
    int nw, wcap;
    _Atomic int stop;       /* 1: stop between pages (shutdown), 2: the build fails */
    _Atomic int failing;    /* claimed by the one worker that rolls the build back */
    _Atomic int switcher;   /* 1 + index of the worker doing the switch here, 0 none */
    _Atomic int running;    /* threads still running */
    _Atomic unsigned long long rejected_total;
    pthread_mutex_t errmu;  /* guards errdb (job_errors from helper threads), why */
    MYSQL *errdb;
    char why[1100];         /* why the build fails (rejections, or a worker error) */
};

static void runner_fail(struct reindex_runner *r, struct worker *w, const char *reason);

/* delivery's dead letters of a reindex: job_errors rows, and the count */
static int reindex_dead_letter(void *ud, const struct dead_letter *dl) {
    struct worker *w = ud;
    struct reindex_runner *r = w->r;
    struct job *job = w->job; /* the page in flight belongs to it (settled before it changes) */
    char err[512];
    sbuf q = SBUF_INIT;
    pthread_mutex_lock(&r->errmu);
    int rc = db_ensure(&r->errdb, &r->metap, err, sizeof err);
    if (rc == 0) {
        sbuf_printf(&q, "INSERT INTO job_errors (job_id, run_id, business_id, error_text) SELECT "
                        "%llu, id, ",
                    job ? job->id : 0ULL);
        sq(r->errdb, &q, dl->doc_id);
        sbuf_adds(&q, ", ");
        sq(r->errdb, &q, dl->error ? dl->error : "");
        sbuf_printf(&q, " FROM reindex_runs WHERE index_id = %s AND version = %u", r->id,
                    r->version);
        rc = db_exec(r->errdb, q.data, err, sizeof err);
    }
    pthread_mutex_unlock(&r->errmu);
    sbuf_free(&q);
    if (rc < 0) {
        log_warn("reindex", "job error not recorded (will retry): %s", err);
        return -1;
    }
    w->rejected++;
    unsigned long long total = ++r->rejected_total;
    if (total > (unsigned long long)r->cfg->reindex.max_rejected && !r->stop) {
        char why[600];
        snprintf(why, sizeof why,
                 "%llu documents rejected by the engine (more than [reindex] max_rejected = %d); "
                 "the first errors are in job_errors, e.g. %s: %.300s",
                 total, r->cfg->reindex.max_rejected, dl->doc_id, dl->error ? dl->error : "");
        pthread_mutex_lock(&r->errmu);
        snprintf(r->why, sizeof r->why, "%s", why);
        pthread_mutex_unlock(&r->errmu);
        r->stop = 2; /* the worker that sees it fails the build */
    }
    return 0;
}

static int page_doc(void *ctx, const char *id, const char *routing, const char *body,
                    size_t len) {
    struct page *p = ctx;
    if (p->ndocs == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 256;
        p->docs = xrealloc(p->docs, sizeof *p->docs * p->cap);
    }
    struct page_doc *pd = &p->docs[p->ndocs++];
    pd->id = p->text.len;
    sbuf_add(&p->text, id, strlen(id) + 1);
    pd->routing = SIZE_MAX;
    if (routing) {
        pd->routing = p->text.len;
        sbuf_add(&p->text, routing, strlen(routing) + 1);
    }
    pd->body = p->text.len;
    pd->body_len = len;
    sbuf_add(&p->text, body, len);
    sbuf_addc(&p->text, '\0');
    return 0;
}

static void page_free(struct page *p) {
    free(p->last);
    sbuf_free(&p->text);
    free(p->docs);
    memset(p, 0, sizeof *p);
}

static uint64_t binlog_version(struct worker *w, uint32_t epoch) {
    MYSQL *m = w->src;
    if (mysql_real_query(m, "SHOW MASTER STATUS", 18) != 0) {
        errf(w->err, sizeof w->err, "SHOW MASTER STATUS: %s (%u)", mysql_error(m),
             mysql_errno(m));
        return 0;
    }
    MYSQL_RES *res = mysql_store_result(m);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : NULL;
    uint64_t v = 0;
    if (row && row[0] && row[1]) {
        const char *dot = strrchr(row[0], '.');
        v = version_make(epoch, dot ? (uint32_t)strtoul(dot + 1, NULL, 10) : 0,
                         strtoull(row[1], NULL, 10));
    }
    if (res) mysql_free_result(res);
    if (!v)
        errf(w->err, sizeof w->err, "the source's binlog position is unknown (is log_bin on?)");
    return v;
}

/* A job's first pages are smaller: 1/8, 1/4 and 1/2 of [reindex] page_size,
 * then page_size. The engine gets the job's first batch while a full page
 * would still be read, and each page is built while the one before it is
 * indexed, so the ramp leaves no gap. */
#define RAMP_PAGES 3
#define RAMP_MIN_ROWS 10

/* Read and build the next page of table t (keys after *after) into w->next:
 * 1 a page was read (*after moves to its last key), 0 the table is
 * finished, -1 error (w->err). */
static int read_page_in(struct worker *w, size_t t, const char *cond, char **after);

static int read_page(struct worker *w, size_t t, const char *cond, char **after) {
    struct reindex_runner *r = w->r;
    const struct mp_index *ix = &r->m.indices[r->at];
    struct page *p = &w->next;
    /* The page's version is the binlog position its snapshot matches: every
     * change before it is in the page, every change after it comes as a
     * dual write with a greater version. Without a server that reports that
     * position (MySQL), the position read just before the snapshot is used:
     * a transaction binlogged but not yet visible at that instant is then
     * missed (see docs/operations.md). */
    if (w->snap == 0) {
        p->version = binlog_version(w, ix->epoch);
        if (!p->version) return -1;
    }
    char file[512];
    unsigned long long pos = 0;
    int s = db_snapshot_begin(w->src, file, sizeof file, &pos, w->err, sizeof w->err);
    if (s < 0) return -1;
    if (s == 1) {
        const char *dot = strrchr(file, '.');
        p->version = version_make(ix->epoch, dot ? (uint32_t)strtoul(dot + 1, NULL, 10) : 0, pos);
        w->snap = 1;
    } else if (w->snap != 0) { /* first page on a server without it: learn, start again */
        db_snapshot_end(w->src);
        w->snap = 0;
        log_warn("reindex", "the source does not report the binlog position of a consistent "
                 "snapshot (Binlog_snapshot_position: MariaDB and Percona Server do); "
                 "pages use SHOW MASTER STATUS read just before their snapshot");
        return read_page(w, t, cond, after);
    }
    int rc = read_page_in(w, t, cond, after);
    db_snapshot_end(w->src);
    return rc;
}

/* read_page inside the page's snapshot: one keyset query reads the page's
 * rows whole (sync/docbuild.c docbuild_page). */
static int read_page_in(struct worker *w, size_t t, const char *cond, char **after) {
    struct reindex_runner *r = w->r;
    const struct mp_index *ix = &r->m.indices[r->at];
    struct page *p = &w->next;
    struct docbuild b;
    docbuild_init(&b, w->src, ix);
    struct docbuild_sink sink = {page_doc, NULL, p};
    sbuf_reset(&p->text);
    p->ndocs = 0;
    char *last = NULL;
    size_t rows = 0;
    size_t size = (size_t)r->cfg->reindex.page_size;
    if (w->pages < RAMP_PAGES) size >>= RAMP_PAGES - w->pages;
    if (size < RAMP_MIN_ROWS) size = RAMP_MIN_ROWS;
    int rc = docbuild_page(&b, t, cond, *after, size,
                           bucket_is_key_interval(cond), &sink, &last, &rows, w->err,
                           sizeof w->err);
    if (rc == 1) {
        w->pages++;
        p->t = t;
        p->rows = rows;
        free(p->last);
        p->last = last;
        free(*after);
        *after = xstrdup(last);
    }
    return rc;
}

/* A statement on the job's metadata row that a restart of the metadata
 * server must not fail: a lost connection is waited out (backing off to
 * 5 s, said every minute or so) until the server is back or the build stops.
 * Rows changed, or -1 (an error that is not a lost connection, a statement
 * that dropped a fresh connection 6 times, or a stop; w->err). An UPDATE
 * whose commit went through but whose answer was lost runs twice: a page's
 * rows can then be counted twice in the run's statistics (not in the
 * cursor). */
static long long meta_exec_wait(struct worker *w, const char *sql) {
    struct reindex_runner *r = w->r;
    long delay_ms = 250;
    for (int attempt = 0, drops = 0;; attempt++) {
        if (db_ensure(&w->meta, &r->metap, w->err, sizeof w->err) == 0) {
            long long n = exec_retry(w->meta, sql, w->err, sizeof w->err);
            if (n >= 0 || !db_conn_lost(w->meta)) return n;
            if (++drops > 5) return -1; /* dropped every time, the server answering */
        }
        if (attempt % 12 == 0)
            log_warn("reindex", "%s v%u: %s; waiting for the metadata server (the build goes "
                     "on when it is back)", r->alias, r->version, w->err);
        if (!nap_unless(&r->stop, delay_ms)) return -1;
        delay_ms = delay_ms * 2 > 5000 ? 5000 : delay_ms * 2;
    }
}

/* Wait for the page in flight to be acknowledged (engine outages are waited
 * out), then save its cursor and counters. 0 (also when none was in
 * flight), -1 error (w->err), -2 shutting down (the cursor stays before that
 * page), -3 the job is gone (cancelled). */
static int settle_page(struct worker *w) {
    struct reindex_runner *r = w->r;
    struct sent_page *sp = &w->sent;
    if (!sp->on) return 0;
    for (;;) {
        if (deliver_wait_txn(w->d, sp->seq, 1000) == DELIVER_OK) break;
        if (r->stop == 1) return -2;
    }
    int rc = 0;
    sbuf c = SBUF_INIT;
    sbuf_printf(&c, "UPDATE jobs SET status = 'running', data_cursor = ");
    sbuf cur = SBUF_INIT;
    sbuf_printf(&cur, "%zu\t%s", sp->t, sp->last);
    db_quote(w->meta, &c, cur.data, cur.len); /* w->meta may be NULL: then as utf8mb4 */
    sbuf_printf(&c, ", rows_read = rows_read + %zu, docs_written = docs_written + %llu, "
                    "rejected = %llu, started_at = COALESCE(started_at, NOW(3)) WHERE id = %llu",
                sp->rows, sp->docs, (unsigned long long)w->rejected, w->job->id);
    long long changed = meta_exec_wait(w, c.data);
    if (changed < 0)
        rc = r->stop == 1 ? -2 : -1; /* stopped: the page is read again after the restart */
    else if (changed == 0)
        rc = -3; /* the job is gone: cancelled */
    sbuf_free(&c);
    sbuf_free(&cur);
    sp->on = false;
    free(sp->last);
    sp->last = NULL;
    return rc;
}

/* Hand w->next to delivery as one transaction; it becomes the page in flight. */
static int send_page(struct worker *w) {
    struct page *p = &w->next;
    for (size_t i = 0; i < p->ndocs; i++) {
        const struct page_doc *pd = &p->docs[i];
        struct change c = {.index = w->r->phys,
                           .doc_id = p->text.data + pd->id,
                           .routing = pd->routing == SIZE_MAX ? NULL : p->text.data + pd->routing,
                           .version = p->version,
                           .op = CHANGE_INDEX,
                           .body = p->text.data + pd->body,
                           .body_len = pd->body_len};
        if (deliver_submit(w->d, &c) != DELIVER_OK) {
            errf(w->err, sizeof w->err, "delivery is shutting down");
            return -2;
        }
    }
    struct sent_page *sp = &w->sent;
    sp->seq = deliver_txn_end(w->d, "page");
    sp->t = p->t;
    sp->rows = p->rows;
    sp->docs = p->ndocs;
    free(sp->last);
    sp->last = p->last;
    p->last = NULL;
    sp->on = true;
    return 0;
}

/* 0 done, -1 failed (w->err), -2 stopped, -3 cancelled */
static int run_job(struct worker *w, struct job *j) {
    struct reindex_runner *r = w->r;
    w->job = j;
    w->rejected = 0;
    size_t start_t = (size_t)strtoul(j->cursor ? j->cursor : "0", NULL, 10);
    const char *tab = j->cursor ? strchr(j->cursor, '\t') : NULL;
    char *after = tab ? xstrdup(tab + 1) : NULL;
    size_t cur_t = start_t;
    int rc = 0;
    w->pages = 0;
    const char *p = j->params ? j->params : "";
    while (*p && rc == 0) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char *line = xstrndup(p, len);
        p += len + (nl ? 1 : 0);
        char *t_tab = strchr(line, '\t');
        size_t t = (size_t)strtoul(line, NULL, 10);
        const char *cond = t_tab ? t_tab + 1 : "";
        if (t < start_t || t >= r->m.indices[r->at].ntables) {
            free(line);
            continue;
        }
        if (t != cur_t) { /* the cursor's key belongs to the table it was saved in */
            free(after), after = NULL;
            cur_t = t;
        }
        for (;;) {
            if (r->stop) {
                rc = r->stop == 1 ? -2 : -1;
                break;
            }
            /* A lost source connection (a restart, a KILL) is waited out
             * until the server answers again, backing off to 30 s; w->src is
             * NULL while it does not. Any other error is tried 5 times, and
             * so is a read that loses a connection made just before (a
             * statement running past read_timeout_ms drops it every time:
             * no outage to wait for). */
            int tries = 0, drops = 0, pr;
            long delay_ms = 1000;
            for (int attempt = 0;; attempt++) {
                bool had_conn = w->src != NULL;
                pr = had_conn ? read_page(w, t, cond, &after) : -1;
                if (pr != -1 || r->stop) break;
                bool lost = !had_conn || db_conn_lost(w->src);
                if (!lost && ++tries > 5) break;
                if (lost && had_conn && ++drops > 5) {
                    errf(w->err + strlen(w->err), sizeof w->err - strlen(w->err),
                         " (the connection dropped at this page 6 times, the server answering "
                         "in between: a query running past [source] read_timeout_ms?)");
                    break;
                }
                if (!lost || attempt % 6 == 0)
                    log_warn("reindex", "%s v%u bucket %d: %s (%s)", r->alias, r->version,
                             j->bucket, w->err,
                             lost ? "waiting for the source; the job goes on from its cursor"
                                  : "retrying");
                if (!nap_unless(&r->stop, delay_ms)) break;
                delay_ms = delay_ms * 2 > 30000 ? 30000 : delay_ms * 2;
                char e2[256];
                if (db_ensure(&w->src, &r->srcp, e2, sizeof e2) < 0)
                    snprintf(w->err, sizeof w->err, "%s", e2);
            }
            if (pr == -1 && r->stop) pr = r->stop == 1 ? -2 : -1;
            if (pr == 0) break;
            if (pr < 0) {
                rc = pr;
                break;
            }
            /* this page is built: the one before it is acknowledged and
             * recorded first, then this one goes */
            rc = settle_page(w);
            if (rc == 0) rc = send_page(w);
            if (rc != 0) break;
        }
        free(line);
    }
    if (rc == 0) rc = settle_page(w);
    w->sent.on = false; /* what was not settled is read again after a restart */
    free(w->sent.last);
    w->sent.last = NULL;
    free(after);
    if (rc == -1 && w->err[0]) { /* init -> running -> error: kept in the run's bookkeeping */
        sbuf q = SBUF_INIT;
        char e2[256];
        sbuf_adds(&q, "UPDATE jobs SET status = 'error', finished_at = NOW(3), error_text = ");
        if (db_ensure(&w->meta, &r->metap, e2, sizeof e2) == 0) {
            sq(w->meta, &q, w->err);
            sbuf_printf(&q, " WHERE id = %llu", j->id);
            exec_retry(w->meta, q.data, e2, sizeof e2);
        }
        sbuf_free(&q);
    }
    if (rc == 0) {
        sbuf q = SBUF_INIT;
        sbuf_printf(&q, "UPDATE jobs SET status = 'done', finished_at = NOW(3), rejected = %llu, "
                        "started_at = COALESCE(started_at, NOW(3)) WHERE id = %llu",
                    (unsigned long long)w->rejected, j->id);
        if (meta_exec_wait(w, q.data) < 0) rc = r->stop == 1 ? -2 : -1;
        sbuf_free(&q);
    }
    w->job = NULL;
    return rc;
}

/* engine() for the switch: a transport error, or an answer an engine gives
 * while it is busy or restarting (429, 502, 503, 504), is waited out, backing
 * off to 5 s and said about once a minute, until it answers or the build
 * stops: a finished build is not rolled back for a moment of unavailability.
 * Other answers are the caller's to judge. */
static int engine_wait(struct reindex_runner *r, struct search_conn *k, const char *method,
                       const char *path, const char *body, struct search_resp *resp, char *err,
                       size_t errlen) {
    long delay_ms = 250;
    for (int attempt = 0;; attempt++) {
        int rc = engine(k, method, path, body, resp, err, errlen);
        long st = resp->status;
        if (rc == 0 && st != 429 && st != 502 && st != 503 && st != 504) return 0;
        if (rc == 0)
            errf(err, errlen, "engine: %s %s: HTTP %ld %.200s", method, path, st,
                 resp->body.data ? resp->body.data : "");
        if (attempt % 12 == 0)
            log_warn("reindex", "%s v%u: %s; the switch goes on when the engine answers",
                     r->alias, r->version, err);
        if (!nap_unless(&r->stop, delay_ms)) return -1;
        delay_ms = delay_ms * 2 > 5000 ? 5000 : delay_ms * 2;
    }
}

/* A step of the switch that may fail without stopping it (POST
 * /<index>/<action>): a failure is logged with what follows from it. */
static void switch_step(struct search_conn *k, const char *phys, const char *action,
                        struct search_resp *resp, const char *consequence) {
    char path[700], err[512] = "";
    snprintf(path, sizeof path, "/%s/%s", phys, action);
    if (engine(k, "POST", path, NULL, resp, err, sizeof err) == 0 && resp->status == 200) return;
    if (!err[0])
        snprintf(err, sizeof err, "HTTP %ld %.300s", resp->status,
                 resp->body.data ? resp->body.data : "");
    log_warn("reindex", "POST %s before the switch failed (%s); %s", path, err, consequence);
}

/* All jobs done: the one caller whose UPDATE finds none unfinished switches
 * the alias. 1 switched, 0 not the last, -1 error. */
static int try_finish(struct worker *w, bool may_resume) {
    struct reindex_runner *r = w->r;
    const struct mp_index *ix = &r->m.indices[r->at];
    /* the metadata server may be restarting: waited out, as for the pages */
    if (meta_exec_wait(w, "DO 0") < 0) return -1;
    int me = (int)(w - r->w) + 1;
    MYSQL *meta = w->meta;
    sbuf q = SBUF_INIT;
    struct search_resp resp;
    search_resp_init(&resp);
    struct search_conn *k = search_conn_new(r->client);
    int rc = -1;
    sbuf_printf(&q, "UPDATE index_configs SET state = 'switching' WHERE id = %s AND "
                    "building_version = %u AND state = 'changing' AND NOT EXISTS (SELECT 1 FROM "
                    "jobs WHERE index_id = %s AND version = %u AND type = 'index' AND status <> "
                    "'done')",
                r->id, r->version, r->id, r->version);
    long long changed = exec_retry(meta, q.data, w->err, sizeof w->err);
    if (changed < 0) goto out;
    if (changed != 1) {
        char *st[2];
        sbuf_reset(&q);
        sbuf_printf(&q, "SELECT state, building_version FROM index_configs WHERE id = %s", r->id);
        if (row1(meta, q.data, st, 2, w->err, sizeof w->err) < 1) goto out;
        bool resume = may_resume && !strcmp(st[0], "switching") &&
                      strtoul(st[1], NULL, 10) == r->version; /* a crash mid-switch */
        free_row(st, 2);
        /* and no other worker of this process is switching it */
        int none = 0;
        if (resume && !atomic_compare_exchange_strong(&r->switcher, &none, me))
            resume = none == me;
        if (!resume) {
            rc = 0;
            goto out;
        }
    }
    r->switcher = me;
    /* refresh, settings back, then the alias in one atomic call. The refresh
     * runs while refresh_interval is still -1: restored first, the engine's
     * own scheduled refresh ran beside this one (12 refreshes of the version
     * where a plain bulk load has 9) */
    char path[700];
    sbuf body = SBUF_INIT;
    switch_step(k, r->phys, "_refresh", &resp,
                "its refresh interval, restored next, makes its documents searchable within a "
                "second");
    /* A version built without replicas and about to get them is committed
     * first: without refreshes the engine rarely flushed it, and a new
     * replica copies the last commit's files and then replays every
     * operation after it from the translog, that is, indexes most of the
     * version once more. After the flush it copies files only. */
    if (ix->replicas > 0)
        switch_step(k, r->phys, "_flush", &resp,
                    "its replicas recover by replaying its translog instead");
    snprintf(path, sizeof path, "/%s/_settings", r->phys);
    sbuf_printf(&body, "{\"index\":{\"refresh_interval\":null,\"number_of_replicas\":%d}}",
                ix->replicas);
    if (engine_wait(r, k, "PUT", path, body.data, &resp, w->err, sizeof w->err) < 0 ||
        resp.status != 200) {
        if (resp.status) errf(w->err, sizeof w->err, "restoring the settings of %s: HTTP %ld %.300s",
                              r->phys, resp.status, resp.body.data ? resp.body.data : "");
        sbuf_free(&body);
        goto out;
    }
    snprintf(path, sizeof path, "/_alias/%s", r->alias);
    if (engine_wait(r, k, "GET", path, NULL, &resp, w->err, sizeof w->err) < 0) {
        sbuf_free(&body);
        goto out;
    }
    sbuf_reset(&body);
    sbuf_adds(&body, "{\"actions\":[");
    if (resp.status == 200) {
        cJSON *j = json_exact_parse(resp.body.data, resp.body.len);
        cJSON *it;
        cJSON_ArrayForEach(it, j) {
            if (!strcmp(it->string, r->phys)) continue;
            sbuf_adds(&body, "{\"remove\":{\"index\":");
            json_escape(&body, it->string, strlen(it->string));
            sbuf_adds(&body, ",\"alias\":");
            json_escape(&body, r->alias, strlen(r->alias));
            sbuf_adds(&body, "}},");
        }
        cJSON_Delete(j);
    }
    sbuf_adds(&body, "{\"add\":{\"index\":");
    json_escape(&body, r->phys, strlen(r->phys));
    sbuf_adds(&body, ",\"alias\":");
    json_escape(&body, r->alias, strlen(r->alias));
    sbuf_adds(&body, "}}]}");
    if (engine_wait(r, k, "POST", "/_aliases", body.data, &resp, w->err, sizeof w->err) < 0 ||
        resp.status != 200) {
        if (resp.status)
            errf(w->err, sizeof w->err, "moving alias %s to %s: HTTP %ld %.300s", r->alias,
                 r->phys, resp.status, resp.body.data ? resp.body.data : "");
        sbuf_free(&body);
        goto out;
    }
    sbuf_free(&body);
    /* the metadata, in one transaction */
    if (db_exec(meta, "START TRANSACTION", w->err, sizeof w->err) < 0) goto out;
    sbuf_reset(&q);
    sbuf_printf(&q, "UPDATE index_versions SET state = 'history' WHERE index_id = %s AND state = "
                    "'available' AND version <> %u",
                r->id, r->version);
    if (db_exec(meta, q.data, w->err, sizeof w->err) < 0) goto rollback;
    sbuf_reset(&q);
    sbuf_printf(&q, "UPDATE index_versions SET state = 'available', switched_at = NOW(3) WHERE "
                    "index_id = %s AND version = %u",
                r->id, r->version);
    if (db_exec(meta, q.data, w->err, sizeof w->err) < 0) goto rollback;
    sbuf_reset(&q);
    sbuf_printf(&q, "UPDATE index_configs SET state = 'available', current_version = %u, "
                    "building_version = 0 WHERE id = %s",
                r->version, r->id);
    if (db_exec(meta, q.data, w->err, sizeof w->err) < 0) goto rollback;
    if (close_run(meta, r->cfg, r->id, r->version, "done", NULL, w->err, sizeof w->err) < 0)
        goto rollback;
    if (db_exec(meta, "COMMIT", w->err, sizeof w->err) < 0) goto out;
    char *tot[3];
    sbuf_reset(&q);
    sbuf_printf(&q, "SELECT rows_read, docs_written, TIMESTAMPDIFF(MICROSECOND, started_at, "
                    "finished_at) / 1e6 FROM reindex_runs WHERE index_id = %s AND version = %u",
                r->id, r->version);
    if (row1(meta, q.data, tot, 3, w->err, sizeof w->err) == 1) {
        char detail[600];
        snprintf(detail, sizeof detail, "version %u live: %s rows read, %s documents written, "
                                        "%llu rejected, %s s",
                 r->version, tot[0], tot[1], (unsigned long long)r->rejected_total,
                 tot[2] ? tot[2] : "?");
        sync_log(meta, r->cfg->source.name, r->id, "reindex done", detail);
        log_info("reindex", "%s: %s", r->alias, detail);
    }
    free_row(tot, 3);
    /* history beyond history_retention: deleted */
    sbuf_reset(&q);
    sbuf_printf(&q, "SELECT version, physical_name FROM index_versions WHERE index_id = %s AND "
                    "state = 'history' ORDER BY version DESC LIMIT 1000 OFFSET %d",
                r->id, ix->history_retention > 0 ? ix->history_retention : 0);
    if (mysql_real_query(meta, q.data, q.len) == 0) {
        MYSQL_RES *res = mysql_store_result(meta);
        MYSQL_ROW row;
        sbuf dels = SBUF_INIT;
        while (res && (row = mysql_fetch_row(res))) {
            snprintf(path, sizeof path, "/%s", row[1]);
            char e2[256];
            if (engine(k, "DELETE", path, NULL, &resp, e2, sizeof e2) == 0)
                sbuf_printf(&dels, "%s%s", dels.len ? "," : "", row[0]);
        }
        if (res) mysql_free_result(res);
        if (dels.len) {
            sbuf_reset(&q);
            sbuf_printf(&q, "DELETE FROM index_versions WHERE index_id = %s AND version IN (%s)",
                        r->id, dels.data);
            char e2[256];
            db_exec(meta, q.data, e2, sizeof e2);
        }
        sbuf_free(&dels);
    }
    rc = 1;
    goto out;
rollback:
    db_exec(meta, "ROLLBACK", w->err + strlen(w->err), sizeof w->err - strlen(w->err));
out:
    search_resp_free(&resp);
    search_conn_free(k);
    sbuf_free(&q);
    return rc;
}

static void runner_fail(struct reindex_runner *r, struct worker *w, const char *reason) {
    struct search_conn *k = search_conn_new(r->client);
    char err[512];
    if (db_ensure(&w->meta, &r->metap, err, sizeof err) == 0 &&
        undo_build(r->cfg, k, w->meta, r->alias, r->id, r->version, "failed", reason, err,
                   sizeof err) == REINDEX_OK)
        log_error("reindex", "%s: version %u failed and was rolled back: %s", r->alias,
                  r->version, reason);
    search_conn_free(k);
}

static void *worker_main(void *arg) {
    struct worker *w = arg;
    struct reindex_runner *r = w->r;
    int rc = 0;
    bool ran = false;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        struct job *j = NULL;
        while (r->next < r->njobs && !j) {
            if (!r->jobs[r->next].done) j = &r->jobs[r->next];
            r->next++;
        }
        pthread_mutex_unlock(&r->mu);
        if (!j) break;
        rc = run_job(w, j);
        ran = true;
        if (rc != 0) break;
        int f = try_finish(w, false);
        /* the metadata server lost in the middle of the switch: once it is
         * back, the switch goes on where the state says (its UPDATE to
         * 'switching' may have gone through unanswered); not a failure */
        for (int again = 0; f < 0 && !r->stop && again < 10 && (!w->meta || db_conn_lost(w->meta));
             again++) {
            log_warn("reindex", "%s v%u: %s; the switch goes on when the metadata server is back",
                     r->alias, r->version, w->err);
            if (!nap_unless(&r->stop, 1000)) break;
            f = try_finish(w, true);
        }
        if (f < 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0 && !ran && w == &r->w[0]) { /* every job was done before: a switch to finish */
        if (try_finish(w, true) < 0) rc = -1;
    }
    if (rc == -1 && w->err[0] && r->stop != 2)
        log_error("reindex", "%s v%u: %s", r->alias, r->version, w->err);
    if ((rc == -1 && r->stop != 1) || r->stop == 2) {
        char reason[1200];
        if (rc == -1 && r->stop != 2 && w->err[0]) { /* this worker's own failure */
            pthread_mutex_lock(&r->errmu);
            if (!r->why[0]) snprintf(r->why, sizeof r->why, "%s", w->err);
            pthread_mutex_unlock(&r->errmu);
        }
        r->stop = 2;
        pthread_mutex_lock(&r->errmu);
        snprintf(reason, sizeof reason, "%s", r->why[0] ? r->why : "a reindex job failed");
        pthread_mutex_unlock(&r->errmu);
        int unclaimed = 0;
        if (atomic_compare_exchange_strong(&r->failing, &unclaimed, 1)) runner_fail(r, w, reason);
    }
    r->running--;
    return NULL;
}

struct reindex_runner *reindex_runner_start(const struct ss_config *cfg,
                                            struct search_client *client, const char *alias,
                                            unsigned version, char *err, size_t errlen) {
    struct reindex_runner *r = xcalloc(1, sizeof *r);
    r->cfg = cfg;
    r->client = client;
    r->alias = xstrdup(alias);
    r->version = version;
    sbuf ph = SBUF_INIT;
    sbuf_printf(&ph, "%s_v%u", alias, version);
    r->phys = ph.data;
    pthread_mutex_init(&r->mu, NULL);
    pthread_mutex_init(&r->errmu, NULL);
    r->srcp = db_params_source(cfg);
    r->metap = db_params_metadata(cfg);
    r->metap.database = cfg->metadata.database;
    MYSQL *meta = db_connect(&r->metap, err, errlen);
    MYSQL *src = meta ? db_connect(&r->srcp, err, errlen) : NULL;
    char *row[5] = {0};
    int ok = src && load_index(cfg, meta, src, alias, &r->m, &r->at, err, errlen) == REINDEX_OK &&
             index_id_of(meta, cfg->source.name, alias, row, err, errlen) == REINDEX_OK;
    if (ok) {
        r->id = xstrdup(row[0]);
        sbuf q = SBUF_INIT;
        sbuf_printf(&q, "SELECT id, bucket, params, data_cursor, status FROM jobs WHERE index_id = "
                        "%s AND version = %u AND type = 'index' ORDER BY bucket",
                    r->id, version);
        ok = mysql_real_query(meta, q.data, q.len) == 0;
        MYSQL_RES *res = ok ? mysql_store_result(meta) : NULL;
        MYSQL_ROW jr;
        while (res && (jr = mysql_fetch_row(res))) {
            r->jobs = xrealloc(r->jobs, (r->njobs + 1) * sizeof *r->jobs);
            struct job *j = &r->jobs[r->njobs++];
            j->id = strtoull(jr[0], NULL, 10);
            j->bucket = atoi(jr[1]);
            j->params = xstrdup(jr[2] ? jr[2] : "");
            j->cursor = jr[3] ? xstrdup(jr[3]) : NULL;
            j->done = jr[4] && !strcmp(jr[4], "done");
        }
        if (res) mysql_free_result(res);
        if (!ok) errf(err, errlen, "reading the jobs of %s: %s", alias, mysql_error(meta));
        sbuf_free(&q);
        /* the rejected count of the run so far (a restart keeps counting) */
        char *rj[1];
        sbuf_printf(&q, "SELECT COALESCE(SUM(rejected), 0) FROM jobs WHERE index_id = %s AND "
                        "version = %u",
                    r->id, version);
        if (ok && row1(meta, q.data, rj, 1, err, errlen) == 1) {
            r->rejected_total = strtoull(rj[0], NULL, 10);
            free(rj[0]);
        }
        sbuf_free(&q);
    }
    free_row(row, 5);
    db_close(src);
    db_close(meta);
    if (!ok) {
        reindex_runner_free(r);
        return NULL;
    }
    int nw = cfg->reindex.parallel_jobs;
    size_t left = 0;
    for (size_t i = 0; i < r->njobs; i++) left += !r->jobs[i].done;
    if ((size_t)nw > left) nw = left ? (int)left : 1;
    r->w = xcalloc((size_t)nw, sizeof *r->w);
    r->wcap = nw;
    struct deliver_opts o;
    deliver_opts_from_config(&o, cfg);
    /* [delivery] helpers is the number of bulk requests in flight to the
     * engine: the jobs share it (at least one each). More would only queue
     * at the engine's write threads and compete for its CPU; a job's next
     * page is read and built meanwhile, so one request at a time keeps it busy */
    o.helpers = cfg->delivery.helpers / nw > 1 ? cfg->delivery.helpers / nw : 1;
    /* full requests: a page's documents leave in batches of batch_max, and
     * the rest of the page as soon as the page is closed */
    o.workers = 1; /* one producer, each document once a page: no hashing needed */
    o.batch_min = o.batch_max;
    o.flush_interval_ms = 1000;
    o.flush_on_txn_end = true;
    o.checkpoint = NULL;
    o.dead_letter = reindex_dead_letter;
    for (int i = 0; i < nw && ok; i++) {
        struct worker *w = &r->w[i];
        w->r = r;
        w->snap = -1;
        o.dead_letter_ud = w;
        w->src = db_connect(&r->srcp, err, errlen);
        w->meta = w->src ? db_connect(&r->metap, err, errlen) : NULL;
        w->d = w->meta ? deliver_new(&o, client, err, errlen) : NULL;
        ok = w->d != NULL;
        if (ok) r->nw++;
    }
    for (int i = 0; ok && i < r->nw; i++) {
        r->running++;
        if (pthread_create(&r->w[i].th, NULL, worker_main, &r->w[i]) != 0) {
            r->running--;
            r->nw = i;
            errf(err, errlen, "cannot start reindex threads");
            ok = 0;
        }
    }
    if (!ok) {
        reindex_runner_free(r);
        return NULL;
    }
    log_info("reindex", "%s: building version %u: %zu job(s) left, %d at a time", alias, version,
             left, r->nw);
    return r;
}

bool reindex_runner_done(struct reindex_runner *r) { return r->running == 0; }

void reindex_runner_free(struct reindex_runner *r) {
    if (!r) return;
    if (r->stop == 0) r->stop = 1;
    for (int i = 0; i < r->nw; i++) pthread_join(r->w[i].th, NULL);
    for (int i = 0; i < r->wcap; i++) {
        struct worker *w = &r->w[i];
        if (w->d) deliver_drain(w->d, 5000);
        deliver_free(w->d);
        page_free(&w->next);
        db_close(w->src);
        db_close(w->meta);
    }
    free(r->w);
    for (size_t i = 0; i < r->njobs; i++) free(r->jobs[i].params), free(r->jobs[i].cursor);
    free(r->jobs);
    mapping_free(&r->m);
    db_close(r->errdb);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->errmu);
    free(r->alias);
    free(r->phys);
    free(r->id);
    free(r);
}
