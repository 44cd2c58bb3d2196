-- 0023_emptied_rebuilds: the rebuilds a TRUNCATE, a DROP or a partition
-- statement owes an index config, from the moment the source's reader reads
-- the statement until the supervisor has queued the rebuild (or judged that
-- none is owed). Such a statement logs no row, so once the checkpoint is
-- past it nothing would bring the rebuild back: a daemon stopped or killed
-- in between would leave the removed rows in the index. The reader writes a
-- row before it reads on, loads its source's rows when it starts, and the
-- supervisor deletes each it has handled (sync/node/emptied_store.c).
--
-- read_at is where the statement was read (a producer's snapshot: its
-- position), so a statement read again after a restart is not owed twice.
CREATE TABLE IF NOT EXISTS emptied_rebuilds (
  source VARCHAR(64) NOT NULL,
  alias VARCHAR(255) NOT NULL,
  read_at VARCHAR(320) NOT NULL,
  reason TEXT NOT NULL,
  dropped TINYINT(1) NOT NULL DEFAULT 0,
  replayed_file VARCHAR(255) NOT NULL DEFAULT '',
  replayed_pos BIGINT UNSIGNED NOT NULL DEFAULT 0,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (source, alias, read_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
