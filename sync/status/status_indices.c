/* status_indices: a source's index configs, their versions and builds, as
 * the admin API reads them (see status_indices.h). */
#include "sync/status/status_indices.h"

#include <string.h>

#include "sync/mapping/mapping_source.h"

#define ISO(col) STMT_ISO(col)

long status_index_configs_rows(MYSQL *meta, const struct ss_config *cfg, struct stmt_rows *out,
                               char *err, size_t errlen) {
    const char *p[] = {MP_FED_BY_ARGS(cfg)};
    return stmt_query(meta,
                      "SELECT id, alias, state, current_version, building_version, epoch, "
                      "history_retention FROM index_configs WHERE " MP_FED_BY_PARAMS
                      " ORDER BY position, id",
                      p, 3, out, err, errlen);
}

long status_index_versions_rows(MYSQL *meta, const struct ss_config *cfg,
                                struct stmt_rows *out, char *err, size_t errlen) {
    const char *p[] = {MP_FED_BY_ARGS(cfg)};
    return stmt_query(meta,
                      "SELECT v.index_id, v.version, v.physical_name, v.state, "
                      ISO("v.created_at") ", " ISO("v.switched_at") " FROM index_versions v "
                      "WHERE v.index_id IN " MP_FED_BY_IDS " ORDER BY v.index_id, v.version",
                      p, 3, out, err, errlen);
}

long status_index_config_row(MYSQL *meta, const struct ss_config *cfg, const char *alias,
                             struct stmt_rows *out, char *err, size_t errlen) {
    const char *p[] = {MP_FED_BY_ARGS(cfg), alias};
    return stmt_query(meta,
                      "SELECT id, state, current_version, building_version, epoch, "
                      "history_retention FROM index_configs WHERE " MP_FED_BY_PARAMS
                      " AND alias = ?",
                      p, 4, out, err, errlen);
}

long status_last_run_row(MYSQL *meta, const char *index_id, struct stmt_rows *out, char *err,
                         size_t errlen) {
    const char *p[] = {index_id};
    return stmt_query(meta,
                      "SELECT id, version, status, buckets, start_position, rows_read, "
                      "docs_written, rejected, error_text, " ISO("started_at") ", "
                      ISO("finished_at") " FROM reindex_runs WHERE index_id = ? ORDER BY id "
                      "DESC LIMIT 1",
                      p, 1, out, err, errlen);
}

long status_build_jobs_rows(MYSQL *meta, const char *index_id, const char *building,
                            const char *last_run_id, struct stmt_rows *out, char *err,
                            size_t errlen) {
    /* the jobs of the build in progress; else the bookkeeping of the last run */
    if (building && strcmp(building, "0")) {
        const char *p[] = {index_id, building};
        return stmt_query(meta,
                          "SELECT bucket, status, rows_read, docs_written, rejected, errors, "
                          "error_text, " ISO("started_at") ", " ISO("finished_at")
                          " FROM jobs WHERE index_id = ? AND version = ? AND type = 'index' "
                          "ORDER BY bucket",
                          p, 2, out, err, errlen);
    }
    if (last_run_id) {
        const char *p[] = {last_run_id};
        return stmt_query(meta,
                          "SELECT bucket, status, rows_read, docs_written, rejected, NULL, "
                          "error_text, " ISO("started_at") ", " ISO("finished_at")
                          " FROM reindex_run_jobs WHERE run_id = ? ORDER BY bucket",
                          p, 1, out, err, errlen);
    }
    if (out) *out = (struct stmt_rows){0};
    return 0;
}
