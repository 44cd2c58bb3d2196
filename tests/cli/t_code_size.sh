#!/usr/bin/env bash
# The size limits of the C sources (tests aside): no file over 700 lines and
# no function over 100. A file that outgrows them is split by concept before
# it lands; this check keeps the headroom from being spent silently.
# Generated sources (web/ui_files.c, src/migrations.c) are not tracked, so
# they are never read.
#
#   MAX_FILE_LINES / MAX_FUNC_LINES override the limits (for a look at the
#   tree with other numbers); `t_code_size.sh --list N` prints the N longest
#   functions and exits 0.
set -euo pipefail
src=${SEARCHSYNC_SRCDIR:-.}
max_file=${MAX_FILE_LINES:-700}
max_func=${MAX_FUNC_LINES:-100}
list=0
if [ "${1:-}" = "--list" ]; then list=${2:-20}; fi

cd "$src"
# the product's C sources: everything tracked outside tests/; a tarball has
# no .git, so fall back to the folders
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.c' '*.h' | grep -v '^tests/')
else
  mapfile -t files < <(find src sync web rebalance cmd -name '*.[ch]' 2>/dev/null |
    grep -v -e '^web/ui_files\.c$' -e '^src/migrations\.c$' | sort)
fi
[ "${#files[@]}" -gt 0 ] || { echo "no C sources found under $src"; exit 1; }

# A function is a top-level brace block whose head (the text since the last
# top-level ';' or '}') has a '(' and no '='; its length runs from the line of
# its name to its closing brace. Comments, strings and character literals are
# blanked first so that their braces do not count.
funcs=$(awk '
FNR == 1 { depth = 0; incomment = 0; head = ""; headline = 0 }
{
    line = $0; out = ""
    i = 1; n = length(line)
    while (i <= n) {
        c = substr(line, i, 1); c2 = substr(line, i, 2)
        if (incomment) {
            if (c2 == "*/") { incomment = 0; i += 2 } else i++
            continue
        }
        if (c2 == "/*") { incomment = 1; i += 2; continue }
        if (c2 == "//") break
        if (c == "\"" || c == "\047") {
            q = c; i++
            while (i <= n) {
                d = substr(line, i, 1)
                if (d == "\\") { i += 2; continue }
                i++
                if (d == q) break
            }
            out = out " "
            continue
        }
        out = out c; i++
    }
    if (out ~ /^#/) next
    n = length(out)
    for (i = 1; i <= n; i++) {
        c = substr(out, i, 1)
        if (depth == 0) {
            if (c == "{") {
                if (head ~ /\(/ && head !~ /=/) { start = headline; fname = head; isfn = 1 }
                else isfn = 0
                depth = 1
            } else if (c == ";") {
                head = ""; headline = 0
            } else if (c !~ /[ \t]/) {
                if (headline == 0) headline = FNR
                head = head c
            } else head = head c
            continue
        }
        if (c == "{") depth++
        else if (c == "}") {
            depth--
            if (depth == 0) {
                if (isfn) {
                    name = fname; sub(/\(.*/, "", name); sub(/.*[ \t*]/, "", name)
                    printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, name
                }
                head = ""; headline = 0; isfn = 0
            }
        }
    }
    if (depth == 0 && headline != 0) head = head " "
}' "${files[@]}")

if [ "$list" != 0 ]; then
  sort -rn <<<"$funcs" | head -n "$list"
  exit 0
fi

# What is still over the limits, each with the size it had when listed: a
# file or function here may shrink and must leave the list once it fits, but
# may not grow, and nothing else may pass a limit. Empty this list; never
# add to it.
known="
file sync/reindex/reindex.c 747
file sync/reindex/reindex_runner.c 837
file sync/sources/binlog_source.c 829
file web/api.c 943
function cmd/cmd_dead_letters.c:cmd_dead_letters 119
function cmd/cmd_status.c:cmd_status 168
function src/mq/debezium.c:enc_value 124
function sync/authoring/mapping_import.c:mapping_import_run 107
function sync/delayed/delayed_job.c:delayed_run_job 117
function sync/delayed/delayed_run.c:process 103
function sync/node/daemon_builds.c:builds_apply 138
function sync/node/supervisor.c:look_for_edits 128
function sync/node/supervisor.c:supervisor_main 113
function sync/reindex/reindex.c:reindex_request 121
function sync/reindex/reindex_runner.c:run_job 107
function sync/reindex/reindex_runner.c:reindex_runner_start_owned 149
function sync/sources/binlog_source.c:commit_build 112
function sync/status/status.c:status_json 180
function web/api.c:h_indices 101
function web/metrics.c:metadata_part 130
"

fail=0
over=""
while read -r lines file; do
  [ "$lines" -gt "$max_file" ] && over+="file $file $lines"$'\n'
done < <(wc -l "${files[@]}" | grep -v ' total$')
while read -r lines where name; do
  [ "$lines" -gt "$max_func" ] && over+="function ${where%%:*}:$name $lines"$'\n'
done <<<"$funcs"
while read -r kind what lines; do
  [ -n "$kind" ] || continue
  listed=$(awk -v k="$kind" -v w="$what" '$1 == k && $2 == w { print $3 }' <<<"$known")
  limit=$max_file; [ "$kind" = function ] && limit=$max_func
  if [ -z "$listed" ]; then
    if [ "$kind" = file ]; then
      echo "$what: $lines lines, over the limit of $limit: split it by concept"
    else
      echo "${what%%:*}: ${what#*:} is $lines lines, over the limit of $limit: split it into steps"
    fi
    fail=1
  elif [ "$lines" -gt "$listed" ]; then
    echo "$what: $lines lines, more than the $listed it had when it was listed as still over" \
      "the limit of $limit: shrink it, do not grow it"
    fail=1
  fi
done <<<"$over"
while read -r kind what lines; do
  [ -n "$kind" ] || continue
  if ! awk -v k="$kind" -v w="$what" '$1 == k && $2 == w { f = 1 } END { exit !f }' <<<"$over"; then
    echo "$what is within the limit now: take it off the list in $0"
    fail=1
  fi
done <<<"$known"
nfuncs=$(grep -c . <<<"$funcs")
nknown=$(grep -c . <<<"$known" || true)
if [ "$fail" = 0 ]; then
  echo "${#files[@]} C files and $nfuncs functions: none over $max_file / $max_func lines" \
    "but the $nknown listed as still over, and none of those grown"
fi
exit "$fail"
