#!/usr/bin/env bash
# Micro-benchmarks (bench_micro, Google Benchmark): CPU time per operation, the median of
# --repetitions runs (default 5). With --callgrind, also the instructions per operation counted
# by valgrind's callgrind (the difference between runs of 2N and N iterations, divided by N,
# N = --iterations, default 1000), which other work on the machine does not distort.
#
# usage: bench/micro.sh [--repetitions N] [--callgrind] [--iterations N] [--filter REGEX]
#                       [--program PATH]
#   --program P   bench_micro (default build/bench/bench/bench_micro, built here)
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
usage() {
  echo "usage: $0 [--repetitions N] [--callgrind] [--iterations N] [--filter REGEX] [--program PATH]" >&2
  exit 2
}
repetitions=5 callgrind=0 iterations=1000 filter=. program=
while (($#)); do
  case $1 in
    --repetitions) (($# >= 2)) || usage; repetitions=$2; shift 2 ;;
    --callgrind) callgrind=1; shift ;;
    --iterations) (($# >= 2)) || usage; iterations=$2; shift 2 ;;
    --filter) (($# >= 2)) || usage; filter=$2; shift 2 ;;
    --program) (($# >= 2)) || usage; program=$2; shift 2 ;;
    *) usage ;;
  esac
done
cd "$root"
source scripts/lib/build.sh
if [[ -z $program ]]; then
  program=build/bench/bench/bench_micro
  build_bench bench_micro
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/s3lect-bench-micro.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

"$program" --benchmark_filter="$filter" --benchmark_repetitions="$repetitions" \
  --benchmark_report_aggregates_only=true --benchmark_format=json 2>/dev/null >"$work/timing.json"
# name<TAB>median CPU ns<TAB>counters, one line per benchmark.
python3 - "$work/timing.json" >"$work/timing.tsv" <<'PY'
import json, sys
skip = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
        "repetitions", "threads", "aggregate_name", "aggregate_unit", "iterations",
        "real_time", "cpu_time", "time_unit", "repetition_index"}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b["time_unit"]]
    counters = " ".join(f"{k}={v:g}" for k, v in b.items() if k not in skip)
    print(f"{b['run_name']}\t{b['cpu_time'] * scale:.0f}\t{counters}")
PY

declare -A instructions=()
if ((callgrind)); then
  command -v valgrind >/dev/null || { echo "error: valgrind is not installed" >&2; exit 1; }
  # Instructions counted inside benchmark function $1 run with $2 iterations.
  count_instructions() {
    S3LECT_BENCH_ITERATIONS=$2 valgrind --tool=callgrind --toggle-collect="*${1%%/*}(*" \
      --callgrind-out-file="$work/cg.out" "$program" --benchmark_filter="^$1(/iterations:[0-9]+)?\$" \
      </dev/null >/dev/null 2>&1
    callgrind_annotate "$work/cg.out" 2>/dev/null |
      awk '/PROGRAM TOTALS/ && !done { gsub(",", "", $1); print $1; done = 1 }'
  }
  # Run with N and 2N iterations: the difference divided by N leaves out the benchmark's
  # set-up (e.g. electing the elector the health benchmarks ask).
  while IFS=$'\t' read -r name _ _; do
    once=$(count_instructions "$name" "$iterations")
    twice=$(count_instructions "$name" $((2 * iterations)))
    if [[ $once =~ ^[0-9]+$ && $twice =~ ^[0-9]+$ ]]; then
      instructions[$name]=$(((twice - once) / iterations))
    fi
  done <"$work/timing.tsv"
fi

printf '| %-36s | %10s | %10s | %s\n' benchmark "CPU ns/op" "instr/op" "counters"
printf '|%s|%s|%s|%s\n' -------------------------------------- ------------ ------------ ----------
while IFS=$'\t' read -r name cpu counters; do
  printf '| %-36s | %10s | %10s | %s\n' "$name" "$cpu" "${instructions[$name]:--}" "$counters"
done <"$work/timing.tsv"
echo "(CPU ns/op: median of $repetitions repetitions of Google Benchmark's CPU time;" \
  "instr/op: callgrind, (I(2N) - I(N)) / N with N = $iterations, user-space only; - when not measured)"
