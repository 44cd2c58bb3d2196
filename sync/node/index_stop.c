/* index_stop: an index config whose mapping the source no longer fits is
 * stopped, not fed wrong documents; and rebuilt once the source fits it
 * again.
 *
 * Whether a mapping fits is decided at the position of the schema change
 * that may have broken it (sync/node/schema_watch.c). What a stop does is
 * here:
 *
 *   - index_configs.stopped_reason says what, when and after which statement
 *     (read from the binlog at F:P), and what to do (fix the mapping,
 *     reindex; for a table it reads that is gone, nothing: a DROP TABLE has
 *     the index rebuilt once the table exists again, sync/node/daemon_source.c);
 *     the log and the sync_log say it once;
 *   - the reader writes nothing more through its alias (sync/pipeline/targets.c:
 *     deliveries_stopped, from the build table at the next boundary), and
 *     routes nothing to it while its mapping does not fit (ix->unusable,
 *     from the next mapping generation), so no document is built from a
 *     shape the mapping does not describe and no query of a dropped column
 *     stops the daemon. Every other index config goes on;
 *   - a version being built from the mapping that no longer fits is
 *     cancelled;
 *   - once the mapping is fixed (searchsync mapping import), or the source
 *     fits it again (a column or table back: index_stop_refit), a reindex
 *     builds a new version with live changes dual-written to it; when it goes
 *     live the stop is lifted in the same metadata transaction as the switch
 *     (sync/reindex/reindex_version.c), and the reader writes through the
 *     alias again from that boundary. Changes made while it was stopped were
 *     not routed to it: only a rebuild makes its documents whole again.
 * The documents of the stopped version stay as they were (never garbage);
 * `searchsync status` and /api/v1/status show the reason. */
#include "sync/mapping/mapping_shard.h"
#include "sync/node/index_stop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool index_stop_table_missing(const struct mp_index *ix, const struct mp_schema *s,
                              const char **db, const char **table) {
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

void index_stop_reason(const struct mp_index *ix, const struct mp_schema *schema, const char *why,
                       const char *errs, sbuf *reason) {
    const char *mdb, *mtable;
    if (index_stop_table_missing(ix, schema, &mdb, &mtable))
        /* dropped: taken like a TRUNCATE (daemon_source.c), rebuilt once
         * it is back; nothing to fix in a mapping that will fit again */
        sbuf_printf(reason, "%s, table %s.%s, which index %s reads, does not exist (%s). "
                    "Its live deliveries are stopped (its documents stay as they were): "
                    "the index is rebuilt from the table once it exists again (created, or "
                    "renamed back), live changes written to the new version meanwhile, and "
                    "the stop is lifted when that version goes live. A table "
                    "gone for good: import a mapping without it (searchsync mapping import), "
                    "then rebuild the index (searchsync reindex --config FILE %s)",
                    why, mdb, mtable, ix->alias, errs, ix->alias);
    else
        sbuf_printf(reason, "%s, the source no longer fits the mapping of index %s: %s. "
                    "Its live deliveries are stopped (its documents stay as they were): fix "
                    "the mapping (searchsync mapping import), then rebuild it (searchsync "
                    "reindex --config FILE %s), or change the source back; the stop is lifted "
                    "when the new version goes live", why, ix->alias, errs, ix->alias);
}

static void sync_log(struct supervisor *sv, const char *alias, const char *event,
                     const char *detail) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "INSERT INTO sync_log (source, index_id, event, detail) SELECT ");
    quote(sv->meta, &q, sv->cfg->source.name);
    sbuf_adds(&q, ", id, ");
    quote(sv->meta, &q, event);
    sbuf_adds(&q, ", ");
    quote(sv->meta, &q, detail);
    sbuf_adds(&q, " FROM index_configs WHERE source = ");
    quote(sv->meta, &q, config_mapping_name(sv->cfg));
    sbuf_adds(&q, " AND alias = ");
    quote(sv->meta, &q, alias);
    char e[512];
    if (db_exec(sv->meta, q.data, e, sizeof e) < 0) log_warn("run", "sync_log not written: %s", e);
    sbuf_free(&q);
}

