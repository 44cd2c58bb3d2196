#!/usr/bin/env bash
# tests/bench/bench_docbuild.sh — the document builder's reads of related
# rows (sync/pipeline/docbuild_level.c): MariaDB's CPU and documents/s for
# every root of BENCH_DOCBUILD_ROOTS roots (default 100,000) with 5 children
# each, built by tests/tools/docbuild_dump in chunks of 500 keys.
#
# The same rows in two layouts: `near`, each child's key next to its
# siblings' (rows inserted with their parent: the children of a range of
# roots are one range of their primary key, which the builder reads after
# the keys from the join column's index), and `spread`, the children's keys
# shuffled over the table (the builder finds them spread and reads the
# join column's index with a lookup per row, as it always did: the
# baseline in the same run). The roots' keys in two orders: `sorted` (a
# chunk holds neighbouring keys, read as one range: what the pipeline hands
# the builder) and `shuffled` (a chunk of keys from all over the table: an
# IN list). BENCH_DOCBUILD_BASELINE: another build's docbuild_dump, run in
# the same rounds (before / after). BENCH_ROUNDS rounds (default 3), each
# side's order turning every round; medians with ranges.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
SEARCHSYNC_SRCDIR="${SEARCHSYNC_SRCDIR:-$(cd "$here/../.." && pwd)}"
. "$SEARCHSYNC_HARNESS_DIR/env.sh"
DUMP="${DOCBUILD_DUMP:-$PWD/tests/tools/docbuild_dump}"
[ -x "$DUMP" ] || DUMP="$SEARCHSYNC_SRCDIR/tests/tools/docbuild_dump"
[ -x "$DUMP" ] || { echo "bench_docbuild: tests/tools/docbuild_dump not built (make check TESTS= builds it)"; exit 1; }
BASE="${BENCH_DOCBUILD_BASELINE:-}"
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "bench_docbuild: BENCH_DOCBUILD_BASELINE=$BASE is not an executable"; exit 2; }
N="${BENCH_DOCBUILD_ROOTS:-100000}"
ROUNDS="${BENCH_ROUNDS:-3}"
T="$(mktemp -d "${TMPDIR:-/tmp}/bench_docbuild.XXXXXX")"
db="bdb_$$"
cleanup() {
    for l in near spread; do mq "DROP DATABASE IF EXISTS ${db}_$l" >/dev/null 2>&1 || true; done
    rm -rf "$T"
}
trap cleanup EXIT
mq() { mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root --batch --skip-column-names -e "$1"; }
TCK="$(getconf CLK_TCK)"
cpu_of() { sed 's/^.*) //' "/proc/$1/stat" | awk -v t="$TCK" '{printf "%.3f", ($12 + $13) / t}'; }

t0=$(date +%s)
for l in near spread; do
    d="${db}_$l"
    # near: child (r-1)*5+k belongs to root r; spread: the same children,
    # their keys a permutation of 1..5N (the rank of a hash)
    if [ "$l" = near ]; then ids="seq"; else ids="ROW_NUMBER() OVER (ORDER BY MD5(seq))"; fi
    mq "CREATE DATABASE $d; USE $d; SET SESSION sql_log_bin = 0;
        CREATE TABLE root (id INT UNSIGNED PRIMARY KEY, name VARCHAR(64) NOT NULL, descr VARCHAR(255) NOT NULL,
          price DECIMAL(10,2) NOT NULL, rnd INT NOT NULL DEFAULT 0);
        CREATE TABLE child (id INT UNSIGNED PRIMARY KEY, root_id INT UNSIGNED NOT NULL, name VARCHAR(64) NOT NULL,
          qty INT NOT NULL, rnd INT NOT NULL DEFAULT 0, KEY (root_id));
        INSERT INTO root (id, name, descr, price)
          SELECT seq, CONCAT('root ', seq), CONCAT('the description of root ', seq, ': ', MD5(seq)), (seq % 10000) / 100
          FROM seq_1_to_$N;
        INSERT INTO child (id, root_id, name, qty)
          SELECT $ids, (seq - 1) DIV 5 + 1, CONCAT('child ', seq), seq % 100 FROM seq_1_to_$((5 * N));
        ANALYZE TABLE root, child" >/dev/null
    jq -n --arg r "$d.root" --arg c "$d.child" '{version: 1, indices: [{alias: "b", shards: 1, replicas: 0,
        tables: [{table: $r, columns: [{name: "id", key: true}, "name", "descr", "price", "rnd"],
        relations: [{column: "id", table: $c, join_column: "root_id", extend_name: "children",
        nested: true, columns: ["id", "root_id", "name", "qty", "rnd"]}]}]}]}' >"$T/$l.json"
done
seq 1 "$N" >"$T/sorted"
shuf --random-source=<(yes) "$T/sorted" >"$T/shuffled"
cat >"$T/c.ini" <<INI
[source]
name = bench_docbuild
host = 127.0.0.1
port = $MYSQL_PORT
user = root
[metadata]
database = ${db}_meta
[search]
urls = ${SEARCH_URL:-http://127.0.0.1:9}
INI
echo "data: $N roots with $((5 * N)) children in each layout, generated in $(($(date +%s) - t0)) s;" \
     "$ROUNDS rounds; builds: this one${BASE:+ and the baseline $BASE}"

sides=(this)
[ -z "$BASE" ] || sides+=(baseline)
: >"$T/results"
for r in $(seq 1 "$ROUNDS"); do
    order=("${sides[@]}")
    [ $((r % 2)) = 0 ] && [ ${#sides[@]} = 2 ] && order=(baseline this)
    for l in near spread; do
        for k in sorted shuffled; do
            for s in "${order[@]}"; do
                bin="$DUMP"
                [ "$s" = baseline ] && bin="$BASE"
                m0="$(cpu_of "$MYSQL_PID")"
                "$bin" --config "$T/c.ini" --mapping "$T/$l.json" --index b --quiet - <"$T/$k" 2>"$T/err" ||
                    { cat "$T/err"; exit 1; }
                m1="$(cpu_of "$MYSQL_PID")"
                line="$(tail -1 "$T/err")"
                dps="$(sed -n 's/.*docs\/s \([0-9]*\).*/\1/p' <<<"$line")"
                us="$(awk -v a="$m0" -v b="$m1" -v n="$N" 'BEGIN {printf "%.1f", (b - a) * 1e6 / n}')"
                echo "$s $l $k $us $dps" >>"$T/results"
                printf '  round %d  %-8s %-6s %-8s MariaDB %5s us a root  %6s docs/s  (%s)\n' \
                    "$r" "$s" "$l" "$k" "$us" "$dps" "$line"
            done
        done
    done
done
echo
echo "medians (range) of $ROUNDS rounds:"
printf '  %-8s %-6s %-8s  %-24s %s\n' build layout keys "MariaDB us a root" "docs/s"
for s in "${sides[@]}"; do for l in near spread; do for k in sorted shuffled; do
    awk -v s="$s" -v l="$l" -v k="$k" '$1 == s && $2 == l && $3 == k {print $4, $5}' "$T/results" |
        python3 -c '
import sys, statistics
rows = [tuple(map(float, x.split())) for x in sys.stdin if x.strip()]
us = sorted(r[0] for r in rows); dps = sorted(r[1] for r in rows)
print("%.1f (%.1f-%.1f)" % (statistics.median(us), us[0], us[-1]), "%.0f (%.0f-%.0f)" % (statistics.median(dps), dps[0], dps[-1]))' |
        { read -r a b c d; printf '  %-8s %-6s %-8s  %-24s %s\n' "$s" "$l" "$k" "$a $b" "$c $d"; }
done; done; done
