-- 0022_version_read_from: where in each source's binlog a version's pages
-- were read from. index_versions.read_from holds one "source=file:pos" entry
-- per source of the version (space-separated), each its [source] server's
-- binlog end when that source's dual writes to the version began, before
-- any page of its part was read: every page of it saw the tables at or
-- after there. A schema statement a producer replays to describe the schema
-- (Debezium's snapshot writes DROP TABLE IF EXISTS for every table) empties
-- nothing the version was read after (sync/node/supervisor.c). NULL: not
-- recorded (a version built before this column).
ALTER TABLE index_versions
  ADD COLUMN read_from TEXT NULL AFTER start_position;
