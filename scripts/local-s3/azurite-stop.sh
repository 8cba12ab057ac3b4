#!/usr/bin/env bash
# Stop the azurite-blob started by azurite-start.sh, by the PID in its scratch directory (and only
# if that PID is still the azurite-blob on the recorded port), then delete the directory.
# Env: S3LECT_AZURITE_DIR (default /tmp/s3lect-azurite). Nothing running: exit 0.
set -euo pipefail

dir=$(realpath -m -- "${S3LECT_AZURITE_DIR:-/tmp/s3lect-azurite}")
log() { printf '[azurite] %s\n' "$*" >&2; }

[[ -d $dir ]] || { log "not running (no $dir)"; exit 0; }
[[ -f $dir/pid && -f $dir/port ]] || { log "no pid file in $dir; nothing to stop"; rm -rf -- "$dir"; exit 0; }
pid=$(<"$dir/pid") port=$(<"$dir/port")
ours() {
  [[ $pid =~ ^[0-9]+$ ]] &&
    tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" |
    grep -qF "azurite/dist/src/blob/main.js --blobHost 127.0.0.1 --blobPort $port "
}
if ours; then
  log "stopping azurite-blob (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((n = 0; n < 50; n++)); do ours || break; sleep 0.1; done
  if ours; then kill -KILL "$pid" 2>/dev/null || true; fi
fi
rm -rf -- "$dir"
