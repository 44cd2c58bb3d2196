#!/usr/bin/env bash
# scripts/demo.sh — one command from a fresh clone to a running demo.
#
# Owns: the demo flow: install packages, build, start MariaDB + OpenSearch (the
# test harness, in a persistent directory), load the demo shop with
# $DEMO_PRODUCTS products, print what is ready. Servers keep running after the
# script ends; a second run reuses them (and the loaded data) and is fast.
#
# usage: bash scripts/demo.sh [start]    set everything up (default)
#        bash scripts/demo.sh stop       stop the demo servers (data is kept)
#        bash scripts/demo.sh status     show what runs
#        bash scripts/demo.sh reset      stop and delete the demo data
# Knobs: DEMO_PRODUCTS (default 10000), SEARCHSYNC_DEMO_DIR (default
# ~/.cache/searchsync/demo), DEMO_SKIP_DEPS=1, DEMO_SKIP_BUILD=1.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT="$PWD"
DEMO_DIR="${SEARCHSYNC_DEMO_DIR:-${SEARCHSYNC_CACHE:-$HOME/.cache/searchsync}/demo}"
PRODUCTS="${DEMO_PRODUCTS:-10000}"
export SEARCHSYNC_HARNESS_DIR="$DEMO_DIR"
H="$ROOT/tests/harness"

say() { printf '\n== %s\n' "$*"; }
# the admin web UI of the demo daemon: the address its [admin] listen has
# (admin.port) and the token to log in with (admin.token), or nothing before
# the first start made them
ui_lines() {
    [ -s "$DEMO_DIR/admin.port" ] && [ -s "$DEMO_DIR/admin.token" ] || return 0
    local url
    url="http://127.0.0.1:$(cat "$DEMO_DIR/admin.port")"
    cat <<EOF
Web UI      $url/   (admin UI: status, indices, mapping, dead letters)
            log in with the token $(cat "$DEMO_DIR/admin.token")  ([admin] token, also in $DEMO_DIR/admin.token)
Admin API   $url/api/v1/...  with  -H "Authorization: Bearer \$(cat $DEMO_DIR/admin.token)"
EOF
}

case "${1:-start}" in
    stop)
        if [ -f "$DEMO_DIR/searchsync.pid" ] && kill -0 "$(cat "$DEMO_DIR/searchsync.pid")" 2>/dev/null; then
            kill -TERM "$(cat "$DEMO_DIR/searchsync.pid")"
            for _ in $(seq 1 100); do kill -0 "$(cat "$DEMO_DIR/searchsync.pid")" 2>/dev/null || break; sleep 0.2; done
            echo "searchsync daemon stopped (queues drained, checkpoint saved)"
        fi
        rm -f "$DEMO_DIR/searchsync.pid"
        bash "$H/servers.sh" stop
        echo "demo servers stopped (data kept in $DEMO_DIR; \`bash scripts/demo.sh reset\` deletes it)"
        exit 0 ;;
    status)
        for s in mariadb opensearch; do bash "$H/$s.sh" status || true; done
        [ -f "$DEMO_DIR/env.sh" ] && cat "$DEMO_DIR/env.sh"
        ui_lines
        exit 0 ;;
    reset)
        [ -f "$DEMO_DIR/searchsync.pid" ] && kill -TERM "$(cat "$DEMO_DIR/searchsync.pid")" 2>/dev/null || true
        bash "$H/servers.sh" stop
        rm -rf "$DEMO_DIR"
        echo "demo data deleted ($DEMO_DIR)"
        exit 0 ;;
    start) ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac

if [ -z "${DEMO_SKIP_DEPS:-}" ]; then
    say "packages (tests/harness/deps.sh)"
    bash "$H/deps.sh"
fi

BUILT="skipped"
if [ -z "${DEMO_SKIP_BUILD:-}" ]; then
    say "build"
    if [ -f configure.ac ]; then
        if { [ -f Makefile ] || { autoreconf -fi && ./configure; }; } && make -j2; then
            BUILT="ok"
        else
            BUILT="FAILED"
            echo "WARNING: the build failed; continuing with the servers and demo data" >&2
        fi
    else
        echo "no configure.ac yet: skipping the build"
        BUILT="no build files yet"
    fi
