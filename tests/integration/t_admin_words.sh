#!/usr/bin/env bash
# tests/integration/t_admin_words.sh — dynamic words and the dictionary files
# (web/words.c, docs/http-api.md "Dynamic words") against a
# real `searchsync run` and its metadata schema:
#
#   lifecycle  create (201) -> edit while init -> publish -> edit refused
#              (409) -> delete (both states); duplicates 409; unknown 404
#   input      malformed JSON, wrong types, a line break in a word, unknown
#              fields -> 400 naming the field; SQL metacharacters stored
#              and served byte for byte (the table compared with SQL)
#   /dict      ext.txt and stop.txt list the published words only, public
#              (no token, any Host), with ETag and Last-Modified; HEAD;
#              If-None-Match / If-Modified-Since -> 304; a publish or a delete
#              changes the ETag; the same files on [admin] dict_listen, which
#              serves nothing else
. "$(dirname "$0")/lib.sh"
require_bin
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 20 >/dev/null
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1"
PORT="$(free_port)"
DPORT="$(free_port)"
TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7333
start = now
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[admin]
listen = 127.0.0.1:$PORT
dict_listen = 127.0.0.1:$DPORT
[log]
level = info
INI
export SEARCHSYNC_ADMIN_TOKEN="$TOKEN"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
URL="http://127.0.0.1:$PORT"
DURL="http://127.0.0.1:$DPORT"
wait_until 30 "admin API listening on $PORT" curl -s -o /dev/null "$URL/"
meta_q() { mysql_q "$1" "$meta"; }

