/* daemon_builds: the versions a reindex builds, seen from `searchsync run`.
 *
 * Owns: the first version of an index config (a reindex requested at
 * start-up, or an existing alias adopted); which builds are under way
 * (polled between transactions, or at once when a request is read from the
 * binlog); the dual writes to a build's index, switched on with the binlog
 * position recorded before its runner starts; the runners
 * (sync/reindex_runner.c); and the indices of builds that did not go live:
 * a failed build's is deleted here once the writes in flight for it are
 * delivered (a cancelled one's again, should they have re-created it), and
 * any left behind by a stop in between at the next start. */
#include <stdio.h>
#include <stdlib.h>

#include "daemon.h"
#include "docbuild.h"
#include "json_exact.h"
#include "log.h"
#include "reindex.h"

const struct build *builds_find(const struct daemon *dm, const char *alias) {
    for (size_t i = 0; i < dm->nbuilds; i++)
        if (!strcmp(dm->builds[i].alias, alias)) return &dm->builds[i];
    return NULL;
}

/* An index config without any version in the engine gets its first one
 * through a reindex (the first sync: no dump, no separate snapshot code); a
 * live alias the metadata does not know yet is adopted. */
static void drop_failed_builds(struct daemon *dm, struct search_conn *k,
                               const struct mp_index *ix);

int builds_ensure_index(struct daemon *dm, struct search_conn *k, struct mp_index *ix) {
    drop_failed_builds(dm, k, ix);
    struct search_resp r;
    search_resp_init(&r);
    char path[600];
    int rc = 0;
    snprintf(path, sizeof path, "/_alias/%s", ix->alias);
    if (search_request(k, "GET", path, NULL, NULL, 0, &r) != 0) {
        rc = errf(dm->err, sizeof dm->err, "engine: %s", r.err);
        goto out;
    }
    if (r.status == 200) {
        if (ix->current_version > 0) goto out;
        cJSON *j = json_exact_parse(r.body.data, r.body.len);
        unsigned v = 0;
        cJSON *it;
        cJSON_ArrayForEach(it, j) {
            const char *u = strrchr(it->string, 'v');
            if (u && u > it->string && u[-1] == '_' && docbuild_is_integer(u + 1))
                v = (unsigned)strtoul(u + 1, NULL, 10);
        }
        cJSON_Delete(j);
        if (!v) goto out;
        sbuf q = SBUF_INIT;
        sbuf_printf(&q, "UPDATE index_configs SET state = IF(state = 'unavailable', 'available', "
                        "state), current_version = %u WHERE source = ", v);
        db_quote(dm->meta, &q, dm->cfg->source.name, strlen(dm->cfg->source.name));
        sbuf_adds(&q, " AND alias = ");
        db_quote(dm->meta, &q, ix->alias, strlen(ix->alias));
        rc = db_exec(dm->meta, q.data, dm->err, sizeof dm->err);
        sbuf_free(&q);
        if (rc == 0) ix->current_version = v;
        goto out;
    }
    if (ix->state && (!strcmp(ix->state, "changing") || !strcmp(ix->state, "switching")))
        goto out; /* a build is under way: it resumes */
    unsigned v = 0;
    struct reindex_request req = {ix->alias, 0, false,
                                  ix->current_version ? "the alias is missing in the engine"
                                                      : "first sync"};
    if (db_ensure(&dm->src, &dm->srcp, dm->err, sizeof dm->err) < 0 ||
        reindex_request(dm->cfg, dm->client, k, dm->meta, dm->src, &req, &v, dm->err,
                        sizeof dm->err) != REINDEX_OK)
        rc = -1;
out:
    search_resp_free(&r);
    return rc;
}

void builds_stop(struct daemon *dm, size_t i, const char *why) {
    struct build *b = &dm->builds[i];
    reindex_runner_free(b->runner);
    log_info("run", "%s: live changes no longer written to %s (%s)", b->alias, b->phys, why);
    free(b->alias), free(b->phys);
    dm->builds[i] = dm->builds[--dm->nbuilds];
}

/* A version that will never be live: once every write queued for it has
 * been delivered, delete it: a failed build's index is left to this
 * (rx_undo_build), and a cancelled one's, deleted at once, may have been
 * re-created by writes in flight. */
static void drop_leftover(struct daemon *dm, const char *phys) {
    if (dm->last_txn)
        deliver_wait_txn(dm->d, dm->last_txn, dm->cfg->delivery.drain_timeout_ms);
    struct search_resp r;
    search_resp_init(&r);
    char path[700];
    snprintf(path, sizeof path, "/%s", phys);
    if (search_request(dm->k, "DELETE", path, NULL, NULL, 0, &r) == 0 && r.status == 200)
        log_info("run", "deleted %s, the index of a build that ended without going live, once "
                 "the writes in flight for it were delivered", phys);
    search_resp_free(&r);
}

/* The indices of the builds of ix that failed or were cancelled (the last
 * [reindex] keep_runs runs), deleted if still there: a daemon that stopped
 * between a build's failure and drop_leftover left one behind. Their
 * version numbers are never used again. */
