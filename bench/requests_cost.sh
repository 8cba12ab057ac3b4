#!/usr/bin/env bash
# S3 requests per hour per role and their monthly cost, from a real run: three `s3lect run`
# processes per mode against the local radosgw, default timings (lease 15 s, renewal every 5 s,
# infrequent 30 s), every mode at once on its own lock key (side by side in one run). Counts
# come from each node's Prometheus counters (--metrics-listen 127.0.0.1:0): read after the
# group has settled (followers stable), and again --minutes later. Also reports each process's
# resident memory (VmRSS, VmHWM from /proc) at the end.
#
# usage: bench/requests_cost.sh [--minutes M] [--settle S] [--modes "s3 peer peer-watch"]
#                               [--s3lect PATH] [--base-port N] [--azure]
#   --minutes M   measuring window (default 3)
#   --settle S    seconds from start to the first reading (default 60: elected, followers stable)
#   --modes LIST  any of s3 (S3 mode), peer (--peer, a check every --infrequent) and
#                 peer-watch (--peer --peer-watch); default all three
#   --s3lect P    the s3lect binary (default build/release/bin/s3lect, built here)
#   --base-port N peer health endpoints on 127.0.0.1:N+1.. (default 18500)
#   --azure       on Azurite (az://; source the env file of scripts/local-s3/azurite-start.sh):
#                 the same counts, to set beside the radosgw's (the prices stay S3's unless
#                 overridden)
# Prices (S3 Standard, us-east-1): PUT/COPY/POST/LIST $0.005 per 1,000, GET $0.0004 per 1,000;
# a month is 730 hours. Override with PRICE_PUT_PER_1000 and PRICE_GET_PER_1000.
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  echo "usage: $0 [--minutes M] [--settle S] [--modes LIST] [--s3lect PATH] [--base-port N]" >&2
  exit 2
}
minutes=3 settle=60 modes="s3 peer peer-watch" s3lect_bin='' base_port=18500 azure=0
while (($#)); do
  case $1 in
    --minutes) (($# >= 2)) || usage; minutes=$2; shift 2 ;;
    --settle) (($# >= 2)) || usage; settle=$2; shift 2 ;;
    --modes) (($# >= 2)) || usage; modes=$2; shift 2 ;;
    --s3lect) (($# >= 2)) || usage; s3lect_bin=$2; shift 2 ;;
    --base-port) (($# >= 2)) || usage; base_port=$2; shift 2 ;;
    --azure) azure=1; shift ;;
    *) usage ;;
  esac
done
[[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ && $settle =~ ^[0-9]+$ ]] || usage
for mode in $modes; do [[ $mode =~ ^(s3|peer|peer-watch)$ ]] || usage; done
price_put=${PRICE_PUT_PER_1000:-0.005} price_get=${PRICE_GET_PER_1000:-0.0004}
cd "$root"
source scripts/lib/build.sh
source scripts/lib/certs.sh
source scripts/lib/local-s3.sh
source scripts/lib/processes.sh

[[ -n $s3lect_bin ]] || s3lect_bin=$(release_s3lect)
s3lect_bin=$(realpath -e -- "$s3lect_bin")
if ((azure)); then
  : "${S3LECT_AZURE_CONNECTION_STRING:?--azure: source \$(bash scripts/local-s3/azurite-start.sh)}"
  export AZURE_STORAGE_CONNECTION_STRING=$S3LECT_AZURE_CONNECTION_STRING
  store_args=()
  lock_base=az://$S3LECT_AZURE_CONTAINER
else
  use_local_s3_endpoint
  store_args=(--path-style --ca-file "$S3LECT_TEST_CA_FILE")
  lock_base=s3://$S3LECT_TEST_BUCKET
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/s3lect-bench-cost.XXXXXX")
declare -A pid=() port=()
nodes=()
stop_nodes() { stop_processes 100 "${pid[@]}"; }
on_exit_run stop_nodes "$work"

make_test_certs "$work/certs" n1 n2 n3
stamp=$(date +%s)
offset=0
for mode in $modes; do
  for n in 1 2 3; do
    node=$mode/n$n
    args=(run --lock "$lock_base/bench/cost/$stamp-$mode.json" "${store_args[@]}"
      --id "$mode-n$n" --metrics-listen 127.0.0.1:0)
    if [[ $mode != s3 ]]; then
      p=$((base_port + offset + n))
      args+=(--peer --addr "127.0.0.1:$p" --peer-listen "127.0.0.1:$p"
        --peer-cert "$work/certs/n$n.pem" --peer-key "$work/certs/n$n.key"
        --peer-ca "$work/certs/ca.pem")
      [[ $mode == peer-watch ]] && args+=(--peer-watch)
    fi
    "$s3lect_bin" "${args[@]}" -- sleep 1000000 </dev/null >/dev/null 2>"$work/${node//\//-}.log" &
    pid[$node]=$!
    nodes+=("$node")
  done
  offset=$((offset + 10))
done

# The metrics port each node logged.
for node in "${nodes[@]}"; do
  for ((n = 0; n < 100; n++)); do
    p=$(sed -n 's/.*metrics server listening.* port=\([0-9]*\).*/\1/p' "$work/${node//\//-}.log" | head -1)
    [[ -n $p ]] && break
    kill -0 "${pid[$node]}" 2>/dev/null || { cat "$work/${node//\//-}.log" >&2; echo "error: $node exited" >&2; exit 1; }
    sleep 0.1
  done
  [[ -n $p ]] || { echo "error: $node logged no metrics port" >&2; exit 1; }
  port[$node]=$p
done

# One node's counters: "gets puts peer_checks is_leader acquisitions".
scrape() {
  curl -fsS "http://127.0.0.1:${port[$1]}/metrics" | awk '
    /^s3lect_s3_requests_total\{/ && /operation="get"/ { get += $NF }
    /^s3lect_s3_requests_total\{/ && /operation="put"/ { put += $NF }
    /^s3lect_peer_checks_total\{/ { peer += $NF }
    /^s3lect_is_leader\{/ { leader = $NF }
    /^s3lect_acquisitions_total\{/ { acq = $NF }
    END { printf "%d %d %d %d %d\n", get, put, peer, leader, acq }'
}
# VmRSS and VmHWM of a process, in kB.
memory() {
  awk '/^VmRSS:/ { rss = $2 } /^VmHWM:/ { hwm = $2 } END { print rss, hwm }' "/proc/$1/status"
}

store_name="local radosgw over HTTPS"
((azure)) && store_name="Azurite over HTTP (loopback)"
echo "requests per role: 3 x s3lect run per mode ($modes), default timings, $store_name"
echo "settling ${settle} s, then measuring over $minutes min"
sleep "$settle"
declare -A first=() last=()
t0=$(date +%s.%N)
for node in "${nodes[@]}"; do first[$node]=$(scrape "$node"); done
sleep "$(awk -v m="$minutes" 'BEGIN { print m * 60 }')"
for node in "${nodes[@]}"; do
  kill -0 "${pid[$node]}" 2>/dev/null || { echo "error: $node exited" >&2; exit 1; }
  last[$node]=$(scrape "$node")
done
t1=$(date +%s.%N)
hours=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 3600 }')
echo "measured over $(awk -v h="$hours" 'BEGIN { printf "%.1f", h * 3600 }') s"
echo

printf '| %-10s | %-6s | %-8s | %8s | %8s | %11s | %10s | %9s | %9s |\n' mode node role \
  "GET/h" "PUT/h" "S3 req/h" "peer chk/h" "VmRSS kB" "VmHWM kB"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' ------------ -------- ---------- ---------- ---------- \
  ------------- ------------ ----------- -----------
declare -A group_get=() group_put=() leaders=()
for node in "${nodes[@]}"; do
  read -r g0 p0 c0 _ a0 <<<"${first[$node]}"
  read -r g1 p1 c1 l1 a1 <<<"${last[$node]}"
  mode=${node%%/*}
  role=follower
  ((l1 == 1)) && { role=leader; leaders[$mode]=$((${leaders[$mode]:-0} + 1)); }
  ((a1 == a0)) || role="$role*"
  read -r rss hwm < <(memory "${pid[$node]}")
  gh=$(awk -v d=$((g1 - g0)) -v h="$hours" 'BEGIN { printf "%.0f", d / h }')
  ph=$(awk -v d=$((p1 - p0)) -v h="$hours" 'BEGIN { printf "%.0f", d / h }')
  ch=$(awk -v d=$((c1 - c0)) -v h="$hours" 'BEGIN { printf "%.0f", d / h }')
  group_get[$mode]=$((${group_get[$mode]:-0} + g1 - g0))
  group_put[$mode]=$((${group_put[$mode]:-0} + p1 - p0))
  printf '| %-10s | %-6s | %-8s | %8s | %8s | %11s | %10s | %9s | %9s |\n' "$mode" "${node#*/}" \
    "$role" "$gh" "$ph" $((gh + ph)) "$ch" "$rss" "$hwm"
done
echo "(role*: leadership changed during the window)"
echo
echo "monthly cost of one group of 3 (730 h; S3 Standard us-east-1: PUT \$$price_put, GET \$$price_get per 1,000)"
printf '| %-10s | %10s | %10s | %12s | %12s |\n' mode "GET/month" "PUT/month" "requests/h" "USD/month"
printf '|%s|%s|%s|%s|%s|\n' ------------ ------------ ------------ -------------- --------------
for mode in $modes; do
  ((${leaders[$mode]:-0} == 1)) || echo "warning: $mode had ${leaders[$mode]:-0} leaders at the end" >&2
  awk -v g="${group_get[$mode]}" -v p="${group_put[$mode]}" -v h="$hours" -v pg="$price_get" \
    -v pp="$price_put" -v m="$mode" 'BEGIN {
      gm = g / h * 730; pm = p / h * 730
      printf "| %-10s | %10.0f | %10.0f | %12.0f | %12.4f |\n", m, gm, pm, (g + p) / h,
        gm / 1000 * pg + pm / 1000 * pp }'
done
