/* status_indices: the admin API's read-only view of a source's index
 * configs from the metadata schema, read as rows: the index configs the
 * source feeds, their versions, and the bookkeeping of a build (its last
 * run, its jobs). Each function runs its query with the request's values
 * as bound parameters and returns the number of rows, or -1 with err; the
 * columns are listed beside each, in order. web/indices_api.c names them
 * and writes the JSON. */
#ifndef SS_STATUS_INDICES_H
#define SS_STATUS_INDICES_H
#include <stddef.h>

#include <mysql.h>

#include "config.h"
#include "stmt.h"

/* The index configs cfg's source feeds (sync/mapping/mapping_source.h), in
 * their mapping's order: id, alias, state, current_version,
 * building_version, epoch, history_retention. */
long status_index_configs_rows(MYSQL *meta, const struct ss_config *cfg, struct stmt_rows *out,
                               char *err, size_t errlen);
/* The versions of those index configs, by index config and version:
 * index_id, version, physical_name, state, created_at, switched_at (ISO
 * 8601). */
long status_index_versions_rows(MYSQL *meta, const struct ss_config *cfg,
                                struct stmt_rows *out, char *err, size_t errlen);
/* Index config alias among them (0 or 1 row): id, state, current_version,
 * building_version, epoch, history_retention. */
long status_index_config_row(MYSQL *meta, const struct ss_config *cfg, const char *alias,
                             struct stmt_rows *out, char *err, size_t errlen);

/* The last build of index config index_id (reindex_runs, 0 or 1 row): id,
 * version, status, buckets, start_position, rows_read, docs_written,
 * rejected, error_text, started_at, finished_at (ISO 8601). */
long status_last_run_row(MYSQL *meta, const char *index_id, struct stmt_rows *out, char *err,
                         size_t errlen);
/* The jobs of index config index_id's build, by bucket: those of the build
 * in progress when building (its version) is not "0" or NULL, else the
 * bookkeeping of its last run last_run_id (none when NULL): bucket, status,
 * rows_read, docs_written, rejected, errors (NULL for a run's), error_text,
 * started_at, finished_at (ISO 8601). */
long status_build_jobs_rows(MYSQL *meta, const char *index_id, const char *building,
                            const char *last_run_id, struct stmt_rows *out, char *err,
                            size_t errlen);

#endif
