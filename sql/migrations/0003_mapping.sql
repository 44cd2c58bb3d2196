-- 0003: the mapping model (docs/mapping.md) and the
-- tables of the later pipelines, as far as their shape is settled. Owned by
-- sync/mapping/mapping.c (index_configs .. mapping_relations) and, later, by the
-- reindex, delayed-run, dictionary and cleanup code (the rest).
-- Everything that belongs to one source is keyed by the source's name.
--
-- index_configs: one alias and the tables that feed it. state, current_version
-- and epoch are run-time state: a mapping import never changes them.
--   state: unavailable -> changing -> available -> history
CREATE TABLE IF NOT EXISTS index_configs (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  source VARCHAR(64) NOT NULL,
  alias VARCHAR(255) NOT NULL,
  state ENUM('unavailable','changing','available','history') NOT NULL DEFAULT 'unavailable',
  current_version INT UNSIGNED NOT NULL DEFAULT 0,
  epoch INT UNSIGNED NOT NULL DEFAULT 0,
  history_retention INT UNSIGNED NOT NULL DEFAULT 2,
  shards INT UNSIGNED NOT NULL DEFAULT 1,
  replicas INT UNSIGNED NOT NULL DEFAULT 1,
  join_field VARCHAR(64) NOT NULL DEFAULT 'relation',
  analysis MEDIUMTEXT NULL,
  position INT NOT NULL DEFAULT 0,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  UNIQUE KEY uk_index_configs_alias (source, alias)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- table_configs: how one table feeds its index. A table with parent_db/
-- parent_table set is a parent/child child, its
-- rows separate documents of the same index joined by join_name.
CREATE TABLE IF NOT EXISTS table_configs (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  index_id BIGINT UNSIGNED NOT NULL,
  db_name VARCHAR(64) NOT NULL,
  table_name VARCHAR(64) NOT NULL,
  join_name VARCHAR(64) NULL,
  parent_db VARCHAR(64) NULL,
  parent_table VARCHAR(64) NULL,
  parent_column VARCHAR(64) NULL,
  bucket_column VARCHAR(64) NULL,
  daily_check_column VARCHAR(64) NULL,
  copy_to VARCHAR(255) NULL,
  delay_effect TINYINT(1) NOT NULL DEFAULT 0,
  mode ENUM('re-query','row-image') NOT NULL DEFAULT 're-query',
  expiry_column VARCHAR(64) NULL,
  position INT NOT NULL DEFAULT 0,
  UNIQUE KEY uk_table_configs (index_id, db_name, table_name),
  KEY idx_table_configs_table (db_name, table_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- mapping_relations: a joined table inside a document.
-- parent_relation_id = 0: hangs off the table config's row; otherwise off
-- that relation's rows (any depth). nested NULL = inherit the column's flag,
-- extend_name NULL = inherit the column's extend name (the relation's own wins).
CREATE TABLE IF NOT EXISTS mapping_relations (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  table_id BIGINT UNSIGNED NOT NULL,
  parent_relation_id BIGINT UNSIGNED NOT NULL DEFAULT 0,
  search_column VARCHAR(64) NOT NULL,
  extend_name VARCHAR(64) NULL,
  related_db VARCHAR(64) NOT NULL,
  related_table VARCHAR(64) NOT NULL,
  join_column VARCHAR(64) NOT NULL,
  nested TINYINT(1) NULL,
  where_sql TEXT NULL,
  distinct_rows TINYINT(1) NOT NULL DEFAULT 0,
  refresh_parent TINYINT(1) NOT NULL DEFAULT 1,
  area_update TINYINT(1) NOT NULL DEFAULT 0,
  position INT NOT NULL DEFAULT 0,
  KEY idx_mapping_relations_table (table_id, parent_relation_id),
  KEY idx_mapping_relations_related (related_db, related_table)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- mapping_columns: the columns of a table config (relation_id = 0) or the
-- columns a relation loads from its related table (relation_id > 0).
CREATE TABLE IF NOT EXISTS mapping_columns (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  table_id BIGINT UNSIGNED NOT NULL,
  relation_id BIGINT UNSIGNED NOT NULL DEFAULT 0,
  name VARCHAR(64) NOT NULL,
  mysql_type VARCHAR(1024) NOT NULL DEFAULT '',
  engine_type VARCHAR(32) NOT NULL,
  analyzer VARCHAR(64) NULL,
  search_analyzer VARCHAR(64) NULL,
  copy_to VARCHAR(255) NULL,
  keyword TINYINT(1) NOT NULL DEFAULT 0,
  extend_name VARCHAR(64) NULL,
  is_key TINYINT(1) NOT NULL DEFAULT 0,
  nested TINYINT(1) NOT NULL DEFAULT 0,
  indexed TINYINT(1) NOT NULL DEFAULT 1,
  format VARCHAR(255) NULL,
  position INT NOT NULL DEFAULT 0,
  UNIQUE KEY uk_mapping_columns (table_id, relation_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- index_versions: physical indices <alias>_v<N> of an index config.
CREATE TABLE IF NOT EXISTS index_versions (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  index_id BIGINT UNSIGNED NOT NULL,
  version INT UNSIGNED NOT NULL,
  physical_name VARCHAR(255) NOT NULL,
  state ENUM('unavailable','changing','available','history') NOT NULL DEFAULT 'changing',
  body LONGTEXT NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  switched_at TIMESTAMP(3) NULL,
  UNIQUE KEY uk_index_versions (index_id, version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- jobs: one bucket of one reindex (type index) or one slice of a delayed
-- run (type job), with a resumable cursor.
CREATE TABLE IF NOT EXISTS jobs (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  source VARCHAR(64) NOT NULL,
  index_id BIGINT UNSIGNED NOT NULL,
  type ENUM('index','job') NOT NULL,
  status ENUM('init','running','error','done') NOT NULL DEFAULT 'init',
  total_buckets INT UNSIGNED NOT NULL DEFAULT 1,
  bucket INT UNSIGNED NOT NULL DEFAULT 0,
  data_cursor VARCHAR(1024) NULL,
  params MEDIUMTEXT NULL,
  owner_node VARCHAR(255) NULL,
  rebalance_session VARCHAR(64) NULL,
  broken_by_rebalance TINYINT(1) NOT NULL DEFAULT 0,
  rows_read BIGINT UNSIGNED NOT NULL DEFAULT 0,
  docs_written BIGINT UNSIGNED NOT NULL DEFAULT 0,
  errors BIGINT UNSIGNED NOT NULL DEFAULT 0,
  error_text MEDIUMTEXT NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  started_at TIMESTAMP(3) NULL,
  finished_at TIMESTAMP(3) NULL,
  updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  KEY idx_jobs_index (index_id, type, status),
  KEY idx_jobs_source (source, status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- job_errors: per-job error list.
CREATE TABLE IF NOT EXISTS job_errors (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  job_id BIGINT UNSIGNED NOT NULL,
  business_id VARCHAR(512) NULL,
  error_text MEDIUMTEXT NOT NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY idx_job_errors_job (job_id),
  KEY idx_job_errors_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- change_snapshots: changes of delay-effect tables waiting for a delayed run.
CREATE TABLE IF NOT EXISTS change_snapshots (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  source VARCHAR(64) NOT NULL,
  db_name VARCHAR(64) NOT NULL,
  table_name VARCHAR(64) NOT NULL,
  operation ENUM('insert','update','delete') NOT NULL,
  business_id VARCHAR(255) NOT NULL,
  status ENUM('init','running','error','done') NOT NULL DEFAULT 'init',
  attach_date DATE NOT NULL,
  row_image MEDIUMTEXT NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  UNIQUE KEY uk_change_snapshots (source, db_name, table_name, operation, business_id, status, attach_date),
  KEY idx_change_snapshots_status (status, attach_date)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- relation_tops: from a metadata table to the root tables it affects, one
-- SQL per level (a "relation top" chain), each run in the named database.
CREATE TABLE IF NOT EXISTS relation_tops (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  source VARCHAR(64) NOT NULL,
  db_name VARCHAR(64) NOT NULL,
  table_name VARCHAR(64) NOT NULL,
  top_index_id BIGINT UNSIGNED NOT NULL,
  level INT UNSIGNED NOT NULL,
  level_db VARCHAR(64) NOT NULL,
  level_sql TEXT NOT NULL,
  UNIQUE KEY uk_relation_tops (source, db_name, table_name, top_index_id, level)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- dynamic_words: the IK dictionaries served at /dict/ext.txt and /dict/stop.txt.
CREATE TABLE IF NOT EXISTS dynamic_words (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  word VARCHAR(255) NOT NULL,
  kind ENUM('ext','stop') NOT NULL,
  status ENUM('init','published') NOT NULL DEFAULT 'init',
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  UNIQUE KEY uk_dynamic_words (word, kind)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- sync_log: what configuration and state changes happened, by whom.
CREATE TABLE IF NOT EXISTS sync_log (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  source VARCHAR(64) NOT NULL,
  index_id BIGINT UNSIGNED NULL,
  event VARCHAR(64) NOT NULL,
  detail MEDIUMTEXT NULL,
  node VARCHAR(255) NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY idx_sync_log_created (created_at),
  KEY idx_sync_log_index (index_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- retention: how long each history table keeps rows (cleaned by sync/node/retention.c).
CREATE TABLE IF NOT EXISTS retention (
  table_name VARCHAR(64) NOT NULL PRIMARY KEY,
  keep_days INT UNSIGNED NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT IGNORE INTO retention (table_name, keep_days) VALUES
  ('sync_log', 30), ('job_errors', 30), ('change_snapshots', 7), ('dead_letters', 30), ('jobs', 30);
