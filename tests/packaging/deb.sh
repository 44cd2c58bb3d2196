#!/usr/bin/env bash
# tests/packaging/deb.sh — the Debian package, part of
# `make check-long`: built from a copy of the tree with dpkg-buildpackage
# (the unit tests run inside the build), then installed with apt into a
# fresh minimal Debian 12 root (debootstrap --variant=minbase: nothing but
# what apt pulls in for the package), where the binary runs, the files are
# where the docs say, the configuration is a conffile, the unit is neither
# enabled nor started, and a purge leaves nothing behind.
# Needs root (or sudo) and the network to deb.debian.org. ~2 minutes.
set -euo pipefail
src=${SEARCHSYNC_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
work=$(mktemp -d /tmp/searchsync-deb.XXXXXX)
cleanup() {
  for m in proc dev; do $SUDO umount "$work/root/$m" 2>/dev/null || true; done
  $SUDO rm -rf "$work"
}
trap cleanup EXIT
ok=0 bad=0
check() { # MSG CMD...
  local msg=$1; shift
  if "$@" >/dev/null 2>&1; then echo "ok   $msg"; ok=$((ok + 1)); else echo "FAIL $msg"; bad=$((bad + 1)); fi
}
need=()
for p in dpkg-dev debhelper debootstrap; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
bash "$src/tests/harness/deps.sh" >/dev/null # the build dependencies

# ---- build, from the files git knows (no build outputs of the tree)
version=$(sed -n '1s/^searchsync (\([^)]*\)).*/\1/p' "$src/debian/changelog")
tree="$work/searchsync-$version"
mkdir -p "$tree"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$src" ls-files -z | (cd "$src" && tar --null -cf - -T -) | tar -xf - -C "$tree"
else
  (cd "$src" && tar --exclude='*.o' --exclude='*.a' -cf - .) | tar -xf - -C "$tree"
fi
(cd "$tree" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 || {
  tail -40 "$work/build.log"; echo "FAIL dpkg-buildpackage (log above)"; exit 1; }
deb="$work/searchsync_${version}_$(dpkg --print-architecture).deb"
check "dpkg-buildpackage built $(basename "$deb")" test -s "$deb"
check "the unit tests ran in the build and passed" grep -q '^# FAIL:  0' "$work/build.log"
dpkg-deb -c "$deb" | awk '{print $6}' >"$work/files"
for f in ./usr/bin/searchsync ./etc/searchsync/searchsync.ini ./lib/systemd/system/searchsync.service \
         ./lib/systemd/system/searchsync@.service \
         ./usr/share/man/man1/searchsync.1.gz ./usr/share/bash-completion/completions/searchsync \
         ./usr/share/doc/searchsync/copyright; do
  check "the package holds $f" grep -qx "$f" "$work/files"
done
check "the unit starts /usr/bin/searchsync with /etc/searchsync/searchsync.ini" \
  sh -c "dpkg-deb --fsys-tarfile '$deb' | tar -xOf - ./lib/systemd/system/searchsync.service | grep -qx 'ExecStart=/usr/bin/searchsync run --config /etc/searchsync/searchsync.ini'"

check "an instance NAME of the template unit starts /usr/bin/searchsync with /etc/searchsync/NAME.ini" \
  sh -c "dpkg-deb --fsys-tarfile '$deb' | tar -xOf - './lib/systemd/system/searchsync@.service' | grep -qx 'ExecStart=/usr/bin/searchsync run --config /etc/searchsync/%i.ini'"

# ---- install into a fresh minimal root
root="$work/root"
$SUDO debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 || {
  tail -20 "$work/debootstrap.log"; echo "FAIL debootstrap"; exit 1; }
$SUDO cp /etc/resolv.conf "$root/etc/resolv.conf"
$SUDO cp "$deb" "$root/tmp/"
$SUDO mount -t proc proc "$root/proc"
in_root() { $SUDO chroot "$root" /bin/sh -c "$1"; }
in_root 'printf "#!/bin/sh\nexit 101\n" >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
check "apt installs the package and what it depends on into the fresh root" \
  in_root "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/$(basename "$deb")"
check "dpkg says it is installed" in_root 'dpkg -s searchsync | grep -qx "Status: install ok installed"'
check "dpkg --verify finds every file as packaged" in_root 'dpkg --verify searchsync'
check "searchsync --version runs" in_root "searchsync --version | grep -qx 'searchsync $version'"
check "the sample configuration is a conffile" in_root "dpkg-query -W -f='\${Conffiles}' searchsync | grep -q /etc/searchsync/searchsync.ini"
check "the man page reads" in_root 'test -s /usr/share/man/man1/searchsync.1.gz'
check "the unit is not enabled on install" in_root '! test -e /etc/systemd/system/multi-user.target.wants/searchsync.service'
rc=0; in_root 'searchsync run --config /etc/searchsync/searchsync.ini' >"$work/run.out" 2>&1 || rc=$?
check "run with the untouched sample says what to fill in (exit 1 or 2, a message)" \
  sh -c "[ $rc = 1 -o $rc = 2 ] && grep -q 'searchsync run:' '$work/run.out'"
check "apt purges it cleanly" in_root 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq searchsync'
check "nothing of it is left" in_root '! test -e /usr/bin/searchsync && ! test -e /etc/searchsync && ! test -e /lib/systemd/system/searchsync.service && ! test -e /lib/systemd/system/searchsync@.service'
echo "$ok passed, $bad failed"
[ "$bad" = 0 ]
