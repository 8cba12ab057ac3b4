#!/usr/bin/env bash
# The demo: builds s3lect, starts the local Ceph radosgw and shows leader election on it: three
# candidates, a graceful handover and a crash failover, timed (scripts/demo-election.sh; about
# 30 s with the default 15 s lease). usage: scripts/demo.sh [--lease-ms N]
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
bash scripts/local-s3/install.sh

started_server=0
cleanup() {
  if [ "$started_server" -eq 1 ]; then bash scripts/local-s3/stop.sh >/dev/null || true; fi
}
trap cleanup EXIT

server_log=$(mktemp)
bash scripts/local-s3/start.sh >"$server_log" 2>&1 &
server_pid=$!
cmake --preset release >/dev/null
# Only what the demo runs: the tests would double the build time.
echo "building s3lect (release)..."
cmake --build --preset release -j "$(nproc)" --target s3lect_cli example_leader_worker >/dev/null
if ! wait "$server_pid"; then
  cat "$server_log"
  exit 1
fi
grep -q "already running" "$server_log" || started_server=1
# shellcheck disable=SC1091
source "${S3LECT_S3_DIR:-/tmp/s3lect-local-s3}/env"
export AWS_ENDPOINT_URL="$S3LECT_TEST_ENDPOINT_HTTPS" AWS_REGION="$S3LECT_TEST_REGION"
export AWS_ACCESS_KEY_ID="$S3LECT_TEST_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$S3LECT_TEST_SECRET_KEY"

echo "== is the store safe for s3lect? =="
build/release/s3lect check --lock "s3://$S3LECT_TEST_BUCKET/demo/leader.json" \
  --ca-file "$S3LECT_TEST_CA_FILE" --path-style
echo
echo "== leader election: three candidates, one lock; a graceful stop, then a crash =="
bash scripts/demo-election.sh build/release/examples/example_leader_worker "$@"
