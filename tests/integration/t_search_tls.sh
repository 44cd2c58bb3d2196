#!/usr/bin/env bash
# tests/integration/t_search_tls.sh — a secured engine: the harness's
# OpenSearch behind nginx (Debian's nginx-light, a plain process with its own
# configuration, pid file and logs in $TEST_TMP) doing TLS with a certificate
# from a CA made here by openssl, and basic auth. Then:
#   - `searchsync run` syncs a small table through https with [search]
#     ca_file, user and password_file: the documents equal SQL;
#   - a wrong password: exit 2 (a configuration error), a message naming
#     [search] and the 401, and the password (given in the URL too) in no
#     message; every command that asks the engine (status, --json too, check,
#     reindex, delayed-run, ...) says it the same way, with the same exit;
#   - a certificate of another CA, an expired one: exit 1 at once, a message
#     about the certificate; tls_verify = false connects anyway;
#   - bearer token and API key (nginx checks the Authorization header), a
#     client certificate (nginx requires one signed by the CA), AWS SigV4
#     (nginx checks the signature's shape, scope, signed headers and the
#     session token; the HMAC itself is libcurl's).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tls_lib.sh"
require_bin
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || skip "nginx is needed: run tests/harness/deps.sh"
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

t="$TEST_TMP/tls"
mkdir -p "$t/ngx"
tls_ca "$t" ca && tls_ca "$t" otherca && tls_cert "$t" server ca && tls_cert "$t" expired ca -30 -1 &&
    tls_cert "$t" client ca || fail "making the certificates"
printf 'tlsuser:%s\n' "$(openssl passwd -apr1 'S3cret-pw')" >"$t/htpasswd"
p_basic=$(free_port); p_expired=$(free_port); p_token=$(free_port); p_mtls=$(free_port); p_aws=$(free_port)
upstream="${SEARCH_URL#http://}"
proxy='proxy_pass http://engine; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Authorization "";'
ssl="ssl_certificate $t/server.crt; ssl_certificate_key $t/server.key;"
cat >"$t/nginx.conf" <<CONF
$([ "$(id -u)" = 0 ] && echo "user root;")
worker_processes 1;
pid $t/ngx/nginx.pid;
error_log $t/ngx/error.log;
events { worker_connections 256; }
http {
    access_log $t/ngx/access.log;
    client_body_temp_path $t/ngx/body; proxy_temp_path $t/ngx/proxy;
    fastcgi_temp_path $t/ngx/fcgi; uwsgi_temp_path $t/ngx/uwsgi; scgi_temp_path $t/ngx/scgi;
    client_max_body_size 200m;
    upstream engine { server $upstream; keepalive 8; }
    map \$http_authorization \$token_ok { "Bearer tok-abc.123" 1; "ApiKey a2V5aWQ6c2VjcmV0" 1; default 0; }
    server { listen 127.0.0.1:$p_basic ssl; $ssl
        location / { auth_basic "engine"; auth_basic_user_file $t/htpasswd; $proxy } }
    server { listen 127.0.0.1:$p_expired ssl; ssl_certificate $t/expired.crt; ssl_certificate_key $t/expired.key;
        location / { $proxy } }
    server { listen 127.0.0.1:$p_token ssl; $ssl
        location / { if (\$token_ok = 0) { return 401; } $proxy } }
    # AWS SigV4 (the signature itself is libcurl's: here its shape, scope,
    # signed payload hash and session token)
    map \$http_authorization \$sig_ok {
        "~^AWS4-HMAC-SHA256 Credential=AKIDTEST/[0-9]{8}/eu-west-1/aoss/aws4_request, SignedHeaders=[a-z0-9;-]*x-amz-content-sha256[a-z0-9;-]*x-amz-security-token[a-z0-9;-]*, Signature=[0-9a-f]{64}\$" 1;
        default 0; }
    server { listen 127.0.0.1:$p_aws ssl; $ssl
        location / { set \$ok "\$sig_ok:\$http_x_amz_security_token";
            if (\$ok != "1:sess-tok") { return 403; } $proxy } }
    server { listen 127.0.0.1:$p_mtls ssl; $ssl ssl_client_certificate $t/ca.crt; ssl_verify_client on;
        location / { $proxy } }
}
CONF
"$NGINX" -p "$t/ngx" -c "$t/nginx.conf" -g 'daemon off;' 2>"$t/ngx/stderr" &
ngx=$!
on_exit "kill $ngx 2>/dev/null; wait $ngx 2>/dev/null"
wait_until 10 "nginx listens" bash -c "curl -s --cacert '$t/ca.crt' -o /dev/null 'https://127.0.0.1:$p_basic/'" ||
    fail "nginx did not start: $(cat "$t/ngx/stderr" "$t/ngx/error.log" 2>/dev/null | tail -5)"

