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

built() { [ -x "$BIN" ] && [ -f "$CACHE/.built" ] && [ "$(cat "$CACHE/.built")" = "v$GHOST_VERSION" ]; }

do_fetch() {
    local t0 gobin
    if built; then
        echo "$BIN"
        return 0
    fi
    gobin="$(command -v go || true)"
    [ -n "$gobin" ] || { [ -x /usr/local/go/bin/go ] && gobin=/usr/local/go/bin/go; } ||
        h_unavailable "no Go toolchain (go) on PATH; install Go (Debian: golang-go) to build gh-ost"
    t0="$(h_now)"
    # another lane of the suite may be building it: wait, and look again
    h_lock "$CACHE"
    if built; then h_unlock; echo "$BIN"; return 0; fi
    mkdir -p "$CACHE/bin" "$CACHE/go"
    rm -f "$CACHE/.built"
    h_log "building gh-ost v$GHOST_VERSION from the Go module proxy with $("$gobin" version | cut -d' ' -f3)"
    # A module and build cache of its own (not the user's), modules resolved
    # from the proxy into a throw-away main module that requires gh-ost at the
    # pinned version (`go install PKG@VERSION` would be shorter, but it asks
    # the proxy for the module's version list to look for a deprecation, and
    # the proxy refuses that list for gh-ost); -mod=mod: gh-ost's vendor/ is
    # not in its module zip; this machine's toolchain (no download); no cgo.
    # go.sum is written from the proxy's checksum database.
    local mod
    mod="$(mktemp -d "${TMPDIR:-/tmp}/searchsync-ghost.XXXXXX")"
    printf 'module searchsync.test/ghost\n\ngo 1.17\n\nrequire %s v%s\n' "$MODULE" "$GHOST_VERSION" >"$mod/go.mod"
    if ! (cd "$mod" && env GOPATH="$CACHE/go" GOMODCACHE="$CACHE/go/mod" GOCACHE="$CACHE/go/build" \
            GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0 GO111MODULE=on GOWORK=off \
            "$gobin" build -trimpath -ldflags "-X main.AppVersion=$GHOST_VERSION" \
            -o "$BIN.tmp" "$MODULE/go/cmd/gh-ost") >"$CACHE/build.log" 2>&1; then
        rm -rf "$mod"
        h_tail_log "$CACHE/build.log"
        if grep -qiE 'dial tcp|no such host|connection refused|i/o timeout|TLS handshake' "$CACHE/build.log"; then
            h_unavailable "the Go module proxy ($("$gobin" env GOPROXY)) is not reachable"
        fi
        h_die "building gh-ost v$GHOST_VERSION failed (log: $CACHE/build.log)"
    fi
    rm -rf "$mod"
    mv -f "$BIN.tmp" "$BIN"
    [ -x "$BIN" ] || h_die "go install reported success but $BIN is missing (log: $CACHE/build.log)"
    [ "$("$BIN" --version 2>&1)" = "$GHOST_VERSION" ] ||
        h_die "the built $BIN does not run as gh-ost $GHOST_VERSION: $("$BIN" --version 2>&1 | head -3)"
    # (the module cache is read-only for its owner: let a later rm -rf work)
    chmod -R u+w "$CACHE/go/mod" 2>/dev/null || true
    echo "v$GHOST_VERSION" >"$CACHE/.built"
    h_unlock
    h_log "gh-ost v$GHOST_VERSION built in $(h_elapsed "$t0")s"
    echo "$BIN"
}

case "${1:-}" in
    fetch) do_fetch ;;
    path) built || { h_log "gh-ost v$GHOST_VERSION is not built: run $0 fetch"; exit 3; }; echo "$BIN" ;;
    *) echo "usage: $0 fetch|path" >&2; exit 2 ;;
esac
