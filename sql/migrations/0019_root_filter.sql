-- 0019_root_filter: a document table (the root, or a parent/child child) may
-- filter its rows: only those meeting where_sql are documents
-- (sync/mapping/mapping.h, mp_table.where; docs/mapping.md). NULL: every row.
ALTER TABLE table_configs
  ADD COLUMN where_sql TEXT NULL AFTER expiry_column;
