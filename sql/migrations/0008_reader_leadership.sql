-- 0008: who reads each source's binlog (docs/cluster.md). Owned by
-- sync/cluster/leadership.c and src/deliver/store.c (fenced checkpoint saves).
--
-- offsets.fence: the fencing token of the reader that saved the checkpoint
-- last. A node becomes a source's reader with a token larger than any before
-- (ZooKeeper: its election node's czxid; standalone: reader_locks.fence) and
-- raises this column to it; a save carries the saver's token and only lands
-- while no larger one is recorded, so a reader that was paused and lost its
-- place (SIGSTOP, a long GC-like stall) cannot move the checkpoint back.
ALTER TABLE offsets ADD COLUMN fence BIGINT UNSIGNED NOT NULL DEFAULT 0;

-- reader_locks: without ZooKeeper, the one daemon that reads a source; it
-- beats its heartbeat, and another daemon takes the row over only once the
-- heartbeat is older than [cluster] session_timeout_ms (its fence then
-- grows by one).
CREATE TABLE IF NOT EXISTS reader_locks (
  source VARCHAR(64) NOT NULL PRIMARY KEY,
  owner VARCHAR(255) NOT NULL,
  fence BIGINT UNSIGNED NOT NULL DEFAULT 0,
  heartbeat_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB;
