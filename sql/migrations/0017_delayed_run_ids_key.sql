-- 0017_delayed_run_ids_key: delayed_run_ids keyed by (run, index config,
-- bucket, document) and nothing else. A document's bucket is a function of
-- its key, so the key stays unique with the bucket in it; the one B-tree
-- serves the dedup on insert (INSERT IGNORE), a job's pages in key order
-- within its bucket, and the delete of a finished run. The second index it
-- had doubled the writes of every id staged and deleted (a rename under 1M
-- rows: 1M of each; sync/delayed/delayed_run.c).
ALTER TABLE delayed_run_ids
  DROP PRIMARY KEY,
  ADD PRIMARY KEY (run_id, index_id, bucket, doc_table, doc_key),
  DROP KEY idx_delayed_run_ids_bucket;
