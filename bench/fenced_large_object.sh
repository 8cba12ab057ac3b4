#!/usr/bin/env bash
# Peak memory of `s3lect put` and `s3lect get` of a large fenced object on the local radosgw
# (memory must not grow with the object: both stream). For a baseline in the same run, the same
# commands on a 1 KB object. Prints, per command and size, the peak RSS (/usr/bin/time -v,
# "Maximum resident set size"), the wall time and the throughput; checks that the object read
# back is byte-identical. The files (SIZE_MB on disk, twice) are removed at the end, and the
# objects too when the aws CLI is installed.
#
# The local radosgw keeps its objects in memory (memstore, 1 GiB in all by default): a 1 GiB
# object fills it, and a full cluster stops answering GETs. Give it room first, and take it back
# after (deleted objects' data goes when RGW's garbage collection runs):
#   ceph -c /tmp/s3lect-local-s3/ceph.conf tell osd.0 config set memstore_device_bytes 4294967296
#   radosgw-admin -c /tmp/s3lect-local-s3/ceph.conf gc process --include-all
#
# usage: bench/fenced_large_object.sh --bin DIR [--size-mb N]
#   --bin DIR     where s3lect is (DIR/s3lect), e.g. build/release
#   --size-mb N   the large object's size in MiB (default 1024; S3 takes up to 5 GiB per PUT)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/local-s3.sh

bin="" size_mb=1024
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --size-mb) size_mb=$2; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
s3lect=$bin/bin/s3lect  # the build tree given by --bin
[ -x "$s3lect" ] || { echo "no s3lect in '$bin' (--bin DIR)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
use_local_s3
unset AWS_SESSION_TOKEN AWS_PROFILE

work=$(mktemp -d)
objects=()
cleanup() {
  rm -rf -- "$work"
  if command -v aws >/dev/null; then
    for object in "${objects[@]}"; do
      aws --endpoint-url "$S3LECT_TEST_ENDPOINT_HTTP" s3 rm --quiet "$object" || true
    done
  fi
}
trap cleanup EXIT
export TMPDIR=$work  # where `put` spools stdin
store=(--endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style)
prefix="s3://$S3LECT_TEST_BUCKET/bench-large-$$"

# measure LABEL BYTES COMMAND...: runs COMMAND, prints its peak RSS, time and throughput.
measure() {
  local label=$1 bytes=$2
  shift 2
  /usr/bin/time -v -o "$work/time" "$@"
  local rss_kb seconds
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
  seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
  awk -v l="$label" -v r="$rss_kb" -v s="$seconds" -v b="$bytes" 'BEGIN {
    printf "%-28s peak RSS %7.1f MiB  %7.2f s  %8.1f MiB/s\n", l, r / 1024, s,
      (s > 0 ? b / 1048576 / s : 0) }'
}

# round NAME BYTES: put then get of an object of BYTES random bytes, checked byte for byte.
round() {
  local name=$1 bytes=$2 object="$prefix-$1"
  objects+=("$object")
  head -c "$bytes" /dev/urandom >"$work/in"
  measure "put --file ($name)" "$bytes" "$s3lect" put --term 1 --file "$work/in" "${store[@]}" \
    "$object" 2>/dev/null
  measure "get ($name)" "$bytes" sh -c '"$@" >"'"$work/out"'" 2>/dev/null' get "$s3lect" get \
    "${store[@]}" "$object"
  cmp -s "$work/in" "$work/out" || { echo "error: $name read back differs" >&2; exit 1; }
  rm -f -- "$work/out"
  measure "put from stdin ($name)" "$bytes" sh -c '"$@" <"'"$work/in"'" 2>/dev/null' put \
    "$s3lect" put --term 2 "${store[@]}" "$object"
  rm -f -- "$work/in"
}

echo "s3lect put/get, local radosgw ($S3LECT_TEST_ENDPOINT_HTTP), $(nproc) cores"
round 1KB 1024
round "${size_mb}MiB" $((size_mb * 1048576))
