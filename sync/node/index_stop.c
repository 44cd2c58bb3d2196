/* index_stop: an index config whose mapping the source no longer fits is
 * stopped, not fed wrong documents (issue 25: DDL mid-stream).
 *
 * After a schema change read from the binlog (or at start), the supervisor
 * validates each index config's mapping against the source's schema. A
 * change the mapping follows (a longer VARCHAR, INT -> BIGINT under a
 * `long`) is recorded elsewhere (supervisor.c, record_widened). One it
 * cannot follow — a column whose new type its engine type cannot hold, a
 * mapped column dropped or renamed, a mapped table renamed or dropped for
 * good — stops that index config:
 *
 *   - index_configs.stopped_reason says what, when and after which binlog
 *     event, and what to do (fix the mapping, reindex; for a table it reads
 *     that is gone, nothing: a DROP TABLE has the index rebuilt once the
 *     table exists again, sync/pipeline/ddl_truncate.h); the log and the sync_log
 *     say it once;
 *   - the reader writes nothing more through its alias (sync/pipeline/targets.c:
 *     deliveries_stopped, from the build table at the next boundary), and
 *     routes nothing to it while its mapping does not fit (ix->unusable,
 *     from the next mapping generation), so no document is built from a
 *     shape the mapping does not describe and no query of a dropped column
 *     stops the daemon. Every other index config goes on;
 *   - once the mapping is fixed (searchsync mapping import) a reindex builds
 *     a new version with live changes dual-written to it; when it goes live
 *     the stop is lifted in the same metadata transaction as the switch
 *     (sync/reindex/reindex_version.c), and the reader writes through the alias
 *     again from that boundary.
 * The documents of the stopped version stay as they were (never garbage);
 * `searchsync status` and /api/v1/status show the reason. */
#include "sync/node/index_stop.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sync/node/supervisor.h"
#include "log.h"
#include "sync/reindex/reindex.h"

static void quote(MYSQL *m, sbuf *q, const char *s) {
    db_quote(m, q, s, strlen(s));
}

static void cancel_build(struct supervisor *sv, const char *alias) {
    char e[512];
    if (!sv->k) sv->k = search_conn_new(sv->client);
    int r = reindex_reset(sv->cfg, sv->k, sv->meta, alias,
                          "the source no longer fits the mapping", e, sizeof e);
    if (r == REINDEX_OK)
        log_warn("run", "index %s: the version being built is cancelled too (built from the "
                 "mapping the source no longer fits)", alias);
    else if (r != REINDEX_REFUSED)
        log_warn("run", "index %s: cancelling its build failed: %s (cancel it by hand: "
                 "searchsync reindex --config FILE %s --reset)", alias, e, alias);
}

void index_stop_cancel_pending(struct supervisor *sv) {
    for (size_t i = 0; i < sv->ncancel_pending; i++) {
        if (sv->client && db_ensure(&sv->meta, &sv->metap, sv->err, sizeof sv->err) == 0)
            cancel_build(sv, sv->cancel_pending[i]);
        else /* said, not dropped silently: its documents are built from an unfit mapping */
            log_warn("run", "index %s: its build from the mapping the source no longer fits "
                     "was not cancelled (%s); cancel it by hand: searchsync reindex --config "
                     "FILE %s --reset", sv->cancel_pending[i],
                     sv->client ? sv->err : "no engine client", sv->cancel_pending[i]);
        free(sv->cancel_pending[i]);
    }
    free(sv->cancel_pending);
    sv->cancel_pending = NULL;
    sv->ncancel_pending = 0;
}

static bool rel_missing(const struct mp_relation *r, size_t n, const struct mp_schema *s,
                        const char **db, const char **table) {
    for (size_t i = 0; i < n; i++) {
        if (!mp_schema_find(s, r[i].db, r[i].table, NULL)) {
            *db = r[i].db, *table = r[i].table;
            return true;
        }
        if (rel_missing(r[i].relations, r[i].nrelations, s, db, table)) return true;
    }
    return false;
}

/* A table ix reads (as ddl_index_reads counts them) that the source does not
 * have: dropped (or renamed). */
static bool table_missing(const struct mp_index *ix, const struct mp_schema *s, const char **db,
                          const char **table) {
    for (size_t t = 0; t < ix->ntables; t++) {
        const struct mp_table *tb = &ix->tables[t];
        if ((t == 0 || tb->parent_table) && !mp_schema_find(s, tb->db, tb->table, NULL)) {
            *db = tb->db, *table = tb->table;
            return true;
        }
        if (rel_missing(tb->relations, tb->nrelations, s, db, table)) return true;
    }
    return false;
}