api() { # METHOD PATH [curl args...] — sets CODE, BODY, HEADERS
    local method="$1" path="$2"
    shift 2
    rm -f "$TEST_TMP/.b" "$TEST_TMP/.h"
    touch "$TEST_TMP/.b" "$TEST_TMP/.h"
    CODE="$(curl -gsS -m 20 -X "$method" -D "$TEST_TMP/.h" -o "$TEST_TMP/.b" -w '%{http_code}' "$@" "$path")" ||
        fail "curl $method $path failed"
    BODY="$(cat "$TEST_TMP/.b")"
    HEADERS="$(tr -d '\r' <"$TEST_TMP/.h")"
}
A=(-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json')
w() { local m="$1" p="$2"; shift 2; api "$m" "$URL/api/v1/words$p" "${A[@]}" "$@"; }
hdr() { sed -n "s/^$1: //Ip" <<<"$HEADERS"; }

# ---- guards on the words API
api GET "$URL/api/v1/words"
assert_eq 401 "$CODE" "words need the token"
if [ "${TOKEN: -1}" = 0 ]; then WRONG_TOKEN="${TOKEN%?}1"; else WRONG_TOKEN="${TOKEN%?}0"; fi
api POST "$URL/api/v1/words" -H "Authorization: Bearer $WRONG_TOKEN" -H 'Content-Type: application/json' -d '{"word":"x","kind":"ext"}'
assert_eq 401 "$CODE" "a wrong token"
w POST "" -H 'Origin: http://evil.example' -d '{"word":"x","kind":"ext"}'
assert_eq 403 "$CODE" "a cross-site Origin"
w POST "" -H 'Host: evil.example' -d '{"word":"x","kind":"ext"}'
assert_eq 421 "$CODE" "a foreign Host"

# ---- bad input: 400 naming the field
bad() { # BODY FIELD WHAT [METHOD PATH]
    w "${4:-POST}" "${5:-}" -d "$1"
    assert_eq 400 "$CODE" "$3 ($BODY)"
    assert_eq "$2" "$(jq -r '.field // ""' <<<"$BODY")" "$3: the field is named"
}
bad '{"word":' "" "malformed JSON"
bad '["x"]' "" "not an object"
bad '{"word":"x"}' kind "kind missing"
bad '{"word":"x","kind":"both"}' kind "kind not ext|stop"
bad '{"word":7,"kind":"ext"}' word "word not a string"
bad '{"word":"","kind":"ext"}' word "empty word"
bad '{"word":"two\nlines","kind":"ext"}' word "a line break would add a dictionary line"
bad '{"word":" padded","kind":"ext"}' word "leading white space"
bad '{"word":"x","kind":"ext","status":"published"}' "" "an unknown field (status is set by publishing)"
w GET "?kind=nosuch"
assert_eq 400 "$CODE" "list: a bad kind filter"
assert_eq kind "$(jq -r .field <<<"$BODY")" "list: the field is named"
assert_eq 0 "$(meta_q 'SELECT COUNT(*) FROM dynamic_words')" "nothing written by refused calls"

# ---- lifecycle
w POST "" -d '{"word":"机器学习","kind":"ext"}'
assert_eq 201 "$CODE" "create ($BODY)"
assert_eq "机器学习 ext init" "$(jq -r '"\(.word) \(.kind) \(.status)"' <<<"$BODY")" "the new word"
ID1="$(jq -r .id <<<"$BODY")"
w POST "" -d '{"word":"机器学习","kind":"ext"}'
assert_eq 409 "$CODE" "a duplicate"
w PUT "/$ID1" -d '{"word":"深度学习"}'
assert_eq 200 "$CODE" "edit while init ($BODY)"
assert_eq "深度学习" "$(jq -r .word <<<"$BODY")" "edited"
bad '{"kind":7}' kind "edit: kind of the wrong type" PUT "/$ID1"
bad '{}' "" "edit: nothing to change" PUT "/$ID1"
api GET "$URL/dict/ext.txt"
assert_eq 200 "$CODE" "/dict/ext.txt is public"
assert_eq "" "$BODY" "an init word is not in the dictionary"
ETAG0="$(hdr ETag)"
w POST "/$ID1/publish"
assert_eq 200 "$CODE" "publish ($BODY)"
assert_eq published "$(jq -r .status <<<"$BODY")" "published"
w POST "/$ID1/publish"
assert_eq 409 "$CODE" "publish twice"
w PUT "/$ID1" -d '{"word":"改了"}'
assert_eq 409 "$CODE" "a published word cannot be edited"
assert_eq "深度学习" "$(meta_q "SELECT word FROM dynamic_words WHERE id = $ID1")" "unchanged in the table"
w GET "/999999"
assert_eq 404 "$CODE" "an unknown id"
w DELETE "/999999"
assert_eq 404 "$CODE" "delete an unknown id"
api GET "$URL/api/v1/words/abc" -H "Authorization: Bearer $TOKEN"
assert_eq 404 "$CODE" "a non-numeric id matches no route"

# SQL metacharacters: stored and served byte for byte
META_WORDS=("x'; DROP TABLE dynamic_words; --" 'a"b\c' '%_*?' "O'Brien\\'s" '` backtick')
for word in "${META_WORDS[@]}"; do
    body="$(jq -cn --arg w "$word" '{word: $w, kind: "stop"}')"
    w POST "" -d "$body"
    assert_eq 201 "$CODE" "create [$word] ($BODY)"
    assert_eq "$word" "$(jq -r .word <<<"$BODY")" "the API returns [$word] as sent"
    id="$(jq -r .id <<<"$BODY")"
    w POST "/$id/publish"
    assert_eq 200 "$CODE" "publish [$word]"
done
w POST "" -d '{"word":"未发布","kind":"stop"}'
assert_eq 201 "$CODE" "an init stop word"
ID_INIT="$(jq -r .id <<<"$BODY")"
assert_eq 7 "$(meta_q 'SELECT COUNT(*) FROM dynamic_words')" "the table holds every word (nothing dropped)"
printf '%s\n' "${META_WORDS[@]}" >"$TEST_TMP/want_stop.txt"
meta_q "SELECT word FROM dynamic_words WHERE kind = 'stop' AND status = 'published' ORDER BY id" >"$TEST_TMP/sql_stop.txt"
api GET "$URL/dict/stop.txt"
printf '%s' "$BODY" >"$TEST_TMP/got_stop.txt"
echo >>"$TEST_TMP/got_stop.txt"
cmp -s "$TEST_TMP/want_stop.txt" "$TEST_TMP/got_stop.txt" || fail "stop.txt differs from the words sent: $(diff "$TEST_TMP/want_stop.txt" "$TEST_TMP/got_stop.txt")"
assert_eq "$(wc -l <"$TEST_TMP/sql_stop.txt")" "$(wc -l <"$TEST_TMP/got_stop.txt")" "stop.txt has SQL's published stop words"
assert_contains "$HEADERS" "Content-Type: text/plain; charset=utf-8" "plain text"
w GET "?kind=stop&status=init"
assert_eq "未发布" "$(jq -r '.words | map(.word) | join(",")' <<<"$BODY")" "list filtered by kind and status"

# ---- /dict: ETag, Last-Modified, HEAD, 304
api GET "$URL/dict/ext.txt" -H 'Host: engine-node.example'
assert_eq 200 "$CODE" "/dict needs no allowed Host (the engine's nodes fetch it)"
assert_eq "深度学习" "$BODY" "ext.txt: the published extension word"
ETAG1="$(hdr ETag)"
LM1="$(hdr Last-Modified)"
assert_ne "$ETAG0" "$ETAG1" "publishing changed the ETag"
assert_true "Last-Modified is an HTTP date ($LM1)" grep -qE '^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT$' <<<"$LM1"
api HEAD "$URL/dict/ext.txt" -I
assert_eq 200 "$CODE" "HEAD"
assert_eq "$ETAG1" "$(hdr ETag)" "HEAD: the same ETag"
assert_eq "$LM1" "$(hdr Last-Modified)" "HEAD: the same Last-Modified"
api GET "$URL/dict/ext.txt" -H "If-None-Match: $ETAG1"
assert_eq 304 "$CODE" "If-None-Match with the ETag"
assert_eq "" "$BODY" "304 has no body"
api GET "$URL/dict/ext.txt" -H "If-Modified-Since: $LM1"
assert_eq 304 "$CODE" "If-Modified-Since the Last-Modified"
api GET "$URL/dict/ext.txt" -H 'If-None-Match: "other"'
assert_eq 200 "$CODE" "another ETag"
sleep 1.1 # Last-Modified has whole seconds
w DELETE "/$ID1"
assert_eq 200 "$CODE" "delete a published word ($BODY)"
w DELETE "/$ID_INIT"
assert_eq 200 "$CODE" "delete an init word"
api GET "$URL/dict/ext.txt" -H "If-None-Match: $ETAG1"
assert_eq 200 "$CODE" "after the delete the old ETag no longer matches"
assert_eq "" "$BODY" "the deleted word is gone from ext.txt"
assert_ne "$LM1" "$(hdr Last-Modified)" "the delete moved Last-Modified"
api GET "$URL/dict/ext.txt" -H "If-Modified-Since: $LM1"
assert_eq 200 "$CODE" "modified since the old Last-Modified"
api POST "$URL/dict/ext.txt"
assert_eq 405 "$CODE" "/dict is read-only"

# ---- [admin] dict_listen: the same files, nothing else
api GET "$DURL/dict/stop.txt"
assert_eq 200 "$CODE" "stop.txt on dict_listen"
cmp -s "$TEST_TMP/.b" <(printf '%s' "$(cat "$TEST_TMP/got_stop.txt")"; echo) || fail "dict_listen serves other words"
E="$(hdr ETag)"
api HEAD "$DURL/dict/stop.txt" -I -H "If-None-Match: $E"
assert_eq 304 "$CODE" "dict_listen: HEAD with If-None-Match"
api GET "$DURL/api/v1/status" -H "Authorization: Bearer $TOKEN"
assert_eq 404 "$CODE" "dict_listen serves no API, even with the token"
assert_contains "$(cat "$TEST_TMP/run.log")" "dictionary files served on 127.0.0.1:$DPORT" "startup line"

daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: clean exit"
pass
