#!/usr/bin/env bash
# Coordinated leadership as a user meets it (docs/coordination.md): zero-configuration
# `s3lect run --peer --peer-watch` nodes on the local radosgw, the shipped defaults, and the
# commands' own start and stop stamps in one shared event file. Four parts, each optional:
#   priorities  four nodes with priorities 1, 1, 2, 3 started in that order: how long the
#               priority-3 node takes to lead after its start; then rounds of SIGTERM to it
#               (where leadership goes, SIGTERM -> next command) and its restart (how long until
#               it leads again). The same rounds with all priorities 0 give today's figures.
#   crash       the same four nodes, with and without priorities, in two kinds of rounds:
#               SIGKILL to the leader's s3lect alone (its guardian stops the command and
#               releases): where leadership goes and SIGKILL -> next command; then the leader's
#               whole machine lost (s3lect, guardian and command killed at once, nobody
#               releases), right after one of its renewals: where leadership goes and how
#               long after the lease ran out (renewal + lease) the next command starts, which
#               the crash ranks decide.
#   ranks       the same four nodes: the leader's machine and that of the first candidate its
#               record ranks lost at once, right after a renewal: the second-ranked node must
#               win, one rank step after the lease ran out (what the ranks cost at worst but
#               for the steps beyond).
#   rollout     five nodes of priority 1, each restarted in turn with priority 2 (SIGTERM, then
#               start, then wait until it watches): leadership changes over the whole rollout,
#               and whether, once the first upgraded node has settled, an upgraded node always
#               led. With --baseline-priorities, the same with every priority 0 (today).
#   forged      three nodes; a stranger holds watches on the leader's endpoint claiming
#               priority 1000 (no bucket credentials) for --forged-seconds: changes of leader.
#   release     three nodes: `s3lect release` rounds (must move leadership every time), then
#               `s3lect release --to ID` rounds (must move it to ID).
# Every part also checks that no two commands ever ran at once, and fails on it. A command runs
# from its start stamp until its whole process tree is gone, as s3lect_tree_watch (the chaos
# harness's watcher) sees from outside: a SIGKILLed command writes no stamp of its own.
#
# usage: bench/coordinated.sh [--parts LIST] [--rounds N] [--s3lect PATH] [--base-port N]
#                             [--forged-seconds S] [--lease-ms N]
#   --parts LIST       comma-separated (default priorities,crash,ranks,rollout,forged,release)
#   --rounds N         rounds per part (default 5)
#   --s3lect PATH      the binary (default build/release/bin/s3lect, built here)
#   --base-port N      health endpoints on 127.0.0.1:N+1.. (default 18640)
#   --forged-seconds S how long the forged watcher runs (default 60)
#   --lease-ms N       every node's lease (default: none given, the shipped 15 s)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/build.sh
source scripts/lib/local-s3.sh
source scripts/lib/measure.sh

parts=priorities,crash,ranks,rollout,forged,release rounds=5 s3lect="" base_port=18640
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
tree_watch=$(dirname "$s3lect")/../tests/chaos/s3lect_tree_watch
if [ ! -x "$tree_watch" ]; then
  build_preset release s3lect_tree_watch
  tree_watch=$PWD/build/release/tests/chaos/s3lect_tree_watch
fi
use_local_s3

work=$(mktemp -d)
declare -A pid_of=() port_of=() tag_of=()
key="" events="" watch_pid="" watch_port=""
cleanup() {
  for pid in "${pid_of[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  [ -z "$watch_pid" ] || kill -TERM "$watch_pid" 2>/dev/null || true
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
  [ -z "$watch_pid" ] || kill -TERM "$watch_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  trap - EXIT
  exit 1
}

# A fresh lock key and event file for one group, and a tree watcher appending "gone ID <s>"
# to that file when the last process of a command's tree is gone.
new_group() {
  key="s3://$S3LECT_TEST_BUCKET/bench/coordinated/$(date +%s%N).json"
  events="$work/events.$(date +%s%N)"
  : >"$events"
  pid_of=() port_of=()
  "$tree_watch" --log "$events" >"$events.watch" 2>&1 &
  watch_pid=$!
  until grep -q '^ready' "$events.watch"; do
    kill -0 "$watch_pid" 2>/dev/null || fail "s3lect_tree_watch did not start: $(cat "$events.watch")"
    sleep 0.02
  done
  watch_port=$(sed -nE 's/^listen 127\.0\.0\.1:([0-9]+)$/\1/p' "$events.watch")
}

