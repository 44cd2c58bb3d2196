#!/usr/bin/env bash
# tests/integration/t_admin_security.sh — the admin HTTP server under attack
# from the same machine (web/http_server.c, web/admission.c,
# docs/http-api.md "Limits" and "Sessions"), against a real `searchsync run`:
#
#   log forgery   a refused request whose path holds %0a writes no line of
#                 its own: the control byte is logged escaped
#   NUL           a NUL in the Authorization header -> 400, %00 in a path
#                 matches no route; a second Host header -> 400
#   exhaustion    500 idle unauthenticated sockets held open: authenticated
#                 calls still answer within 3 s
#   slowloris     40 sockets dripping header bytes: authenticated calls still
#                 answer; the drippers are cut at the 10 s header deadline
#   bursts        20 concurrent authenticated clients, each with 2 keep-alive
#                 connections and fresh ones: every call 200
#   sessions      login -> HttpOnly SameSite=Strict cookie + CSRF token; a
#                 mutating call without CSRF or from another Origin -> 403;
#                 expired (session_ttl_s = 5) or logged out -> 401; the login
#                 page's CSP allows no inline script; 10 failed logins -> 429
# Attacks run from python3 sockets on 127.0.0.1, each bounded in sockets
# and seconds.
. "$(dirname "$0")/lib.sh"
require_bin
bash "$SEARCHSYNC_SRCDIR/sql/demo/generate.sh" --products 50 >/dev/null
meta="$(unique_name meta)"
on_exit "mysql_q 'DROP DATABASE IF EXISTS \`$meta\`' >/dev/null 2>&1"
PORT="$(free_port)"
TOKEN="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
cat >"$TEST_TMP/c.ini" <<INI
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 7332
start = now
[metadata]
database = $meta
[search]
urls = $SEARCH_URL
[admin]
listen = 127.0.0.1:$PORT
session_ttl_s = 5
trusted_proxies = 127.0.0.3
[log]
level = info
INI
export SEARCHSYNC_ADMIN_TOKEN="$TOKEN"
"$SEARCHSYNC_BIN" mapping import --config "$TEST_TMP/c.ini" "$SEARCHSYNC_SRCDIR/sql/demo/mapping.json" --yes \
    >"$TEST_TMP/import.out" 2>&1 || fail "import: $(cat "$TEST_TMP/import.out")"
daemon_start "$TEST_TMP/c.ini" "$TEST_TMP/run.log"
on_exit '[ "$rc" = 0 ] || { echo "--- daemon log (last 40 lines)"; tail -40 "$TEST_TMP/run.log"; }'
URL="http://127.0.0.1:$PORT"
wait_until 30 "admin API listening on $PORT" curl -s -o /dev/null "$URL/"

# ---- python3 attack driver: python3 - SCENARIO; prints "ok ..." or "FAIL ..."
cat >"$TEST_TMP/attack.py" <<'PY'
import socket, sys, threading, time
port, token, scenario = int(sys.argv[1]), sys.argv[2], sys.argv[3]

def authed(path="/api/v1/status", timeout=3.0):
    """one authenticated GET on a fresh connection: (status, seconds)"""
    t0 = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
                   "Connection: close\r\n\r\n" % (path, port, token)).encode())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        line = data.split(b"\r\n", 1)[0].decode(errors="replace")
        code = int(line.split()[1]) if line.startswith("HTTP/") else 0
    except OSError as e:
        code = "error: %s" % e
    return code, time.monotonic() - t0

def check_authed(n, what):
    for i in range(n):
        code, secs = authed()
        if code != 200 or secs > 3.0:
            print("FAIL %s: authenticated call %d got %s after %.2f s" % (what, i, code, secs))
            sys.exit(1)

def raw(req):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(req)
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    s.close()
    return data.split(b"\r\n", 1)[0].decode(errors="replace")

