#!/usr/bin/env bash
# scripts/kafka-doc.sh — writes the "live" column of docs/kafka.md's
# producer settings tables from the results of the live producer tests
# (t_kafka_debezium, t_kafka_maxwell, t_kafka_canal: lib.sh's kafka_live).
# Owns that column; the rest of the page is written by hand.
#
# usage: scripts/kafka-doc.sh [--check] [RESULTS_DIR] [PAGE]
#   RESULTS_DIR  the PRODUCER.tsv files (default docs/kafka-live: the
#                results committed with the page; a run's own are in
#                ${SUITE_LOG_DIR:-tests/integration/logs}/kafka/)
#   PAGE         default docs/kafka.md
#   --check      write nothing; exit 1 (and print the difference) when the
#                page is not what this script would write
#
# A table is marked by a line `<!-- kafka-live PRODUCER... key=N -->` before
# it; its last column is "live". A row's key is its first cell (an empty
# first cell is the row above's), with key=2 followed by its second cell,
# backticks dropped and spaces collapsed: `decimal.handling.mode` `precise`
# (default) is "decimal.handling.mode precise (default)". Its live cell:
# "live DATE" when a listed producer's TSV has that key and every such row
# passed (DATE the newest), "failed DATE" when one failed, empty otherwise.
# A TSV key that no row of its producer's tables has is an error, so the
# tests and the tables cannot drift apart.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
check=""
[ "${1:-}" != "--check" ] || { check=1; shift; }
results="${1:-$here/docs/kafka-live}"
page="${2:-$here/docs/kafka.md}"
ls "$results"/*.tsv >/dev/null 2>&1 ||
    { echo "kafka-doc: no results in $results: run a live producer test (t_kafka_canal, ...) first" >&2; exit 2; }
[ -f "$page" ] || { echo "kafka-doc: $page does not exist" >&2; exit 2; }

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
python3 - "$results" "$page" "$out" <<'PY'
import csv, glob, os, re, sys
results, page, out = sys.argv[1:4]

rows = {}  # producer -> [dict]
for f in sorted(glob.glob(os.path.join(results, "*.tsv"))):
    with open(f, newline="") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            if r.get("result") not in ("pass", "fail"):
                sys.exit("kafka-doc: %s: a row whose result is %r (pass or fail)" % (f, r.get("result")))
            rows.setdefault(r["producer"], []).append(r)

def norm(cell):
    return " ".join(cell.replace("`", "").split())

lines = open(page, encoding="utf-8").read().split("\n")
marker = re.compile(r"^<!-- kafka-live ((?:[a-z0-9-]+ )+)key=([12]) -->$")
used = set()  # (producer, key)
i = 0
while i < len(lines):
    m = marker.match(lines[i])
    i += 1
    if not m:
        continue
    prods, nkey = m.group(1).split(), int(m.group(2))
    while i < len(lines) and not lines[i].startswith("|"):
        i += 1
    head = [c.strip() for c in lines[i].strip().strip("|").split("|")]
    if head[-1] != "live":
        sys.exit("kafka-doc: the table after the marker for %s has no \"live\" column last" % " ".join(prods))
    i += 2  # the header and its separator
    first = ""
    while i < len(lines) and lines[i].startswith("|"):
        parts = lines[i].split("|")
        cells = parts[1:-1]
        if len(cells) != len(head):
            sys.exit("kafka-doc: %s: row %d has %d cells, its header %d" % (page, i + 1, len(cells), len(head)))
        first = norm(cells[0]) or first
        key = first + (" " + norm(cells[1]) if nkey == 2 else "")
        got = [r for p in prods for r in rows.get(p, []) if norm(r["setting"]) == key]
        for r in got:
            used.add((r["producer"], norm(r["setting"])))
        cell = ""
        if got:
            date = max(r["date"] for r in got)
            cell = ("failed " if any(r["result"] == "fail" for r in got) else "live ") + date
        parts[-2] = " %s " % cell if cell else " "
        lines[i] = "|".join(parts)
        i += 1

bad = sorted({(p, norm(r["setting"])) for p, rs in rows.items() for r in rs} - used)
if bad:
    sys.exit("kafka-doc: results name settings that no row of their producer's table in %s has:\n%s"
             % (page, "\n".join("  %s: %s" % b for b in bad)))
open(out, "w", encoding="utf-8").write("\n".join(lines))
PY
if [ -n "$check" ]; then
    if ! diff -u "$page" "$out"; then
        echo "kafka-doc: $page's live columns are not what the results in $results say: run scripts/kafka-doc.sh" >&2
        exit 1
    fi
    echo "kafka-doc: $page matches the results in $results"
else
    cp "$out" "$page"
    echo "kafka-doc: wrote the live columns of $page from $results"
fi
