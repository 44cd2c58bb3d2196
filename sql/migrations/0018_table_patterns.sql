-- 0018_table_patterns: an index config may read a family of shard tables
-- through table patterns (`shop.orders_{n:[0-9]+}`, sync/mapping/mapping_shard.h):
-- names long enough for a pattern, how a shard's document ids are made, and
-- which shards the live version has read whole (one "db.table" a line; NULL:
-- not recorded: sync/node/shard_join.h).
ALTER TABLE index_configs
  ADD COLUMN id_template VARCHAR(255) NULL AFTER analysis,
  ADD COLUMN unique_keys TINYINT(1) NOT NULL DEFAULT 0 AFTER id_template,
  ADD COLUMN shards_read MEDIUMTEXT NULL AFTER unique_keys;
ALTER TABLE table_configs
  MODIFY db_name VARCHAR(255) NOT NULL,
  MODIFY table_name VARCHAR(255) NOT NULL,
  MODIFY parent_db VARCHAR(255) NULL,
  MODIFY parent_table VARCHAR(255) NULL;
ALTER TABLE mapping_relations
  MODIFY related_db VARCHAR(255) NOT NULL,
  MODIFY related_table VARCHAR(255) NOT NULL;
