#!/usr/bin/env bash
# tests/integration/t_cluster_start_mysql.sh — t_cluster_start.sh with MySQL 8
# (tests/harness/mysql8.sh) as the source and the metadata server: three
# nodes of one ZooKeeper cluster, their election, jobs and reindex requests.
exec bash "$(dirname "$0")/t_cluster_start.sh" mysql
