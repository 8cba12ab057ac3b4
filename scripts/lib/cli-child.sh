#!/usr/bin/env bash
# The command each `s3lect run` candidate runs while it leads (scripts/lib/cli-candidate.sh):
# prints the event lines scripts/lib/election-driver.sh reads, `<unix ms> ID leader term=N`
# first thing, a beat a second, and `lost term=N` first thing on SIGTERM.
#   cli-child.sh ID
# With ED_JOB_FIFO set (the driver's ED_TRACK_JOBS=1), it opens that FIFO for writing on fd 9
# before anything else; its `sleep`s inherit it, so the driver's reader sees the end of file
# only once every process of the job has gone, however it ended (SIGKILL included).
set -u
id=$1
term=${S3LECT_TERM:?S3LECT_TERM is not set: run me under s3lect run}
if [[ -n ${ED_JOB_FIFO:-} ]]; then exec 9>"$ED_JOB_FIFO"; fi
# shellcheck source=scripts/lib/measure.sh
source "${BASH_SOURCE[0]%/*}/measure.sh"  # no fork: the leader line goes out at once
on_stop() {
  now_ms
  echo "$REPLY $id lost term=$term"
  exit 0
}
trap on_stop TERM INT
now_ms
echo "$REPLY $id leader term=$term"
for ((beat = 1; ; beat++)); do
  # `wait` returns as soon as a trapped signal arrives; a foreground sleep would delay the trap.
  sleep 1 &
  wait $!
  now_ms
  echo "$REPLY $id working term=$term beat=$beat"
done
