#!/usr/bin/env bash
# The command each node runs under `s3lect run` in chaos.sh --fencing: every 200 ms it writes
# the shared object with `s3lect put` (term from $S3LECT_TERM) and logs each write's outcome:
#   write NODE TERM START END EXIT
# (times from $EPOCHREALTIME; EXIT 0 written, 10 fenced out, else failed). It keeps writing
# after a refusal: a zombie whose s3lect is frozen does exactly that, and every such write must
# be refused. Stopped by s3lect with SIGTERM (or SIGKILL) like any command.
#   fenced_writer.sh WRITES_LOG NODE
# Environment: FENCE_S3LECT (the s3lect binary), FENCE_OBJECT (s3://BUCKET/KEY), FENCE_ENDPOINT.
set -u
log=$1
node=$2
term=${S3LECT_TERM:?S3LECT_TERM is not set: run me under s3lect run}
trap 'exit 0' TERM INT
sequence=0
while :; do
  sequence=$((sequence + 1))
  start=$EPOCHREALTIME
  "$FENCE_S3LECT" put --endpoint "$FENCE_ENDPOINT" --path-style --request-timeout 1s \
    "$FENCE_OBJECT" <<<"$node term=$term write=$sequence" 2>>"$log.err"
  code=$?
  echo "write $node $term $start $EPOCHREALTIME $code" >>"$log"
  sleep 0.2 &
  wait $!
done
