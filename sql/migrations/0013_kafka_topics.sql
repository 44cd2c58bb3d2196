-- 0013_kafka_topics: topics a Kafka source ([source] kind = kafka) reads
-- besides [kafka] topics / topic_regex, added and removed at run time
-- (`searchsync topics add|remove|list`, cmd/cmd_topics.c). The daemon reads
-- the table every 2 s and subscribes to the new set without a restart
-- (sync/sources/kafka_source.c). A topic's offsets are in the source's checkpoint
-- (offsets.position) like every other topic's.
CREATE TABLE IF NOT EXISTS kafka_topics (
  source VARCHAR(64) NOT NULL,
  topic VARCHAR(249) NOT NULL,
  added_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (source, topic)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
