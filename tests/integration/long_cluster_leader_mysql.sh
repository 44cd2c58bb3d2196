#!/usr/bin/env bash
# tests/integration/long_cluster_leader_mysql.sh — t_cluster_leader.sh with MySQL 8
# (tests/harness/mysql8.sh) as the source and the metadata server: failover,
# fencing and the standalone reader lock on MySQL (make check-long: about 80 s).
exec bash "$(dirname "$0")/t_cluster_leader.sh" mysql
