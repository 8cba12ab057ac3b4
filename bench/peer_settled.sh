#!/usr/bin/env bash
# Issue 16's "done when" for zero-configuration peer mode: three `s3lect run --peer --peer-watch`
# nodes with no certificate options (each node makes its own key and publishes the pin in the
# lock record) on a fresh key of the local radosgw, listening on 127.0.0.1 so that the traffic
# stays on loopback (`--peer` alone would advertise a non-loopback interface address).
#   1. Once the group has settled, counts each node's S3 requests over --window seconds from
#      s3lect_s3_requests_total in its /metrics: a follower may make at most 1, the leader no GET.
#   2. Then --handovers graceful handovers: SIGTERM to the leader, which is restarted as a
#      follower once a new leader runs its command, and the group settles again. Reports the
#      time from the SIGTERM to the new leader's "command started" log line (median, p90,
#      min, max); the bar is a median of at most 100 ms.
#   3. Checks from the commands' own lines (scripts/lib/cli-child.sh) that no two terms ever ran
#      their commands at once.
# Exits 1 when a bar is missed.
#
# usage: bench/peer_settled.sh [--s3lect PATH] [--window SECONDS] [--handovers N]
#                              [--settle SECONDS] [--base-port N]
#   --s3lect PATH   the binary (default build/release/bin/s3lect, built here)
#   --window S      the settled window (default 20)
#   --handovers N   graceful handovers (default 7)
#   --settle S      seconds the group gets to settle before the window and each handover, at
#                   the least (default 12); before each handover the script also waits (up to
#                   60 s) until both followers have logged "stable mode" since the last change
#                   of leader: only then do they watch the leader, and a handover measured
#                   earlier would time a follower's next S3 read at F = 5 s instead
#   --base-port N   health endpoints on 127.0.0.1:N+1..N+3, metrics on N+11..N+13
#                   (default 22000)
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A option=([s3lect]="" [window]=20 [handovers]=7 [settle]=12 [base-port]=22000)
source scripts/lib/build.sh
source scripts/lib/local-s3.sh
source scripts/lib/measure.sh
source scripts/lib/options.sh
parse_options option "$@"
s3lect=${option[s3lect]} window=${option[window]} handovers=${option[handovers]}
settle=${option[settle]} base_port=${option[base-port]}
[ -n "$s3lect" ] || s3lect=$(release_s3lect)
use_local_s3

# The nodes are stopped however the script ends; their logs are kept when it fails.
work=$(mktemp -d)
declare -A pids=()
trap 'status=$?; kill -TERM "${pids[@]}" 2>/dev/null; wait 2>/dev/null
  if [ "$status" = 0 ]; then rm -rf "$work"; else echo "logs: $work" >&2; fi' EXIT

key="s3://$S3LECT_TEST_BUCKET/bench/peer-settled/$(date +%s%N).json"
start_node() {  # n: appends to node-n.log, so that a restarted node keeps one history
  local n=$1
  "$s3lect" run --lock "$key" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style \
    --id "node-$n" --peer --peer-listen "127.0.0.1:$((base_port + n))" --peer-watch \
    --metrics-listen "127.0.0.1:$((base_port + 10 + n))" \
    -- bash scripts/lib/cli-child.sh "node-$n" >>"$work/node-$n.log" 2>&1 &
  pids[$n]=$!
}

# The node whose command has started the highest term, and that term.
current_leader() {
  cat "$work"/node-*.log | awk '$3 == "leader" { sub("term=", "", $4); if ($4 + 0 > t) { t = $4 + 0; id = $2 } }
    END { if (t) print substr(id, 6), t }'
}
# s3lect's own line for the start of term $1's command.
started_line() { grep -h "msg=\"command started\" pid=[0-9]* term=$1 " "$work"/node-*.log 2>/dev/null; }
wait_for_term() {  # term: waits (up to 20 s) until a command of that term has started
  local _
  for _ in $(seq 1 2000); do
    started_line "$1" >/dev/null && return 0
    sleep 0.01
  done
  echo "no command of term $1 started" >&2
  exit 1
}

