#!/usr/bin/env bash
# The layers of the tree, read from the #include lines of the C sources
# (tests aside). From the ground up:
#
#   src/        foundations: buffers, JSON, log, config, MySQL, the binlog
#               decoder, the Kafka message decoders, the engine client,
#               delivery
#   rebalance/  the ZooKeeper library: session, locks, registry, protocol
#   sync/       the sync core
#   web/        the admin server
#   cmd/        the composition root (main) and the command front ends
#
# A folder includes only from its own floor and the floors below it, and no
# two folders include each other, directly or round a longer loop (inside
# sync/, between its stages too). A header is found as the build finds it:
# beside the including file, from the top of the tree, or from src/. And
# web/ runs no SQL of its own.
set -euo pipefail
src=${SEARCHSYNC_SRCDIR:-.}
cd "$src"

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.c' '*.h' | grep -v '^tests/')
else
  mapfile -t files < <(find src sync web rebalance cmd -name '*.[ch]' 2>/dev/null | sort)
fi
[ "${#files[@]}" -gt 0 ] || { echo "no C sources found under $src"; exit 1; }

floor() {
  case "$1" in
    src|src/*) echo 1 ;;
    rebalance|rebalance/*) echo 2 ;;
    sync|sync/*) echo 3 ;;
    web|web/*) echo 4 ;;
    cmd|cmd/*) echo 5 ;;
    *) echo 0 ;;
  esac
}

# "from-folder to-folder file:line" for every include of a file of the tree
edges=$(for f in "${files[@]}"; do
  dir=$(dirname "$f")
  grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
    n=${line%%:*}
    inc=$(sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/' <<<"$line")
    to=""
    for cand in "$dir/$inc" "$inc" "src/$inc"; do
      if [ -f "$cand" ]; then to=$cand; break; fi
    done
    [ -n "$to" ] || continue # a generated or system header
    todir=$(dirname "${to#./}")
    if [ "$todir" != "$dir" ]; then echo "$dir $todir $f:$n"; fi
  done || true
done)

fail=0
while read -r from to where; do
  [ -n "$from" ] || continue
  ff=$(floor "$from") tf=$(floor "$to")
  if [ "$tf" -gt "$ff" ]; then
    echo "$where: $from/ includes from $to/, a floor above it (src < rebalance < sync < web < cmd)"
    fail=1
  fi
done <<<"$edges"

[ -n "${LAYERS_EDGES:-}" ] && printf '%s\n' "$edges" >"$LAYERS_EDGES"

# folders that include each other: tsort names every loop it breaks. The
# units are the top folders, and inside sync/ each stage (sync/mapping,
# sync/pipeline, ...): the folders of src/ are one floor of foundations.
units=$(awk '{ for (i = 1; i <= 2; i++) { n = split($i, p, "/");
  $i = (p[1] == "sync" && n > 1) ? p[1] "/" p[2] : p[1] } if ($1 != $2) print }' <<<"$edges")
loops=$(awk '{ print $1, $2 }' <<<"$units" | sort -u | tsort 2>&1 >/dev/null |
  grep -v 'input contains a loop' | sed 's/^tsort: //' | sort -u || true)
if [ -n "$loops" ]; then
  echo "folders that include each other (a loop of includes between folders):" $loops
  # each arrow between two folders of a loop once, with its first include
  while read -r from to where; do
    if grep -qx "$from" <<<"$loops" && grep -qx "$to" <<<"$loops"; then
      echo "  $from -> $to ($where)"
    fi
  done <<<"$units" | sort -u -k1,3 | awk '!seen[$1 FS $3]++'

  fail=1
fi

# web/ only translates HTTP to and from JSON: what reads or writes MySQL is
# an operation or a query module of sync/ that it calls. A file of web/
# that writes a statement or runs one is named here.
sql_re='"(SELECT |INSERT INTO|DELETE FROM|UPDATE [a-z_]+ SET)|\b(stmt_query|db_query|db_exec|db_exec_rows|db_row1|db_scalar|mysql_query|mysql_real_query)\('
sql_files=$(for f in "${files[@]}"; do
  case "$f" in web/*) grep -qsE "$sql_re" "$f" && echo "$f" ;; esac
done || true)
for f in $sql_files; do
  echo "$f: SQL in web/ ($(grep -nE "$sql_re" "$f" | head -1 | cut -d: -f1)): move the query" \
    "into sync/ (an operation of sync/ops/ or a query module) and call it"
  fail=1
done

if [ "$fail" = 0 ]; then
  nf=$(awk '{ print $1 }' <<<"$units" | sort -u | wc -l)
  ne=$(awk '{ print $1, $2 }' <<<"$units" | sort -u | wc -l)
  echo "layers hold: $ne include arrows between $nf folders, none up a floor, no loop;" \
    "no SQL in web/"
fi
exit "$fail"
