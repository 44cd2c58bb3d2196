/* index_ensure: every index config of a mapping generation has a version in
 * the engine before the supervisor publishes it (supervisor_prepare):
 *
 *   - an index config without any gets its first one through a reindex
 *     request (the first sync: no dump, no separate snapshot code; the
 *     reader starts its build at its next look at the build table,
 *     daemon_builds.c);
 *   - a live alias the metadata does not know yet is adopted (its highest
 *     <alias>_vN becomes the current version);
 *   - the indices of its builds that failed or were cancelled, if a stop
 *     between the failure and their deletion (daemon_builds.c,
 *     drop_leftover) left them behind, are deleted first.
 *
 * Supervisor thread, on its connections (struct supervisor's meta, src, k);
 * nothing here runs on the reader or wakes anyone. */
#include "sync/node/index_ensure.h"

#include <stdio.h>
#include <stdlib.h>

#include "sync/node/supervisor.h"
#include "sync/pipeline/docbuild.h"
#include "json_exact.h"
#include "log.h"
#include "sync/mapping/index_mapping.h"
#include "sync/reindex/reindex.h"
#include "search/index_version.h"

static void put_hash_fields(struct supervisor *sv, const struct mp_index *ix) {
    char err[512];
    if (index_mapping_put_hash_fields(sv->k, ix->alias, err, sizeof err) < 0)
        log_warn("run", "%s", err);
}

/* The indices of the builds of ix that failed or were cancelled (the last
 * [reindex] keep_runs runs), deleted if still there: a daemon that stopped
 * between a build's failure and drop_leftover left one behind. Their
 * version numbers are never used again. */
static void drop_failed_builds(struct supervisor *sv, const struct mp_index *ix) {
    struct search_conn *k = sv->k;
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT r.version FROM reindex_runs r JOIN index_configs c ON c.id = "
                  "r.index_id WHERE r.status IN ('failed', 'cancelled') AND c.source = ");
    db_quote(sv->meta, &q, sv->cfg->source.name, strlen(sv->cfg->source.name));
    sbuf_adds(&q, " AND c.alias = ");
    db_quote(sv->meta, &q, ix->alias, strlen(ix->alias));
    char err[256];
    MYSQL_RES *res = db_query(sv->meta, q.data, q.len, err, sizeof err);
    MYSQL_ROW row;
    struct search_resp r;
    search_resp_init(&r);
    while (res && (row = mysql_fetch_row(res))) {
        char phys[600], path[700];
        index_version_name(phys, sizeof phys, ix->alias, (unsigned)strtoul(row[0], NULL, 10));
        snprintf(path, sizeof path, "/%s", phys);
        if (search_request(k, "DELETE", path, NULL, NULL, 0, &r) == 0 && r.status == 200)
            log_info("run", "deleted %s, left behind by a build that did not go live", phys);
    }
    search_resp_free(&r);
    if (res) mysql_free_result(res);
    sbuf_free(&q);
}

int index_ensure(struct supervisor *sv, struct mp_index *ix) {
    struct search_conn *k = sv->k;
    if (db_ensure(&sv->meta, &sv->metap, sv->err, sizeof sv->err) < 0) return -1;
    drop_failed_builds(sv, ix);
    struct search_resp r;
    search_resp_init(&r);
    char path[600];
    int rc = 0;
    snprintf(path, sizeof path, "/_alias/%s", ix->alias);
    if (search_request(k, "GET", path, NULL, NULL, 0, &r) != 0) {
        rc = errf(sv->err, sizeof sv->err, "engine: %s", r.err);
        goto out;
    }
    if (r.status == 200) {
        put_hash_fields(sv, ix);
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
        db_quote(sv->meta, &q, sv->cfg->source.name, strlen(sv->cfg->source.name));
        sbuf_adds(&q, " AND alias = ");
        db_quote(sv->meta, &q, ix->alias, strlen(ix->alias));
        rc = db_exec(sv->meta, q.data, sv->err, sizeof sv->err);
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
    if (db_ensure(&sv->src, &sv->srcp, sv->err, sizeof sv->err) < 0 ||
        reindex_request(sv->cfg, sv->client, k, sv->meta, sv->src, &req, &v, sv->err,
                        sizeof sv->err) != REINDEX_OK)
        rc = -1;
out:
    search_resp_free(&r);
    return rc;
}
