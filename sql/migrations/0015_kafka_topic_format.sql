-- 0015_kafka_topic_format: a topic added at run time may carry its own
-- message format (`searchsync topics add --format`, POST /api/v1/topics);
-- NULL reads it as [kafka] format says (sync/sources/kafka_source.c).
ALTER TABLE kafka_topics
  ADD COLUMN format VARCHAR(16) NULL;
