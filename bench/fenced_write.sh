#!/usr/bin/env bash
# The cost of one fenced write (s3lect::fenced_object, what `s3lect put` does) on the local
# radosgw: requests per write and median milliseconds, as a ratio to a plain conditional PUT
# measured in the same run (docs/performance.md).
#
# usage: bench/fenced_write.sh [--build DIR] [--writes N]
#   --build DIR  a build with -DS3LECT_BENCH=ON (default build/release; configured and built
#                here if missing)
#   --writes N   writes of each kind (default 200)
# Needs the local store: source /tmp/s3lect-local-s3/env first.
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/release
writes=200
while (($#)); do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    --writes) writes=${2:?}; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--writes N]" >&2; exit 2 ;;
  esac
done
: "${S3LECT_TEST_ENDPOINT_HTTP:?source /tmp/s3lect-local-s3/env first}"
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DS3LECT_BENCH=ON >/dev/null
fi
cmake --build "$build" -j2 --target bench_fenced_write >/dev/null
AWS_ACCESS_KEY_ID=$S3LECT_TEST_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$S3LECT_TEST_SECRET_KEY \
  AWS_REGION=$S3LECT_TEST_REGION \
  "$build/bench/bench_fenced_write" "$S3LECT_TEST_ENDPOINT_HTTP" "$S3LECT_TEST_BUCKET" "$writes"
