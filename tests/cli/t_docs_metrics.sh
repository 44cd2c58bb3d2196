#!/usr/bin/env bash
# docs/metrics.md lists every name /metrics serves (t_metrics checks the
# served page against it); here, without servers: every listed name is
# written somewhere in the sources, and docs/grafana-dashboard.json is JSON
# whose every query uses only listed names.
set -euo pipefail
src=${SEARCHSYNC_SRCDIR:-.}
doc="$src/docs/metrics.md"
dash="$src/docs/grafana-dashboard.json"
fail=0
names=$(grep -oE '^\| `searchsync_[a-z_]+`' "$doc" | tr -d '|` ' | sort -u)
[ -n "$names" ] || { echo "no names in $doc"; exit 1; }
for n in $names; do
  # the delivery's counters are written as searchsync_delivery_%s_total
  short=${n#searchsync_delivery_}; short=${short%_total}
  if ! grep -rqF --include='*.[ch]' "\"$n" "$src/web" "$src/src/deliver" &&
     ! grep -rqF "\"$short\"" "$src/src/deliver/stats.c"; then
    echo "$n is in docs/metrics.md but in no source file"
    fail=1
  fi
done
exprs=$(jq -r '.panels[].targets[]?.expr' "$dash") || { echo "$dash is not JSON"; exit 1; }
[ -n "$exprs" ] || { echo "$dash has no queries"; exit 1; }
for used in $(grep -oE 'searchsync_[a-z_]+' <<<"$exprs" | sort -u); do
  base=$(sed -E 's/_(min|max|mean)$//' <<<"$used")
  if ! grep -qx "$used" <<<"$names" && ! grep -qx "$base" <<<"$names"; then
    echo "$dash uses $used, which docs/metrics.md does not list"
    fail=1
  fi
done
[ $fail = 0 ] && echo "docs/metrics.md: $(wc -w <<<"$names") names, all in the sources; the dashboard's $(wc -l <<<"$exprs") queries use only them"
exit $fail
