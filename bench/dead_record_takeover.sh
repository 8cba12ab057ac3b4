#!/usr/bin/env bash
# How soon a fresh `s3lect run` takes over a record whose holder died long ago. Each run puts a
# holder in charge of a fresh key of the local radosgw, SIGKILLs it and its command (a crash: the
# record stays, unreleased), waits AGE seconds, then starts a fresh `s3lect run` and times it from
# just before its start to the first line its command prints. The record is at least AGE old by
# then (the holder renewed it at most --frequent before it died). Prints one line per run with
# the fresh node's own view (log stamps, millisecond resolution): election started -> acquiring
# (what it waited for, and why it took over), then median, min and max of the total.
#
# usage: bench/dead_record_takeover.sh --bin DIR [--runs N] [--age SECONDS] [-- RUN_OPTIONS...]
#   --bin DIR      where s3lect is (DIR/s3lect), e.g. build/release
#   --runs N       rounds (default 5)
#   --age S        seconds between the holder's death and the fresh start (default 20: the
#                  default lease, 15 s, plus 5)
#   RUN_OPTIONS    more `s3lect run` options for both nodes, e.g. the chaos test's timings:
#                  -- --lease 2s --renew-deadline 1400ms --frequent 300ms --infrequent 600ms
#                     --request-timeout 250ms --retry-delays 50ms,100ms --kill-grace 200ms
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/local-s3.sh
source scripts/lib/measure.sh

bin="" runs=5 age=20
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --age) age=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
run_options=("$@")
s3lect=$bin/bin/s3lect  # the build tree given by --bin
[ -x "$s3lect" ] || { echo "no s3lect in '$bin' (--bin DIR)" >&2; exit 2; }
use_local_s3
unset AWS_SESSION_TOKEN AWS_PROFILE

work=$(mktemp -d)
pids=()  # every s3lect started here; each leads its own process group (setsid)
cleanup() {
  local pid kid kids
  for pid in "${pids[@]}"; do
    kids=""
    read -r kids <"/proc/$pid/task/$pid/children" 2>/dev/null || true
    for kid in $kids; do kill -KILL -- "-$kid" 2>/dev/null || true; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# node ID KEY STAMP_FILE LOG: starts `s3lect run` whose command writes its start time to
# STAMP_FILE and then idles; its pid in $node_pid
node() {
  # shellcheck disable=SC2016  # the command expands its own variables
  setsid "$s3lect" run --lock "$2" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style \
    --region "$S3LECT_TEST_REGION" --id "$1" "${run_options[@]}" \
    -- bash -c 'echo "$EPOCHREALTIME" >"$1"; exec sleep 600' command "$3" >"$4" 2>&1 &
  node_pid=$!
  pids+=("$node_pid")
}

# wait_for FILE SECONDS: waits for FILE to have a line
wait_for() {
  local tries
  for ((tries = 0; tries < $2 * 100; tries++)); do
    [ -s "$1" ] && return 0
    sleep 0.01
  done
  return 1
}


echo "s3lect: $s3lect; record age at the fresh start: >= $age s; options: ${run_options[*]:-(defaults)}"
results=()
for run in $(seq 1 "$runs"); do
  key="s3://$S3LECT_TEST_BUCKET/bench/dead-record/$(date +%s%N).json"
  node holder "$key" "$work/holder.stamp" "$work/holder.log"
  holder=$node_pid
  wait_for "$work/holder.stamp" 30 || { echo "run $run: the holder never led ($work)" >&2; exit 1; }
  # A crash: s3lect and its command at once, so nothing releases the record. The guardian (its
  # child, leading a process group of its own) first, so that it cannot act on s3lect's death.
  kids=""
  read -r kids <"/proc/$holder/task/$holder/children" || true
  for kid in $kids; do kill -KILL -- "-$kid" 2>/dev/null || true; done
  kill -KILL -- "-$holder"
  wait "$holder" 2>/dev/null || true
  sleep "$age"

  started=$EPOCHREALTIME
  node fresh "$key" "$work/fresh.stamp" "$work/fresh.log"
  fresh=$node_pid
  wait_for "$work/fresh.stamp" 120 || { echo "run $run: no takeover within 120 s ($work)" >&2; exit 1; }
  total=$(awk -v a="$(cat "$work/fresh.stamp")" -v b="$started" 'BEGIN { printf "%d", (a - b) * 1000 }')
  election=$(grep -m1 'msg="election started"' "$work/fresh.log")
  acquiring=$(grep -m1 'msg="acquiring"' "$work/fresh.log")
  reason=$(sed -n 's/.* reason=\([^ ]*\).*/\1/p' <<<"$acquiring")
  waited=$(($(log_time_ms "$acquiring") - $(log_time_ms "$election")))
  results+=("$total")
  printf 'run %2d  start->command %6d ms  election started->acquiring %6d ms  (reason=%s)\n' \
    "$run" "$total" "$waited" "$reason"
  kill -TERM "$fresh"
  wait "$fresh" 2>/dev/null || true
  pids=()
  rm -f "$work"/*.stamp
done

printf '%s\n' "${results[@]}" | sort -n | awk '
  { v[NR] = $1 }
  END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "\nstart->command  median %.1f ms  min %d ms  max %d ms  (%d runs)\n", m, v[1], v[NR], NR }'
