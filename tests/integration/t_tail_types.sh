#!/usr/bin/env bash
# tests/integration/t_tail_types.sh — `searchsync tail` decodes edge values of
# every column type exactly as docs/binlog.md "Values" says, on the suite's MariaDB.
# Oracle: the server's own SELECT of the same rows (JSON_OBJECT over per-type
# SQL expressions), never values copied from tail's output: the schema, rows
# and oracle are tests/integration/tail_types_lib.sh, which
# t_source_versions.sh runs against other MariaDB versions too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tail_types_lib.sh"
require_bin

db="$(unique_name searchsync_tt)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`' >/dev/null 2>&1"
tail_types_check "$db"
pass
