/* reindex: a build's requests and its start in the metadata (see reindex.h
 * for the states).
 *
 * Owns: reindex_request (the next version created in the engine; the
 * version, its run, one job per bucket and the state 'changing' in one
 * metadata transaction), a source's part of a build planned
 * (reindex_plan_part), and the small helpers the folder shares
 * (reindex_int.h). A build's end (its run closed, a build undone, reset,
 * cancel, delete-all) is sync/reindex/reindex_end.c's; the jobs themselves
 * run in sync/reindex/reindex_runner.c; their buckets are cut in
 * sync/reindex/reindex_buckets.c. */
#include "sync/reindex/reindex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "sync/pipeline/docbuild.h"
#include "sync/mapping/index_mapping.h"
#include "sync/mapping/mapping_shard.h"
#include "rebalance/rebalance.h"
#include "json_exact.h"
#include "log.h"
#include "sync/reindex/reindex_int.h"
#include "sbuf.h"
#include "search/search.h"
#include "search/index_version.h"

/* ---------- small helpers (reindex_int.h) ---------- */

bool rx_bucket_is_key_interval(const char *cond) {
    return strncmp(cond, MOD_BUCKET, strlen(MOD_BUCKET)) != 0;
}

bool rx_doc_table(const struct mp_index *ix, size_t t) {
    return t == 0 || ix->tables[t].parent_table != NULL;
}

void rx_sq(MYSQL *m, sbuf *q, const char *s) { db_quote(m, q, s, strlen(s)); }

/* A statement on the jobs of a build: jobs finishing at the same moment can
 * deadlock in InnoDB (one job's UPDATE against another's NOT EXISTS check);
 * the victim simply runs again. Rows changed, or -1. */
