#!/usr/bin/env bash
# docs/configuration.md embeds `searchsync config reference`; fail when the
# key table in src/config.c and the documentation drift apart.
set -euo pipefail
bin=${SEARCHSYNC_BIN:-./searchsync}
doc=${SEARCHSYNC_SRCDIR:-.}/docs/configuration.md
want=$("$bin" config reference)
have=$(sed -n '/<!-- BEGIN GENERATED/,/<!-- END GENERATED/p' "$doc" | sed '1d;$d')
if [ "$want" != "$have" ]; then
  echo "docs/configuration.md is out of date with src/config.c; regenerate the block with:"
  echo "  searchsync config reference"
  diff <(echo "$have") <(echo "$want") || true
  exit 1
fi
echo "docs/configuration.md matches the key table ($(grep -c '^| `' <<<"$want") keys)"