# How many times node $1 has entered stable mode (watching the leader instead of reading S3).
stable_count() { grep -c 'msg="stable mode"' "$work/node-$1.log" || true; }
# wait_stable LEADER N1 C1 N2 C2: waits (up to 60 s) until follower N1 has entered stable mode
# more than C1 times and N2 more than C2 times.
wait_stable() {
  local _
  for _ in $(seq 1 600); do
    (($(stable_count "$2") > $3 && $(stable_count "$4") > $5)) && return 0
    sleep 0.1
  done
  echo "the followers of node-$1 did not become stable within 60 s" >&2
  exit 1
}

# A node's S3 requests so far: "gets puts".
s3_requests() {
  curl -sf "http://127.0.0.1:$((base_port + 10 + $1))/metrics" | awk '
    /^s3lect_s3_requests_total/ { n = $NF + 0
      if ($0 ~ /operation="get"/) g += n; else p += n }
    END { print g + 0, p + 0 }'
}

for n in 1 2 3; do start_node "$n"; done
wait_for_term 1
sleep "$settle"
read -r first_leader _ <<<"$(current_leader)"
first_followers=()
for n in 1 2 3; do [ "$n" = "$first_leader" ] || first_followers+=("$n" 0); done
wait_stable "$first_leader" "${first_followers[@]}"

status=0
read -r leader _ <<<"$(current_leader)"
declare -A before=()
for n in 1 2 3; do before[$n]=$(s3_requests "$n"); done
sleep "$window"
echo "settled window of ${window} s (node-$leader leads):"
for n in 1 2 3; do
  read -r g0 p0 <<<"${before[$n]}"
  read -r g1 p1 <<<"$(s3_requests "$n")"
  gets=$((g1 - g0)) puts=$((p1 - p0)) verdict=ok
  if [ "$n" = "$leader" ]; then
    role=leader
    [ "$gets" -eq 0 ] || { verdict="FAILED: the leader made GETs"; status=1; }
  else
    role=follower
    [ $((gets + puts)) -le 1 ] || { verdict="FAILED: more than 1 request"; status=1; }
  fi
  printf '  node-%s %-8s %3d GET %3d PUT  %s\n' "$n" "$role" "$gets" "$puts" "$verdict"
done

times=()
for round in $(seq 1 "$handovers"); do
  read -r leader term <<<"$(current_leader)"
  signalled=$(date +%s%3N)
  kill -TERM "${pids[$leader]}"
  wait_for_term $((term + 1))
  started=$(started_line $((term + 1)) | head -1)
  elapsed=$(($(log_time_ms "$started") - signalled))
  times+=("$elapsed")
  next=$(grep -l "msg=\"command started\" pid=[0-9]* term=$((term + 1)) " "$work"/node-*.log | head -1)
  next=${next##*node-} next=${next%.log}
  printf 'handover %d: node-%s (term %d) -> node-%s (term %d): SIGTERM -> command started %d ms\n' \
    "$round" "$leader" "$term" "$next" $((term + 1)) "$elapsed"
  declare -A stable_before=()
  for n in 1 2 3; do stable_before[$n]=$(stable_count "$n"); done
  wait "${pids[$leader]}" 2>/dev/null || true
  start_node "$leader"
  sleep "$settle"
  followers=()
  for n in 1 2 3; do [ "$n" = "$next" ] || followers+=("$n" "${stable_before[$n]}"); done
  wait_stable "$next" "${followers[@]}"
done

printf '%s\n' "${times[@]}" | sort -n | awk '
  { v[NR] = $1 }
  END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "SIGTERM -> command started: median %.1f ms  p90 %d ms  min %d ms  max %d ms (%d handovers)\n",
               m, v[int(NR * 0.9 + 0.999)], v[1], v[NR], NR
        exit (m <= 100) ? 0 : 1 }' || { echo "FAILED: the median is above 100 ms"; status=1; }

# Never two terms at once: sorted by time, every term's command stops before the next starts
# (at one millisecond a stop sorts first: a release write lies between a stop and a start).
overlaps=$(cat "$work"/node-*.log | awk '$3 == "leader" || $3 == "lost"' | sort -k1,1n -k3,3r | awk '
  $3 == "leader" { if (running != "") { print "term " $4 " started while " running " ran"; bad++ }
                   running = $4 }
  $3 == "lost" { if (running == $4) running = "" }
  END { print bad + 0 }')
if [ "$(tail -1 <<<"$overlaps")" = 0 ]; then
  echo "never two terms at once: ok"
else
  echo "FAILED: two terms at once:"
  head -n -1 <<<"$overlaps"
  status=1
fi
exit "$status"
