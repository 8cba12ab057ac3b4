#!/usr/bin/env bash
# The command each chaos node runs under `s3lect run`: it records when its leadership work
# starts and stops in the shared event log, then idles until it is stopped.
#   child.sh EVENTS_LOG NODE [stubborn]
# A stubborn command ignores SIGTERM, so s3lect must SIGKILL it after --kill-grace: that takes
# the longest of all, and is what the lease's margin (lease - renew deadline) must cover.
# Records (times from bash's $EPOCHREALTIME, read without forking):
#   start NODE TERM TIME PID   taken before the command does anything else
#   end NODE TERM TIME PID     taken first thing in the SIGTERM/SIGINT trap: nothing runs after it
# Under `s3lect run --slots N` each record starts with "slotK " (K = $S3LECT_SLOT): the terms are
# the slot's, and chaos.sh checks every slot's records on their own.
# A SIGKILLed command writes no end record; the driver's kill record or s3lect's reaped line
# gives its end instead (docs/chaos.md).
set -u
log=$1
node=$2
term=${S3LECT_TERM:?S3LECT_TERM is not set: run me under s3lect run}
# A signal between `started=1` and the start record leaves an end without a start: the
# checker ignores those, since the command never got to work.
started=0
slot=${S3LECT_SLOT:+slot$S3LECT_SLOT }
on_stop() {
  if ((started)); then echo "${slot}end $node $term $EPOCHREALTIME $$" >>"$log"; fi
  exit 0
}
if [[ ${3:-} == stubborn ]]; then
  trap '' TERM INT  # no end record: s3lect's "command stopped ... killed=true" line gives the end
else
  trap on_stop TERM INT
fi
started=1
echo "${slot}start $node $term $EPOCHREALTIME $$" >>"$log"
# `wait` returns as soon as a trapped signal arrives; a foreground sleep would delay the trap.
while :; do
  sleep 5 &
  wait $!
done
