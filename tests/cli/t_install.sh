#!/usr/bin/env bash
# `make install DESTDIR=...`: the binary, the sample
# configuration, the systemd unit (checked with systemd-analyze verify), the
# man page and bash completion land where they belong; an administrator's
# configuration survives a second install; `make uninstall` removes the rest.
# The template unit searchsync@.service is verified as an instance.
set -uo pipefail
bin=${SEARCHSYNC_BIN:-./searchsync}
src=${SEARCHSYNC_SRCDIR:-.}
build=$(cd "$(dirname "$bin")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
failures=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; failures=$((failures + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; } # check NAME SHELL-TEST

# (MAKEFLAGS of an enclosing `make check` would pass its TESTS along: not wanted)
if ! env -u MAKEFLAGS -u MFLAGS make -s -C "$build" install DESTDIR="$root" >"$tmp/install.log" 2>&1; then
  echo "FAIL make install:"; sed 's/^/     /' "$tmp/install.log"; exit 1
fi
ibin=$(find "$root" -path '*/bin/searchsync' -type f | head -1)
ini=$(find "$root" -path '*/searchsync/searchsync.ini' -not -path '*/doc/*' | head -1)
unit=$(find "$root" -path '*/systemd/system/searchsync.service' | head -1)
tunit=$(find "$root" -path '*/systemd/system/searchsync@.service' | head -1)
punit=$(find "$root" -path '*/systemd/system/searchsync-sources.path' | head -1)
sunit=$(find "$root" -path '*/systemd/system/searchsync-sources.service' | head -1)
sscript=$(find "$root" -path '*/searchsync/searchsync-sources' -type f | head -1)
man=$(find "$root" -path '*/man1/searchsync.1' | head -1)
comp=$(find "$root" -path '*/bash-completion/completions/searchsync' | head -1)
check "binary installed and runs" '[ -x "$ibin" ] && "$ibin" --version | grep -q "^searchsync "'
check "sample configuration in sysconfdir/searchsync" '[ -n "$ini" ] && cmp -s "$ini" "$src/searchsync.ini"'
check "the installed sample is valid" '"$ibin" config check --config "$ini" >/dev/null 2>&1'
check "systemd unit installed" '[ -f "$unit" ]'
check "unit runs the installed binary with the installed configuration" \
  'grep -qxF "ExecStart=${ibin#"$root"} run --config ${ini#"$root"}" "$unit"'
confdir=${ini#"$root"}
confdir=${confdir%/searchsync.ini}
check "systemd template unit installed (one instance per source)" '[ -f "$tunit" ]'
check "an instance NAME runs the installed binary with sysconfdir/searchsync/NAME.ini" \
  'grep -qxF "ExecStart=${ibin#"$root"} run --config $confdir/%i.ini" "$tunit"'
check "an instance NAME reads its own secrets" \
  'grep -qxF "EnvironmentFile=-$confdir/%i.secrets.env" "$tunit"'
check "the path unit of sources added at run time watches sysconfdir/searchsync" \
  'grep -qxF "PathChanged=$confdir" "$punit"'
check "its oneshot runs the installed searchsync-sources on that directory" \
  '[ -x "$sscript" ] && grep -qxF "ExecStart=${sscript#"$root"} $confdir" "$sunit"'
check "the daemons may write the sources directory (POST /api/v1/sources)" \
  'grep -qxF "ReadWritePaths=-$confdir" "$unit" && grep -qxF "ReadWritePaths=-$confdir" "$tunit"'
# searchsync-sources against a systemctl that records what it is asked: a
# NAME.ini with its NAME.password is started, one written by hand is not,
# an instance whose file is gone is stopped
mkdir -p "$tmp/fake" "$tmp/srcdir"
cat >"$tmp/fake/systemctl" <<'SH'
#!/bin/sh
echo "$*" >>"$FAKE_LOG"
case "$*" in
  "is-enabled --quiet searchsync@gone.service") exit 0 ;;
  is-enabled*) exit 1 ;;
  "list-units"*) echo "searchsync@gone.service loaded inactive dead x" ;;
