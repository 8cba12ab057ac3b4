#!/usr/bin/env bash
# Stop the moto_server started by moto-start.sh, by the PID in its scratch directory (and only if
# that PID is still the moto_server on the recorded port), then delete the directory.
# Env: S3LECT_MOTO_DIR (default /tmp/s3lect-moto). Nothing running: exit 0.
set -euo pipefail

dir=$(realpath -m -- "${S3LECT_MOTO_DIR:-/tmp/s3lect-moto}")
log() { printf '[moto] %s\n' "$*" >&2; }

[[ -d $dir ]] || { log "not running (no $dir)"; exit 0; }
[[ -f $dir/pid && -f $dir/port ]] || { log "no pid file in $dir; nothing to stop"; rm -rf -- "$dir"; exit 0; }
pid=$(<"$dir/pid") port=$(<"$dir/port")
ours() {
  [[ $pid =~ ^[0-9]+$ ]] &&
    tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q "moto_server -H 127.0.0.1 -p $port "
}
if ours; then
  log "stopping moto_server (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((n = 0; n < 50; n++)); do ours || break; sleep 0.1; done
  if ours; then kill -KILL "$pid" 2>/dev/null || true; fi
fi
rm -rf -- "$dir"