/* why index ix stops: after what (why), what does not fit (errs), what to do */
static void stop_reason(const struct mp_index *ix, const struct mp_schema *schema,
                        const char *why, const char *errs, sbuf *reason) {
    const char *mdb, *mtable;
    if (table_missing(ix, schema, &mdb, &mtable))
        /* dropped: taken like a TRUNCATE (ddl_truncate.h), rebuilt once
         * it is back; nothing to fix in a mapping that will fit again */
        sbuf_printf(reason, "%s, table %s.%s, which index %s reads, does not exist (%s). "
                    "Its live deliveries are stopped (its documents stay as they were): "
                    "a DROP TABLE read from the binlog has the index rebuilt from the "
                    "table once it exists again, live changes written "
                    "to the new version meanwhile, and the stop is lifted when that version "
                    "goes live. A table renamed or gone for good: import a mapping without "
                    "it (searchsync mapping import), then rebuild the index (searchsync "
                    "reindex --config FILE %s)",
                    why, mdb, mtable, ix->alias, errs, ix->alias);
    else
        sbuf_printf(reason, "%s, the source no longer fits the mapping of index %s: %s. "
                    "Its live deliveries are stopped (its documents stay as they were): fix "
                    "the mapping (searchsync mapping import), then rebuild it (searchsync "
                    "reindex --config FILE %s); the stop is lifted when the new version "
                    "goes live", why, ix->alias, errs, ix->alias);
}

/* A stop said "after the source refused a query of the mapping": the
 * transaction it was building came before the DDL in the binlog, and the
 * source had run the DDL already. When a DDL naming one of the index's
 * tables is read next (why: "after `ALTER TABLE ...` read from the binlog at
 * F:P") and the mapping still does not fit, that statement is the cause:
 * the reason names it from now on. */
