#!/usr/bin/env bash
# Memory and CPU of many electors in one process (bench/electors_memory.cpp), default timings:
#   1. 10,000 electors over s3lect::memory_store (no network: the electors' own cost);
#   2. 1,000 electors against the local radosgw over HTTPS through one s3_client, with the
#      client's default keep-alive pool (max_idle_connections 4) and with a pool of 64.
# Each elector has its own lock key, so each one leads and renews every 5 s.
#
# usage: bench/electors_memory.sh [--duration S] [--memory-electors N] [--s3-electors N]
#                                 [--pools "4 64"] [--program PATH]
#   --duration S   measuring window of each run (default 60)
#   --program P    bench_electors_memory (default build/bench/bench/bench_electors_memory,
#                  built here)
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
usage() {
  echo "usage: $0 [--duration S] [--memory-electors N] [--s3-electors N] [--pools LIST] [--program PATH]" >&2
  exit 2
}
duration=60 memory_electors=10000 s3_electors=1000 pools="4 64" program=''
while (($#)); do
  case $1 in
    --duration) (($# >= 2)) || usage; duration=$2; shift 2 ;;
    --memory-electors) (($# >= 2)) || usage; memory_electors=$2; shift 2 ;;
    --s3-electors) (($# >= 2)) || usage; s3_electors=$2; shift 2 ;;
    --pools) (($# >= 2)) || usage; pools=$2; shift 2 ;;
    --program) (($# >= 2)) || usage; program=$2; shift 2 ;;
    *) usage ;;
  esac
done
cd "$root"
source scripts/lib/build.sh
source scripts/lib/local-s3.sh
if [[ -z $program ]]; then
  program=build/bench/bench/bench_electors_memory
  build_bench bench_electors_memory
fi

echo "== $memory_electors electors, memory_store"
"$program" --store memory --electors "$memory_electors" --duration "$duration"

use_local_s3_endpoint
status=0
for pool in $pools; do
  echo
  echo "== $s3_electors electors, local radosgw, keep-alive pool $pool"
  "$program" --store s3 --electors "$s3_electors" --duration "$duration" --pool "$pool" \
    --bucket "$S3LECT_TEST_BUCKET" --ca-file "$S3LECT_TEST_CA_FILE" || status=$?
done
exit "$status"
