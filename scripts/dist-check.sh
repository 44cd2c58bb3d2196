#!/usr/bin/env bash
# scripts/dist-check.sh — the distribution tarball builds (run by
# scripts/test.sh, so a file left out of the local.mk lists fails CI).
#
# Owns: `make dist` in a configured tree, then two checks on the tarball:
#   1. every `#include "..."` of every .c/.h in it resolves to a file in it
#      (beside the includer, under src/ or at the top: AM_CPPFLAGS), where
#      the source tree has that file (a header that is generated at build
#      time is not in the source tree and is left to the build);
#   2. the unpacked tarball configures and compiles the binary
#      (`./configure && make searchsync`: every source of libsearchsync.a and
#      the subcommands; the sanitizer copy of the library compiles the same
#      files again and the tests run from the source tree, so neither is
#      repeated here).
# A file missing from the tarball is named, with where to add it. Exit 0 ok,
# 1 a check failed. CONFIGURE_FLAGS and MAKE_JOBS as scripts/test.sh.
set -euo pipefail

cd "$(dirname "$0")/.."
top=$PWD
jobs="${MAKE_JOBS:-2}"
[ -f Makefile ] || { echo "dist-check: no Makefile: run ./configure first" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make -s dist-gzip >"$tmp/dist.log" 2>&1 || { cat "$tmp/dist.log"; echo "dist-check: make dist failed" >&2; exit 1; }
tarball=$(ls -t ./*.tar.gz | head -n 1)
mv "$tarball" "$tmp/"
tarball="$tmp/$(basename "$tarball")"
tar -xzf "$tarball" -C "$tmp"
dir=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
echo "dist-check: $(basename "$tarball") ($(du -k "$tarball" | cut -f1) KB)"

# the local.mk to add path to: its folder's own, else the one that lists the
# files of its folder (the folders of sync/ are built from sync/local.mk),
# the nearest above it first
fragment_of() {
    local d up mk
    d=$(dirname "$1")
    [ -f "$top/$d/local.mk" ] && { echo "$d/local.mk"; return; }
    up=$d
    while [ "$up" != . ]; do
        up=$(dirname "$up")
        mk="$top/$up/local.mk"
        [ "$up" = . ] && mk="$top/Makefile.am"
        if [ -f "$mk" ] && grep -qE "(^|[[:space:]])${d//./\\.}/[A-Za-z0-9_]+\.[ch]([[:space:]]|\$)" "$mk"; then
            echo "${mk#"$top"/}"; return
        fi
    done
    mk=$(grep -lE "(^|[[:space:]])${d//./\\.}/[A-Za-z0-9_]+\.[ch]([[:space:]]|\$)" \
         $(find "$top" -name local.mk -not -path "$top/.git/*" | sort) 2>/dev/null | head -n 1)
    [ -n "$mk" ] && { echo "${mk#"$top"/}"; return; }
    up=$d
    while [ "$up" != . ] && [ ! -f "$top/$up/local.mk" ]; do up=$(dirname "$up"); done
    echo "$up/local.mk"
}

# 1. the headers the sources include are in it
missing=0
while IFS= read -r f; do
    rel=${f#"$dir"/}
    while IFS= read -r inc; do
        found=""
        for cand in "$(dirname "$rel")/$inc" "src/$inc" "$inc"; do
            [ -f "$dir/$cand" ] && { found=$cand; break; }
        done
        [ -n "$found" ] && continue
        for cand in "$(dirname "$rel")/$inc" "src/$inc" "$inc"; do
            if [ -f "$top/$cand" ]; then
                echo "dist-check: MISSING FROM THE TARBALL: $cand (included by $rel);" \
                     "add it to the _SOURCES (or EXTRA_DIST) of $(fragment_of "$cand")" >&2
                missing=$((missing + 1))
                break
            fi
        done
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | sort -u)
done < <(find "$dir" -name '*.[ch]' -type f | sort)
[ "$missing" -eq 0 ] || { echo "dist-check: FAILED: $missing included file(s) not distributed" >&2; exit 1; }

# 2. it configures and compiles
cd "$dir"
# shellcheck disable=SC2086
if ! ./configure ${CONFIGURE_FLAGS:-} >"$tmp/configure.log" 2>&1; then
    tail -n 40 "$tmp/configure.log"
    echo "dist-check: FAILED: ./configure of the unpacked tarball" >&2
    exit 1
fi
if ! make -j"$jobs" searchsync >"$tmp/make.log" 2>&1; then
    grep -E 'error|No rule to make' "$tmp/make.log" | head -n 20
    grep -oE "(fatal error: [^:]+: No such file|No rule to make target '[^']+')" "$tmp/make.log" |
        sort -u | sed 's/^/dist-check: MISSING FROM THE TARBALL: /' >&2 || true
    echo "dist-check: FAILED: make in the unpacked tarball (a file the build needs is not distributed)" >&2
    exit 1
fi
echo "dist-check: the tarball's every include is in it, and it configures and builds"
