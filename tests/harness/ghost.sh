#!/usr/bin/env bash
# tests/harness/ghost.sh — GitHub's gh-ost (online schema change through the
# binlog), which Debian does not package: built from its source on the Go
# module proxy at a pinned version, with the machine's Go toolchain.
#
# Owns: the cache $SEARCHSYNC_CACHE/gh-ost-$GHOST_VERSION: bin/gh-ost and the
# Go module/build caches it was built with (go/), so that a second fetch is a
# no-op and nothing lands in the user's own GOPATH.
#
# usage: ghost.sh fetch|path
#   fetch  build gh-ost unless the cache holds it (idempotent); prints its path
#   path   print the path of the cached binary (exit 3 when not fetched)
# The version is pinned (GHOST_VERSION, default 1.1.6): the proxy serves
# github.com/github/gh-ost at its tags, but refuses @latest for it (the
# module's version list is not served), and a test must not change tools
# under it anyway.
# Exit 3: this machine cannot build it (no `go`, the module proxy
# unreachable); any other failure exits 1.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

GHOST_VERSION="${GHOST_VERSION:-1.1.6}"
MODULE=github.com/github/gh-ost
CACHE="$SEARCHSYNC_CACHE/gh-ost-$GHOST_VERSION"
BIN="$CACHE/bin/gh-ost"
h_unavailable() { h_log "UNAVAILABLE: $*"; exit 3; }

built() { h_go_built "$CACHE" "$BIN" "v$GHOST_VERSION"; }

do_fetch() {
    h_go_build "$CACHE" "$MODULE" "v$GHOST_VERSION" "$MODULE/go/cmd/gh-ost" "$BIN" gh-ost \
        "-X main.AppVersion=$GHOST_VERSION" >/dev/null
    [ "$("$BIN" --version 2>&1)" = "$GHOST_VERSION" ] ||
        h_die "the built $BIN does not run as gh-ost $GHOST_VERSION: $("$BIN" --version 2>&1 | head -3)"
    echo "$BIN"
}

case "${1:-}" in
    fetch) do_fetch ;;
    path) built || { h_log "gh-ost v$GHOST_VERSION is not built: run $0 fetch"; exit 3; }; echo "$BIN" ;;
    *) echo "usage: $0 fetch|path" >&2; exit 2 ;;
esac
