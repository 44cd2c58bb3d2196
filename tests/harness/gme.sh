#!/usr/bin/env bash
# tests/harness/gme.sh — go-mysql-elasticsearch (siddontang's binlog-to-
# Elasticsearch river), which Debian does not package: built from its source on
# the Go module proxy at a pinned version (the repository's last commit), with
# the machine's Go toolchain. The peers benchmark runs it beside searchsync;
# the takeover test lets it write the index searchsync then takes over.
#
# Owns: the cache $SEARCHSYNC_CACHE/gme-$GME_VERSION: bin/go-mysql-elasticsearch
# and the Go module/build caches it was built with (go/).
#
# usage: gme.sh fetch|path|version
#   fetch    build it unless the cache holds it (idempotent); prints its path
#   path     print the path of the cached binary (exit 3 when not fetched)
#   version  print the pinned version
# It speaks to Elasticsearch 7 and older only (its bulk lines name a type).
# Exit 3: this machine cannot build it (no `go`, the module proxy
# unreachable); any other failure exits 1.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

GME_VERSION="${GME_VERSION:-v0.0.0-20200822025838-fe261969558b}"
MODULE=github.com/siddontang/go-mysql-elasticsearch
CACHE="$SEARCHSYNC_CACHE/gme-$GME_VERSION"
BIN="$CACHE/bin/go-mysql-elasticsearch"
h_unavailable() { h_log "UNAVAILABLE: $*"; exit 3; }

case "${1:-}" in
    fetch) h_go_build "$CACHE" "$MODULE" "$GME_VERSION" "$MODULE/cmd/go-mysql-elasticsearch" "$BIN" \
               go-mysql-elasticsearch ;;
    path) h_go_built "$CACHE" "$BIN" "$GME_VERSION" ||
              { h_log "go-mysql-elasticsearch $GME_VERSION is not built: run $0 fetch"; exit 3; }
          echo "$BIN" ;;
    version) echo "$GME_VERSION" ;;
    *) echo "usage: $0 fetch|path|version" >&2; exit 2 ;;
esac
