#!/bin/sh
# searchsync-sources DIR: the searchsync@NAME instances in line with the
# NAME.ini files a source add wrote into DIR (run as root by
# searchsync-sources.service, when searchsync-sources.path sees DIR change):
#   - NAME.ini with NAME.password beside it (written by `searchsync source
#     add`), and searchsync@NAME not enabled: enabled and started;
#   - ... enabled, and NAME.ini newer than the instance's start (`source
#     edit` rewrote it): restarted, so it reads the new values;
#   - searchsync@NAME enabled with no NAME.ini left (`source remove`):
#     stopped and disabled.
# Files written by hand (no NAME.password beside them) are left to the
# administrator, as is searchsync.ini. The files are handed to the
# `searchsync` user the units run as, mode 0600.
set -u
dir=${1:-/etc/searchsync}
user=searchsync
for ini in "$dir"/*.ini; do
  [ -e "$ini" ] || continue
  name=$(basename "$ini" .ini)
  [ -f "$dir/$name.password" ] || continue
  unit="searchsync@$name.service"
  chown "$user:" "$ini" "$dir/$name.password" 2>/dev/null || true
  chmod 0600 "$ini" "$dir/$name.password"
  if ! systemctl is-enabled --quiet "$unit"; then
    echo "searchsync-sources: starting $unit (new $ini)"
    systemctl enable --now "$unit"
    continue
  fi
  started=$(systemctl show -p ActiveEnterTimestampMonotonic --value "$unit")
  # the file's age against the instance's start, both on the monotonic clock
  up=$(cut -d' ' -f1 /proc/uptime | cut -d. -f1)
  age=$(( $(date +%s) - $(stat -c %Y "$ini") ))
  changed_at_us=$(( (up - age) * 1000000 ))
  if [ "${started:-0}" -lt "$changed_at_us" ]; then
    echo "searchsync-sources: restarting $unit ($ini changed)"
    systemctl restart "$unit"
  fi
done
for unit in $(systemctl list-units --all --plain --no-legend 'searchsync@*.service' | awk '{print $1}'); do
  name=${unit#searchsync@}
  name=${name%.service}
  if [ ! -e "$dir/$name.ini" ] && systemctl is-enabled --quiet "$unit"; then
    echo "searchsync-sources: stopping $unit ($dir/$name.ini removed)"
    systemctl disable --now "$unit"
  fi
done
exit 0
