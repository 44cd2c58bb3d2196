-- 0020_sources: an index config fed by several sources (docs/cluster.md,
-- "Several sources, one index").
--
-- index_configs.source is the name of the mapping the index config belongs
-- to: [source] mapping, by default the source's own name, so an existing
-- install keeps its rows as they are. sources is the comma list of the
-- sources whose rows are its documents; NULL: the one source named like the
-- mapping.
ALTER TABLE index_configs
  ADD COLUMN sources TEXT NULL AFTER shards_read;

-- A build's part per source. Binlog positions of two sources do not compare,
-- so a version being built has no one start position: each source's reader
-- records its own (start_position: from there on its live changes are also
-- written to the version), then plans its part (its jobs, buckets from its
-- own server: planned = 1). The switch waits until every part is planned
-- and every job of every source is done.
CREATE TABLE IF NOT EXISTS reindex_parts (
  index_id BIGINT UNSIGNED NOT NULL,
  version INT UNSIGNED NOT NULL,
  source VARCHAR(64) NOT NULL,
  planned TINYINT(1) NOT NULL DEFAULT 0,
  buckets INT UNSIGNED NOT NULL DEFAULT 0,
  start_position VARCHAR(4200) NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  planned_at TIMESTAMP(3) NULL,
  PRIMARY KEY (index_id, version, source)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- a build under way at the upgrade is its one source's, planned already
INSERT IGNORE INTO reindex_parts (index_id, version, source, planned, buckets, start_position,
                                  planned_at)
  SELECT v.index_id, v.version, c.source, 1, v.buckets, v.start_position, NOW(3)
  FROM index_versions v JOIN index_configs c ON c.id = v.index_id
   AND c.building_version = v.version AND c.state IN ('changing', 'switching');

-- which source ended each job of a run
ALTER TABLE reindex_run_jobs
  ADD COLUMN source VARCHAR(64) NULL AFTER run_id;
