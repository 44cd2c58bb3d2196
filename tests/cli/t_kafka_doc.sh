#!/usr/bin/env bash
# docs/kafka.md's settings tables say, in their "live" column, which
# connector settings the live producer tests ran and when; the column is
# written by scripts/kafka-doc.sh from the results committed in
# docs/kafka-live/ (copied from a run's tests/integration/logs/kafka/). Here,
# without servers: the page is what the script writes from those results,
# every result names a row of its producer's table, and the script refuses
# a result naming a row that does not exist.
set -euo pipefail
src=${SEARCHSYNC_SRCDIR:-.}
bash "$src/scripts/kafka-doc.sh" --check "$src/docs/kafka-live" "$src/docs/kafka.md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$src/docs/kafka.md" "$tmp/kafka.md"
printf 'producer\tversion\tsetting\tresult\ttest\tseed\tdate\ncanal\t1.1.4\tno.such.setting\tpass\tt\t1\t2026-01-01\n' \
    >"$tmp/canal.tsv"
if out=$(bash "$src/scripts/kafka-doc.sh" "$tmp" "$tmp/kafka.md" 2>&1); then
    echo "kafka-doc.sh accepted a result naming no row: $out"
    exit 1
fi
grep -q 'canal: no.such.setting' <<<"$out" || { echo "kafka-doc.sh's refusal does not name the setting: $out"; exit 1; }
cmp -s "$src/docs/kafka.md" "$tmp/kafka.md" || { echo "kafka-doc.sh changed the page although it refused"; exit 1; }
# a failed run says so in the page
printf 'producer\tversion\tsetting\tresult\ttest\tseed\tdate\ncanal\t1.1.4\tcanal.mq.topic\tfail\tt\t1\t2026-01-02\n' \
    >"$tmp/canal.tsv"
bash "$src/scripts/kafka-doc.sh" "$tmp" "$tmp/kafka.md" >/dev/null
grep -qF '| `canal.mq.topic` | yes (one topic for everything) | | failed 2026-01-02 |' "$tmp/kafka.md" ||
    { echo "kafka-doc.sh did not write a failed run into the page"; exit 1; }
echo "docs/kafka.md: its live columns are what docs/kafka-live/ says"
