#!/usr/bin/env bash
# Runs every test: installs what is missing, builds (warnings are errors), starts the local
# Ceph radosgw, runs unit, integration, example and install tests, then the unit tests again
# under ASan+UBSan. Stops the server only if it started it.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
bash scripts/install-deps.sh
bash scripts/local-s3/install.sh

started_server=0
cleanup() {
  if [ "$started_server" -eq 1 ]; then bash scripts/local-s3/stop.sh || true; fi
}
trap cleanup EXIT

# Start the server in the background while the build runs: both take tens of seconds.
server_log=$(mktemp)
bash scripts/local-s3/start.sh >"$server_log" 2>&1 &
server_pid=$!

cmake --preset debug >/dev/null
cmake --build --preset debug -j "$jobs"

if ! wait "$server_pid"; then
  cat "$server_log"
  echo "local S3 server failed to start" >&2
  exit 1
fi
cat "$server_log"
grep -q "already running" "$server_log" || started_server=1
# shellcheck disable=SC1091
source "${S3LECT_S3_DIR:-/tmp/s3lect-local-s3}/env"

echo "== unit and integration tests (debug) =="
ctest --preset debug -j "$jobs"

echo "== unit tests under ASan+UBSan =="
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs" --target s3lect_unit_tests
ctest --preset asan -L unit -j "$jobs"
