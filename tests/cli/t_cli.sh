#!/usr/bin/env bash
# The command line contract (docs/design.md, "Commands"): help and version everywhere,
# exit codes, configuration errors that name file, line and key.
set -uo pipefail
bin=${SEARCHSYNC_BIN:-./searchsync}
src=${SEARCHSYNC_SRCDIR:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
check() { # check NAME EXPECTED_RC ACTUAL_RC
  if [ "$2" != "$3" ]; then echo "FAIL $1: exit $3, expected $2"; failures=$((failures + 1));
  else echo "ok   $1"; fi
}
contains() { # contains NAME NEEDLE FILE
  if grep -qF -- "$2" "$3"; then echo "ok   $1"; else
    echo "FAIL $1: output lacks \"$2\":"; sed 's/^/     /' "$3"; failures=$((failures + 1)); fi
}

"$bin" --help >"$tmp/out" 2>&1; check "--help" 0 $?
for c in run tail reindex delayed-run check mapping status; do
  contains "--help lists $c" "  $c " "$tmp/out"
  "$bin" "$c" --help >"$tmp/h" 2>&1; check "$c --help" 0 $?
  contains "$c --help prints usage" "usage: searchsync $c" "$tmp/h"
done
# ---- the top-level help lists every subcommand with every action and option
# it accepts: what each subcommand's own --help says, and what its getopt
# table in the source takes (so neither list is written here by hand)
"$bin" --help >"$tmp/top" 2>&1
section() { # the lines of the top-level help that describe command $1
  awk -v c="$1" '/^  [a-z]/ { on = ($1 == c) } on' "$tmp/top"; }
mapfile -t listed < <(awk '/^  [a-z]/ { print $1 }' "$tmp/top")
[ "${#listed[@]}" -ge 16 ] || { echo "FAIL --help lists only ${#listed[@]} commands"; failures=$((failures + 1)); }
for c in "${listed[@]}"; do
  section "$c" >"$tmp/sec"
  "$bin" "$c" --help >"$tmp/h" 2>&1
  missing=""
  # its options, and the actions of its forms ("searchsync mapping generate ...")
  for w in $(grep -oE -- '--[a-z][a-z-]*' "$tmp/h" | sort -u) \
           $(grep -oE "searchsync $c [a-z][a-z-]*" "$tmp/h" | awk '{ print $3 }' | sort -u); do
    grep -qE -- "(^|[^a-z-])$w([^a-z-]|\$)" "$tmp/sec" || missing="$missing $w"
  done
  if [ -z "$missing" ]; then echo "ok   --help lists what $c --help says"; else
    echo "FAIL --help for $c lacks:$missing"; sed 's/^/     /' "$tmp/sec"; failures=$((failures + 1)); fi
done
for f in "$src"/cmd/cmd_*.c; do
  grep -q 'struct option own\[\]' "$f" || continue
  c=$(grep -oE '\.name = "[a-z-]+"' "$f" | head -1 | cut -d'"' -f2)
  [ -n "$c" ] || continue
  "$bin" "$c" --help >"$tmp/h" 2>&1
  section "$c" >"$tmp/sec"
  missing=""
  for o in $(grep -oE '\{"[a-z][a-z-]*", (no|required|optional)_argument' "$f" | cut -d'"' -f2); do
    grep -qE -- "--$o([^a-z-]|\$)" "$tmp/h" || missing="$missing --$o(in $c --help)"
    grep -qE -- "--$o([^a-z-]|\$)" "$tmp/sec" || missing="$missing --$o(in --help)"
  done
  if [ -z "$missing" ]; then echo "ok   every option $c accepts is in its help"; else
    echo "FAIL $c (${f#"$src"/}) accepts options its help does not list:$missing"; failures=$((failures + 1)); fi
done

# the manual page (written by hand) names every command --help lists
for c in "${listed[@]}"; do
  grep -q "^\.B ${c//-/\\\\-}\( \|\\\\\|\$\)" "$src/docs/searchsync.1" ||
    { echo "FAIL docs/searchsync.1 has no entry for $c"; failures=$((failures + 1)); }
done

"$bin" --version >"$tmp/out" 2>&1; check "--version" 0 $?
contains "--version prints the version" "searchsync " "$tmp/out"
"$bin" >"$tmp/out" 2>&1; check "no command" 2 $?
"$bin" frobnicate >"$tmp/out" 2>&1; check "unknown command" 2 $?
contains "unknown command is named" 'unknown command "frobnicate"' "$tmp/out"

cat >"$tmp/good.ini" <<'INI'
[source]
user = repl
INI
"$bin" config check --config "$tmp/good.ini" >"$tmp/out" 2>&1; check "config check good" 0 $?
"$bin" config check --config "$src/searchsync.ini" >"$tmp/out" 2>&1
check "the shipped sample searchsync.ini is valid" 0 $?

cat >"$tmp/typo.ini" <<'INI'
[source]
user = repl

[delivery]
batch_maxx = 100
INI
"$bin" config check --config "$tmp/typo.ini" >"$tmp/out" 2>&1; check "misspelt key exits 2" 2 $?
contains "misspelt key names file, line and key" "$tmp/typo.ini:5: unknown key \"batch_maxx\" in section [delivery]" "$tmp/out"
"$bin" config check --config "$tmp/missing.ini" >"$tmp/out" 2>&1; check "missing file exits 2" 2 $?
contains "missing file is named" "$tmp/missing.ini: cannot open" "$tmp/out"
"$bin" config check >"$tmp/out" 2>&1; check "config check without --config" 2 $?

# ---- the shared start of every subcommand (cmd/cmd_prologue.c): --help, a
# missing or bad --config, a bad option, and the metadata server unreachable
printf '[source]\nuser = repl\nhost = 127.0.0.1\nport = 1\n[metadata]\nhost = 127.0.0.1\nport = 1\n[search]\nurls = http://127.0.0.1:1\n' >"$tmp/down.ini"
while IFS='|' read -r name words tail meta; do
  # shellcheck disable=SC2086
  "$bin" $words --help >"$tmp/out" 2>&1; check "$name --help" 0 $?
  # shellcheck disable=SC2086
  "$bin" $words --config "$tmp/missing.ini" $tail >"$tmp/out" 2>&1; check "$name: missing config" 2 $?
  contains "$name: missing config named" "searchsync ${name%% *}: $tmp/missing.ini: cannot open" "$tmp/out"
  # shellcheck disable=SC2086
  "$bin" $words $tail >"$tmp/out" 2>&1; check "$name without --config" 2 $?
  # shellcheck disable=SC2086
  "$bin" $words --config "$tmp/down.ini" --frobnicate $tail >"$tmp/out" 2>&1; check "$name: bad option" 2 $?
  contains "$name: bad option, usage" "usage: searchsync" "$tmp/out"
  [ -n "$meta" ] || continue
  # shellcheck disable=SC2086
  "$bin" $words --config "$tmp/down.ini" $tail >"$tmp/out" 2>&1; check "$name: metadata down" 1 $?
  contains "$name: metadata down, said" "searchsync ${name%% *}: ${meta#-}cannot connect to the metadata server 127.0.0.1:1" "$tmp/out"
done <<'LIST'
run|run||-
reindex|reindex|IDX|metadata schema: 
resync|resync|IDX --ids 1|-
delayed-run|delayed-run||-
check|check|IDX|-
replay|replay||-
mapping|mapping|export|-
status|status||metadata schema: 
epoch|epoch bump||-
dead-letters|dead-letters list||-
migrate|migrate||-
tail|tail||
LIST

echo "$failures failures"
[ "$failures" -eq 0 ]
