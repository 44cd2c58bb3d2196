/* reindex_end: the ends of a build in the metadata. Owns closing a build's
 * run (its jobs' bookkeeping kept for [reindex] keep_runs runs) and undoing
 * a build that failed or was cancelled (rx_close_run, rx_undo_build, shared
 * with the runner), and the requests that end builds from outside:
 * reindex_reset, reindex_cancel_version and reindex_delete_all. Requests
 * that start a build are sync/reindex/reindex.c's. */
#include "sync/reindex/reindex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "sync/reindex/reindex_int.h"
#include "sbuf.h"
#include "search/search.h"
#include "search/index_version.h"

/* Move the jobs' bookkeeping into reindex_run_jobs, close the run, delete the
 * jobs, keep keep_runs runs. Inside the caller's transaction. */
int rx_close_run(MYSQL *meta, const struct ss_config *cfg, const char *id, unsigned v,
                 const char *status, const char *error, char *err, size_t errlen) {
    sbuf q = SBUF_INIT;
    int rc = -1;
    sbuf_printf(&q, "INSERT INTO reindex_run_jobs (run_id, source, bucket, status, error_text, "
                    "rows_read, docs_written, rejected, started_at, finished_at, owner_node, "
                    "broken_by_rebalance) SELECT r.id, j.source, j.bucket, j.status, j.error_text, "
                    "j.rows_read, j.docs_written, j.rejected, j.started_at, j.finished_at, "
                    "j.owner_node, j.broken_by_rebalance FROM jobs j JOIN "
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
    if (error) rx_sq(meta, &q, error);
    else sbuf_adds(&q, "NULL");
    sbuf_printf(&q, " WHERE index_id = %s AND version = %u", id, v);
    if (db_exec(meta, q.data, err, errlen) < 0) goto out;
    sbuf_reset(&q);
    sbuf_printf(&q, "DELETE FROM jobs WHERE index_id = %s AND version = %u AND type = 'index'", id,
                v);
    if (db_exec(meta, q.data, err, errlen) < 0) goto out;
    sbuf_reset(&q);
    sbuf_printf(&q, "DELETE FROM reindex_parts WHERE index_id = %s AND version = %u", id, v);
    if (db_exec(meta, q.data, err, errlen) < 0) goto out;
    /* bookkeeping of older runs beyond keep_runs */
    sbuf_reset(&q);
    sbuf_printf(&q, "SELECT id FROM reindex_runs WHERE index_id = %s ORDER BY id DESC LIMIT 1 "
                    "OFFSET %d",
                id, cfg->reindex.keep_runs - 1);
    char *cut[1];
    int got = db_row1(meta, q.data, q.len, cut, 1, err, errlen);
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
 * the conditional UPDATE decides; the winner deletes <alias>_vN (or leaves
 * that to the daemon, see reindex_int.h). */
int rx_undo_build(const struct ss_config *cfg, struct search_conn *k, MYSQL *meta,
                  const char *alias, const char *id, unsigned v, const char *status,
                  const char *reason, bool delete_index, char *err, size_t errlen) {
    if (db_exec(meta, "START TRANSACTION", err, errlen) < 0) return REINDEX_ERR;
    sbuf q = SBUF_INIT;
    int rc = REINDEX_ERR;
    sbuf_printf(&q, "UPDATE index_configs SET state = IF(current_version > 0, 'available', "
                    "'unavailable'), building_version = 0 WHERE id = %s AND building_version = "
                    "%u AND state = 'changing'",
                id, v);
    long long changed = db_exec_rows(meta, q.data, err, errlen);
    if (changed < 0) goto rollback;
    if (changed != 1) {
        rc = rx_txn_end(meta, REINDEX_REFUSED, err, errlen);
        errf(err, errlen, "version %u of %s is no longer being built", v, alias);
        goto out;
    }
    sbuf_reset(&q);
    sbuf_printf(&q, "DELETE FROM index_versions WHERE index_id = %s AND version = %u", id, v);
    if (db_exec(meta, q.data, err, errlen) < 0) goto rollback;
    if (rx_close_run(meta, cfg, id, v, status, reason, err, errlen) < 0) goto rollback;
    rc = rx_txn_end(meta, REINDEX_OK, err, errlen);
    if (rc != REINDEX_OK) goto out;
    char detail[1400];
    snprintf(detail, sizeof detail, "version %u %s: %s", v, status, reason ? reason : "");
    rx_sync_log(meta, cfg->source.name, id, !strcmp(status, "failed") ? "reindex failed"
                : "reindex cancelled",
                detail);
    if (delete_index) {
        struct search_resp r;
        search_resp_init(&r);
        char phys[600], path[700], e2[256];
        snprintf(path, sizeof path, "/%s", index_version_name(phys, sizeof phys, alias, v));
        if (rx_engine(k, "DELETE", path, NULL, &r, e2, sizeof e2) < 0)
            log_warn("reindex", "%s not deleted (delete it by hand): %s", phys, e2);
        search_resp_free(&r);
    }
    goto out;
rollback:
    rc = rx_txn_end(meta, REINDEX_ERR, err, errlen);
out:
    sbuf_free(&q);
    return rc;
}

int reindex_reset(const struct ss_config *cfg, struct search_conn *k, MYSQL *meta,
                  const char *alias, const char *by, char *err, size_t errlen) {
    char *row[5];
    int rc = rx_index_id_of(meta, config_mapping_name(cfg), alias, row, err, errlen);
    if (rc != REINDEX_OK) return rc;
    if (strcmp(row[1], "changing") != 0) {
        errf(err, errlen, "index %s is %s: there is no build to cancel%s", alias, row[1],
             !strcmp(row[1], "switching") ? " (the alias is being switched to the new version)"
                                          : "");
        db_row_free(row, 5);
        return REINDEX_REFUSED;
    }
    unsigned v = (unsigned)strtoul(row[3], NULL, 10);
    rc = rx_undo_build(cfg, k, meta, alias, row[0], v, "cancelled", by, true, err, errlen);
    if (rc == REINDEX_OK) log_info("reindex", "%s: build of version %u cancelled", alias, v);
    db_row_free(row, 5);
    return rc;
}

int reindex_cancel_version(const struct ss_config *cfg, struct search_conn *k, MYSQL *meta,
                           const char *alias, unsigned version, const char *by, char *err,
                           size_t errlen) {
    char *row[5];
    int rc = rx_index_id_of(meta, config_mapping_name(cfg), alias, row, err, errlen);
    if (rc != REINDEX_OK) return rc;
    if (strcmp(row[1], "changing") != 0 || strtoul(row[3], NULL, 10) != version) {
        errf(err, errlen, "version %u of %s is no longer being built", version, alias);
        db_row_free(row, 5);
        return REINDEX_REFUSED;
    }
    rc = rx_undo_build(cfg, k, meta, alias, row[0], version, "cancelled", by, true, err, errlen);
    if (rc == REINDEX_OK) log_info("reindex", "%s: build of version %u cancelled", alias, version);
    db_row_free(row, 5);
    return rc;
}

int reindex_delete_all(const struct ss_config *cfg, struct search_conn *k, MYSQL *meta,
                       const char *alias, char *err, size_t errlen) {
    char *row[5];
    int rc = rx_index_id_of(meta, config_mapping_name(cfg), alias, row, err, errlen);
    if (rc != REINDEX_OK) return rc;
    if (strcmp(row[1], "available") && strcmp(row[1], "unavailable") && strcmp(row[1], "history")) {
        errf(err, errlen, "index %s is %s: --delete-all works from available or history only "
                          "(cancel the build first with --reset)",
             alias, row[1]);
        db_row_free(row, 5);
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
    if (rx_engine(k, "DELETE", path, NULL, &r, err, errlen) < 0) goto out;
    if (r.status != 200 && r.status != 404) {
        errf(err, errlen, "deleting %s_v*: HTTP %ld %.300s", alias, r.status,
             r.body.data ? r.body.data : "");
        goto out;
    }
    sbuf_reset(&q);
    sbuf_printf(&q, "DELETE FROM index_versions WHERE index_id = %s", row[0]);
    if (db_exec(meta, q.data, err, errlen) < 0) goto out;
    rx_sync_log(meta, cfg->source.name, row[0], "indices deleted", "reindex --delete-all");
    log_info("reindex", "%s: every version deleted", alias);
    rc = REINDEX_OK;
out:
    search_resp_free(&r);
    sbuf_free(&q);
    db_row_free(row, 5);
    return rc;
}