fi

say "servers (MariaDB + OpenSearch) in $DEMO_DIR"
mkdir -p "$DEMO_DIR"
bash "$H/servers.sh" start mariadb opensearch
. "$DEMO_DIR/env.sh"

say "demo data: $PRODUCTS products in database shop"
have="$(mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -uroot -N -B \
    -e "SELECT COUNT(*) FROM shop.products" 2>/dev/null || echo 0)"
if [ "$have" = "$PRODUCTS" ]; then
    echo "already loaded ($have products)"
else
    # not through the binlog: the daemon's first sync is a reindex that reads
    # the tables (and follows the binlog from "now" meanwhile)
    bash sql/demo/generate.sh --products "$PRODUCTS" --db shop
fi

# ---------------------------------------------------------------------------
say "searchsync daemon"
DAEMON="not started (build $BUILT)"
if [ "$BUILT" = ok ] || [ -x "$ROOT/searchsync" ]; then
    # the admin API: a token made once, a port that stays the same across runs
    [ -s "$DEMO_DIR/admin.token" ] || { od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$DEMO_DIR/admin.token"; chmod 600 "$DEMO_DIR/admin.token"; }
    [ -s "$DEMO_DIR/admin.port" ] || { . "$H/common.sh"; h_free_port >"$DEMO_DIR/admin.port"; }
    ADMIN_URL="http://127.0.0.1:$(cat "$DEMO_DIR/admin.port")"
    cat >"$DEMO_DIR/searchsync.ini" <<EOF
# written by scripts/demo.sh
[source]
name = shop
host = 127.0.0.1
port = $MYSQL_PORT
user = root
server_id = 4012
start = now
[metadata]
database = searchsync
[search]
urls = $SEARCH_URL
[delivery]
flush_interval_ms = 200
[admin]
listen = 127.0.0.1:$(cat "$DEMO_DIR/admin.port")
token = $(cat "$DEMO_DIR/admin.token")
[log]
level = info
EOF
    "$ROOT/searchsync" mapping import --config "$DEMO_DIR/searchsync.ini" sql/demo/mapping.json --yes |
        tail -3
    if [ -f "$DEMO_DIR/searchsync.pid" ] && kill -0 "$(cat "$DEMO_DIR/searchsync.pid")" 2>/dev/null; then
        echo "already running (pid $(cat "$DEMO_DIR/searchsync.pid"))"
    else
        setsid "$ROOT/searchsync" run --config "$DEMO_DIR/searchsync.ini" \
            >>"$DEMO_DIR/searchsync.log" 2>&1 </dev/null &
        echo $! >"$DEMO_DIR/searchsync.pid"
        echo "started (pid $!), log $DEMO_DIR/searchsync.log"
    fi
    # products, and reviews and replies (parent/child documents of the same index)
    want="$(mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -uroot -N -B -e 'SELECT (SELECT COUNT(*) FROM shop.products) + (SELECT COUNT(*) FROM shop.reviews) + (SELECT COUNT(*) FROM shop.review_replies)')"
    got=0
    for _ in $(seq 1 1200); do
        got="$(curl -s "$SEARCH_URL/products/_count" | jq -r '.count // 0' 2>/dev/null || echo 0)"
        [ "$got" = "$want" ] && break
        kill -0 "$(cat "$DEMO_DIR/searchsync.pid")" 2>/dev/null || { echo "the daemon exited:"; tail -20 "$DEMO_DIR/searchsync.log"; break; }
        sleep 0.5
    done
    echo "indexed $got of $want documents (products, reviews, replies)"
    DAEMON="running (pid $(cat "$DEMO_DIR/searchsync.pid")), $got of $want documents indexed; log $DEMO_DIR/searchsync.log"
fi

say "ready"
cat <<EOF
Build       $BUILT
MariaDB     127.0.0.1:$MYSQL_PORT  (socket $MYSQL_SOCKET)
            root, no password:   mariadb --no-defaults -h127.0.0.1 -P$MYSQL_PORT -uroot shop
            replication user:    $MYSQL_USER / $MYSQL_PASSWORD
OpenSearch  $SEARCH_URL  ($(curl -s "$SEARCH_URL/" | jq -r '.version.number'))
Data        database shop:
$(mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -uroot -N -B shop -e "
    SELECT 'products', COUNT(*) FROM products UNION ALL SELECT 'skus', COUNT(*) FROM skus
    UNION ALL SELECT 'sku_barcodes', COUNT(*) FROM sku_barcodes UNION ALL SELECT 'product_tags', COUNT(*) FROM product_tags
    UNION ALL SELECT 'reviews', COUNT(*) FROM reviews UNION ALL SELECT 'review_replies', COUNT(*) FROM review_replies
    UNION ALL SELECT 'brands', COUNT(*) FROM brands UNION ALL SELECT 'categories', COUNT(*) FROM categories" |
    awk -F'\t' '{printf "              %-15s %8s\n", $1, $2}')
Environment . $DEMO_DIR/env.sh
Stop        bash scripts/demo.sh stop

searchsync  $DAEMON
Status      $ROOT/searchsync status --config $DEMO_DIR/searchsync.ini
$(if [ -n "${ADMIN_URL:-}" ]; then ui_lines; else echo "Web UI      not started (the daemon did not start: build $BUILT)"; fi)
            status:  curl -s -H "Authorization: Bearer \$(cat $DEMO_DIR/admin.token)" ${ADMIN_URL:-}/api/v1/status
            reindex: curl -s -XPOST -H "Authorization: Bearer \$(cat $DEMO_DIR/admin.token)" ${ADMIN_URL:-}/api/v1/indices/products/reindex
Sample search: products with the most common tag that have a red SKU, with their tags
$(tag="$(mariadb --no-defaults -h "$MYSQL_HOST" -P "$MYSQL_PORT" -uroot -N -B -e 'SELECT t.name FROM shop.product_tags pt JOIN shop.tags t ON t.id = pt.tag_id GROUP BY t.name ORDER BY COUNT(*) DESC LIMIT 1' 2>/dev/null)"
  q="{\"size\":3,\"_source\":[\"id\",\"name\",\"price\",\"tags.tag.name\"],\"query\":{\"bool\":{\"must\":[{\"nested\":{\"path\":\"tags\",\"query\":{\"term\":{\"tags.tag.name\":\"$tag\"}}}},{\"nested\":{\"path\":\"skus\",\"query\":{\"term\":{\"skus.color\":\"red\"}},\"inner_hits\":{\"_source\":[\"skus.sku_code\",\"skus.color\",\"skus.size\",\"skus.price\"]}}}]}}}"
  echo "  curl -s '$SEARCH_URL/products/_search' -H 'Content-Type: application/json' -d '$q'"
  curl -s "$SEARCH_URL/products/_search" -H 'Content-Type: application/json' -d "$q" |
    jq -c '.hits.hits[] | {id: ._source.id, name: ._source.name, price: ._source.price, tags: [._source.tags[].tag.name], red_skus: [.inner_hits.skus.hits.hits[]._source | {sku_code, size, price}]}' 2>/dev/null | sed 's/^/  /')

Change a row and watch it arrive (the daemon keeps running):
    mariadb --no-defaults -h127.0.0.1 -P$MYSQL_PORT -uroot shop -e "UPDATE products SET name = 'Hello searchsync' WHERE id = 1"
    curl -s '$SEARCH_URL/products/_doc/1' | jq ._source.name
What searchsync reads, as JSON lines:
    $ROOT/searchsync tail --source mysql://$MYSQL_USER:$MYSQL_PASSWORD@127.0.0.1:$MYSQL_PORT --tables 'shop.*'
  then, in another shell, change a row:
    mariadb --no-defaults -h127.0.0.1 -P$MYSQL_PORT -uroot shop -e "UPDATE products SET price = price + 1 WHERE id = 1"
EOF
