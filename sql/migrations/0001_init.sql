-- 0001: the sources this cluster reads. Every other table that belongs to
-- one source is keyed by its name. Migrations are applied in order by
-- `searchsync run` (and the other commands that need the schema); each runs
-- once, recorded in schema_migrations.
CREATE TABLE IF NOT EXISTS sources (
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  description VARCHAR(255) NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB;
