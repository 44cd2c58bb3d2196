-- 0010_index_stop: an index config whose mapping the source no longer fits
-- (a schema change read from the binlog: an incompatible type, a dropped or
-- renamed column or table) stops receiving live changes instead of taking
-- wrong ones. stopped_reason says why, when and at which binlog position
-- (NULL: deliveries on). Nothing is written through its alias while it is
-- set; a build of the index (after the mapping is fixed) still gets its
-- dual writes, and clears it when it goes live (sync/node/index_stop.c).
ALTER TABLE index_configs ADD COLUMN stopped_reason MEDIUMTEXT NULL;