if scenario == "nul":
    line = raw(("GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s"
                % token).encode() + b"\x00junk\r\nConnection: close\r\n\r\n")
    if " 200 " in line + " ":
        print("FAIL a NUL in Authorization was accepted: %s" % line); sys.exit(1)
    print("ok NUL in Authorization: %s" % line)
    line = raw(("GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n"
                "Authorization: Bearer %s\r\nConnection: close\r\n\r\n" % token).encode())
    if " 400 " not in line + " ":
        print("FAIL two Host headers: %s" % line); sys.exit(1)
    print("ok two Host headers: %s" % line)
elif scenario == "exhaust":
    held = []
    for i in range(500):
        held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    time.sleep(0.5)
    check_authed(5, "500 idle sockets held")
    for s in held:
        s.close()
    print("ok 500 idle sockets: authenticated calls answered")
elif scenario == "slowloris":
    drip = []
    for i in range(40):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        drip.append(s)
    t0 = time.monotonic()
    cut = set()
    while time.monotonic() - t0 < 14:
        for i, s in enumerate(drip):
            if i in cut:
                continue
            try:
                s.sendall(b"X")  # one header byte per second: never a whole request
                s.setblocking(False)
                try:
                    if s.recv(1) == b"":
                        cut.add(i)
                except BlockingIOError:
                    pass
                s.setblocking(True)
            except OSError:
                cut.add(i)
        if time.monotonic() - t0 < 4:
            check_authed(2, "40 dripping sockets")
        time.sleep(1)
    if len(cut) != len(drip):
        print("FAIL slowloris: %d of %d dripping sockets still open after 14 s"
              % (len(drip) - len(cut), len(drip))); sys.exit(1)
    print("ok slowloris: authenticated calls answered, all %d drippers cut" % len(cut))
elif scenario == "burst":
    # 20 clients at once, each with a pool of 2 keep-alive connections (as a
    # browser or an HTTP library keeps them) making 6 calls, then 2 more
    # calls each on fresh connections: every one answered
    import http.client
    res = []
    hdrs = {"Authorization": "Bearer " + token, "Host": "127.0.0.1:%d" % port}
    def client():
        pool = [http.client.HTTPConnection("127.0.0.1", port, timeout=10) for _ in range(2)]
        for i in range(6):
            try:
                c = pool[i % 2]
                c.request("GET", "/api/v1/status", headers=hdrs)
                r = c.getresponse()
                r.read()
                res.append((r.status, 0))
            except Exception as e:
                res.append(("error: %r" % e, 0))
        for i in range(2):
            res.append(authed(timeout=10.0))
        time.sleep(1)  # the pool is held a little longer, as clients do
        for c in pool:
            c.close()
    ts = [threading.Thread(target=client) for _ in range(20)]
    for t in ts: t.start()
    for t in ts: t.join()
    bad = [r for r in res if r[0] != 200]
    if bad:
        print("FAIL burst: %d of %d calls failed: %s" % (len(bad), len(res), bad[:3])); sys.exit(1)
    print("ok 20 concurrent authenticated clients, %d calls" % len(res))
PY
attack() { python3 "$TEST_TMP/attack.py" "$PORT" "$TOKEN" "$1" || fail "$1 scenario failed"; }
api() { # METHOD PATH [curl args...] — sets CODE, BODY, HEADERS
    local method="$1" path="$2"
    shift 2
    rm -f "$TEST_TMP/.b" "$TEST_TMP/.h"
    touch "$TEST_TMP/.b" "$TEST_TMP/.h"
    CODE="$(curl -gsS -m 20 -X "$method" -D "$TEST_TMP/.h" -o "$TEST_TMP/.b" -w '%{http_code}' "$@" "$URL$path")" ||
        fail "curl $method $path failed"
    BODY="$(cat "$TEST_TMP/.b")"
    HEADERS="$(tr -d '\r' <"$TEST_TMP/.h")"
}
AUTH=(-H "Authorization: Bearer $TOKEN")
J=(-H 'Content-Type: application/json')

# ---- (a) log forgery: the forged line is logged escaped, inside the refusal line
api GET "/api/v1/x%0a2099-01-01T00:00:00.000Z%20ERROR%20[admin]%20forged"
assert_eq 401 "$CODE" "unauthenticated request refused"
daemon_wait_log 'forged' 10
assert_eq "" "$(grep -E '^2099-01-01' "$TEST_TMP/run.log" || true)" "no forged standalone log line"
assert_contains "$(cat "$TEST_TMP/run.log")" '/api/v1/x\x0a2099-01-01' "the newline is logged escaped"