long long rx_exec_retry(MYSQL *m, const char *sql, char *err, size_t errlen) {
    for (int attempt = 0;; attempt++) {
        long long n = db_exec_rows(m, sql, err, errlen);
        unsigned e = mysql_errno(m);
        if (n >= 0 || attempt >= 8 || (e != 1213 && e != 1205)) return n;
        struct timespec ts = {0, (long)(5 + 20 * attempt) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* Sleep ms in steps of at most 200 ms; false as soon as *stop is set. */
bool rx_nap_unless(const _Atomic int *stop, long ms) {
    while (ms > 0 && !*stop) {
        long step = ms < 200 ? ms : 200;
        struct timespec ts = {0, step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
    return !*stop;
}

int rx_txn_end(MYSQL *meta, int rc, char *err, size_t errlen) {
    if (rc == REINDEX_OK)
        return db_exec(meta, "COMMIT", err, errlen) < 0 ? REINDEX_ERR : REINDEX_OK;
    size_t n = strlen(err);
    db_exec(meta, "ROLLBACK", err + n, errlen - n);
    return rc;
}

int rx_engine(struct search_conn *k, const char *method, const char *path, const char *body,
              struct search_resp *r, char *err, size_t errlen) {
    if (search_request(k, method, path, NULL, body, body ? strlen(body) : 0, r) != 0)
        return errf(err, errlen, "engine: %s %s: %s", method, path, r->err);
    return 0;
}

unsigned reindex_alias_version(const char *alias, const char *json, size_t len, sbuf *names) {
    cJSON *j = json ? json_exact_parse(json, len) : NULL;
    unsigned v = 0;
    cJSON *it;
    cJSON_ArrayForEach(it, j) {
        if (!it->string) continue;
        if (names) {
            if (names->len) sbuf_adds(names, ", ");
            sbuf_adds(names, it->string);
        }
        unsigned n = index_version_of(alias, it->string);
        if (n > v) v = n;
    }
    cJSON_Delete(j);
    return v;
}

int reindex_parse_primary_terms(const char *json, size_t len, const char *index, sbuf *out) {
    cJSON *j = json && len ? json_exact_parse(json, len) : NULL;
    cJSON *md = cJSON_GetObjectItemCaseSensitive(j, "metadata");
    cJSON *ixs = cJSON_GetObjectItemCaseSensitive(md, "indices");
    cJSON *terms = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ixs, index),
                                                    "primary_terms");
    int n = cJSON_IsObject(terms) ? cJSON_GetArraySize(terms) : 0;
    sbuf t = SBUF_INIT;
    for (int s = 0; s < n; s++) {
        char key[16];
        snprintf(key, sizeof key, "%d", s);
        cJSON *it = cJSON_GetObjectItemCaseSensitive(terms, key);
        const char *v = cJSON_IsRaw(it) ? it->valuestring : NULL; /* numbers stay text */
        if (!v || !docbuild_is_integer(v)) {
            n = 0;
            break;
        }
        sbuf_printf(&t, "%s%s", s ? "," : "", v);
    }
    if (n > 0) sbuf_add(out, t.data, t.len);
    sbuf_free(&t);
    cJSON_Delete(j);
    return n > 0 ? n : -1;
}

int rx_primary_terms(struct search_conn *k, const char *phys, sbuf *out, char *err,
                     size_t errlen) {
    char path[800];
    snprintf(path, sizeof path,
             "/_cluster/state/metadata/%s?filter_path=metadata.indices.*.primary_terms", phys);
    struct search_resp r;
    search_resp_init(&r);
    int rc = rx_engine(k, "GET", path, NULL, &r, err, errlen);
    if (rc == 0 && (r.status != 200 ||
                    reindex_parse_primary_terms(r.body.data, r.body.len, phys, out) < 0))
        rc = errf(err, errlen, "GET %s: HTTP %ld %.300s", path, r.status,
                  r.body.data ? r.body.data : "");
    search_resp_free(&r);
    return rc;
}

void rx_sync_log(MYSQL *meta, const char *source, const char *index_id, const char *event,
                 const char *detail) {
    sbuf q = SBUF_INIT;
    char err[256];
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    sbuf_adds(&q, "INSERT INTO sync_log (source, index_id, event, detail, node) VALUES (");
    rx_sq(meta, &q, source);
    sbuf_printf(&q, ", %s, ", index_id ? index_id : "NULL");
    rx_sq(meta, &q, event);
    sbuf_adds(&q, ", ");
    if (detail) rx_sq(meta, &q, detail);
    else sbuf_adds(&q, "NULL");
    sbuf_printf(&q, ", '%s:%d')", host, (int)getpid());
    if (db_exec(meta, q.data, err, sizeof err) < 0)
        log_warn("reindex", "sync_log not written: %s", err);
    sbuf_free(&q);
}

/* The index config of alias with its validated model (types filled in). */
int rx_load_index(const struct ss_config *cfg, MYSQL *meta, MYSQL *src, const char *alias,
                  struct mapping *m, size_t *pos, char *err, size_t errlen) {
    if (mapping_db_load_for(meta, config_mapping_name(cfg), cfg->source.name, m, err, errlen) < 0)
        return REINDEX_ERR;
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

int rx_index_id_of(MYSQL *meta, const char *source, const char *alias, char **row, char *err,
                   size_t errlen) {
    /* id, state, current_version, building_version, history_retention */
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT id, state, current_version, building_version, history_retention "
                  "FROM index_configs WHERE source = ");
    rx_sq(meta, &q, source);
    sbuf_adds(&q, " AND alias = ");
    rx_sq(meta, &q, alias);
    int rc = db_row1(meta, q.data, q.len, row, 5, err, errlen);
    sbuf_free(&q);
    if (rc == 0) {
        errf(err, errlen, "mapping %s has no index config \"%s\"", source, alias);
        return REINDEX_UNKNOWN;
    }
    return rc < 0 ? REINDEX_ERR : REINDEX_OK;
}


/* ---------- request ---------- */

/* One request per index config at a time, whichever node or command makes
 * it: between choosing the version number and committing it, a request
 * deletes a leftover <alias>_v<N> and creates its own, so two at once would
 * delete each other's index (the loser's rollback too). A named lock of the
 * metadata server, released with the connection should it go. take: wait
 * for it up to 60 s (REINDEX_OK, else REINDEX_REFUSED or REINDEX_ERR);
 * !take: give it back. */
static int request_lock(MYSQL *meta, const char *source, const char *alias, bool take, char *err,
                        size_t errlen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, take ? "SELECT GET_LOCK(" : "SELECT RELEASE_LOCK(");
    sbuf_adds(&q, "CONCAT('searchsync.reindex.', LEFT(SHA1(CONCAT(DATABASE(), '.', ");
    rx_sq(meta, &q, source);
    sbuf_adds(&q, ", '.', ");
    rx_sq(meta, &q, alias);
    sbuf_adds(&q, take ? ")), 40)), 60)" : ")), 40)))");
    char e2[256];
    char *got = db_scalar(meta, q.data, take ? err : e2, take ? errlen : sizeof e2);
    sbuf_free(&q);
    int rc = got && !strcmp(got, "1") ? REINDEX_OK : got ? REINDEX_REFUSED : REINDEX_ERR;
    free(got);
    if (take && rc == REINDEX_REFUSED)
        errf(err, errlen, "another reindex request of index %s (from another node or command) "
             "has been under way for over 60 s: wait for it (searchsync status), then retry",
             alias);
    return rc;
}

/* The version's index in the engine: created with its build settings (a
 * leftover of a request that died before its metadata commit deleted
 * first), its body (the one it will serve with) into *body, its shards'
 * primary terms into *terms (empty: the engine does not say them, and the
 * version is built with every write on disk instead). 0, 1 when an index
 * of that name exists that searchsync did not make (left alone: the caller
 * numbers the version above it), or -1 with err; *created says whether the
 * index exists now. */
static int create_version(const struct ss_config *cfg, struct search_client *client,
                          struct search_conn *k, const struct mp_index *ix, const char *phys,
                          sbuf *body, sbuf *terms, bool *created, char *err, size_t errlen) {
    /* the version records the body it will serve with; it is created with
     * no refreshes, no replicas, its translog written asynchronously and
     * deletes remembered for [reindex] gc_deletes_s, all restored at the
     * switch */
    sbuf build = SBUF_INIT;
    struct search_resp r;
    search_resp_init(&r);
    int rc = -1;
    if (index_mapping_body(ix, search_client_dialect(client), false, body, err, errlen) != 0 ||
        index_mapping_build_body(ix, search_client_dialect(client), cfg->reindex.gc_deletes_s,
                                 &build, err, errlen) != 0)
        goto out;
    char path[700];
    /* A leftover of a request that died before its metadata commit is
     * deleted. Every index searchsync makes maps the version field; an
     * index of the name without it is someone else's (a hand-made
     * <alias>_v1 is a common name), never deleted. */
    snprintf(path, sizeof path, "/%s/_mapping", phys);
    if (rx_engine(k, "GET", path, NULL, &r, err, errlen) < 0) goto out;
    if (r.status == 200 && !strstr(r.body.data ? r.body.data : "",
                                   "\"" INDEX_MAPPING_VERSION_FIELD "\"")) {
        rc = 1;
        goto out;
    }
    snprintf(path, sizeof path, "/%s", phys);
    if (r.status == 200 && rx_engine(k, "DELETE", path, NULL, &r, err, errlen) < 0) goto out;
    if (rx_engine(k, "PUT", path, build.data, &r, err, errlen) < 0) goto out;
    if (r.status != 200) {
        errf(err, errlen, "creating index %s: HTTP %ld %.400s", phys, r.status,
             r.body.data ? r.body.data : "");
        goto out;
    }
    *created = true;
    /* The version is built with its translog written asynchronously; the
     * terms its shards start with tell a later node restart, which may have
     * lost writes it had acknowledged (sync/reindex/reindex_runner.c). An engine that
     * does not say them gets every write of the build on disk instead. */
    char terr[512];
    if (rx_primary_terms(k, phys, terms, terr, sizeof terr) < 0) {
        sbuf_free(terms);
        log_warn("reindex", "%s: %s; it is built with every write on disk (slower: grant the "
                 "engine user the monitor cluster privilege)", phys, terr);
        snprintf(path, sizeof path, "/%s/_settings", phys);
        if (rx_engine(k, "PUT", path, "{\"index\":{\"translog\":{\"durability\":null}}}", &r, err,
                      errlen) < 0)
            goto out;
        if (r.status != 200) {
            errf(err, errlen, "restoring the translog durability of %s: HTTP %ld %.400s", phys,
                 r.status, r.body.data ? r.body.data : "");
            goto out;
        }
    }
    rc = 0;
out:
    search_resp_free(&r);
    sbuf_free(&build);
    return rc;
}

/* One job per bucket of source's part of version v (params: the buckets'
 * conditions separated by 0x1e), inside the caller's transaction. */
static int insert_jobs(MYSQL *meta, const char *source, const char *id, unsigned v, int n,
                       const char *params, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    int rc = 0;
    const char *p = params;
    for (int b = 0; b < n && rc == 0; b++) {
        const char *e = strchr(p, '\x1e');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        sbuf_reset(&q);
        sbuf_adds(&q, "INSERT INTO jobs (source, index_id, version, type, status, total_buckets, "
                      "bucket, data_cursor, params) VALUES (");
        rx_sq(meta, &q, source);
        sbuf_printf(&q, ", %s, %u, 'index', 'init', %d, %d, '0', ", id, v, n, b);
        db_quote(meta, &q, p, len);
        sbuf_addc(&q, ')');
        rc = db_exec(meta, q.data, err, errlen);
        p = e ? e + 1 : p + len;
    }
    sbuf_free(&q);
    return rc;
}

/* The request in the metadata, in one transaction: the index config
 * 'changing' to version v, the version (its body and terms), the run, a
 * part per source of the index config (sources[0..nsources)), and the
 * requesting source's part planned: its jobs (params as insert_jobs takes
 * them). The other sources' readers plan theirs (reindex_plan_part).
 * REINDEX_OK, REINDEX_REFUSED (another request got there first) or
 * REINDEX_ERR, with err. */
static int record_request(MYSQL *meta, const char *source, const char *id, const char *alias,
                          unsigned v, const char *phys, const sbuf *body, const sbuf *terms,
                          int n, int njobs, bool by_mod, const char *params,
                          char *const *sources, size_t nsources, char *err, size_t errlen) {
    /* one transaction: the version, the run, the parts, the jobs, the state */
    if (db_exec(meta, "START TRANSACTION", err, errlen) < 0) return REINDEX_ERR;
    sbuf q = SBUF_INIT;
    int rc = REINDEX_ERR;
    sbuf_printf(&q, "UPDATE index_configs SET state = 'changing', building_version = %u WHERE "
                    "id = %s AND state NOT IN ('changing', 'switching')",
                v, id);
    long long changed = db_exec_rows(meta, q.data, err, errlen);
    if (changed < 0) goto end;
    if (changed != 1) {
        errf(err, errlen, "index %s started changing meanwhile (another reindex request)", alias);
        rc = REINDEX_REFUSED;
        goto end;
    }
    sbuf_reset(&q);
    sbuf_printf(&q, "INSERT INTO index_versions (index_id, version, physical_name, state, body, "
                    "buckets, bucketing, build_terms) VALUES (%s, %u, ",
                id, v);
    rx_sq(meta, &q, phys);
    sbuf_adds(&q, ", 'changing', ");
    db_quote(meta, &q, body->data, body->len);
    sbuf_printf(&q, ", %d, '%s', ", njobs, by_mod ? "mod" : "range");
    if (terms->len) rx_sq(meta, &q, terms->data);
    else sbuf_adds(&q, "NULL");
    sbuf_addc(&q, ')');
    if (db_exec(meta, q.data, err, errlen) < 0) goto end;
    sbuf_reset(&q);
    sbuf_adds(&q, "INSERT INTO reindex_runs (source, index_id, alias, version, buckets) VALUES (");
    rx_sq(meta, &q, source);
    sbuf_printf(&q, ", %s, ", id);
    rx_sq(meta, &q, alias);
    sbuf_printf(&q, ", %u, %d)", v, n);
    if (db_exec(meta, q.data, err, errlen) < 0) goto end;
    for (size_t i = 0; i < nsources; i++) {
        bool own = !strcmp(sources[i], source);
        sbuf_reset(&q);
        sbuf_printf(&q, "INSERT INTO reindex_parts (index_id, version, source, planned, buckets, "
                        "planned_at) VALUES (%s, %u, ", id, v);
        rx_sq(meta, &q, sources[i]);
        sbuf_printf(&q, ", %d, %d, %s)", own, own ? njobs : 0, own ? "NOW(3)" : "NULL");
        if (db_exec(meta, q.data, err, errlen) < 0) goto end;
    }
    if (insert_jobs(meta, source, id, v, njobs, params, err, errlen) < 0) goto end;
    rc = REINDEX_OK;
end:
    rc = rx_txn_end(meta, rc, err, errlen);
    sbuf_free(&q);
    return rc;
}

/* The units of alias from m->indices[at] on into *nunits: a config over
 * shard tables is one unit per shard (mapping_shard.h), and every unit's
 * buckets are jobs of the one version, n shared out among them (at least one
 * each: a job costs its ramp and last wait anyway). REINDEX_REFUSED, with
 * err, when a table whose rows are documents has no key column to cut its
 * buckets by. */
static int request_units(const struct mapping *m, size_t at, const char *alias, size_t *nunits,
                         char *err, size_t errlen) {
    size_t n = 0;
    while (at + n < m->nindices && !strcmp(m->indices[at + n].alias, alias)) n++;
    *nunits = n;
    for (size_t u = at; u < at + n; u++)
        for (size_t t = 0; t < m->indices[u].ntables; t++)
            if (rx_doc_table(&m->indices[u], t) && !rx_key_col(&m->indices[u].tables[t])) {
                errf(err, errlen, "%s.%s has no key column", m->indices[u].tables[t].db,
                     m->indices[u].tables[t].table);
                return REINDEX_REFUSED;
            }
    return REINDEX_OK;
}

/* The version a new build of index config id gets, into *v: past the
 * current one (current, as the metadata says it), past `above` (a version
 * the engine holds unrecorded), past the one the alias is on in the engine
 * and past every version or run ever recorded, so that a name is never
 * used twice. The alias counts whatever the metadata says: one restored
 * from a backup taken before a build went live records less, and
 * create_version would take that live index for a leftover of its name and
 * delete it. 0, or -1 with err. */
static int next_version(MYSQL *meta, struct search_conn *k, const char *alias, const char *id,
                        const char *current, unsigned above, unsigned *v, char *err,
                        size_t errlen) {
    struct search_resp ar;
    search_resp_init(&ar);
    char apath[600];
    snprintf(apath, sizeof apath, "/_alias/%s", alias);
    int arc = rx_engine(k, "GET", apath, NULL, &ar, err, errlen);
    unsigned on = arc == 0 && ar.status == 200
                      ? reindex_alias_version(alias, ar.body.data, ar.body.len, NULL)
                      : 0;
    search_resp_free(&ar);
    if (arc < 0) return -1;
    if (on > above) above = on;
    sbuf q = SBUF_INIT;
    char *mx[1] = {NULL};
    sbuf_printf(&q, "SELECT GREATEST(%s, %u, COALESCE((SELECT MAX(version) FROM index_versions "
                    "WHERE index_id = %s), 0), COALESCE((SELECT MAX(version) FROM reindex_runs "
                    "WHERE index_id = %s), 0)) + 1",
                current, above, id, id);
    int rc = db_row1(meta, q.data, q.len, mx, 1, err, errlen) < 1 ? -1 : 0;
    if (rc == 0) *v = (unsigned)strtoul(mx[0], NULL, 10);
    free(mx[0]);
    sbuf_free(&q);
    return rc;
}

/* The version's index created (create_version) as <alias>_v<*v> or, past
 * indices of those names searchsync did not make, the first free number
 * after it (into *v and phys). 0, or -1 with err. */
static int create_numbered(const struct ss_config *cfg, struct search_client *client,
                           struct search_conn *k, const struct mp_index *ix, const char *alias,
                           unsigned *v, char *phys, size_t physlen, sbuf *body, sbuf *terms,
                           bool *created, char *err, size_t errlen) {
    for (int tries = 0;; tries++, (*v)++) {
        index_version_name(phys, physlen, alias, *v);
        int cv = create_version(cfg, client, k, ix, phys, body, terms, created, err, errlen);
        if (cv <= 0) return cv;
        log_warn("reindex", "%s: an index named %s exists that searchsync did not make (its "
                 "mapping has no %s field): left alone, the version is numbered past it",
                 alias, phys, INDEX_MAPPING_VERSION_FIELD);
        sbuf_reset(body);
        if (tries == 20)
            return errf(err, errlen, "%s: the indices %s_v%u to %s_v%u exist and searchsync did "
                        "not make them: rename or delete them, or give the index config "
                        "another alias", alias, alias, *v - 20, alias, *v);
    }
}

/* A recorded request in sync_log and the log: per buckets in each of the
 * nunits units. */
static void log_requested(MYSQL *meta, const char *source, const char *id,
                          const struct reindex_request *req, const struct mp_index *ix, unsigned v,
                          int per, size_t nunits) {
    char detail[800];
    snprintf(detail, sizeof detail, "version %u requested (%s): %d bucket(s) by %s%s%s", v,
             req->reason ? req->reason : "reindex", per, req->by_mod ? "MOD" : "key range",
             nunits > 1 ? ", in each shard" : "", mp_index_multi(ix) ? ", in each source" : "");
    rx_sync_log(meta, source, id, "reindex requested", detail);
    char each[64] = "";
    if (ix->unit) snprintf(each, sizeof each, " in each of %zu shard(s)", nunits);
    log_info("reindex", "%s: version %u queued in %d bucket(s)%s (%s)", req->alias, v, per, each,
             req->reason ? req->reason : "reindex");
    if (mp_index_multi(ix))
        log_info("reindex", "%s: version %u has a part per source (%zu): each source's daemon "
                 "plans its own, this one's (%s) is planned", req->alias, v, ix->nsources,
                 source);
}

/* A version created by a request that then failed: deleted again, best
 * effort (a leftover is deleted by the next request of that name anyway). */
static void drop_version(struct search_conn *k, const char *phys) {
    char e2[256], path[700];
    struct search_resp r;
    search_resp_init(&r);
    snprintf(path, sizeof path, "/%s", phys);
    rx_engine(k, "DELETE", path, NULL, &r, e2, sizeof e2);
    search_resp_free(&r);
}

int reindex_request(const struct ss_config *cfg, struct search_client *client,
                    struct search_conn *k, MYSQL *meta, MYSQL *src,
                    const struct reindex_request *req, unsigned *version, char *err,
                    size_t errlen) {
    const char *source = cfg->source.name, *mapping = config_mapping_name(cfg);
    struct mapping m = {0};
    size_t at = 0;
    int rc = rx_load_index(cfg, meta, src, req->alias, &m, &at, err, errlen);
    if (rc != REINDEX_OK) {
        mapping_free(&m);
        return rc;
    }
    const struct mp_index *ix = &m.indices[at];
    size_t nunits = 0;
    rc = request_units(&m, at, req->alias, &nunits, err, errlen);
    if (rc != REINDEX_OK) {
        mapping_free(&m);
        return rc;
    }
    rc = request_lock(meta, mapping, req->alias, true, err, errlen);
    if (rc != REINDEX_OK) {
        mapping_free(&m);
        return rc;
    }
    char *row[5];
    rc = rx_index_id_of(meta, mapping, req->alias, row, err, errlen);
    if (rc != REINDEX_OK) {
        request_lock(meta, mapping, req->alias, false, NULL, 0);
        mapping_free(&m);
        return rc;
    }
    char *id = row[0];
    if (!strcmp(row[1], "changing") || !strcmp(row[1], "switching")) {
        errf(err, errlen,
             "index %s is already being rebuilt (version %s, state %s): wait for it "
             "(searchsync status), or cancel it with searchsync reindex --reset %s",
             req->alias, row[3], row[1], req->alias);
        request_lock(meta, mapping, req->alias, false, NULL, 0);
        db_row_free(row, 5);
        mapping_free(&m);
        return REINDEX_REFUSED;
    }
    sbuf body = SBUF_INIT, params = SBUF_INIT;
    sbuf terms = SBUF_INIT; /* the version's primary terms at creation */
    int n = req->buckets > 0 ? req->buckets : cfg->reindex.buckets;
    /* in a cluster, every live node of the source gets at least one job */
    int live = cluster_live_nodes(cfg);
    if (live > n) n = live;
    unsigned v = 0;
    bool created = false;
    rc = REINDEX_ERR;
    char phys[600];
    if (next_version(meta, k, req->alias, id, row[2], req->above, &v, err, errlen) < 0 ||
        create_numbered(cfg, client, k, ix, req->alias, &v, phys, sizeof phys, &body, &terms,
                        &created, err, errlen) < 0)
        goto out;
    int njobs = 0;
    if (rx_plan_buckets(src, &m, at, n, req->by_mod, &params, &njobs, err, errlen) < 0) goto out;
    int per = nunits > 1 ? (n + (int)nunits - 1) / (int)nunits : n; /* rx_plan_buckets */
    /* a part per source: the index config's sources, or this one */
    char *self[1] = {(char *)source};
    rc = record_request(meta, source, id, req->alias, v, phys, &body, &terms, n, njobs,
                        req->by_mod, params.data ? params.data : "",
                        ix->nsources ? ix->sources : self, ix->nsources ? ix->nsources : 1, err,
                        errlen);
    if (rc != REINDEX_OK) goto out;
    log_requested(meta, source, id, req, ix, v, per, nunits);
    *version = v;
    created = false;
out:
    if (created) drop_version(k, phys);
    request_lock(meta, mapping, req->alias, false, NULL, 0);
    db_row_free(row, 5);
    sbuf_free(&body);
    sbuf_free(&params);
    sbuf_free(&terms);
    mapping_free(&m);
    return rc;
}

int reindex_plan_part(const struct ss_config *cfg, MYSQL *meta, MYSQL *src,
                      const struct mapping *m, const char *alias, unsigned v, char *err,
                      size_t errlen) {
    const char *source = cfg->source.name;
    size_t at = 0;
    while (at < m->nindices && strcmp(m->indices[at].alias, alias)) at++;
    if (at == m->nindices) {
        errf(err, errlen, "source %s has no index config \"%s\"", source, alias);
        return REINDEX_UNKNOWN;
    }
    char *row[5];
    int rc = rx_index_id_of(meta, config_mapping_name(cfg), alias, row, err, errlen);
    if (rc != REINDEX_OK) return rc;
    sbuf q = SBUF_INIT, params = SBUF_INIT;
    char *pr[3] = {NULL, NULL, NULL};
    rc = REINDEX_ERR;
    /* the part, how the version is bucketed, and how many buckets its
     * request asked for */
    sbuf_printf(&q, "SELECT p.planned, v.bucketing, r.buckets FROM reindex_parts p JOIN "
                    "index_versions v ON v.index_id = p.index_id AND v.version = p.version JOIN "
                    "reindex_runs r ON r.index_id = p.index_id AND r.version = p.version WHERE "
                    "p.index_id = %s AND p.version = %u AND p.source = ", row[0], v);
    rx_sq(meta, &q, source);
    int got = db_row1(meta, q.data, q.len, pr, 3, err, errlen);
    if (got < 0) goto out;
    if (got == 0) {
        errf(err, errlen, "version %u of %s has no part for source %s (it was queued before "
             "the source was added to the index config: reindex again)", v, alias, source);
        rc = REINDEX_REFUSED;
        goto out;
    }
    if (!strcmp(pr[0], "1")) {
        rc = REINDEX_OK;
        goto out;
    }
    bool by_mod = pr[1] && !strcmp(pr[1], "mod");
    int n = pr[2] ? atoi(pr[2]) : 0;
    if (n < 1) n = cfg->reindex.buckets;
    int live = cluster_live_nodes(cfg);
    if (live > n) n = live;
    int njobs = 0;
    if (rx_plan_buckets(src, m, at, n, by_mod, &params, &njobs, err, errlen) < 0) goto out;
    if (db_exec(meta, "START TRANSACTION", err, errlen) < 0) goto out;
    /* the build, still this version, locked: a cancel or a failure waits
     * for this transaction, and one before it leaves nothing to plan */
    sbuf_reset(&q);
    sbuf_printf(&q, "SELECT 1 FROM index_configs WHERE id = %s AND building_version = %u AND "
                    "state = 'changing' FOR UPDATE", row[0], v);
    char *one[1] = {NULL};
    got = db_row1(meta, q.data, q.len, one, 1, err, errlen);
    free(one[0]);
    long long changed = 0;
    if (got == 1) {
        sbuf_reset(&q);
        sbuf_printf(&q, "UPDATE reindex_parts SET planned = 1, buckets = %d, planned_at = NOW(3) "
                        "WHERE index_id = %s AND version = %u AND planned = 0 AND source = ",
                    njobs, row[0], v);
        rx_sq(meta, &q, source);
        changed = db_exec_rows(meta, q.data, err, errlen);
    }
    int trc = got < 0 || changed < 0 ? REINDEX_ERR : got == 0 || changed == 0 ? REINDEX_REFUSED
                                                                              : REINDEX_OK;
    if (trc == REINDEX_OK &&
        insert_jobs(meta, source, row[0], v, njobs, params.data ? params.data : "", err,
                    errlen) < 0)
        trc = REINDEX_ERR;
    rc = rx_txn_end(meta, trc, err, errlen);
    if (trc == REINDEX_REFUSED) { /* cancelled meanwhile, or planned by another node */
        errf(err, errlen, "version %u of %s is no longer being built, or its part of source %s "
             "was planned meanwhile", v, alias, source);
    } else if (rc == REINDEX_OK) {
        char detail[400];
        snprintf(detail, sizeof detail, "version %u: the part of source %s planned: %d job(s)",
                 v, source, njobs);
        rx_sync_log(meta, source, row[0], "reindex part planned", detail);
        log_info("reindex", "%s: %s", alias, detail);
    }
out:
    db_row_free(pr, 3);
    db_row_free(row, 5);
    sbuf_free(&q);
    sbuf_free(&params);
    return rc;
}
