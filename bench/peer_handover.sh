#!/usr/bin/env bash
# Graceful handover through the peer watch, split into its parts. Each run starts three
# `s3lect run --peer --peer-watch` nodes on a fresh key of the local radosgw, lets the followers
# settle (stable mode, watch open), sends SIGTERM to the leader and reads three intervals from
# the nodes' logs and the commands' own stamps:
#   released->acquired   the old leader's released record landed -> the new leader's write landed
#                        (the watch answer, one GET, one PUT)
#   stopped->acquired    the old leader's command exited -> the new leader's write landed (adds
#                        the release write)
#   SIGTERM->command     the signal -> the new leader's command printed its first line (adds
#                        stopping the old command and starting the new one)
# Log stamps have millisecond resolution. Prints one line per run, then median, min and max.
#
# usage: bench/peer_handover.sh [--runs N] [--settle SECONDS] [--s3lect PATH] [--base-port N]
#   --runs N        rounds (default 10)
#   --settle S      seconds between the election and the SIGTERM (default 9: two reads at F = 5 s
#                   make the followers stable, then a plain check and a watch)
#   --s3lect PATH   the binary (default build/release/s3lect, built here)
#   --base-port N   health endpoints on 127.0.0.1:N+1..N+3 (default 18540)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=10 settle=9 s3lect="" base_port=18540
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --settle) settle=$2; shift 2 ;;
    --s3lect) s3lect=$2; shift 2 ;;
    --base-port) base_port=$2; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
if [ -z "$s3lect" ]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target s3lect_cli >/dev/null
  s3lect=build/release/s3lect
fi
bash scripts/local-s3/start.sh >/dev/null
# shellcheck disable=SC1091
source "${S3LECT_S3_DIR:-/tmp/s3lect-local-s3}/env"
export AWS_ACCESS_KEY_ID=$S3LECT_TEST_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$S3LECT_TEST_SECRET_KEY

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A throw-away CA and one certificate for 127.0.0.1 that every node uses.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/ca-key.pem" \
  -out "$work/ca.pem" -days 2 -subj "/CN=s3lect bench CA" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/node-key.pem" \
  -out "$work/node.csr" -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$work/ext.cnf"
openssl x509 -req -in "$work/node.csr" -CA "$work/ca.pem" -CAkey "$work/ca-key.pem" \
  -CAcreateserial -out "$work/node.pem" -days 2 -extfile "$work/ext.cnf" 2>/dev/null

# Milliseconds since the epoch of a log line's time= field.
stamp_ms() { date -d "$(sed -E 's/^time=([^ ]+) .*/\1/' <<<"$1")" +%s%3N; }

results=()
for run in $(seq 1 "$runs"); do
  key="s3://$S3LECT_TEST_BUCKET/bench/peer-handover/$(date +%s%N).json"
  pids=()
  for n in 1 2 3; do
    "$s3lect" run --lock "$key" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style \
      --id "node-$n" --peer --peer-listen "127.0.0.1:$((base_port + n))" \
      --peer-cert "$work/node.pem" --peer-key "$work/node-key.pem" --peer-ca "$work/ca.pem" \
      --peer-watch -- bash -c 'echo "$(date +%s%3N) command started term=$S3LECT_TERM"
        trap "exit 0" TERM; while :; do sleep 0.2; done' >"$work/node-$n.log" 2>&1 &
    pids+=($!)
  done
  leader=""
  for _ in $(seq 1 200); do
    leader=$(grep -l "command started term=1" "$work"/node-*.log 2>/dev/null | head -1 || true)
    [ -n "$leader" ] && break
    sleep 0.05
  done
  [ -n "$leader" ] || { echo "run $run: no leader" >&2; exit 1; }
  sleep "$settle"
  n=${leader##*node-}; n=${n%.log}
  signalled=$(date +%s%3N)
  kill -TERM "${pids[$((n - 1))]}"
  for _ in $(seq 1 500); do
    grep -q "command started term=2" "$work"/node-*.log && break
    sleep 0.01
  done
  started=$(grep -h "command started term=2" "$work"/node-*.log | head -1 | cut -d' ' -f1)
  acquired=$(grep -h 'msg="lock acquired" term=2' "$work"/node-*.log | head -1)
  released=$(grep -h 'msg="released"' "$leader" | head -1)
  stopped=$(grep -h 'msg="command stopped"' "$leader" | head -1)
  [ -n "$started" ] && [ -n "$acquired" ] && [ -n "$released" ] && [ -n "$stopped" ] ||
    { echo "run $run: handover not seen in the logs ($work)" >&2; trap - EXIT; exit 1; }
  a=$(stamp_ms "$acquired")
  line="$(( a - $(stamp_ms "$released") )) $(( a - $(stamp_ms "$stopped") )) $(( started - signalled ))"
  results+=("$line")
  read -r r s t <<<"$line"
  printf 'run %2d  released->acquired %4d ms  stopped->acquired %4d ms  SIGTERM->command %4d ms\n' \
    "$run" "$r" "$s" "$t"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
done

summary() {  # column number, label
  printf '%s\n' "${results[@]}" | awk -v c="$1" '{print $c}' | sort -n | awk -v label="$2" '
    { v[NR] = $1 }
    END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          printf "%-20s median %6.1f ms  min %4d ms  max %4d ms  (%d runs)\n", label, m, v[1], v[NR], NR }'
}
echo
summary 1 "released->acquired"
summary 2 "stopped->acquired"
summary 3 "SIGTERM->command"
