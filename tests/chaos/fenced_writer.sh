#!/usr/bin/env bash
# The command each node runs under `s3lect run` in chaos.sh --fencing: every 200 ms it writes
# the shared object with `s3lect put` (term from $S3LECT_TERM) and logs each write's outcome:
#   write NODE TERM START END EXIT
# (times from $EPOCHREALTIME; EXIT 0 written, 10 fenced out, else failed). It keeps writing
# after a refusal: a zombie whose s3lect is frozen does exactly that, and every such write must
# be refused. The writes come from a daemon the command double-forks (setsid: outside the
# command's process group and session), as a real job's worker might: whatever of the tree
# outlives the leadership writes on, and must be refused too. Stopped by s3lect with SIGTERM (or
# SIGKILL) like any command.
#   fenced_writer.sh WRITES_LOG NODE [...]   (further arguments, chaos.sh's job flags, ignored)
# Environment: FENCE_S3LECT (the s3lect binary), FENCE_OBJECT (s3://BUCKET/KEY or
# az://CONTAINER/BLOB), FENCE_ENDPOINT, FENCE_STORE_FLAGS (--path-style for S3, empty for Azure).
set -u
export FENCE_LOG=$1 FENCE_NODE=$2
export FENCE_TERM=${S3LECT_TERM:?S3LECT_TERM is not set: run me under s3lect run}
write_loop() {
  trap 'exit 0' TERM INT
  local sequence=0 start code
  while :; do
    sequence=$((sequence + 1))
    start=$EPOCHREALTIME
    # shellcheck disable=SC2086 # FENCE_STORE_FLAGS: no flag or one, split on purpose
    "$FENCE_S3LECT" put --endpoint "$FENCE_ENDPOINT" $FENCE_STORE_FLAGS --request-timeout 1s \
      "$FENCE_OBJECT" <<<"$FENCE_NODE term=$FENCE_TERM write=$sequence" 2>>"$FENCE_LOG.err"
    code=$?
    echo "write $FENCE_NODE $FENCE_TERM $start $EPOCHREALTIME $code" >>"$FENCE_LOG"
    sleep 0.2 &
    wait $!
  done
}
export -f write_loop
trap 'exit 0' TERM INT
# The subshell's exit re-parents the daemon at once; it resets the trapped signals.
(setsid bash -c write_loop </dev/null &)
while :; do
  sleep 5 &
  wait $!
done
