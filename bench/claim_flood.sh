#!/usr/bin/env bash
# Issue 35's figure: what a flood of forged candidate claims costs a registered candidate's
# preemption. Three zero-configuration `s3lect run --peer --peer-watch` nodes on 127.0.0.1, lease
# --lease (default 4 s; every other timing derived from it), priorities 0, 0 and 5: node-1 leads,
# node-2 follows, then node-3 (priority 5) starts, and the time from its start to its command's
# start (it must be verified, settle for the lease and be handed leadership) is measured, --runs
# times without and --runs times with s3lect_claim_forger sending the leader (the record's
# leaderAddr, trusted by its pin) a fresh priority-1000000 claim every 900 ms from 127.0.0.1.
# Prints every run, the medians and the ratio flood / no flood of the medians. A run in which
# node-3 never leads within --limit seconds counts as the limit (and is marked "never").
#
# usage: bench/claim_flood.sh [--s3lect PATH] [--forger PATH] [--runs N] [--lease DUR]
#                             [--limit SECONDS] [--base-port N]
#   --s3lect PATH   the binary (default build/release/bin/s3lect, built here)
#   --forger PATH   s3lect_claim_forger (default: tests/chaos/ of the build s3lect is in)
#   --runs N        runs per mode (default 3)
#   --lease DUR     the nodes' --lease (default 4s)
#   --limit S       how long node-3 gets to lead (default 60)
#   --base-port N   health endpoints on 127.0.0.1:N+1..N+3 (default 22100)
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A option=([s3lect]="" [forger]="" [runs]=3 [lease]=4s [limit]=60 [base-port]=22100)
source scripts/lib/build.sh
source scripts/lib/local-s3.sh
source scripts/lib/measure.sh
source scripts/lib/options.sh
parse_options option "$@"
s3lect=${option[s3lect]} forger=${option[forger]} runs=${option[runs]} lease=${option[lease]}
limit=${option[limit]} base_port=${option[base-port]}
[ -n "$s3lect" ] || s3lect=$(release_s3lect)
[ -n "$forger" ] || forger=$(dirname "$s3lect")/../tests/chaos/s3lect_claim_forger
[ -x "$forger" ] || { echo "no claim forger at $forger (build s3lect_claim_forger)" >&2; exit 2; }
use_local_s3

work=$(mktemp -d)
pids=()
status=0
trap 'status=$?; kill -TERM "${pids[@]}" 2>/dev/null; wait 2>/dev/null
  if [ "$status" = 0 ]; then rm -rf "$work"; else echo "logs: $work" >&2; fi' EXIT

start_node() {  # N PRIORITY RUN
  "$s3lect" run --lock "$key" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style \
    --id "node-$1" --priority "$2" --lease "$lease" --peer \
    --peer-listen "127.0.0.1:$((base_port + $1))" --peer-watch \
    -- bash scripts/lib/cli-child.sh "node-$1" >>"$work/$3-node-$1.log" 2>&1 &
  pids+=($!)
}
# wait_leading N RUN SECONDS: true once node N's command has started (its `leader` line)
wait_leading() {
  local _
  for _ in $(seq 1 $(($3 * 100))); do
    grep -q " node-$1 leader term=" "$work/$2-node-$1.log" 2>/dev/null && return 0
    sleep 0.01
  done
  return 1
}

# one_run MODE RUN: the ms from node-3's start to its command's start in $T ("never" beyond
# the limit). Not in a subshell, so that the EXIT trap knows every process it started.
one_run() {
  local mode=$1 run=$2 started line
  key="s3://$S3LECT_TEST_BUCKET/bench/claim-flood/$(date +%s%N).json"
  pids=()
  start_node 1 0 "$run"
  wait_leading 1 "$run" 30 || { echo "node-1 never led" >&2; exit 1; }
  start_node 2 0 "$run"
  if [ "$mode" = flood ]; then
    "$forger" --lock "$key" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style \
      --interval 900ms --priority 1000000 --id "flood-%n" >"$work/$run-forger.out" 2>&1 &
    pids+=($!)
    sleep 2  # the flood is under way before the candidate arrives
  fi
  now_ms
  started=$REPLY
  start_node 3 5 "$run"
  if wait_leading 3 "$run" "$limit"; then
    line=$(grep -m1 " node-3 leader term=" "$work/$run-node-3.log")
    T=$((${line%% *} - started))
  else
    T=never
  fi
  kill -TERM "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
}

declare -A medians=()
for mode in no-flood flood; do
  times=()
  for run in $(seq 1 "$runs"); do
    one_run "$mode" "$mode-$run"
    t=$T
    printf '%-8s run %d: node-3 (priority 5) led %s after its start\n' "$mode" "$run" \
      "$([ "$t" = never ] && echo "never (> $limit s)" || echo "$t ms")"
    # What the flood did: a flood no node answered would prove nothing.
    if [ "$mode" = flood ]; then
      echo "  forger: $(grep '^result ' "$work/$mode-$run-forger.out" || echo 'no result')"
    fi
    [ "$t" = never ] && t=$((limit * 1000))
    times+=("$t")
  done
  medians[$mode]=$(printf '%s\n' "${times[@]}" | median)
  echo "$mode: median ${medians[$mode]} ms over $runs runs"
done
awk -v f="${medians[flood]}" -v n="${medians[no-flood]}" -v l="$lease" \
  'BEGIN { printf "flood / no flood: %.2f (lease %s, %s)\n", f / n, l, "priorities 0/0/5" }'
echo "s3lect: $s3lect"
