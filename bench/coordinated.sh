#!/usr/bin/env bash
# Coordinated leadership as a user meets it (docs/coordination.md): zero-configuration
# `s3lect run --peer --peer-watch` nodes on the local radosgw, the shipped defaults, and the
# commands' own start and stop stamps in one shared event file. Four parts, each optional:
#   priorities  four nodes with priorities 1, 1, 2, 3 started in that order: how long the
#               priority-3 node takes to lead after its start; then rounds of SIGTERM to it
#               (where leadership goes, SIGTERM -> next command) and its restart (how long until
#               it leads again). The same rounds with all priorities 0 give today's figures.
#   crash       the same four nodes: SIGKILL to the leader's s3lect (its guardian releases):
#               where leadership goes and SIGKILL -> next command; with and without priorities.
#   rollout     five nodes of priority 1, each restarted in turn with priority 2 (SIGTERM, then
#               start, then wait until it watches): leadership changes over the whole rollout,
#               and whether, once the first upgraded node has settled, an upgraded node always
#               led. With --baseline-priorities, the same with every priority 0 (today).
#   forged      three nodes; a stranger holds watches on the leader's endpoint claiming
#               priority 1000 (no bucket credentials) for --forged-seconds: changes of leader.
#   release     three nodes: `s3lect release` rounds (must move leadership every time), then
#               `s3lect release --to ID` rounds (must move it to ID).
# Every part also checks that no two commands ever ran at once (their stamps), and fails on it.
#
# usage: bench/coordinated.sh [--parts LIST] [--rounds N] [--s3lect PATH] [--base-port N]
#                             [--forged-seconds S] [--lease-ms N]
#   --parts LIST       comma-separated (default priorities,crash,rollout,forged,release)
#   --rounds N         rounds per part (default 5)
#   --s3lect PATH      the binary (default build/release/s3lect, built here)
#   --base-port N      health endpoints on 127.0.0.1:N+1.. (default 18640)
#   --forged-seconds S how long the forged watcher runs (default 60)
#   --lease-ms N       every node's lease (default: none given, the shipped 15 s)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/build.sh
source scripts/lib/local-s3.sh
source scripts/lib/measure.sh

parts=priorities,crash,rollout,forged,release rounds=5 s3lect="" base_port=18640
forged_seconds=60 lease_ms=""
while [ $# -gt 0 ]; do
  case $1 in
    --parts) parts=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --s3lect) s3lect=$2; shift 2 ;;
    --base-port) base_port=$2; shift 2 ;;
    --forged-seconds) forged_seconds=$2; shift 2 ;;
    --lease-ms) lease_ms=$2; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
[ -n "$s3lect" ] || s3lect=$(release_s3lect)
use_local_s3

work=$(mktemp -d)
declare -A pid_of=() port_of=()
key="" events=""
cleanup() {
  for pid in "${pid_of[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
lease_options=()
[ -n "$lease_ms" ] && lease_options=(--lease "${lease_ms}ms")
lease_ms=${lease_ms:-15000}

# Stops every node, keeps the logs.
fail() {
  echo "FAIL: $*" >&2
  echo "logs kept in $work" >&2
  for pid in "${pid_of[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  trap - EXIT
  exit 1
}

# A fresh lock key and event file for one group.
new_group() {
  key="s3://$S3LECT_TEST_BUCKET/bench/coordinated/$(date +%s%N).json"
  events="$work/events.$(date +%s%N)"
  : >"$events"
  pid_of=() port_of=()
}

# start_node ID PRIORITY: one `s3lect run` whose command stamps "<ms> start ID TERM" and
# "<ms> stop ID" into the event file.
start_node() {
  local id=$1 priority=$2 n=$((${#port_of[@]} + 1))
  [ -n "${port_of[$id]:-}" ] && n=${port_of[$id]#*:} && n=$((n - base_port))
  port_of[$id]="127.0.0.1:$((base_port + n))"
  EVENTS=$events ID=$id "$s3lect" run --lock "$key" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" \
    --path-style --id "$id" --peer --peer-watch --peer-listen "${port_of[$id]}" \
    --priority "$priority" "${lease_options[@]}" -- bash -c '
      echo "$(date +%s%3N) start $ID $S3LECT_TERM" >>"$EVENTS"
      trap '\''echo "$(date +%s%3N) stop $ID" >>"$EVENTS"; exit 0'\'' TERM
      while :; do sleep 0.1; done' >>"$work/$id.log" 2>&1 &
  pid_of[$id]=$!
}

stop_node() {  # stop_node ID [SIGNAL]
  kill "-${2:-TERM}" "${pid_of[$1]}" 2>/dev/null || true
  wait "${pid_of[$1]}" 2>/dev/null || true
  unset "pid_of[$1]"
}

stop_group() {
  local id
  for id in "${!pid_of[@]}"; do stop_node "$id"; done
}

# The node whose command runs now (its last stamp is a start), or nothing.
leader_now() {
  awk '{ last[$3] = $2 } END { for (id in last) if (last[id] == "start") print id }' "$events"
}

starts() { grep -c ' start ' "$events" || true; }

# wait_start_after COUNT [SECONDS]: waits until more than COUNT commands have started; prints
# "<ms> <id>" of the next one.
wait_start_after() {
  local count=$1 deadline=$((SECONDS + ${2:-$((lease_ms * 4 / 1000 + 10))}))
  while [ "$(starts)" -le "$count" ]; do
    [ $SECONDS -lt $deadline ] || fail "no new leader after $count starts"
    sleep 0.02
  done
  grep ' start ' "$events" | sed -n "$((count + 1))p" | awk '{ print $1, $3 }'
}

# wait_leader ID [SECONDS]: until ID's command runs.
wait_leader() {
  local deadline=$((SECONDS + ${2:-$((lease_ms * 4 / 1000 + 10))}))
  until [ "$(leader_now)" = "$1" ]; do
    [ $SECONDS -lt $deadline ] || fail "$1 did not lead (leader: $(leader_now))"
    sleep 0.05
  done
}

# Fails if two commands ever ran at once: the stamps, in order, never show two running.
check_no_overlap() {
  sort -n -k1,1 "$events" | awk '
    $2 == "start" { running[$3] = 1; n = 0; for (id in running) n++
                    if (n > 1) { print "overlap at " $1 ": " $3; bad = 1 } }
    $2 == "stop" { delete running[$3] }
    END { exit bad }' || fail "two commands ran at once"
}

# The record's current term.
current_term() {
  "$s3lect" status --lock "$key" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style |
    sed -nE 's/.*"term": *([0-9]+).*/\1/p' | head -1
}

# wait_candidate ID: until the leader's record lists ID among its candidates (verified and
# watching), as docs/operations.md tells an operator to wait before the next restart.
wait_candidate() {
  local deadline=$((SECONDS + lease_ms * 3 / 1000 + 10))
  until "$s3lect" status --lock "$key" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style \
    2>/dev/null | grep -q "\"id\":\"$1\""; do
    [ $SECONDS -lt $deadline ] || fail "$1 never listed as a candidate"
    sleep 0.2
  done
}

summary() {  # label, values (ms)...
  local label=$1
  shift
  printf '%s\n' "$@" | sort -n | awk -v label="$label" '
    { v[NR] = $1 }
    END { if (!NR) exit
          m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          printf "%-44s median %6.0f ms  min %6.0f  max %6.0f  (%d)\n", label, m, v[1], v[NR], NR }'
}

source bench/coordinated_parts.sh

IFS=, read -r -a wanted <<<"$parts"
for part in "${wanted[@]}"; do
  echo "== $part"
  "part_$part"
done
