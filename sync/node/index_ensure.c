/* index_ensure: every index config of a mapping generation has a version in
 * the engine before the supervisor publishes it (supervisor_prepare):
 *
 *   - an index config without any gets its first one through a reindex
 *     request (the first sync: no dump, no separate snapshot code; the
 *     reader starts its build at its next look at the build table,
 *     daemon_builds.c);
 *   - an alias the engine has but the metadata records no version of (a
 *     new or restored metadata database) is built again the same way, as
 *     a version above every <alias>_vN it names: its documents may miss
 *     any number of changes, and no checkpoint says which;
 *   - an index (not an alias) of the alias's name, another tool's, is said:
 *     the first build's switch replaces it by the alias in one step;
 *   - the indices of its builds that failed or were cancelled, if a stop
 *     between the failure and their deletion (daemon_builds.c,
 *     drop_leftover) left them behind, are deleted first.
 *
 * Supervisor thread, on its connections (struct supervisor's meta, src, k);
 * nothing here runs on the reader or wakes anyone. */
#include "sync/mapping/mapping_shard.h"
#include "sync/node/index_ensure.h"

#include <stdio.h>
#include <stdlib.h>

#include "sync/node/supervisor.h"
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
    db_quote(sv->meta, &q, config_mapping_name(sv->cfg), strlen(config_mapping_name(sv->cfg)));
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

/* What the metadata records now of ix (the generation in hand may be older:
 * another source's daemon of a config they share may have built its first
 * version since): 1 with *current and the state into state[], 0 no row,
 * -1 error. */
static int recorded(struct supervisor *sv, const struct mp_index *ix, unsigned *current,
                    char *state, size_t statelen) {
    sbuf q = SBUF_INIT;
    sbuf_adds(&q, "SELECT current_version, state FROM index_configs WHERE source = ");
    db_quote(sv->meta, &q, config_mapping_name(sv->cfg), strlen(config_mapping_name(sv->cfg)));
    sbuf_adds(&q, " AND alias = ");
    db_quote(sv->meta, &q, ix->alias, strlen(ix->alias));
    char *row[2] = {NULL, NULL};
    int n = db_row1(sv->meta, q.data, q.len, row, 2, sv->err, sizeof sv->err);
    sbuf_free(&q);
    if (n == 1) {
        *current = row[0] ? (unsigned)strtoul(row[0], NULL, 10) : 0;
        snprintf(state, statelen, "%s", row[1] ? row[1] : "");
    }
    db_row_free(row, 2);
    return n;
}

int index_ensure(struct supervisor *sv, struct mp_index *ix) {
    struct search_conn *k = sv->k;
    if (db_ensure(&sv->meta, &sv->metap, sv->err, sizeof sv->err) < 0) return -1;
    drop_failed_builds(sv, ix);
    struct search_resp r;
    search_resp_init(&r);
    char path[600];
    int rc = 0;
    sbuf names = SBUF_INIT;
    snprintf(path, sizeof path, "/_alias/%s", ix->alias);
    if (search_request(k, "GET", path, NULL, NULL, 0, &r) != 0) {
        rc = errf(sv->err, sizeof sv->err, "engine: %s", r.err);
        goto out;
    }
    struct reindex_request req = {ix->alias, 0, false,
                                  ix->current_version ? "the alias is missing in the engine"
                                                      : "first sync",
                                  0};
    if (r.status == 200) {
        put_hash_fields(sv, ix);
        if (ix->current_version > 0) goto out;
        unsigned current = 0;
        char state[32] = "";
        int n = recorded(sv, ix, &current, state, sizeof state);
        if (n < 0) {
            rc = -1;
            goto out;
        }
        if (current > 0) { /* built meanwhile by another source's daemon */
            ix->current_version = current;
            goto out;
        }
        if (!strcmp(state, "changing") || !strcmp(state, "switching"))
            goto out; /* its first build is under way: it switches the alias */
        /* An alias this metadata records no version of: a new or restored
         * metadata database, or another deployment writing the same alias.
         * What it holds may miss any number of changes (no checkpoint says
         * where it was left), so it is built again from the source, as a
         * first sync would; searches keep what it has until the switch. */
        req.above = reindex_alias_version(ix->alias, r.body.data, r.body.len, &names);
        req.reason = "first sync: an alias the metadata records no version of";
        log_warn("run",
                 "%s: the engine has this alias (on %s) but the metadata database records no "
                 "version of it (a new or restored metadata database, or another deployment "
                 "writing the same alias?): its documents may miss changes, so it is built again "
                 "from the source; searches see what it has until the new version goes live. "
                 "The indices it names now stay in the engine: delete them once they are not "
                 "needed",
                 ix->alias, names.len ? names.data : "no index");
    } else if (ix->state && (!strcmp(ix->state, "changing") || !strcmp(ix->state, "switching"))) {
        goto out; /* a build is under way: it resumes */
    } else {
        /* an index of the alias's name (another tool's, such as one
         * go-mysql-elasticsearch wrote): the build's switch deletes it and
         * makes the name the alias in one step (reindex_version.c) */
        snprintf(path, sizeof path, "/%s", ix->alias);
        if (search_request(k, "HEAD", path, NULL, NULL, 0, &r) != 0) {
            rc = errf(sv->err, sizeof sv->err, "engine: %s", r.err);
            goto out;
        }
        if (r.status == 200)
            log_warn("run",
                     "%s is an index in the engine, not an alias: searchsync serves it as an "
                     "alias over versions it builds, so it builds one from the source now; when "
                     "that is complete the index %s is deleted and its name made the alias, in "
                     "one step (searches see its documents until then). To keep that index, "
                     "stop the daemon before then and give the index config another alias",
                     ix->alias, ix->alias);
    }
    unsigned v = 0;
    int rr = db_ensure(&sv->src, &sv->srcp, sv->err, sizeof sv->err) < 0
                 ? REINDEX_ERR
                 : reindex_request(sv->cfg, sv->client, k, sv->meta, sv->src, &req, &v, sv->err,
                                   sizeof sv->err);
    if (rr == REINDEX_REFUSED && mp_index_multi(ix) && strstr(sv->err, "already being rebuilt")) {
        /* several sources start together: another one's daemon queued it
         * first; this one plans its part when it follows the build */
        log_info("run", "%s: %s", ix->alias, sv->err);
        sv->err[0] = '\0';
    } else if (rr != REINDEX_OK) {
        rc = -1;
    }
out:
    sbuf_free(&names);
    search_resp_free(&r);
    return rc;
}
