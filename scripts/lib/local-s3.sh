# shellcheck shell=bash
# The store the benchmarks and the chaos harness run against. Sourced.
#   use_local_s3
# The caller's store when its environment names one (S3LECT_TEST_ENDPOINT_HTTP and
# S3LECT_TEST_BUCKET, as after sourcing an env file of scripts/local-s3/), else the local radosgw:
# started unless it runs (start.sh returns at once then) and its env file read. Exports the
# store's credentials and region for s3lect and the examples.
#   use_local_s3_endpoint
# The same, and exports AWS_ENDPOINT_URL: the store's HTTPS endpoint.
use_local_s3() {
  if [[ -z ${S3LECT_TEST_ENDPOINT_HTTP:-} || -z ${S3LECT_TEST_BUCKET:-} ]]; then
    bash "$(dirname -- "${BASH_SOURCE[0]}")/../local-s3/start.sh" >/dev/null || return
    # shellcheck disable=SC1091
    source "${S3LECT_S3_DIR:-/tmp/s3lect-local-s3}/env"
  fi
  export AWS_REGION=$S3LECT_TEST_REGION
  export AWS_ACCESS_KEY_ID=$S3LECT_TEST_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$S3LECT_TEST_SECRET_KEY
}

use_local_s3_endpoint() {
  use_local_s3 || return
  export AWS_ENDPOINT_URL=${S3LECT_TEST_ENDPOINT_HTTPS:?the store has no HTTPS endpoint}
}

# For a caller that builds while the server starts, and stops it at the end if it started it:
#   local_s3_start_behind   starts the local radosgw in the background
#   local_s3_wait           waits for that start (printing its output if it failed, then
#                           failing) and reads its env file: use_local_s3 then uses that store
#   local_s3_stop_if_started  stops the server if local_s3_wait found that this start started it
local_s3_start_behind() {
  local_s3_log=$(mktemp)
  bash "$(dirname -- "${BASH_SOURCE[0]}")/../local-s3/start.sh" >"$local_s3_log" 2>&1 &
  local_s3_pid=$!
}

local_s3_wait() {
  if ! wait "$local_s3_pid"; then
    cat "$local_s3_log" >&2
    rm -f -- "$local_s3_log"
    echo "error: the local S3 server failed to start" >&2
    return 1
  fi
  grep -q "already running" "$local_s3_log" || local_s3_started=1
  rm -f -- "$local_s3_log"
  # shellcheck disable=SC1091
  source "${S3LECT_S3_DIR:-/tmp/s3lect-local-s3}/env"
}

local_s3_stop_if_started() {
  if ((${local_s3_started:-0})); then
    bash "$(dirname -- "${BASH_SOURCE[0]}")/../local-s3/stop.sh" >/dev/null 2>&1 || true
  fi
}
