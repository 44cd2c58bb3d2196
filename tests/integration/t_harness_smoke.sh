#!/usr/bin/env bash
# tests/integration/t_harness_smoke.sh — the three test servers are reachable and
# MariaDB is configured the way searchsync needs (binlog on, ROW, FULL metadata).
. "$(dirname "$0")/lib.sh"

# MariaDB: root over TCP, the replication user, binlog settings
assert_eq 1 "$(mysql_q 'SELECT 1')" "mariadb answers as root over TCP"
assert_eq "1	ROW	FULL	FULL" \
    "$(mysql_q 'SELECT @@log_bin, @@binlog_format, @@binlog_row_metadata, @@binlog_row_image')" \
    "log_bin=ON, binlog_format=ROW, binlog_row_metadata=FULL, binlog_row_image=FULL"
assert_eq 1 "$(mysql_q 'SELECT @@server_id')" "server_id"
assert_contains "$(mysql_repl_q 'SHOW GRANTS')" "REPLICATION SLAVE" "replication user has REPLICATION SLAVE"
assert_true "binlog position readable by replication user" mysql_repl_q 'SHOW MASTER STATUS'
assert_eq utf8mb4 "$(mysql_q 'SELECT @@character_set_server')" "server charset"

# ZooKeeper: four-letter words
zk_word() {
    local ans
    exec 3<>"/dev/tcp/${ZK_HOSTS%:*}/${ZK_HOSTS##*:}"
    printf '%s' "$1" >&3
    ans="$(timeout 5 cat <&3)" || true
    exec 3<&- 3>&-
    printf '%s' "$ans"
}
assert_eq imok "$(zk_word ruok)" "zookeeper ruok"
assert_contains "$(zk_word srvr)" "Mode: standalone" "zookeeper srvr"

# Search engine: version, health, modules searchsync depends on
ver="$(search_get / | jq -r .version.number)"
assert_eq 2.19.1 "$ver" "search engine version"
status="$(search_get '/_cluster/health?wait_for_status=yellow&timeout=10s' | jq -r .status)"
assert_true "cluster health is green or yellow ($status)" test "$status" = green -o "$status" = yellow
mods="$(search_get '/_cat/plugins?h=component' | sort | tr '\n' ' ')"
for m in PainlessPlugin ParentJoinPlugin ReindexPlugin CommonAnalysisPlugin MapperExtrasPlugin; do
    assert_contains "$mods" "$m" "engine module $m loaded"
done

pass