db="$(unique_name tlsdb)"
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$db\`; DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1; curl -s -XDELETE '$SEARCH_URL/${db}_*?expand_wildcards=all' >/dev/null"
mysql_q "CREATE DATABASE \`$db\`"
mysql_q "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, qty INT NOT NULL)" "$db"
mysql_q "INSERT INTO items SELECT seq, CONCAT('item ', seq), seq * 3 FROM seq_1_to_50" "$db"
cat >"$TEST_TMP/mapping.json" <<JSON
{"version": 1, "indices": [
  {"alias": "${db}_items", "shards": 1, "replicas": 0, "tables": [
    {"table": "$db.items", "columns": [{"name": "id", "type": "long", "key": true},
      {"name": "name", "type": "keyword"}, {"name": "qty", "type": "long"}]}]}
]}
JSON
printf 'S3cret-pw\n' >"$t/pw"
# conf FILE [search] LINES... — a configuration whose [search] section is LINES
# (one node id: a restart takes its own reader lock over at once)
conf() {
    local f="$1"
    shift
    { cat <<INI
[source]
name = tls
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = $((7400 + $$ % 50))
start = now
[metadata]
database = $meta
[delivery]
flush_interval_ms = 50
checkpoint_interval_ms = 100
[admin]
listen =
[cluster]
node_id = t-search-tls
[search]
INI
      printf '%s\n' "$@"; } >"$f"
}
conf "$TEST_TMP/ok.ini" "urls = https://127.0.0.1:$p_basic" "ca_file = $t/ca.crt" "user = tlsuser" \
    "password_file = $t/pw"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/ok.ini" "$TEST_TMP/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"

# 1. the sync through https + basic auth: documents equal SQL
daemon_start "$TEST_TMP/ok.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 20 lines)"; tail -20 "$TEST_TMP/run.log"; }'
wait_until 60 "the first version is live" grep -q "live changes no longer written to ${db}_items_v1" "$TEST_TMP/run.log"
daemon_wait_ready
mysql_q "UPDATE items SET qty = qty + 100 WHERE id <= 10; DELETE FROM items WHERE id = 50; INSERT INTO items VALUES (51, 'new one', 7)" "$db"
wait_checkpoint "$meta" tls 30
daemon_stop
assert_eq 0 "$DAEMON_RC" "the daemon stops cleanly"
assert_contains "$(cat "$TEST_TMP/run.log")" "at https://127.0.0.1:$p_basic" "the engine is reached through the TLS proxy"
search_refresh "${db}_items"
want="$(mysql_q "SELECT id, name, qty FROM items ORDER BY id" "$db")"
have="$(search_post "/${db}_items/_search" '{"size":1000,"sort":[{"id":"asc"}]}' |
    jq -r '.hits.hits[]._source | [.id, .name, .qty] | @tsv')"
assert_eq "$want" "$have" "documents equal SQL after a sync through https + basic auth"
grep -c "POST /_bulk" "$t/ngx/access.log" >/dev/null || fail "no bulk request went through nginx"

# expect_fail NAME WANT... — `searchsync run` with $TEST_TMP/NAME.ini exits
# $WANT_RC (default 1: a certificate refused; credentials the engine refuses
# are a configuration error, exit 2) within 20 s, its output holding every
# WANT and never the secrets
expect_fail() {
    local name="$1" out rc=0
    shift
    out="$(timeout 20 "$SEARCHSYNC_BIN" run --config "$TEST_TMP/$name.ini" 2>&1)" || rc=$?
    assert_eq "${WANT_RC:-1}" "$rc" "$name: exit status ${WANT_RC:-1} (output: $(tail -3 <<<"$out"))"
    for w in "$@"; do assert_contains "$out" "$w" "$name: the message says '$w'"; done
    for s in S3cret-pw wrong-pw tok-abc.123 a2V5aWQ6c2VjcmV0 bad-token aws-secret-1; do
        case "$out" in *"$s"*) fail "$name: a secret ($s) is in the output: $out" ;; esac
    done
    log "$name: $(grep -m1 -o 'searchsync.*' <<<"$out" | cut -c1-300)"
}
# 2. a wrong password (in the file, and in the URL's userinfo)
printf 'wrong-pw\n' >"$t/badpw"
conf "$TEST_TMP/badpw.ini" "urls = https://127.0.0.1:$p_basic" "ca_file = $t/ca.crt" "user = tlsuser" \
    "password_file = $t/badpw"
WANT_RC=2 expect_fail badpw "[search]" "401" "password"
conf "$TEST_TMP/badurl.ini" "urls = https://tlsuser:wrong-pw@127.0.0.1:$p_basic" "ca_file = $t/ca.crt"
WANT_RC=2 expect_fail badurl "[search]" "401" "https://127.0.0.1:$p_basic"
# 3. certificates: another CA's, an expired one; tls_verify = false
conf "$TEST_TMP/otherca.ini" "urls = https://127.0.0.1:$p_basic" "ca_file = $t/otherca.crt" \
    "user = tlsuser" "password_file = $t/pw"
expect_fail otherca "certificate" "ca_file"
conf "$TEST_TMP/expired.ini" "urls = https://127.0.0.1:$p_expired" "ca_file = $t/ca.crt"
expect_fail expired "certificate has expired" "ca_file"
conf "$TEST_TMP/noca.ini" "urls = https://127.0.0.1:$p_basic" "user = tlsuser" "password_file = $t/pw"
expect_fail noca "certificate" # the system's CAs do not know the test CA
# connected = the daemon reached the engine and prepared the index, then stops
connects() {
    daemon_start "$TEST_TMP/$1.ini" "$TEST_TMP/$1.log"
    daemon_wait_ready 30
    daemon_stop
    assert_eq 0 "$DAEMON_RC" "$1: connects and stops cleanly"
    for s in S3cret-pw tok-abc.123 a2V5aWQ6c2VjcmV0; do
        grep -q -- "$s" "$TEST_TMP/$1.log" && fail "$1: a secret ($s) is in the log"
    done
    log "$1: connected"
}
conf "$TEST_TMP/noverify.ini" "urls = https://127.0.0.1:$p_basic" "ca_file = $t/otherca.crt" \
    "tls_verify = false" "user = tlsuser" "password_file = $t/pw"
connects noverify
# 4. bearer token and API key, from the environment too; a client certificate
conf "$TEST_TMP/bearer.ini" "urls = https://127.0.0.1:$p_token" "ca_file = $t/ca.crt" "bearer_token = tok-abc.123"
connects bearer
conf "$TEST_TMP/apikey.ini" "urls = https://127.0.0.1:$p_token" "ca_file = $t/ca.crt"
SEARCHSYNC_SEARCH_API_KEY=a2V5aWQ6c2VjcmV0 connects apikey
conf "$TEST_TMP/badtoken.ini" "urls = https://127.0.0.1:$p_token" "ca_file = $t/ca.crt" "bearer_token = bad-token"
WANT_RC=2 expect_fail badtoken "[search]" "401" "bearer_token"
conf "$TEST_TMP/mtls.ini" "urls = https://127.0.0.1:$p_mtls" "ca_file = $t/ca.crt" \
    "client_cert = $t/client.crt" "client_key = $t/client.key"
connects mtls
conf "$TEST_TMP/aws.ini" "urls = https://127.0.0.1:$p_aws" "ca_file = $t/ca.crt" "aws_sigv4 = true" \
    "aws_service = aoss" "aws_region = eu-west-1"
AWS_ACCESS_KEY_ID=AKIDTEST AWS_SECRET_ACCESS_KEY=aws-secret-1 AWS_SESSION_TOKEN=sess-tok connects aws
grep -q "aws-secret-1" "$TEST_TMP/aws.log" && fail "the AWS secret is in the log"
AWS_ACCESS_KEY_ID=AKIDTEST AWS_SECRET_ACCESS_KEY=aws-secret-1 WANT_RC=2 expect_fail aws "403" "aws_access_key_id" # no session token
# 5. every command that asks the engine says the refusal the same way: exit 2
# (a credential the configuration holds, refused: the user fixes the file),
# [search] named, no secret shown; `status` too, in text and JSON (not "alias
# does not exist yet" with exit 0). `run` is said above.
refused() { # NAME ARGS... — searchsync ARGS with badpw.ini
    local name="$1" out rc=0
    shift
    out="$(timeout 30 "$SEARCHSYNC_BIN" "$@" --config "$TEST_TMP/badpw.ini" 2>&1)" || rc=$?
    assert_eq 2 "$rc" "$name with a refused [search] password: exit 2 (output: $(tail -3 <<<"$out"))"
    assert_contains "$out" "[search]" "$name: the message names [search]"
    assert_contains "$out" "401" "$name: the message says the engine's 401"
    case "$out" in *S3cret-pw* | *wrong-pw*) fail "$name: a password is in the output: $out" ;; esac
    REFUSED_OUT="$out"
}
for cmd in "status" "check ${db}_items" "check ${db}_items --deep" "reindex ${db}_items" \
    "delayed-run" "resync ${db}_items --ids 1" "replay" "dead-letters replay" \
    "mapping body ${db}_items" "mapping generate $db.items"; do
    # shellcheck disable=SC2086 # the words of the command
    refused "$cmd" $cmd
done
refused "status --json" status --json
json="$(sed -n '/^{/,$p' <<<"$REFUSED_OUT")"
assert_eq false "$(jq -r .ok <<<"$json")" "status --json: ok false"
assert_contains "$(jq -r '.errors | join(" ")' <<<"$json")" "[search]" "status --json: errors name [search]"
assert_eq null "$(jq -r '.indices[0].engine.alias_targets' <<<"$json")" "status --json: no alias targets made up"
pass
