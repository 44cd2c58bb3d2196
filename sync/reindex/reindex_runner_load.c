/* reindex_runner_load: a runner made (rx_runner_new) and what it reads of
 * its build when it starts
 * (see reindex_runner_int.h): this source's jobs of the version — its part;
 * another source's jobs read another server — with the shard each reads,
 * the run's rejected documents and rows so far (a restarted runner keeps
 * counting), the rows to expect, and how the version is built (its terms,
 * its buckets). */
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "monotime.h"
#include "search/index_version.h"
#include "sync/reindex/reindex.h"
#include "sync/reindex/reindex_int.h"
#include "sync/reindex/reindex_runner_int.h"

/* The unit a job reads (its "@shard" line; a config without shards: the
 * config itself), NULL when that shard is no longer in the generation (its
 * job reads nothing). */
static const struct mp_index *job_unit(const struct mapping_gen *gen, const char *alias,
                                       const char *params, const struct mp_index *first) {
    size_t l = strlen(RX_UNIT_LINE);
    if (!params || strncmp(params, RX_UNIT_LINE, l)) return first;
    const char *nl = strchr(params, '\n');
    size_t n = nl ? (size_t)(nl - params) - l : strlen(params) - l;
    for (size_t i = 0; gen && i < gen->m.nindices; i++) {
        const struct mp_index *u = &gen->m.indices[i];
        if (!strcmp(u->alias, alias) && u->unit && strlen(u->unit) == n &&
            !strncmp(u->unit, params + l, n))
            return u;
    }
    return NULL;
}

/* The document tables' rows as the source estimates them (InnoDB's
 * TABLE_ROWS, off by some percent): 0 when unknown. */
static unsigned long long estimate_rows(MYSQL *src, const struct mapping_gen *gen,
                                        const char *alias) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT COALESCE(SUM(TABLE_ROWS), 0) FROM information_schema.TABLES WHERE 0");
    for (size_t i = 0; gen && i < gen->m.nindices; i++) {
        const struct mp_index *ix = &gen->m.indices[i];
        if (strcmp(ix->alias, alias)) continue; /* every shard's unit */
        for (size_t t = 0; t < ix->ntables; t++) {
            if (!rx_doc_table(ix, t)) continue;
            sbuf_adds(&q, " OR (TABLE_SCHEMA = ");
            rx_sq(src, &q, ix->tables[t].db);
            sbuf_adds(&q, " AND TABLE_NAME = ");
            rx_sq(src, &q, ix->tables[t].table);
            sbuf_addc(&q, ')');
        }
    }
    char *v[1] = {NULL}, err[256];
    unsigned long long n = 0;
    if (db_row1(src, q.data, q.len, v, 1, err, sizeof err) == 1 && v[0]) n = strtoull(v[0], NULL, 10);
    db_row_free(v, 1);
    sbuf_free(&q);
    return n;
}

