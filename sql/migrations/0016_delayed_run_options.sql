-- 0016_delayed_run_options: a delayed run keeps the --page and
-- --max-attempts it was started with, so that in a ZooKeeper cluster the
-- nodes that run its jobs use them too (sync/cluster/cluster_delayed.c); NULL
-- (runs from before): the defaults.
ALTER TABLE delayed_runs
  ADD COLUMN page INT UNSIGNED NULL,
  ADD COLUMN max_attempts INT UNSIGNED NULL;
