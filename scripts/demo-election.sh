#!/usr/bin/env bash
# The elector demo: three candidates (examples/leader_worker.cpp) campaign for one lock key on the
# store in the environment. The leader is stopped gracefully (SIGTERM: it releases the lock) and
# the handover is timed; then the new leader is killed (SIGKILL: the lease must expire) and the
# failover is timed. Every log line is checked for two leaders at once.
#
# usage: scripts/demo-election.sh PROGRAM [--lease-ms N] [--keep-logs]
#   PROGRAM      the candidate, e.g. build/release/examples/example_leader_worker
#   --lease-ms   lease in ms (renewal and polls every third of it); default: the library's 15 s
#   --keep-logs  keep the candidates' logs (they are always kept after a failure)
# Environment: S3LECT_TEST_BUCKET (required) and S3LECT_TEST_CA_FILE, as written by
# scripts/local-s3/start.sh; AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
# AWS_REGION default to the matching S3LECT_TEST_* values. Each run uses a new key.
# ED_HOLD_MS (default 3000): how long each leader works before it is signalled. The expectations
# printed assume followers still poll every F; about F after an election they go stable and read
# less often (see bench/failover.sh).
# Exit status: 0 done, 1 failed (no leader in time, a candidate died, two leaders at once), 2 usage.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib/election-driver.sh
source "$here/lib/election-driver.sh"
# shellcheck source=scripts/lib/processes.sh
source "$here/lib/processes.sh"

usage() {
  echo "usage: $0 PROGRAM [--lease-ms N] [--keep-logs]" >&2
  exit 2
}

ED_BIN=
ED_LEASE_MS=
while (($#)); do
  case $1 in
    --lease-ms) (($# >= 2)) || usage; ED_LEASE_MS=$2; shift 2 ;;
    --keep-logs) ED_KEEP_LOGS=1; shift ;;
    -*) usage ;;
    *) [[ -z $ED_BIN ]] || usage; ED_BIN=$1; shift ;;
  esac
done
[[ -n $ED_BIN ]] || usage

[[ -n ${S3LECT_TEST_BUCKET:-} ]] ||
  { echo "error: S3LECT_TEST_BUCKET is not set; source the local S3 server's env file" >&2; exit 2; }
export AWS_ENDPOINT_URL=${AWS_ENDPOINT_URL:-${S3LECT_TEST_ENDPOINT_HTTPS:-}}
export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-${S3LECT_TEST_ACCESS_KEY:-}}
export AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-${S3LECT_TEST_SECRET_KEY:-}}
export AWS_REGION=${AWS_REGION:-${S3LECT_TEST_REGION:-}}
ED_BUCKET=$S3LECT_TEST_BUCKET
ED_CA_FILE=${S3LECT_TEST_CA_FILE:-}
ED_KEY_PREFIX=demo/election
ED_VERBOSE=1
# Long enough to see the leader's heartbeats (one a second).
ED_HOLD_MS=${ED_HOLD_MS:-3000}

on_exit_run ed_cleanup
ed_init

# Followers read every F / 2 (S3 mode's first-hand schedule), so they see every renewal: a crash
# is taken over L - F ... L + F / 2 after it, a release at the next read.
lease=$(ed_fmt_s "$ED_L_MS") renew=$(ed_fmt_s "$ED_F_MS") read=$(ed_fmt_s $((ED_F_MS / 2)))
low=$(ed_fmt_s $((ED_L_MS - ED_F_MS))) high=$(ed_fmt_s $((ED_L_MS + ED_F_MS / 2)))
if [[ -z $ED_LEASE_MS ]]; then
  echo "lease $lease s (library default); leaders renew every $renew s, followers read the lock every $read s"
else
  echo "lease $lease s (--lease-ms $ED_LEASE_MS); leaders renew every $renew s, followers read the lock every $read s"
fi
echo
ed_round 1
echo
echo "timeline (heartbeats left out):"
ed_timeline
echo
echo "summary"
printf '  graceful handover: %8s s  (the followers hear of the release at their next read: expect 0–%s s)\n' \
  "$(ed_fmt_ms "$ED_HANDOVER_MS")" "$read"
printf '  crash failover:    %8s s  (lease %s s, renew every %s s: expect about %s–%s s)\n' \
  "$(ed_fmt_ms "$ED_FAILOVER_MS")" "$lease" "$renew" "$low" "$high"
