-- 0009: consistency checks. Owned by sync/check/check_report.c (check_record):
-- one row per `searchsync check` run, from the command or the daemon's
-- schedule; `searchsync status` shows each index's last, GET /api/v1/checks
-- lists them.
--
-- status: clean | differences (found and left) | repaired | failed.
-- window_s: the --since window in seconds, 0 for the whole index.
-- details: the run's JSON report (docs/check.md), its difference lists cut
-- at 1000 ids each.
CREATE TABLE IF NOT EXISTS check_runs (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  source VARCHAR(64) NOT NULL,
  index_alias VARCHAR(255) NOT NULL,
  window_s BIGINT UNSIGNED NOT NULL DEFAULT 0,
  trigger_kind VARCHAR(16) NOT NULL DEFAULT 'command',
  node VARCHAR(255) NULL,
  status VARCHAR(16) NOT NULL,
  started_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  finished_at TIMESTAMP(3) NULL,
  rows_built BIGINT UNSIGNED NOT NULL DEFAULT 0,
  documents BIGINT UNSIGNED NOT NULL DEFAULT 0,
  missing BIGINT UNSIGNED NOT NULL DEFAULT 0,
  extra BIGINT UNSIGNED NOT NULL DEFAULT 0,
  different BIGINT UNSIGNED NOT NULL DEFAULT 0,
  duplicate BIGINT UNSIGNED NOT NULL DEFAULT 0,
  documents_fetched BIGINT UNSIGNED NOT NULL DEFAULT 0,
  repaired_documents BIGINT UNSIGNED NOT NULL DEFAULT 0,
  repaired_deletes BIGINT UNSIGNED NOT NULL DEFAULT 0,
  details MEDIUMTEXT NULL,
  error TEXT NULL,
  KEY idx_check_runs_index (source, index_alias, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT IGNORE INTO retention (table_name, keep_days) VALUES ('check_runs', 90);
