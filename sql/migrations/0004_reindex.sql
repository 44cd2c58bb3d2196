-- 0004: full reindex into versioned indices, owned by
-- sync/reindex/reindex.c.
--
-- index_configs.building_version: the version <alias>_v<N> being built while
-- state = 'changing' (0 otherwise). 'switching': the last job is done and one
-- node is moving the alias (a restart finishes the switch).
ALTER TABLE index_configs
  MODIFY state ENUM('unavailable','changing','switching','available','history') NOT NULL DEFAULT 'unavailable',
  ADD COLUMN building_version INT UNSIGNED NOT NULL DEFAULT 0 AFTER current_version;

-- index_versions: start_position is the binlog position from which live
-- changes were also written to this version (dual writes), recorded before
-- its first page was read.
ALTER TABLE index_versions
  MODIFY state ENUM('unavailable','changing','available','history') NOT NULL DEFAULT 'changing',
  ADD COLUMN start_position VARCHAR(4200) NULL AFTER body,
  ADD COLUMN buckets INT UNSIGNED NOT NULL DEFAULT 1 AFTER start_position,
  ADD COLUMN bucketing ENUM('range','mod') NOT NULL DEFAULT 'range' AFTER buckets;

-- jobs of a reindex belong to one version of their index config.
ALTER TABLE jobs
  ADD COLUMN version INT UNSIGNED NOT NULL DEFAULT 0 AFTER index_id,
  ADD COLUMN rejected BIGINT UNSIGNED NOT NULL DEFAULT 0 AFTER docs_written;

-- reindex_runs: one row per reindex, whatever its outcome (kept for
-- [reindex] keep_runs runs per index config); reindex_run_jobs: the
-- bookkeeping of each of its jobs. job_errors rows of a run carry
-- its id, so they outlive the jobs.
CREATE TABLE IF NOT EXISTS reindex_runs (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  source VARCHAR(64) NOT NULL,
  index_id BIGINT UNSIGNED NOT NULL,
  alias VARCHAR(255) NOT NULL,
  version INT UNSIGNED NOT NULL,
  status ENUM('running','done','failed','cancelled') NOT NULL DEFAULT 'running',
  buckets INT UNSIGNED NOT NULL DEFAULT 1,
  start_position VARCHAR(4200) NULL,
  rows_read BIGINT UNSIGNED NOT NULL DEFAULT 0,
  docs_written BIGINT UNSIGNED NOT NULL DEFAULT 0,
  rejected BIGINT UNSIGNED NOT NULL DEFAULT 0,
  error_text MEDIUMTEXT NULL,
  started_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  finished_at TIMESTAMP(3) NULL,
  KEY idx_reindex_runs_index (index_id, id),
  UNIQUE KEY uk_reindex_runs_version (index_id, version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS reindex_run_jobs (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  run_id BIGINT UNSIGNED NOT NULL,
  bucket INT UNSIGNED NOT NULL,
  status ENUM('init','running','error','done') NOT NULL DEFAULT 'done',
  error_text MEDIUMTEXT NULL,
  rows_read BIGINT UNSIGNED NOT NULL DEFAULT 0,
  docs_written BIGINT UNSIGNED NOT NULL DEFAULT 0,
  rejected BIGINT UNSIGNED NOT NULL DEFAULT 0,
  started_at TIMESTAMP(3) NULL,
  finished_at TIMESTAMP(3) NULL,
  KEY idx_reindex_run_jobs_run (run_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

ALTER TABLE job_errors
  ADD COLUMN run_id BIGINT UNSIGNED NULL AFTER job_id,
  ADD KEY idx_job_errors_run (run_id);
