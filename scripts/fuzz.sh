#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan+UBSan) in build/fuzz and runs each
# for N seconds on a copy of its seed corpus. Exits non-zero if any target crashes, times out or
# runs out of memory, naming the reproducer. Installs clang and libFuzzer on Debian 12 if missing.
# Runs J targets at once (one libFuzzer process keeps one core busy): the wall time is about
# ceil(targets / J) * N seconds.
#
#   bash scripts/fuzz.sh [--seconds N] [--jobs J] [TARGET...]
#     N defaults to 60, J to the number of cores; TARGET e.g. sigv4
#
# A reproducer replays with: build/fuzz/tests/fuzz/<target>_fuzz <reproducer>
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
jobs=$(nproc)
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds)
      [ $# -ge 2 ] || { echo "--seconds needs a value" >&2; exit 2; }
      seconds=$2
      shift 2
      ;;
    --seconds=*)
      seconds=${1#--seconds=}
      shift
      ;;
    --jobs)
      [ $# -ge 2 ] || { echo "--jobs needs a value" >&2; exit 2; }
      jobs=$2
      shift 2
      ;;
    -h | --help)
      sed -n '2,11p' "$0"
      exit 0
      ;;
    *)
      targets+=("$1")
      shift
      ;;
  esac
done
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
  echo "--seconds must be a positive integer, is '$seconds'" >&2
  exit 2
fi
if ! [[ "$jobs" =~ ^[0-9]+$ ]] || [ "$jobs" -eq 0 ]; then
  echo "--jobs must be a positive integer, is '$jobs'" >&2
  exit 2
fi
if [ ${#targets[@]} -eq 0 ]; then
  targets=(record s3_error_xml health_request peer_response sigv4)
fi

# What the build needs (the project's own dependencies), then clang 14, its runtime libraries
# (libclang-rt-14-dev holds libFuzzer and the sanitizer runtimes) and llvm-symbolizer (llvm-14)
# for readable stack traces.
bash scripts/install-deps.sh
# shellcheck source=scripts/lib/packages.sh
source scripts/lib/packages.sh
install_missing_packages clang-14 libclang-rt-14-dev llvm-14

build_dir=build/fuzz
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DS3LECT_FUZZ=ON -DS3LECT_WERROR=ON >/dev/null
build_targets=()
for t in "${targets[@]}"; do build_targets+=("${t}_fuzz"); done
cmake --build "$build_dir" -j "$(nproc)" --target "${build_targets[@]}"

export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

work=$(mktemp -d /tmp/s3lect-fuzz.XXXXXX)

# fuzz_one TARGET: runs it for the given time on a copy of its seeds; its report (and, when it
# failed, the end of its log and its reproducers) goes to $work/TARGET/report, and the file
# $work/TARGET/failed exists when it failed.
fuzz_one() {
  local t=$1 status=0 r
  local corpus=$work/$t/corpus artifacts=$work/$t/artifacts/ log=$work/$t/fuzz.log
  local report=$work/$t/report
  mkdir -p "$corpus" "$artifacts"
  cp "tests/fuzz/corpus/$t"/* "$corpus"/
  "$build_dir/tests/fuzz/${t}_fuzz" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" >"$log" 2>&1 || status=$?
  {
    echo "== $t: ${seconds} s"
    grep -E "^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|peak_rss_mb)" "$log" || true
  } >"$report"
  local reproducers=("$artifacts"*)
  if [ "$status" -ne 0 ] || [ -e "${reproducers[0]}" ]; then
    {
      tail -n 60 "$log"
      for r in "${reproducers[@]}"; do
        [ -e "$r" ] && echo "REPRODUCER ($t): $r   replay: $build_dir/tests/fuzz/${t}_fuzz $r"
      done
      echo "== $t FAILED (exit $status); log: $log"
    } >>"$report"
    touch "$work/$t/failed"
  fi
}

for t in "${targets[@]}"; do
  [ -d "tests/fuzz/corpus/$t" ] || { echo "no seed corpus tests/fuzz/corpus/$t" >&2; exit 2; }
done
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait
failed=()
for t in "${targets[@]}"; do
  cat "$work/$t/report"
  [ -e "$work/$t/failed" ] && failed+=("$t")
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]} (reproducers and logs kept in $work)" >&2
  exit 1
fi
rm -rf "$work"
echo "fuzzing passed: ${targets[*]}, ${seconds} s each"