esac
exit 0
SH
chmod +x "$tmp/fake/systemctl"
touch "$tmp/srcdir/west.ini" "$tmp/srcdir/west.password" "$tmp/srcdir/byhand.ini"
FAKE_LOG="$tmp/fake.log" PATH="$tmp/fake:$PATH" sh "$sscript" "$tmp/srcdir" >"$tmp/sources.out" 2>&1
check "searchsync-sources starts the added source" 'grep -qxF "enable --now searchsync@west.service" "$tmp/fake.log"'
check "... leaves a file written by hand alone" '! grep -q byhand "$tmp/fake.log"'
check "... stops an instance whose file was removed" 'grep -qxF "disable --now searchsync@gone.service" "$tmp/fake.log"'
check "... hands the files to the user of the units, mode 0600" '[ "$(stat -c %a "$tmp/srcdir/west.ini")" = 600 ]'
check "man page installed" '[ -f "$man" ]'
check "man finds it" '[ "$(MANPATH="${man%/man1/*}" man -w searchsync 2>/dev/null)" = "$man" ]'
groff -man -ww -z "$man" >"$tmp/groff.out" 2>&1
check "man page renders without roff warnings" '[ ! -s "$tmp/groff.out" ]' || cat "$tmp/groff.out"
check "bash completion installed" '[ -f "$comp" ] && bash -n "$comp"'
words=$(bash -c '. "$1"; COMP_WORDS=(searchsync m); COMP_CWORD=1; _searchsync; echo "${COMPREPLY[*]}"' _ "$comp")
check "completion offers the commands" '[ "$words" = "mapping migrate" ]'
words=$(bash -c '. "$1"; COMP_WORDS=(searchsync mapping ""); COMP_CWORD=2; _searchsync; echo "${COMPREPLY[*]}"' _ "$comp")
check "completion offers mapping's subcommands" '[[ "$words" == "import export body "* ]]'

# the unit, as systemd reads it: any remark of systemd-analyze is a failure
# (an unknown value only warns). The binary is looked for at the path the
# unit names, so a copy names it under DESTDIR; man: is resolved through
# MANPATH, so the installed page must be found.
if ! command -v systemd-analyze >/dev/null; then
  bad "systemd-analyze verify: systemd-analyze is missing; install the Debian package systemd (bash tests/harness/deps.sh)"
else
  mkdir -p "$tmp/unit"
  sed "s|^ExecStart=/|ExecStart=$root/|" "$unit" >"$tmp/unit/searchsync.service"
  MANPATH="${man%/man1/*}" systemd-analyze verify "$tmp/unit/searchsync.service" >"$tmp/verify.out" 2>&1
  rc=$?
  check "systemd-analyze verify accepts the unit" '[ "$rc" = 0 ] && [ ! -s "$tmp/verify.out" ]' ||
    sed 's/^/     /' "$tmp/verify.out"
  # a template is verified as one of its instances
  sed "s|^ExecStart=/|ExecStart=$root/|" "$tunit" >"$tmp/unit/searchsync@east.service"
  MANPATH="${man%/man1/*}" systemd-analyze verify "$tmp/unit/searchsync@east.service" >"$tmp/verify2.out" 2>&1
  rc=$?
  check "systemd-analyze verify accepts an instance of the template" '[ "$rc" = 0 ] && [ ! -s "$tmp/verify2.out" ]' ||
    sed 's/^/     /' "$tmp/verify2.out"
  sed "s|^ExecStart=/|ExecStart=$root/|" "$sunit" >"$tmp/unit/searchsync-sources.service"
  cp "$punit" "$tmp/unit/searchsync-sources.path"
  MANPATH="${man%/man1/*}" systemd-analyze verify "$tmp/unit/searchsync-sources.path" >"$tmp/verify3.out" 2>&1
  rc=$?
  check "systemd-analyze verify accepts the path unit and its oneshot" '[ "$rc" = 0 ] && [ ! -s "$tmp/verify3.out" ]' ||
    sed 's/^/     /' "$tmp/verify3.out"
fi

# an administrator's configuration survives a reinstall (an upgrade)
echo "# edited" >>"$ini"
env -u MAKEFLAGS -u MFLAGS make -s -C "$build" install DESTDIR="$root" >"$tmp/install2.log" 2>&1
check "a second install keeps the edited configuration" 'tail -1 "$ini" | grep -qx "# edited"'
env -u MAKEFLAGS -u MFLAGS make -s -C "$build" uninstall DESTDIR="$root" >"$tmp/uninstall.log" 2>&1
check "uninstall leaves only the edited configuration" \
  '[ "$(find "$root" -type f)" = "$ini" ]' || find "$root" -type f | sed 's/^/     left: /'

echo "$failures failures"
[ "$failures" -eq 0 ]
