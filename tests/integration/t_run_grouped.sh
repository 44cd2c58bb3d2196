#!/usr/bin/env bash
# tests/integration/t_run_grouped.sh — transactions read while the daemon is
# behind are built together (sync/sources/binlog_source.c, "several transactions in
# one build"): the randomized oracle run (t_run_random.sh) with a backlog of
# random operations written while the daemon is stopped, read back after
# its restart, more operations written while it catches up (the rows of a
# group change under it: its read snapshot must hold the group's last
# transaction, never an older one), a SIGKILL mid-way (a group not yet
# built is read again), and every SKU change a rebuild (no area_update:
# nothing ends a group but its size). Every document must equal the SQL
# oracle, and the daemon must have built more than 100 transactions in
# groups. The daemon slices every fan-out of more than 7 documents
# (SEARCHSYNC_TEST_ROUTE_SLICE; 5000 in production, sync/pipeline/router.h
# router_set_slice): slices built and delivered while the router reads the
# rest, in keyset pages, under the same oracle. Knobs: those of
# t_run_random.sh.
export RANDOM_REBUILDS_ONLY=1 RANDOM_BACKLOG=1 RANDOM_EXPECT_GROUPS=1
export SEARCHSYNC_TEST_ROUTE_SLICE="${SEARCHSYNC_TEST_ROUTE_SLICE:-7}"
export RANDOM_OPS="${RANDOM_OPS:-8000}" RANDOM_KILLS="${RANDOM_KILLS:-1}" RANDOM_CHUNKS="${RANDOM_CHUNKS:-3}"
exec bash "$(dirname "$0")/t_run_random.sh" "$@"
