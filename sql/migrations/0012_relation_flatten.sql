-- 0012_relation_flatten: a many-to-many relation through a link table can
-- give the linked rows themselves as its array elements
-- ([{"id": 4, "name": "outdoor"}]) instead of the link rows with the linked
-- row inside ([{"tag_id": 4, "tag": {...}}]). flatten = 1 on the link
-- table's nested relation; its one one-to-one relation is the linked table
-- (sync/pipeline/docbuild.c, docs/mapping.md "Many-to-many").
ALTER TABLE mapping_relations ADD COLUMN flatten TINYINT(1) NOT NULL DEFAULT 0;
