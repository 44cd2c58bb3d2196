-- 0002: delivery's tables: the checkpoint of each source and the
-- dead letters. Numbered after 0001_init; the mapping model's tables take the
-- next free numbers (0003, ...). Owned by src/deliver/store.c.
--
-- offsets: one row per source; `position` is the reader's opaque resume token
-- (binlog file:pos and/or GTID set) of the newest transaction boundary below
-- which every change was acknowledged by the engine. A single-row upsert, so a
-- checkpoint is never torn.
CREATE TABLE IF NOT EXISTS offsets (
  source VARCHAR(64) NOT NULL PRIMARY KEY,
  position VARCHAR(4096) NOT NULL,
  txn_seq BIGINT UNSIGNED NOT NULL DEFAULT 0,
  updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB;
-- dead_letters: changes the engine refused for good (4xx such as
-- mapper_parsing_exception) or that a purge strategy dropped at the
-- high-water mark. `searchsync dead-letters replay` resubmits them with their
-- original version (an older one loses to anything newer: 409, dropped) and
-- deletes the rows it delivered.
CREATE TABLE IF NOT EXISTS dead_letters (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  source VARCHAR(64) NOT NULL DEFAULT '',
  index_name VARCHAR(255) NOT NULL,
  doc_id VARCHAR(512) NOT NULL,
  routing VARCHAR(512) NULL,
  version BIGINT UNSIGNED NOT NULL,
  op VARCHAR(16) NOT NULL,
  status SMALLINT NOT NULL DEFAULT 0,
  error MEDIUMTEXT NOT NULL,
  body LONGTEXT NULL,
  script MEDIUMTEXT NULL,
  attempts INT NOT NULL DEFAULT 0,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY dead_letters_doc (index_name, doc_id),
  KEY dead_letters_created (created_at)
) ENGINE=InnoDB;
