#!/usr/bin/env bash
# TCP_QUICKACK on the HTTP client's sockets, before against after in the same run. The local
# radosgw sends a reply in two segments and waits for the ACK of the first, which a client in
# delayed-ACK mode holds back ~40 ms: every request on a kept-alive connection paid it.
# Two binaries, alternated round by round so that load on the machine hits both alike:
#   check      `s3lect check` round-trip median (seven GETs and PUTs on one kept-alive connection,
#              what a follower's reads and a leader's renewals look like to the store)
#   handover   bench/peer_handover.sh released->acquired (the watch answer, then a GET and a PUT
#              on the follower's kept-alive connections: a takeover that starts with a GET)
# Prints each binary's medians and the ratio after/before.
#
# usage: bench/quickack.sh --before PATH --after PATH [--runs N] [--base-port N]
#   --before PATH   s3lect built without the change (e.g. from the previous commit)
#   --after PATH    s3lect built with it
#   --runs N        check rounds per binary (default 10); handover rounds are N/2, at least 3
#   --base-port N   health endpoints of the handover rounds (default 18560)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/local-s3.sh
source scripts/lib/measure.sh
source scripts/lib/options.sh

declare -A option=([before]="" [after]="" [runs]=10 [base-port]=18560)
parse_options option "$@"
before=${option[before]} after=${option[after]} runs=${option[runs]} base_port=${option[base-port]}
[ -x "$before" ] && [ -x "$after" ] || { echo "need --before and --after binaries" >&2; exit 2; }
use_local_s3

check_rtt() {  # binary -> the check's round-trip median in ms
  "$1" check --lock "s3://$S3LECT_TEST_BUCKET/bench/quickack/lock.json" \
    --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style |
    sed -nE 's/.*round trip: median ([0-9.]+) ms.*/\1/p'
}

check_before=() check_after=()
for _ in $(seq 1 "$runs"); do
  check_before+=("$(check_rtt "$before")")
  check_after+=("$(check_rtt "$after")")
done

handover_runs=$(( runs / 2 < 3 ? 3 : runs / 2 ))
handover() {  # binary -> released->acquired median in ms
  bash bench/peer_handover.sh --s3lect "$1" --runs "$handover_runs" --base-port "$base_port" |
    sed -nE 's/^released->acquired +median +([0-9.]+) ms.*/\1/p'
}
handover_before=$(handover "$before")
handover_after=$(handover "$after")

cb=$(printf '%s\n' "${check_before[@]}" | median)
ca=$(printf '%s\n' "${check_after[@]}" | median)
printf 'check round trip      before %7.1f ms  after %7.1f ms  after/before %.3f  (%d runs each)\n' \
  "$cb" "$ca" "$(awk -v a="$ca" -v b="$cb" 'BEGIN { print a / b }')" "$runs"
printf 'released->acquired    before %7.1f ms  after %7.1f ms  after/before %.3f  (%d runs each)\n' \
  "$handover_before" "$handover_after" \
  "$(awk -v a="$handover_after" -v b="$handover_before" 'BEGIN { print a / b }')" "$handover_runs"
