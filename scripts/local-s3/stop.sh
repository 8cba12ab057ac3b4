#!/usr/bin/env bash
# Stop the throw-away Ceph RADOS Gateway started by start.sh and delete its
# scratch directory.
#
# Only the daemons named in the scratch directory's pid files are signalled,
# and only if their command line still names this scratch directory's
# ceph.conf (so a recycled PID is never hit). Nothing is ever killed by name.
#
# Usage: stop.sh [--keep-dir]
#   --keep-dir   stop the daemons but keep the directory (start.sh uses this
#                after a failed start so the logs can still be read)
# Env:   S3LECT_S3_DIR   scratch directory (default /tmp/s3lect-local-s3)
set -euo pipefail

readonly marker_name=.s3lect-local-s3

log() { printf '[local-s3] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

keep_dir=false
case ${1:-} in
  '') ;;
  --keep-dir) keep_dir=true ;;
  *) die "usage: $0 [--keep-dir]" ;;
esac

# Absolute, because the daemons' command lines contain the absolute path.
dir=$(realpath -m -- "${S3LECT_S3_DIR:-/tmp/s3lect-local-s3}")
conf=$dir/ceph.conf

# Serialise with start.sh (which sets S3LECT_S3_LOCK_HELD when it calls us
# while already holding the lock). The lock file lives next to the directory
# because the directory itself is deleted.
if [[ -z ${S3LECT_S3_LOCK_HELD:-} ]]; then
  exec 9>"$dir.lock"
  flock -w 180 9 || die "timed out waiting for the lock $dir.lock"
fi

if [[ ! -d $dir ]]; then
  log "not running (no $dir)"
  exit 0
fi
# Never delete a directory start.sh did not create (S3LECT_S3_DIR might point
# somewhere precious).
[[ -e $dir/$marker_name ]] \
  || die "$dir was not created by start.sh (no $marker_name); not touching it"

# True if $1 is a live process started with our ceph.conf. A zombie or a
# recycled PID has a different (or empty) command line and does not match.
is_ours() {
  local pid=$1 cmdline
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  [[ " $cmdline " == *" $conf "* ]]
}

# Wait up to $2 tenths of a second for PID $1 to go away.
wait_gone() {
  local pid=$1 n
  for ((n = 0; n < $2; n++)); do
    is_ours "$pid" || return 0
    sleep 0.1
  done
  ! is_ours "$pid"
}

stop_daemon() {
  local name=$1 pidfile=$dir/pid/$1.pid pid
  [[ -f $pidfile ]] || return 0
  pid=$(<"$pidfile")
  if ! is_ours "$pid"; then
    rm -f -- "$pidfile"
    return 0
  fi
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  # radosgw and the mon exit within a second; the OSD first tells the mon it
  # is going down (hence the order rgw, osd, mon).
  if ! wait_gone "$pid" 100; then
    log "$name (pid $pid) ignored SIGTERM for 10 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 50 || die "$name (pid $pid) survived SIGKILL"
  fi
  rm -f -- "$pidfile"
}

for name in rgw osd mon; do
  stop_daemon "$name"
done

if $keep_dir; then
  log "stopped; logs kept in $dir/log"
else
  rm -rf -- "$dir"
  log "stopped; removed $dir"
fi
