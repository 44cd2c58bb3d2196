-- 0005: versions are built with their translog written asynchronously
-- (sync/reindex/reindex.c creates them, sync/reindex/reindex_runner.c checks them).
--
-- index_versions.build_terms: the primary terms of the version's shards when
-- it was created, in shard order ("1,1,1"). While a version is built the
-- engine acknowledges writes before they are on disk; a primary that was
-- assigned again since (a node restarted) may have lost some, and shows a
-- greater term: such a build is never switched to. NULL: the engine did not
-- tell the terms, and the version is built with every write on disk.
ALTER TABLE index_versions
  ADD COLUMN build_terms VARCHAR(2000) NULL AFTER bucketing;