# start_node ID PRIORITY: one `s3lect run` whose command stamps "<ms> start ID TERM" and, on
# SIGTERM, "<ms> stop ID" into the event file. It first hands the tree watcher a socket that
# every process of its tree inherits.
start_node() {
  local id=$1 priority=$2 n=$((${#port_of[@]} + 1))
  [ -n "${port_of[$id]:-}" ] && n=${port_of[$id]#*:} && n=$((n - base_port))
  port_of[$id]="127.0.0.1:$((base_port + n))"
  tag_of[$id]="$work/$id/$(date +%s%N)"
  BENCH_TAG=${tag_of[$id]} EVENTS=$events ID=$id WATCH=$watch_port \
    "$s3lect" run --lock "$key" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style --id "$id" \
    --peer --peer-watch --peer-listen "${port_of[$id]}" \
    --priority "$priority" "${lease_options[@]}" -- bash -c '
      exec 9<>"/dev/tcp/127.0.0.1/$WATCH" && echo "gone $ID" >&9
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

# lose_machine ID: ID's machine is gone at once: every process carrying its tag (s3lect and
# the command's whole tree, which inherit the environment) and its guardian's process group
# (the guardian and its helpers: their environment holds no tag, and they lead a session of
# their own) is stopped, then killed, so none of them releases or stamps anything. Until none
# is left: a process may fork meanwhile.
lose_machine() {
  local -a pids guardians
  mapfile -t guardians < <(pgrep -P "${pid_of[$1]}" -x s3lect-guardian || true)
  for _ in $(seq 1 20); do
    mapfile -t pids < <(grep -lzxF "BENCH_TAG=${tag_of[$1]}" /proc/[0-9]*/environ 2>/dev/null |
      cut -d/ -f3; for g in "${guardians[@]}"; do pgrep -g "$g" || true; done)
    [ "${#pids[@]}" -gt 0 ] || break
    kill -STOP "${pids[@]}" 2>/dev/null || true
    kill -KILL "${pids[@]}" 2>/dev/null || true
  done
  [ "${#pids[@]}" = 0 ] || fail "processes of $1 survive SIGKILL: ${pids[*]}"
  { wait "${pid_of[$1]}"; } 2>/dev/null || true  # bash's "Killed" report included
  unset "pid_of[$1]"
}

# Stops every node, then the tree watcher (it first waits for the trees still open).
stop_group() {
  local id
  for id in "${!pid_of[@]}"; do stop_node "$id"; done
  kill -TERM "$watch_pid" 2>/dev/null || true
  wait "$watch_pid" 2>/dev/null || fail "a command's tree outlived its node: $(cat "$events.watch")"
  watch_pid=""
}

# The event file as "<ms> start|stop|gone ID ...": the watcher's "gone ID <s>" lines converted.
stamps() {
  awk '$1 == "gone" { printf "%.0f gone %s\n", $3 * 1000, $2; next } { print }' "$events"
}

# The node whose command runs now (its last stamp is a start), or nothing.
leader_now() {
  stamps | awk '{ last[$3] = $2 } END { for (id in last) if (last[id] == "start") print id }'
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

# Fails if two commands ever ran at once: from its start until its tree was gone. A command
# whose tree is never seen gone counts as running to the end.
check_no_overlap() {
  stamps | sort -n -k1,1 | awk '
    $2 == "start" { running[$3] = 1; n = 0; for (id in running) n++
                    if (n > 1) { print "overlap at " $1 ": " $3; bad = 1 } }
    $2 == "gone" { delete running[$3] }
    END { exit bad }' || fail "two commands ran at once"
}

# The group's record as `s3lect status` prints it (one JSON line).
record_status() {
  "$s3lect" status --lock "$key" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style
}

# The record's current term.
current_term() {
  record_status |
    sed -nE 's/.*"term": *([0-9]+).*/\1/p' | head -1
}

# Waits for the leader's next renewal (the record's etag changes; seen within one status read,
# tens of ms) and puts the moment it was seen into REPLY: a crash right after it has a known
# phase, so the lease runs out lease_ms later.
wait_renewal() {
  local before etag
  before=$(record_etag)
  local deadline=$((SECONDS + lease_ms / 1000 + 5))
  while :; do
    etag=$(record_etag)
    [ "$etag" = "$before" ] || break
    [ $SECONDS -lt $deadline ] || fail "no renewal seen"
  done
  now_ms
}

# The ids of the current record's candidates, best first, one a line.
record_candidates() {
  record_status |
    sed -nE 's/.*"candidates":\[([^]]*)\].*/\1/p' | grep -o '"id":"[^"]*"' | cut -d'"' -f4
}

record_etag() {
  record_status |
    sed -nE 's/.*"etag": *"([^"]*)".*/\1/p'
}

# wait_candidate ID: until the leader's record lists ID among its candidates (verified and
# watching), as docs/operations.md tells an operator to wait before the next restart.
wait_candidate() {
  local deadline=$((SECONDS + lease_ms * 3 / 1000 + 10))
  until record_status 2>/dev/null | grep -q "\"id\":\"$1\""; do
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