# ---- NUL, two Host headers (raw sockets), %00
attack nul
api GET "/api/v1/status%00" "${AUTH[@]}"
assert_eq 404 "$CODE" "%00 does not cut /api/v1/status%00 down to /api/v1/status"
api GET "/api/v1/status" "${AUTH[@]}" -H "Host: evil.example"
assert_eq 421 "$CODE" "a foreign Host"

# ---- (b) (c) (d): the API keeps answering authenticated calls
attack exhaust
attack burst
attack slowloris

# ---- sessions: login, cookie, CSRF, Origin, expiry, logout
api GET /login
assert_eq 200 "$CODE" "the login page is public"
assert_contains "$HEADERS" "Content-Security-Policy: default-src 'self'; script-src 'self';" "CSP on HTML"
# every script tag loads a file (an inline one, on one line or several, has no src)
assert_eq "" "$(grep -oiE '<script[^>]*>' "$TEST_TMP/.b" | grep -viE '[[:space:]]src=' || true)" "no inline script in the login page"
assert_contains "$(grep -oiE '<script[^>]*>' "$TEST_TMP/.b")" 'src=' "the login page loads its script from a file"
api POST /api/v1/login "${J[@]}" -d '{"token":'
assert_eq 400 "$CODE" "login: malformed JSON"
assert_eq token "$(jq -r .field <<<"$BODY")" "the 400 names the field"
api POST /api/v1/login "${J[@]}" -d '{"token":42}'
assert_eq 400 "$CODE" "login: token of the wrong type"
login() {
    api POST /api/v1/login "${J[@]}" -d "{\"token\":\"$TOKEN\"}"
    assert_eq 200 "$CODE" "login ($BODY)"
    SID="$(sed -n 's/^Set-Cookie: ss_session=\([0-9a-f]*\);.*/\1/p' <<<"$HEADERS")"
    CSRF="$(jq -r .csrf_token <<<"$BODY")"
    [ ${#SID} = 64 ] && [ ${#CSRF} = 64 ] || fail "login: no session cookie or CSRF token: $HEADERS $BODY"
}
login
cookie="$(grep '^Set-Cookie:' <<<"$HEADERS")"
assert_contains "$cookie" "HttpOnly" "the cookie is HttpOnly"
assert_contains "$cookie" "SameSite=Strict" "the cookie is SameSite=Strict"
assert_contains "$cookie" "Max-Age=5" "the cookie expires with session_ttl_s"
C=(-H "Cookie: ss_session=$SID")
O=(-H "Origin: http://127.0.0.1:$PORT")
api GET /api/v1/status "${C[@]}"
assert_eq 200 "$CODE" "a GET with the session cookie"
api POST /api/v1/words "${C[@]}" "${O[@]}" "${J[@]}" -d '{"word":"csrf","kind":"ext"}'
assert_eq 403 "$CODE" "a mutating call without X-CSRF-Token"
# the wrong token differs from the real one in its last digit (a fixed '0' was the real token one time in 16)
if [ "${CSRF: -1}" = 0 ]; then WRONG_CSRF="${CSRF%?}1"; else WRONG_CSRF="${CSRF%?}0"; fi
api POST /api/v1/words "${C[@]}" "${O[@]}" "${J[@]}" -H "X-CSRF-Token: $WRONG_CSRF" -d '{"word":"csrf","kind":"ext"}'
assert_eq 403 "$CODE" "a mutating call with a wrong X-CSRF-Token"
api POST /api/v1/words "${C[@]}" -H 'Origin: http://evil.example' "${J[@]}" -H "X-CSRF-Token: $CSRF" -d '{"word":"csrf","kind":"ext"}'
assert_eq 403 "$CODE" "a mutating call from another Origin"
api POST /api/v1/words "${C[@]}" "${J[@]}" -H "X-CSRF-Token: $CSRF" -d '{"word":"csrf","kind":"ext"}'
assert_eq 403 "$CODE" "a session call without an Origin"
api POST /api/v1/words "${C[@]}" "${O[@]}" "${J[@]}" -H "X-CSRF-Token: $CSRF" -d '{"word":"csrf","kind":"ext"}'
assert_eq 201 "$CODE" "with cookie, CSRF token and Origin ($BODY)"
assert_eq 1 "$(mysql_q "SELECT COUNT(*) FROM dynamic_words WHERE word = 'csrf'" "$meta")" "only the allowed call wrote"
api POST /api/v1/logout "${C[@]}" "${O[@]}" -H "X-CSRF-Token: $CSRF"
assert_eq 200 "$CODE" "logout"
api GET /api/v1/status "${C[@]}"
assert_eq 401 "$CODE" "a logged-out session"
login
C=(-H "Cookie: ss_session=$SID")
sleep 6
api GET /api/v1/status "${C[@]}"
assert_eq 401 "$CODE" "an expired session"
assert_contains "$BODY" "log in again" "401 says to log in again"

# ---- failed logins per address: 429 after 10, even with the right token
for i in $(seq 1 10); do
    api POST /api/v1/login "${J[@]}" -d '{"token":"0000000000000000000000000000000000"}'
    assert_eq 401 "$CODE" "failed login $i"
done
api POST /api/v1/login "${J[@]}" -d "{\"token\":\"$TOKEN\"}"
assert_eq 429 "$CODE" "the 11th login from the address"
assert_contains "$HEADERS" "Retry-After:" "429 says when to retry"
# another address (127.0.0.2, loopback too) that never failed: the right
# token opens a session, a wrong one is only a 401 — the failures of
# 127.0.0.1 lock no one else out
api POST /api/v1/login "${J[@]}" --interface 127.0.0.2 -d "{\"token\":\"$TOKEN\"}"
assert_eq 200 "$CODE" "the right token from an address that did not fail: a session ($BODY)"
grep -q "login from 127.0.0.2: session opened" "$TEST_TMP/run.log" || fail "the log names the other address: $(grep 'login from' "$TEST_TMP/run.log" | tail -3)"
api POST /api/v1/login "${J[@]}" --interface 127.0.0.2 -d '{"token":"0000000000000000000000000000000000"}'
assert_eq 401 "$CODE" "a wrong token from that address: 401, not 429"
# behind a reverse proxy (127.0.0.3, in [admin] trusted_proxies) every client
# has the proxy's address: its X-Forwarded-For names them apart
XF=(--interface 127.0.0.3 -H 'X-Forwarded-For: 198.51.100.7')
for i in $(seq 1 10); do
    api POST /api/v1/login "${J[@]}" "${XF[@]}" -d '{"token":"0000000000000000000000000000000000"}'
    [ "$CODE" = 401 ] || fail "failed login $i through the proxy: $CODE"
done
api POST /api/v1/login "${J[@]}" "${XF[@]}" -d "{\"token\":\"$TOKEN\"}"
assert_eq 429 "$CODE" "the client behind the proxy that failed ten times: 429"
api POST /api/v1/login "${J[@]}" --interface 127.0.0.3 -H 'X-Forwarded-For: 198.51.100.8' -d "{\"token\":\"$TOKEN\"}"
assert_eq 200 "$CODE" "another client behind the same proxy: the right token opens a session"
grep -q "login from 198.51.100.8: session opened" "$TEST_TMP/run.log" || fail "the log names the client behind the proxy"
# a client that is no trusted proxy cannot pick its own address
api POST /api/v1/login "${J[@]}" -H 'X-Forwarded-For: 198.51.100.9' -d "{\"token\":\"$TOKEN\"}"
assert_eq 429 "$CODE" "X-Forwarded-For from an untrusted peer is not believed (127.0.0.1 stays blocked)"
api GET /api/v1/status "${AUTH[@]}"
assert_eq 200 "$CODE" "the bearer token still works"

assert_eq 0 "$(grep -c "$TOKEN" "$TEST_TMP/run.log" || true)" "the token never appears in the log"
daemon_stop
assert_eq 0 "$DAEMON_RC" "SIGTERM: clean exit"
pass