int rx_runner_load(struct reindex_runner *r, MYSQL *meta, MYSQL *src, char *err,
                   size_t errlen) {
    const struct ss_config *cfg = r->cfg;
    const struct mapping_gen *gen = r->gen;
    const char *alias = r->alias;
    unsigned version = r->version;
    int ok;
    sbuf q = SBUF_INIT;
    /* this source's part: another source's jobs read another server */
    sbuf_printf(&q, "SELECT id, bucket, params, data_cursor, status FROM jobs WHERE index_id = "
                    "%s AND version = %u AND type = 'index'%s AND source = ",
                r->id, version, r->owned);
    db_quote(meta, &q, cfg->source.name, strlen(cfg->source.name));
    sbuf_adds(&q, " ORDER BY bucket");
    char qerr[512];
    MYSQL_RES *res = db_query(meta, q.data, q.len, qerr, sizeof qerr);
    ok = res != NULL;
    MYSQL_ROW jr;
    while (res && (jr = mysql_fetch_row(res))) {
        r->jobs = xrealloc(r->jobs, (r->njobs + 1) * sizeof *r->jobs);
        struct job *j = &r->jobs[r->njobs++];
        j->id = strtoull(jr[0], NULL, 10);
        j->bucket = atoi(jr[1]);
        j->params = xstrdup(jr[2] ? jr[2] : "");
        j->cursor = jr[3] ? xstrdup(jr[3]) : NULL;
        j->done = jr[4] && !strcmp(jr[4], "done");
        j->ix = job_unit(gen, alias, j->params, r->ix);
    }
    if (res) mysql_free_result(res);
    if (!ok) errf(err, errlen, "reading the jobs of %s: %s", alias, qerr);
    sbuf_free(&q);
    /* the rejected count and the rows of the run so far (a restart
     * keeps counting) */
    char *rj[2];
    sbuf_printf(&q, "SELECT COALESCE(SUM(rejected), 0), COALESCE(SUM(rows_read), 0) FROM jobs "
                    "WHERE index_id = %s AND version = %u AND source = ",
                r->id, version);
    db_quote(meta, &q, cfg->source.name, strlen(cfg->source.name));
    if (ok && db_row1(meta, q.data, q.len, rj, 2, err, errlen) == 1) {
        r->rejected_total = strtoull(rj[0], NULL, 10);
        r->rows_acked = strtoull(rj[1], NULL, 10);
        db_row_free(rj, 2);
    }
    sbuf_free(&q);
    if (ok) r->rows_expected = estimate_rows(src, gen, alias);
    /* how the version is built: the terms it was created with (NULL:
     * every write on disk), its buckets */
    char *vr[3] = {NULL, NULL, NULL};
    sbuf_printf(&q, "SELECT build_terms, buckets, bucketing FROM index_versions WHERE "
                    "index_id = %s AND version = %u",
                r->id, version);
    int got = ok ? db_row1(meta, q.data, q.len, vr, 3, err, errlen) : 0;
    if (got == 1) {
        r->build_terms = vr[0] ? xstrdup(vr[0]) : NULL;
        r->buckets = vr[1] ? atoi(vr[1]) : 0;
        r->by_mod = vr[2] && !strcmp(vr[2], "mod");
    } else if (got < 0) {
        ok = 0; /* not run unchecked: the next poll starts it again */
    }
    db_row_free(vr, 3);
    sbuf_free(&q);
    r->lost_check_ms = mono_ms() + LOST_CHECK_MS;
    return ok;
}

/* A runner of version of alias, not started: its jobs are those of this
 * node's rebalance session when owner_node is set (r->owned restricts
 * every statement on them), else every job of this source's part. */
struct reindex_runner *rx_runner_new(const struct ss_config *cfg, struct search_client *client,
                                     struct mapping_gen *gen, const char *alias,
                                     unsigned version, const char *owner_node,
                                     const char *session) {
    struct reindex_runner *r = xcalloc(1, sizeof *r);
    sbuf own = SBUF_INIT;
    if (owner_node) {
        sbuf_adds(&own, " AND owner_node = ");
        db_quote(NULL, &own, owner_node, strlen(owner_node));
        sbuf_adds(&own, " AND rebalance_session = ");
        db_quote(NULL, &own, session ? session : "", session ? strlen(session) : 0);
    }
    r->owned = own.data ? own.data : xstrdup("");
    r->cfg = cfg;
    r->client = client;
    r->gen = mapping_gen_ref(gen);
    r->ix = mapping_gen_index(gen, alias);
    r->alias = xstrdup(alias);
    r->version = version;
    r->phys = index_version_dup(alias, version);
    pthread_mutex_init(&r->mu, NULL);
    pthread_mutex_init(&r->errmu, NULL);
    r->srcp = db_params_source(cfg);
    r->metap = db_params_metadata(cfg);
    r->metap.database = cfg->metadata.database;
    return r;
}

/* r's index config id and its jobs read (rx_runner_load), on connections of
 * its own closed after. 1, or 0 with err. */
int rx_runner_open(struct reindex_runner *r, char *err, size_t errlen) {
    MYSQL *meta = db_connect(&r->metap, err, errlen);
    MYSQL *src = meta ? db_connect(&r->srcp, err, errlen) : NULL;
    char *row[5] = {0};
    if (src && !r->ix)
        errf(err, errlen, "mapping generation %lu has no index config \"%s\"",
             r->gen ? r->gen->id : 0UL, r->alias);
    int ok = src && r->ix &&
             rx_index_id_of(meta, config_mapping_name(r->cfg), r->alias, row, err, errlen) ==
                 REINDEX_OK;
    if (ok) {
        r->id = xstrdup(row[0]);
        ok = rx_runner_load(r, meta, src, err, errlen);
    }
    db_row_free(row, 5);
    db_close(src);
    db_close(meta);
    return ok;
}
