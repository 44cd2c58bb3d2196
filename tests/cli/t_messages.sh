#!/usr/bin/env bash
# Messages that say what is wrong and what to do, for mistakes a new user
# makes offline: a missing configuration file (and why), inline comments in
# the INI (stripped as in my.cnf, never part of a value), [admin] listen
# with a port outside 1-65535 and [search] urls refused by `config check`, a
# mapping file that cannot be read (and why) or is not JSON (line and
# column), an engine that cannot be reached (names [search] urls).
set -uo pipefail
bin=${SEARCHSYNC_BIN:-./searchsync}
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
lacks() { # lacks NAME NEEDLE FILE
  if grep -qF -- "$2" "$3"; then echo "FAIL $1: output has \"$2\":"; sed 's/^/     /' "$3"
    failures=$((failures + 1)); else echo "ok   $1"; fi
}

# ---- a missing configuration file: the reason, not "Success"
"$bin" config check --config "$tmp/nope.ini" >"$tmp/out" 2>&1; check "missing config: exit 2" 2 $?
contains "missing config: says why" "cannot open configuration file: No such file or directory" "$tmp/out"
lacks "missing config: not 'Success'" "Success" "$tmp/out"
"$bin" mapping export --config "$tmp/nope.ini" >"$tmp/out" 2>&1; check "missing config (mapping): exit 2" 2 $?
contains "missing config (mapping): says why" "No such file or directory" "$tmp/out"

# ---- inline comments end a value (my.cnf); a quoted value keeps # and ;
token=0123456789abcdef0123456789abcdef
cat >"$tmp/c.ini" <<INI
[source]
user = repl   # the replication user
password = "p#ss;word"  ; quoted: kept
port = 3307 ; comment
[admin]
listen = 127.0.0.1:8089          # "" turns the server off
token = $token   # or SEARCHSYNC_ADMIN_TOKEN
INI
"$bin" config check --config "$tmp/c.ini" >"$tmp/out" 2>&1; check "inline comments accepted" 0 $?
# (a comment left in a value would fail: port is an integer, listen a host:port)
cat >"$tmp/p.ini" <<'INI'
[source]
user = repl
port = 3307   # not part of the number
INI
"$bin" config check --config "$tmp/p.ini" >"$tmp/out" 2>&1; check "a comment after a number" 0 $?
cat >"$tmp/q.ini" <<'INI'
[source]
user = repl
password = "abc" trailing
INI
"$bin" config check --config "$tmp/q.ini" >"$tmp/out" 2>&1; check "text after a quoted value: refused" 2 $?

# ---- [admin] listen: a port from 1 to 65535
for bad in 127.0.0.1:99999 127.0.0.1:0 127.0.0.1: 8089 127.0.0.1:80x; do
  printf '[source]\nuser = repl\n[admin]\nlisten = %s\n' "$bad" >"$tmp/l.ini"
  "$bin" config check --config "$tmp/l.ini" >"$tmp/out" 2>&1; check "listen $bad refused" 2 $?
  contains "listen $bad: named" "[admin] listen = \"$bad\": not host:port with a port from 1 to 65535" "$tmp/out"
done
printf '[source]\nuser = repl\n[admin]\nlisten = [::1]:8089\ndict_listen = :65535\n' >"$tmp/l.ini"
"$bin" config check --config "$tmp/l.ini" >"$tmp/out" 2>&1; check "listen [::1]:8089, dict_listen :65535" 0 $?
printf '[source]\nuser = repl\n[admin]\nlisten =\n' >"$tmp/l.ini"
"$bin" config check --config "$tmp/l.ini" >"$tmp/out" 2>&1; check "listen empty (off)" 0 $?
printf '[source]\nuser = repl\n[search]\nurls = 127.0.0.1:9200\n' >"$tmp/u.ini"
"$bin" config check --config "$tmp/u.ini" >"$tmp/out" 2>&1; check "urls without http://: refused" 2 $?
contains "urls without http://: named" "[search] urls: \"127.0.0.1:9200\" must start with http://" "$tmp/out"

# ---- mapping files: cannot read (why), not JSON (line and column)
cat >"$tmp/m.ini" <<'INI'
[source]
user = repl
port = 1
[search]
urls = http://127.0.0.1:1
INI
"$bin" mapping import --config "$tmp/m.ini" "$tmp/missing.json" >"$tmp/out" 2>&1; check "unreadable mapping: exit 2" 2 $?
contains "unreadable mapping: says why" "cannot read $tmp/missing.json: No such file or directory" "$tmp/out"
printf '{\n  "version": 1,\n  "indices": [\n    {"alias": "a",, "tables": []}\n  ]\n}\n' >"$tmp/bad.json"
"$bin" mapping import --config "$tmp/m.ini" "$tmp/bad.json" >"$tmp/out" 2>&1; check "JSON syntax error: exit 2" 2 $?
contains "JSON syntax error: line and column" "$tmp/bad.json: \$: not valid JSON at line 4, column 19" "$tmp/out"
printf '{"version": 1, "indices": [' >"$tmp/short.json"
"$bin" mapping import --config "$tmp/m.ini" "$tmp/short.json" >"$tmp/out" 2>&1
contains "JSON cut short: said" "not valid JSON: the text ends early (line 1, column 28)" "$tmp/out"

# ---- an engine nobody listens on: [search] urls named
"$bin" mapping body --config "$tmp/m.ini" x >"$tmp/out" 2>&1; check "unreachable engine: exit 1" 1 $?
contains "unreachable engine: [search] urls named" "check [search] urls" "$tmp/out"

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all ok"
