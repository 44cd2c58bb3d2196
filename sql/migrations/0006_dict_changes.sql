-- 0006: when the published list of each dynamic word kind last changed
-- (web/words.c). /dict/ext.txt and /dict/stop.txt send it as
-- Last-Modified: the analyzer's remote dictionary reloads when it moves. A
-- publish, or the delete of a published word, moves it in the same
-- transaction; a deletion leaves no row of its own in dynamic_words, so the
-- words' updated_at alone could not tell.
CREATE TABLE IF NOT EXISTS dict_changes (
  kind ENUM('ext','stop') NOT NULL PRIMARY KEY,
  changed_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
