#!/usr/bin/env bash
# Graceful handover through the peer watch, split into its parts. Each run starts three
# `s3lect run --peer --peer-watch` nodes on a fresh key of the local radosgw, lets the followers
# settle (stable mode, watch open), sends SIGTERM to the leader and reads three intervals from
# the nodes' logs and the commands' own stamps:
#   released->acquired   the old leader's released record landed -> the new leader's write landed
#                        (the watch answer, then one PUT; a GET before it without the
#                        one-round-trip handover)
#   stopped->acquired    the old leader's command exited -> the new leader's write landed (adds
#                        the release write)
#   SIGTERM->command     the signal -> the new leader's command printed its first line (adds
#                        stopping the old command and starting the new one)
# Log stamps have millisecond resolution. Prints one line per run, then median, p90, min and max,
# and the median of two sequential PUTs to the same store on one kept-alive connection (curl,
# measured in the same run) with released->acquired as a ratio to it.
# With --baseline, every round runs the baseline binary first, then the binary under test, so
# that both see the same load: before/after in the same run.
#
# usage: bench/peer_handover.sh [--runs N] [--settle SECONDS] [--s3lect PATH] [--baseline PATH]
#                               [--base-port N] [--zero-config] [--azure]
#   --runs N          rounds (default 10)
#   --settle S        seconds between the election and the SIGTERM (default 9: two reads at
#                     F = 5 s make the followers stable, then a plain check and a watch)
#   --s3lect PATH     the binary (default build/release/bin/s3lect, built here)
#   --baseline PATH   a second binary to compare with (e.g. built from an earlier commit)
#   --base-port N     health endpoints on 127.0.0.1:N+1..N+3 (default 18540)
#   --zero-config     no certificate options: zero-configuration TLS (default: a throw-away CA)
#   --azure           the store is Azurite (az://, from S3LECT_AZURE_*: source the env file of
#                     scripts/local-s3/azurite-start.sh), its baseline two Shared Key PUTs
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/build.sh
source scripts/lib/certs.sh
source scripts/lib/local-s3.sh
source scripts/lib/measure.sh

runs=10 settle=9 s3lect="" baseline="" base_port=18540 zero_config=0 azure=0
while [ $# -gt 0 ]; do
  case $1 in
    --baseline) baseline=$2; shift 2 ;;
    --zero-config) zero_config=1; shift ;;
    --azure) azure=1; shift ;;
    --runs) runs=$2; shift 2 ;;
    --settle) settle=$2; shift 2 ;;
    --s3lect) s3lect=$2; shift 2 ;;
    --base-port) base_port=$2; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
[ -n "$s3lect" ] || s3lect=$(release_s3lect)
if [ "$azure" = 1 ]; then
  : "${S3LECT_AZURE_ENDPOINT_HTTP:?--azure: source \$(bash scripts/local-s3/azurite-start.sh)}"
  export AZURE_STORAGE_ACCOUNT=$S3LECT_AZURE_ACCOUNT AZURE_STORAGE_KEY=$S3LECT_AZURE_KEY
  unset AZURE_STORAGE_CONNECTION_STRING
  lock_base="az://$S3LECT_AZURE_CONTAINER" store_options=(--endpoint "$S3LECT_AZURE_ENDPOINT_HTTP")
else
  use_local_s3
  lock_base="s3://$S3LECT_TEST_BUCKET"
  store_options=(--endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style)
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# A throw-away CA and one certificate for 127.0.0.1 that every node uses.
make_test_certs "$work" node
tls_options=(--peer-cert "$work/node.pem" --peer-key "$work/node.key" --peer-ca "$work/ca.pem")
[ "$zero_config" = 1 ] && tls_options=()

# One handover with binary $1; appends "released stopped sigterm" to the array named $2.
one_round() {
  local binary=$1 into=$2 key leader n signalled started acquired released stopped a line
  key="$lock_base/bench/peer-handover/$(date +%s%N).json"
  pids=()
  for n in 1 2 3; do
    "$binary" run --lock "$key" "${store_options[@]}" \
      --id "node-$n" --peer --peer-listen "127.0.0.1:$((base_port + n))" "${tls_options[@]}" \
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
  a=$(log_time_ms "$acquired")
  line="$(( a - $(log_time_ms "$released") )) $(( a - $(log_time_ms "$stopped") )) $(( started - signalled ))"
  eval "$into+=(\"\$line\")"
  read -r r s t <<<"$line"
  printf 'run %2d %-8s released->acquired %4d ms  stopped->acquired %4d ms  SIGTERM->command %4d ms\n' \
    "$run" "$3" "$r" "$s" "$t"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}

# Two sequential Put Blobs on one kept-alive connection (Shared Key, by azurite-request.py's
# signer): three are sent, the first opens it.
two_azure_puts_ms() {
  python3 - "$S3LECT_AZURE_ENDPOINT_HTTP/$S3LECT_AZURE_CONTAINER/bench/peer-handover/two-puts.json" <<'PY'
import http.client, importlib.util, sys, time, urllib.parse
spec = importlib.util.spec_from_file_location("signer", "scripts/local-s3/azurite-request.py")
signer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(signer)
url = sys.argv[1]
parts = urllib.parse.urlsplit(url)
conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
times = []
for _ in range(3):
    start = time.perf_counter()
    signer.request("PUT", url, [("x-ms-blob-type", "BlockBlob")], '{"bench":true}', conn=conn)
    times.append(time.perf_counter() - start)
print("%.1f" % ((times[1] + times[2]) * 1000))
PY
}

# Two sequential PUTs on one kept-alive connection: curl sends three, the first opens it.
two_puts_ms() {
  if [ "$azure" = 1 ]; then
    two_azure_puts_ms
    return
  fi
  local url="$S3LECT_TEST_ENDPOINT_HTTP/$S3LECT_TEST_BUCKET/bench/peer-handover/two-puts.json"
  curl -s -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
    -X PUT --data '{"bench":true}' -w '%{time_total}\n' "$url" "$url" "$url" |
    tail -2 | awk '{ s += $1 } END { printf "%.1f\n", s * 1000 }'
}

results=() baseline_results=() puts=()
for run in $(seq 1 "$runs"); do
  [ -n "$baseline" ] && one_round "$baseline" baseline_results baseline
  one_round "$s3lect" results tested
  puts+=("$(two_puts_ms)")
done

summary() {  # label, column, values...
  local label=$1 column=$2
  shift 2
  printf '%s\n' "$@" | awk -v c="$column" '{print $c}' | sort -n | awk -v label="$label" '
    { v[NR] = $1 }
    END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          p90 = v[int(NR * 0.9 + 0.999)]
          printf "%-30s median %6.1f ms  p90 %6.1f ms  min %6.1f ms  max %6.1f ms  (%d runs)\n",
                 label, m, p90, v[1], v[NR], NR }'
}

echo
for set in baseline tested; do
  if [ "$set" = baseline ]; then
    [ -n "$baseline" ] || continue
    values=("${baseline_results[@]}")
  else
    values=("${results[@]}")
  fi
  summary "$set released->acquired" 1 "${values[@]}"
  summary "$set stopped->acquired" 2 "${values[@]}"
  summary "$set SIGTERM->command" 3 "${values[@]}"
  handover=$(printf '%s\n' "${values[@]}" | awk '{print $1}' | median)
  two=$(printf '%s\n' "${puts[@]}" | median)
  printf '%-30s %.2f x two sequential PUTs (median %.1f ms)\n' "$set released->acquired" \
    "$(awk -v h="$handover" -v p="$two" 'BEGIN { print h / p }')" "$two"
done
