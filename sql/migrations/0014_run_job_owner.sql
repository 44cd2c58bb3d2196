-- 0014_run_job_owner: in a ZooKeeper cluster the jobs of a reindex run on
-- several nodes (sync/cluster/cluster_jobs.c). A run's bookkeeping keeps which node
-- ended each job and whether a rebalance moved it from another node
-- mid-way (it resumed from its cursor there), as the jobs rows had them.
ALTER TABLE reindex_run_jobs
  ADD COLUMN owner_node VARCHAR(255) NULL,
  ADD COLUMN broken_by_rebalance TINYINT(1) NOT NULL DEFAULT 0;
