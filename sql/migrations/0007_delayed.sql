-- 0007: the delayed run, owned by
-- sync/delayed/delayed_run.c (runs, their ids, the snapshots' bookkeeping) and
-- sync/delayed/relation_tops.c (the level SQL chains).
--
-- change_snapshots: how many runs tried a snapshot, why the last one failed,
-- and the run that holds it while it is 'running' (a crashed run's snapshots
-- are taken over by the next one, which resumes that run).
ALTER TABLE change_snapshots
  ADD COLUMN attempts INT UNSIGNED NOT NULL DEFAULT 0 AFTER row_image,
  ADD COLUMN error_text MEDIUMTEXT NULL AFTER attempts,
  ADD COLUMN run_id BIGINT UNSIGNED NULL AFTER error_text,
  ADD KEY idx_change_snapshots_run (run_id);

-- relation_tops: a delay-effect table may reach an index by several paths
-- (path); each level names its output column; 'generated' chains come from
-- the mapping's relations (rewritten by each run), 'mapping' ones are
-- hand-written in the mapping file (relation_top) and replace the generated
-- ones of that table and index. level_sql takes its input as a `?` list.
ALTER TABLE relation_tops
  ADD COLUMN path INT UNSIGNED NOT NULL DEFAULT 0 AFTER top_index_id,
  ADD COLUMN output_column VARCHAR(64) NOT NULL DEFAULT '' AFTER level_sql,
  ADD COLUMN doc_table VARCHAR(129) NOT NULL DEFAULT '' AFTER output_column,
  ADD COLUMN origin ENUM('generated','mapping') NOT NULL DEFAULT 'generated' AFTER doc_table,
  DROP KEY uk_relation_tops,
  ADD UNIQUE KEY uk_relation_tops (source, db_name, table_name, top_index_id, path, level);

-- delayed_runs: one row per delayed run (cron or the daemon). status
-- 'running' with no live owner (its lock gone) is resumed by the next run.
-- resolved: every id of its snapshots is in delayed_run_ids and its jobs
-- (jobs.type = 'job', params = the run id) exist.
CREATE TABLE IF NOT EXISTS delayed_runs (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  source VARCHAR(64) NOT NULL,
  index_alias VARCHAR(255) NULL,
  status ENUM('running','done','failed') NOT NULL DEFAULT 'running',
  node VARCHAR(255) NULL,
  buckets INT UNSIGNED NOT NULL DEFAULT 1,
  resolved TINYINT(1) NOT NULL DEFAULT 0,
  snapshots BIGINT UNSIGNED NOT NULL DEFAULT 0,
  ids BIGINT UNSIGNED NOT NULL DEFAULT 0,
  docs_written BIGINT UNSIGNED NOT NULL DEFAULT 0,
  docs_deleted BIGINT UNSIGNED NOT NULL DEFAULT 0,
  errors BIGINT UNSIGNED NOT NULL DEFAULT 0,
  stats MEDIUMTEXT NULL,
  error_text MEDIUMTEXT NULL,
  started_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  finished_at TIMESTAMP(3) NULL,
  KEY idx_delayed_runs_source (source, status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- delayed_run_ids: the documents a run refreshes, each once (the primary
-- key), in its bucket (MOD(bucket expression, buckets)); a job pages
-- through its bucket by (doc_table, doc_key), its cursor in jobs.data_cursor.
CREATE TABLE IF NOT EXISTS delayed_run_ids (
  run_id BIGINT UNSIGNED NOT NULL,
  index_id BIGINT UNSIGNED NOT NULL,
  bucket INT UNSIGNED NOT NULL,
  doc_table INT UNSIGNED NOT NULL DEFAULT 0,
  doc_key VARCHAR(255) NOT NULL,
  PRIMARY KEY (run_id, index_id, doc_table, doc_key),
  KEY idx_delayed_run_ids_bucket (run_id, index_id, bucket, doc_table, doc_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

INSERT IGNORE INTO retention (table_name, keep_days) VALUES ('delayed_runs', 30);