static void drop_failed_builds(struct daemon *dm, struct search_conn *k,
                               const struct mp_index *ix) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT r.version FROM reindex_runs r JOIN index_configs c ON c.id = "
                  "r.index_id WHERE r.status IN ('failed', 'cancelled') AND c.source = ");
    db_quote(dm->meta, &q, dm->cfg->source.name, strlen(dm->cfg->source.name));
    sbuf_adds(&q, " AND c.alias = ");
    db_quote(dm->meta, &q, ix->alias, strlen(ix->alias));
    MYSQL_RES *res = mysql_real_query(dm->meta, q.data, q.len) == 0
                         ? mysql_store_result(dm->meta) : NULL;
    MYSQL_ROW row;
    struct search_resp r;
    search_resp_init(&r);
    while (res && (row = mysql_fetch_row(res))) {
        char path[700];
        snprintf(path, sizeof path, "/%s_v%s", ix->alias, row[0]);
        if (search_request(k, "DELETE", path, NULL, NULL, 0, &r) == 0 && r.status == 200)
            log_info("run", "deleted %s_v%s, left behind by a build that did not go live",
                     ix->alias, row[0]);
    }
    search_resp_free(&r);
    if (res) mysql_free_result(res);
    sbuf_free(&q);
}

/* Between transactions: which versions are being built? A new build gets
 * dual writes from the next transaction on — its position recorded — and
 * only then its runner, so no page is read before live changes reach it. */
void builds_poll(struct daemon *dm) {
    sbuf q = SBUF_INIT;
    char err[512];
    if (db_ensure(&dm->meta, &dm->metap, err, sizeof err) < 0) {
        log_warn("run", "looking for reindexes: %s", err);
        return;
    }
    sbuf_adds(&q, "SELECT alias, state, current_version, building_version FROM index_configs "
                  "WHERE source = ");
    db_quote(dm->meta, &q, dm->cfg->source.name, strlen(dm->cfg->source.name));
    if (mysql_real_query(dm->meta, q.data, q.len) != 0) {
        log_warn("run", "looking for reindexes: %s", dm->meta ? mysql_error(dm->meta) : err);
        sbuf_free(&q);
        return;
    }
    MYSQL_RES *res = mysql_store_result(dm->meta);
    MYSQL_ROW row;
    bool *seen = xcalloc(dm->nbuilds + 1, sizeof *seen);
    size_t nb0 = dm->nbuilds;
    while (res && (row = mysql_fetch_row(res))) {
        struct mp_index *ix = NULL;
        for (size_t i = 0; i < dm->m.nindices; i++)
            if (!strcmp(dm->m.indices[i].alias, row[0])) ix = &dm->m.indices[i];
        if (!ix) continue;
        ix->current_version = (unsigned)strtoul(row[2], NULL, 10);
        unsigned bv = (unsigned)strtoul(row[3], NULL, 10);
        bool want = bv && (!strcmp(row[1], "changing") || !strcmp(row[1], "switching"));
        size_t bi = 0;
        while (bi < dm->nbuilds && strcmp(dm->builds[bi].alias, ix->alias)) bi++;
        if (bi < dm->nbuilds && (!want || dm->builds[bi].version != bv)) {
            char *phys = xstrdup(dm->builds[bi].phys);
            bool live = ix->current_version == dm->builds[bi].version;
            builds_stop(dm, bi, want ? "another version is built" : row[1]);
            if (!live) /* cancelled or failed */
                drop_leftover(dm, phys);
            free(phys);
            if (bi < nb0) seen[bi] = true;
            bi = dm->nbuilds;
        }
        if (bi < nb0) seen[bi] = true;
        if (!want) continue;
        if (bi == dm->nbuilds) { /* dual writes on from here */
            dm->builds = xrealloc(dm->builds, (dm->nbuilds + 1) * sizeof *dm->builds);
            struct build *b = &dm->builds[dm->nbuilds++];
            sbuf ph = SBUF_INIT;
            sbuf_printf(&ph, "%s_v%u", ix->alias, bv);
            *b = (struct build){xstrdup(ix->alias), ph.data, bv, NULL};
            char pos[sizeof dm->start_pos + BL_FILE_MAX + 64];
            if (dm->have_last)
                snprintf(pos, sizeof pos, "%s:%llu", dm->last_commit.end.file,
                         (unsigned long long)dm->last_commit.end.pos);
            else
                snprintf(pos, sizeof pos, "%s", dm->start_pos[0] ? dm->start_pos : "start");
            const char *tabs[] = {"index_versions", "reindex_runs"};
            for (int t = 0; t < 2; t++) {
                sbuf_reset(&q);
                sbuf_printf(&q, "UPDATE %s SET start_position = COALESCE(start_position, ", tabs[t]);
                db_quote(dm->meta, &q, pos, strlen(pos));
                sbuf_printf(&q, ") WHERE version = %u AND index_id = (SELECT id FROM index_configs "
                                "WHERE source = ", bv);
                db_quote(dm->meta, &q, dm->cfg->source.name, strlen(dm->cfg->source.name));
                sbuf_adds(&q, " AND alias = ");
                db_quote(dm->meta, &q, ix->alias, strlen(ix->alias));
                sbuf_addc(&q, ')');
                if (db_exec(dm->meta, q.data, err, sizeof err) < 0)
                    log_warn("run", "start position of %s not recorded: %s", b->phys, err);
            }
            log_info("run", "%s: live changes from %s on are also written to %s", ix->alias, pos,
                     b->phys);
        }
        struct build *b = &dm->builds[bi];
        if (b->runner && reindex_runner_done(b->runner)) {
            reindex_runner_free(b->runner);
            b->runner = NULL;
        }
        if (!b->runner) {
            b->runner = reindex_runner_start(dm->cfg, dm->client, b->alias, b->version, err,
                                             sizeof err);
            if (!b->runner) log_error("run", "%s: reindex jobs not started (will retry): %s",
                                      b->alias, err);
        }
    }
    if (res) mysql_free_result(res);
    for (size_t i = nb0; i-- > 0;) /* builds whose index config is gone */
        if (!seen[i] && i < dm->nbuilds) builds_stop(dm, i, "its index config is gone");
    free(seen);
    sbuf_free(&q);
}
