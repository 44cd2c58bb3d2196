#!/usr/bin/env bash
# tests/integration/t_run_xa_gtid.sh — t_run_xa.sh with [source] versions =
# gtid: the checkpoint held before an open XA PREPARE is a GTID set, and the
# restarts of its steps 3 and 4 resume after it (the PREPARE read again).
export XA_VERSIONS=gtid
exec bash "$(dirname "$0")/t_run_xa.sh" "$@"
