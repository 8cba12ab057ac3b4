#!/usr/bin/env bash
# Resident memory of one `s3lect run` process, side by side in one run with the floor that
# OpenSSL sets for any TLS client on this machine (`openssl s_client` holding one connection to
# the same radosgw). Each process runs alone on its lock key against the local radosgw and is
# read after --settle seconds (leader, renewing every 5 s). Besides VmRSS it reports what the
# resident pages are: anonymous (the process's own memory), file-backed (pages of the executable
# and shared libraries, shared with every process that maps them), PSS, and the two largest
# mappings.
#
# usage: bench/process_memory.sh [--settle S] [--s3lect PATH]...
#   --settle S    seconds before reading /proc (default 20)
#   --s3lect P    an s3lect binary to measure; repeat to compare builds (default: the release
#                 and compact presets' builds, made here; compact = -Os, unused sections dropped,
#                 libstdc++ and OpenSSL linked statically, packed relocations)
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  echo "usage: $0 [--settle S] [--s3lect PATH]..." >&2
  exit 2
}
settle=20
binaries=()
while (($#)); do
  case $1 in
    --settle) (($# >= 2)) || usage; settle=$2; shift 2 ;;
    --s3lect) (($# >= 2)) || usage; binaries+=("$(realpath -e -- "$2")"); shift 2 ;;
    *) usage ;;
  esac
done
[[ $settle =~ ^[0-9]+$ ]] || usage
cd "$root"
source scripts/lib/build.sh
source scripts/lib/local-s3.sh
source scripts/lib/processes.sh

if ((${#binaries[@]} == 0)); then
  for preset in release compact; do
    build_preset "$preset" s3lect_cli
    binaries+=("$root/build/$preset/bin/s3lect")
  done
fi
use_local_s3

work=$(mktemp -d "${TMPDIR:-/tmp}/s3lect-bench-memory.XXXXXX")
pids=()
stop_nodes() { stop_processes 100 "${pids[@]}"; }
on_exit_run stop_nodes "$work"

labels=()
start() {
  local label=$1
  shift
  "$@" >"$work/${#labels[@]}.log" 2>&1 &
  pids+=($!)
  labels+=("$label")
}
run_id=$$-$RANDOM
n=0
for bin in "${binaries[@]}"; do
  n=$((n + 1))
  name=$(basename "$(dirname "$bin")")/$(basename "$bin")
  start "$name run, HTTPS" "$bin" run --lock "s3://$S3LECT_TEST_BUCKET/bench/memory-$run_id-$n-https.json" \
    --endpoint "$S3LECT_TEST_ENDPOINT_HTTPS" --ca-file "$S3LECT_TEST_CA_FILE" --path-style \
    --id "memory-$n" -- sleep 100000
  start "$name run, HTTP" "$bin" run --lock "s3://$S3LECT_TEST_BUCKET/bench/memory-$run_id-$n-http.json" \
    --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style --id "memory-$n" -- sleep 100000
done
# The floor: OpenSSL's own client, one TLS connection held open (stdin never closes).
start "openssl s_client (floor)" bash -c "exec openssl s_client -quiet -connect ${S3LECT_TEST_ENDPOINT_HTTPS#https://} \
  -CAfile '$S3LECT_TEST_CA_FILE' < <(sleep 100000)"
sleep "$settle"

echo "resident memory after ${settle}s: one process each, leader of its own key (radosgw on 127.0.0.1)"
echo
printf '| %-34s | %9s | %9s | %9s | %9s | %-40s |\n' process "VmRSS kB" "anon kB" "file kB" \
  "PSS kB" "largest mappings (kB)"
printf '|%s|%s|%s|%s|%s|%s|\n' ------------------------------------ ----------- ----------- \
  ----------- ----------- ------------------------------------------
for i in "${!pids[@]}"; do
  p=${pids[$i]}
  # The floor's PID is openssl's own: its `bash -c` exec'd it.
  if ! kill -0 "$p" 2>/dev/null; then
    echo "error: ${labels[$i]} exited:" >&2
    cat "$work/$i.log" >&2
    exit 1
  fi
  read -r rss anon file < <(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 }
    END { print r, a, f }' "/proc/$p/status")
  pss=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup")
  largest=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { name = $6 } /^Rss:/ { if (name != "") r[name] += $2 }
    END { for (n in r) print r[n], n }' "/proc/$p/smaps" | sort -rn | head -2 |
    awk '{ sub(".*/", "", $2); printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }')
  printf '| %-34s | %9s | %9s | %9s | %9s | %-40s |\n' "${labels[$i]}" "$rss" "$anon" "$file" \
    "$pss" "$largest"
done