static bool names_cause(const struct mp_index *ix, const char *why) {
    if (!ix->stopped || strncmp(why, "after `", 7) || !strstr(ix->stopped, INDEX_STOP_REFUSED))
        return false;
    const char *end = strchr(why + 7, '`');
    if (!end) return false;
    for (size_t t = 0; t < ix->ntables; t++) {
        size_t n = strlen(ix->tables[t].table);
        for (const char *p = why + 7; p + n <= end; p++)
            if (!strncasecmp(p, ix->tables[t].table, n) &&
                (p == why + 7 || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
                !(isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '$'))
                return true;
    }
    return false;
}

/* ix's mapping against the source: true when it does not fit, errs saying
 * why on one line */
static bool unfit(struct mapping *m, size_t i, const struct mp_schema *schema, sbuf *errs) {
    if (mapping_validate_index(m, i, schema, errs) == 0) {
        sbuf_free(errs);
        return false;
    }
    while (errs->len && errs->data[errs->len - 1] == '\n') errs->data[--errs->len] = '\0';
    for (char *nl = strchr(errs->data, '\n'); nl; nl = strchr(nl, '\n')) *nl = ';';
    return true;
}

static bool any_cause_named(const struct mapping *m, const char *why) {
    for (size_t i = 0; i < m->nindices; i++)
        if (names_cause(&m->indices[i], why)) return true;
    return false;
}

void index_stop_name_cause(struct supervisor *sv, const struct mapping *running, const char *why) {
    if (!any_cause_named(running, why)) return; /* (no query for every DDL) */
    struct mapping m = {0};
    struct mp_schema schema = {0};
    if (db_ensure(&sv->meta, &sv->metap, sv->err, sizeof sv->err) < 0 ||
        db_ensure(&sv->src, &sv->srcp, sv->err, sizeof sv->err) < 0 ||
        mapping_db_load(sv->meta, sv->cfg->source.name, &m, sv->err, sizeof sv->err) < 0 ||
        mapping_schema_load(sv->src, &m, &schema, sv->err, sizeof sv->err) < 0) {
        log_warn("run", "the stop reasons are not told the schema change %s: %s", why, sv->err);
        goto out;
    }
    for (size_t i = 0; i < m.nindices; i++) {
        const struct mp_index *ix = &m.indices[i];
        sbuf errs = SBUF_INIT;
        if (!names_cause(ix, why) || !unfit(&m, i, &schema, &errs)) continue;
        sbuf reason = SBUF_INIT, q = SBUF_INIT;
        stop_reason(ix, &schema, why, errs.data, &reason);
        sbuf_adds(&q, "UPDATE index_configs SET stopped_reason = CONCAT(DATE_FORMAT(NOW(), "
                      "'%Y-%m-%d %H:%i:%s '), ");
        quote(sv->meta, &q, reason.data);
        sbuf_adds(&q, ") WHERE stopped_reason LIKE '%" INDEX_STOP_REFUSED "%' AND source = ");
        quote(sv->meta, &q, sv->cfg->source.name);
        sbuf_adds(&q, " AND alias = ");
        quote(sv->meta, &q, ix->alias);
        char e[512];
        long long n = db_exec_rows(sv->meta, q.data, e, sizeof e);
        if (n > 0)
            log_error("run", "index %s stopped: %s", ix->alias, reason.data);
        else if (n < 0)
            log_warn("run", "index %s: its stop reason not told the schema change: %s", ix->alias, e);
        sbuf_free(&q);
        sbuf_free(&reason);
        sbuf_free(&errs);
    }
out:
    mp_schema_free(&schema);
    mapping_free(&m);
}

int index_stop_check(struct supervisor *sv, const char *why, size_t *stopped) {
    *stopped = 0;
    struct mapping m = {0};
    struct mp_schema schema = {0};
    int rc = -1;
    if (db_ensure(&sv->meta, &sv->metap, sv->err, sizeof sv->err) < 0 ||
        db_ensure(&sv->src, &sv->srcp, sv->err, sizeof sv->err) < 0 ||
        mapping_db_load(sv->meta, sv->cfg->source.name, &m, sv->err, sizeof sv->err) < 0 ||
        mapping_schema_load(sv->src, &m, &schema, sv->err, sizeof sv->err) < 0)
        goto out;
    for (size_t i = 0; i < m.nindices; i++) {
        struct mp_index *ix = &m.indices[i];
        if (ix->stopped) continue; /* said when it was stopped */
        sbuf errs = SBUF_INIT;
        if (!unfit(&m, i, &schema, &errs)) continue;
        sbuf reason = SBUF_INIT;
        stop_reason(ix, &schema, why, errs.data, &reason);
        sbuf q = SBUF_INIT;
        sbuf_adds(&q, "UPDATE index_configs SET stopped_reason = CONCAT(DATE_FORMAT(NOW(), "
                      "'%Y-%m-%d %H:%i:%s '), ");
        quote(sv->meta, &q, reason.data);
        sbuf_adds(&q, ") WHERE stopped_reason IS NULL AND source = ");
        quote(sv->meta, &q, sv->cfg->source.name);
        sbuf_adds(&q, " AND alias = ");
        quote(sv->meta, &q, ix->alias);
        long long n = db_exec_rows(sv->meta, q.data, sv->err, sizeof sv->err);
        if (n > 0) {
            (*stopped)++;
            log_error("run", "index %s stopped: %s", ix->alias, reason.data);
            sbuf_reset(&q);
            sbuf_adds(&q, "INSERT INTO sync_log (source, index_id, event, detail) SELECT source, "
                          "id, 'index stopped', ");
            quote(sv->meta, &q, reason.data);
            sbuf_adds(&q, " FROM index_configs WHERE source = ");
            quote(sv->meta, &q, sv->cfg->source.name);
            sbuf_adds(&q, " AND alias = ");
            quote(sv->meta, &q, ix->alias);
            char e[512];
            if (db_exec(sv->meta, q.data, e, sizeof e) < 0)
                log_warn("run", "sync_log not written: %s", e);
            /* a version being built from the mapping that no longer fits
             * would be as wrong: cancelled (nothing is built: fine). At
             * start the engine's client does not exist yet: cancelled once
             * it does (index_stop_cancel_pending, before any build starts) */
            if (sv->client) {
                cancel_build(sv, ix->alias);
            } else {
                sv->cancel_pending = xrealloc(sv->cancel_pending,
                                              (sv->ncancel_pending + 1) * sizeof(char *));
                sv->cancel_pending[sv->ncancel_pending++] = xstrdup(ix->alias);
            }
        }
        sbuf_free(&q);
        sbuf_free(&reason);
        sbuf_free(&errs);
        if (n < 0) goto out;
    }
    rc = 0;
out:
    mp_schema_free(&schema);
    mapping_free(&m);
    return rc;
}
