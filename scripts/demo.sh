#!/usr/bin/env bash
# The demo: builds s3lect, starts the local Ceph radosgw and shows leader election on it: three
# candidates, a graceful handover and a crash failover, timed (scripts/demo-election.sh; about
# 30 s with the default 15 s lease). usage: scripts/demo.sh [--lease-ms N]
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/lib/build.sh
source scripts/lib/local-s3.sh

bash scripts/install-deps.sh
bash scripts/local-s3/install.sh

trap local_s3_stop_if_started EXIT
local_s3_start_behind
# Only what the demo runs: the tests would double the build time.
echo "building s3lect (release)..."
build_preset release s3lect_cli example_leader_worker
local_s3_wait || exit 1
use_local_s3_endpoint

echo "== is the store safe for s3lect? =="
build/release/bin/s3lect check --lock "s3://$S3LECT_TEST_BUCKET/demo/leader.json" \
  --ca-file "$S3LECT_TEST_CA_FILE" --path-style
echo
echo "== leader election: three candidates, one lock; a graceful stop, then a crash =="
bash scripts/demo-election.sh build/release/examples/example_leader_worker "$@"