int index_stop(struct supervisor *sv, const struct mp_index *ix, const char *reason_) {
    sbuf q = SBUF_INIT, rs = SBUF_INIT;
    /* several sources: the stop is the index config's, for all of them; its
     * reason names the source that no longer fits */
    if (mp_index_multi(ix)) sbuf_printf(&rs, "source %s: ", sv->cfg->source.name);
    sbuf_adds(&rs, reason_);
    const char *reason = rs.data;
    sbuf_adds(&q, "UPDATE index_configs SET stopped_reason = CONCAT(DATE_FORMAT(NOW(), "
                  "'%Y-%m-%d %H:%i:%s '), ");
    quote(sv->meta, &q, reason);
    sbuf_adds(&q, ") WHERE stopped_reason IS NULL AND source = ");
    quote(sv->meta, &q, config_mapping_name(sv->cfg));
    sbuf_adds(&q, " AND alias = ");
    quote(sv->meta, &q, ix->alias);
    long long n = db_exec_rows(sv->meta, q.data, sv->err, sizeof sv->err);
    sbuf_free(&q);
    if (n <= 0) {
        sbuf_free(&rs);
        return n < 0 ? -1 : 0;
    }
    log_error("run", "index %s stopped: %s", ix->alias, reason);
    sync_log(sv, ix->alias, "index stopped", reason);
    /* a version being built from the mapping that no longer fits would be
     * as wrong: cancelled (nothing is built: fine). At start the engine's
     * client does not exist yet: cancelled once it does
     * (index_stop_cancel_pending, before any build starts) */
    if (sv->client) {
        cancel_build(sv, ix->alias);
    } else {
        sv->cancel_pending = xrealloc(sv->cancel_pending,
                                      (sv->ncancel_pending + 1) * sizeof(char *));
        sv->cancel_pending[sv->ncancel_pending++] = xstrdup(ix->alias);
    }
    sbuf_free(&rs);
    return 1;
}

void index_stop_name_cause(struct supervisor *sv, const struct mp_index *ix, const char *reason) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "UPDATE index_configs SET stopped_reason = CONCAT(DATE_FORMAT(NOW(), "
                  "'%Y-%m-%d %H:%i:%s '), ");
    quote(sv->meta, &q, reason);
    sbuf_adds(&q, ") WHERE stopped_reason LIKE '%" INDEX_STOP_REFUSED "%' AND source = ");
    quote(sv->meta, &q, config_mapping_name(sv->cfg));
    sbuf_adds(&q, " AND alias = ");
    quote(sv->meta, &q, ix->alias);
    char e[512];
    long long n = db_exec_rows(sv->meta, q.data, e, sizeof e);
    if (n > 0)
        log_error("run", "index %s stopped: %s", ix->alias, reason);
    else if (n < 0)
        log_warn("run", "index %s: its stop reason not told the schema change: %s", ix->alias, e);
    sbuf_free(&q);
}

/* Is a rebuild of alias queued by a TRUNCATE or DROP read (rebuild_emptied
 * in supervisor.c, tried every second until the table is back)? */
static bool emptied_pending(struct supervisor *sv, const char *alias) {
    pthread_mutex_lock(&sv->cmds->mu);
    bool pending = false;
    for (size_t i = 0; i < sv->cmds->ntruncated && !pending; i++)
        pending = !strcmp(sv->cmds->truncated[i].alias, alias);
    pthread_mutex_unlock(&sv->cmds->mu);
    return pending;
}

bool index_stop_refit(struct supervisor *sv, const struct mp_index *ix, const char *why) {
    if (emptied_pending(sv, ix->alias)) return true; /* that rebuild lifts the stop */
    if (!sv->client || db_ensure(&sv->src, &sv->srcp, sv->err, sizeof sv->err) < 0)
        return false; /* (at start: at the next look, the engine's client made) */
    if (!sv->k) sv->k = search_conn_new(sv->client);
    char err[1024], reason[768];
    snprintf(reason, sizeof reason, "the source fits the mapping again (%s)", why);
    struct reindex_request req = {ix->alias, 0, false, reason, 0};
    unsigned v = 0;
    int rc = reindex_request(sv->cfg, sv->client, sv->k, sv->meta, sv->src, &req, &v, err,
                             sizeof err);
    if (rc == REINDEX_OK) {
        log_warn("run", "index %s: the source fits its mapping again (%s), but its deliveries "
                 "were stopped: its documents are rebuilt from MySQL as version %u, live changes "
                 "written to it meanwhile; the stop is lifted when that version goes live",
                 ix->alias, why, v);
        sync_log(sv, ix->alias, "rebuilt: fits again", reason);
        return true;
    }
    if (rc == REINDEX_REFUSED) { /* one is under way: its switch lifts the stop */
        log_info("run", "index %s: the source fits its mapping again (%s); the version being "
                 "built lifts its stop when it goes live", ix->alias, why);
        return true;
    }
    snprintf(sv->err, sizeof sv->err, "%s", err);
    return false;
}
