-- 0011_node_states: what each `searchsync run` of a source is doing, as it
-- wrote it down last (sync/node/node_state.c, every 2 s): its role (reader,
-- standby, stopped), delivery's queue and in-flight changes, the fuses
-- blown, whether the engine answers, the reader's position and lag. Read
-- by `searchsync status` and /api/v1/status (nodes), so the live state of
-- every node shows without asking each one. A node gone for good keeps its
-- last row (shown with its age) until retention removes it.
CREATE TABLE IF NOT EXISTS node_states (
  source VARCHAR(64) NOT NULL,
  node VARCHAR(255) NOT NULL,
  role VARCHAR(16) NOT NULL,
  state MEDIUMTEXT NOT NULL,
  started_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (source, node)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT IGNORE INTO retention (table_name, keep_days) VALUES ('node_states', 7);
