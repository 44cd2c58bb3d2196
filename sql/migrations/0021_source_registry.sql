-- 0021_source_registry: the sources added with `searchsync source add` or
-- POST /api/v1/sources (sync/ops/ops_sources.c), recorded in the sources
-- table so that every daemon and command sees where each one is, whichever
-- machine wrote its configuration. A row with host NULL is a name known
-- from elsewhere (a mapping import) and was never added so.
--
-- No password is stored here: it is in the source's own configuration
-- directory (NAME.password, mode 0600), which only the machine that runs
-- the source's daemon needs.
ALTER TABLE sources
  ADD COLUMN mapping VARCHAR(64) NULL,
  ADD COLUMN host VARCHAR(255) NULL,
  ADD COLUMN port INT UNSIGNED NULL,
  ADD COLUMN user VARCHAR(255) NULL,
  ADD COLUMN ssl_mode VARCHAR(32) NULL,
  ADD COLUMN ssl_ca VARCHAR(1024) NULL,
  ADD COLUMN server_id INT UNSIGNED NULL,
  ADD COLUMN config_path VARCHAR(1024) NULL,
  ADD COLUMN admin_listen VARCHAR(255) NULL,
  ADD COLUMN changed_by VARCHAR(255) NULL,
  ADD COLUMN updated_at TIMESTAMP(3) NULL;
