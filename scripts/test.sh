#!/usr/bin/env bash
# Runs every test: installs what is missing, starts the local Ceph radosgw, then
#   1. builds everything under ASan+UBSan (warnings are errors) and runs every CTest label:
#      unit, integration (against radosgw), the examples and the install test;
#   2. builds the unit and integration tests under TSan and runs them;
#   2b. builds everything with clang (so that clang 14 compiles all of it) and runs the unit
#       tests;
#   2c. builds the library, the tool and the unit tests with clang 19 and libc++, taking the code
#       paths of other POSIX systems (macOS, FreeBSD) instead of Linux's, and runs the unit tests;
#   2c. builds the release packages, installs them with apt and builds a consumer against them
#       (tests/package/run.sh: this machine is meant to be thrown away; it removes them again);
#   3. fuzzes (scripts/fuzz.sh) and runs the chaos test (tests/chaos/chaos.sh), when present;
#   4. runs an election of three `s3lect run` nodes (chaos.sh) on moto, the second store, whose
#      S3 client and elector integration tests run in step 1 beside the radosgw's.
# There is no separate plain debug build: step 1 runs every test a plain build would, with the
# sanitizers watching, and CI must fit in 90 minutes on two cores. Prints each stage's wall and
# CPU time. Stops the server only if it started it.
#
# Env: S3LECT_BUILD_PREFIX  where the build trees go, "<prefix>asan", "<prefix>tsan",
#                           "<prefix>clang" and "<prefix>libcxx-portable"
#                           (default build/, the presets' directories)
#      S3LECT_JOBS          parallel compile and test jobs (default: nproc)
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${S3LECT_JOBS:-$(nproc)}
prefix=${S3LECT_BUILD_PREFIX:-build/}
main_build=${prefix}asan
tsan_build=${prefix}tsan
clang_build=${prefix}clang
libcxx_build=${prefix}libcxx-portable

# Sanitizer runtime options, for every process of the ASan+UBSan stages: the tests, the examples
# and the install test (CTest passes the environment on), and the chaos nodes.
# The build already passes -fno-sanitize-recover=all (CMakeLists.txt): every UBSan check compiled
# into s3lect's own code reports and then ends the process, with exit status 1 (UBSan's default
# exitcode). That alone is not enough: status 1 is also what `s3lect` and several tests mean by
# an ordinary failure, a chaos node that exits is restarted and its report lost in its log, and
# code built without the flag would report and go on.
# halt_on_error=1 ends the process on the first report wherever the check was compiled, and
# abort_on_error=1 (for ASan as well) makes that a SIGABRT, which no test mistakes for an
# expected exit status. The chaos stages also search their nodes' output for reports
# (chaos_sanitizers below).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

# ------------------------------------------------------------------ stage timing
script_start=$SECONDS
summary=()
stage_name="" stage_start=0 stage_cpu=0

# Sets cpu_now to the CPU seconds (user + system) used so far by this script's finished
# children. `times` must run in this shell: a subshell would only count its own children.
times_file=$(mktemp)
read_cpu() {
  times >"$times_file"
  cpu_now=$(awk 'NR == 2 {
    total = 0
    for (i = 1; i <= 2; ++i) { split($i, t, "m"); total += t[1] * 60 + t[2] }
    printf "%.0f", total
  }' "$times_file")
}

stage() {
  end_stage
  read_cpu
  stage_name=$1 stage_start=$SECONDS stage_cpu=$cpu_now
  printf '\n== %s ==\n' "$stage_name"
}

end_stage() {
  [ -n "$stage_name" ] || return 0
  read_cpu
  local wall=$((SECONDS - stage_start)) cpu=$((cpu_now - stage_cpu))
  local line
  line=$(printf '%-64s %5d s wall %6d s CPU   (total %d s)' "$stage_name" "$wall" "$cpu" \
    $((SECONDS - script_start)))
  printf -- '-- %s\n' "$line"
  summary+=("$line")
  stage_name=""
}

# Prints the output of each test that the last ctest run in build tree $1 failed, its last 100
# lines, so that the end of the log says why: --output-on-failure leaves it among hundreds of
# lines of tests that passed.
report_failed_tests() {
  local dir=$1/Testing/Temporary name
  [ -f "$dir/LastTestsFailed.log" ] || return 0
  while IFS= read -r name; do
    name=${name#*:}
    printf '\n== failed: %s (the end of its output, from %s) ==\n' "$name" "$dir/LastTest.log"
    awk -v name="$name" '
      index($0, " Test: ") && substr($0, index($0, " Test: ") + 7) == name { found = 1; next }
      found && !out && $0 == "Output:" { getline; out = 1; next }
      out && $0 == "<end of output>" { exit }
      out { print }
    ' "$dir/LastTest.log" | tail -n 100
  done <"$dir/LastTestsFailed.log"
}

started_server=0
started_moto=0
tsan_pid=""
failed_build=""  # The build tree whose ctest run failed, for the report at the end.
cleanup() {
  local status=$?
  if [ -n "$tsan_pid" ]; then kill -- "-$tsan_pid" 2>/dev/null || true; fi
  end_stage
  if [ ${#summary[@]} -gt 0 ]; then
    printf '\n== stages ==\n'
    printf '%s\n' "${summary[@]}"
  fi
  if [ -n "$failed_build" ]; then report_failed_tests "$failed_build"; fi
  if [ "$started_server" -eq 1 ]; then bash scripts/local-s3/stop.sh || true; fi
  if [ "$started_moto" -eq 1 ]; then bash scripts/local-s3/moto-stop.sh || true; fi
  rm -f "$times_file"
  exit "$status"
}
trap cleanup EXIT

# ------------------------------------------------------------------ stages
stage "dependencies"
bash scripts/install-deps.sh
bash scripts/local-s3/install.sh

# The server starts in the background while the first build runs: both take a while.
server_log=$(mktemp)
bash scripts/local-s3/start.sh >"$server_log" 2>&1 &
server_pid=$!

stage "build: everything, ASan+UBSan ($main_build)"
# Line tables (-g1) are all a sanitizer report needs; they compile ~10% faster than full -g and
# make far smaller objects to link. The TSan build below uses them too.
cmake --preset asan -B "$main_build" -DCMAKE_CXX_FLAGS_DEBUG=-g1 >/dev/null
cmake --build "$main_build" -j "$jobs"

stage "structure: no file in src/ over 600 lines, no function over 60"
bash scripts/check-structure.sh --build "$main_build" --jobs "$jobs"

stage "local S3 server"
if ! wait "$server_pid"; then
  cat "$server_log"
  echo "local S3 server failed to start" >&2
  exit 1
fi
cat "$server_log"
grep -q "already running" "$server_log" || started_server=1
# shellcheck disable=SC1091
source "${S3LECT_S3_DIR:-/tmp/s3lect-local-s3}/env"
# The second store (moto, about a second to start): the integration tests run on both. Without
# moto_server this fails, saying how to install it.
moto_log=$(mktemp)
moto_env=$(bash scripts/local-s3/moto-start.sh 2>"$moto_log") || { cat "$moto_log"; exit 1; }
cat "$moto_log"
grep -q "already running" "$moto_log" || started_moto=1
rm -f "$moto_log"
# shellcheck disable=SC1090
source "$moto_env"

# The TSan build runs in the background at the lowest CPU priority while the ASan+UBSan tests run:
# those mostly wait on timers and the server, and a waking test preempts a nice-19 compiler.
stage "tests: unit, integration, examples, install (ASan+UBSan); TSan build behind"
tsan_log=$(mktemp)
# Its own process group, so that cleanup can stop all of it if the tests fail.
setsid bash -c 'cmake --preset tsan -B "$1" -DCMAKE_CXX_FLAGS_DEBUG=-g1 >/dev/null &&
  exec nice -n 19 cmake --build "$1" -j "$2" --target s3lect_unit_tests s3lect_integration_tests' \
  tsan-build "$tsan_build" "$jobs" >"$tsan_log" 2>&1 &
tsan_pid=$!
ctest --test-dir "$main_build" --output-on-failure -j "$jobs" || {
  status=$?
  failed_build=$main_build
  exit "$status"
}

stage "build: unit and integration tests, TSan ($tsan_build), the rest"
tsan_status=0
wait "$tsan_pid" || tsan_status=$?
tsan_pid=""
grep -v '^\[[0-9]*/[0-9]*\] ' "$tsan_log" || true
if [ "$tsan_status" -ne 0 ]; then
  echo "TSan build failed" >&2
  exit 1
fi

stage "tests: unit, integration (TSan)"
ctest --test-dir "$tsan_build" --output-on-failure -j "$jobs" -L 'unit|integration' \
  -E '^example\.' || {
  status=$?
  failed_build=$tsan_build
  exit "$status"
}

# A second compiler: clang (Debian's, on libstdc++) warns where GCC does not. Warnings are errors.
# Everything is built (integration tests, tool, examples, chaos tools): clang 14 refuses code
# that GCC takes, e.g. a lambda capturing a structured binding. Only the unit tests run here.
stage "build and test: everything built, unit tests run, clang ($clang_build)"
cmake --preset clang -B "$clang_build" >/dev/null
cmake --build "$clang_build" -j "$jobs"
ctest --test-dir "$clang_build" --output-on-failure -j "$jobs" -L '^unit$' || {
  status=$?
  failed_build=$clang_build
  exit "$status"
}

# A third standard library and the other systems' code paths in one build, as on macOS:
# clang 19 with libc++ (GoogleTest compiled from source for it), S3LECT_PORTABLE_FALLBACKS on
# (docs/integration.md#toolchains-and-systems). Warnings are errors.
stage "build and test: library, tool and unit tests, clang 19 + libc++, non-Linux paths ($libcxx_build)"
cmake --preset libcxx-portable -B "$libcxx_build" >/dev/null
cmake --build "$libcxx_build" -j "$jobs" --target s3lect_unit_tests s3lect_cli
ctest --test-dir "$libcxx_build" --output-on-failure -j "$jobs" -L '^unit$' || {
  status=$?
  failed_build=$libcxx_build
  exit "$status"
}

# The demo (the README's first command) builds with the release preset: -O2 finds warnings the
# sanitizer builds at -O0 do not, and warnings are errors.
stage "build: what the demo builds, release preset"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs" --target s3lect_cli example_leader_worker

# The packages, from that release build with the prefix /usr: installed with apt on this machine,
# `s3lect --version`, and the consumer built against them.
stage "packages: .deb and tarball, installed with apt, consumer built against them"
bash tests/package/run.sh --jobs "$jobs"

if [ -x scripts/fuzz.sh ]; then
  stage "fuzzing"
  bash scripts/fuzz.sh --seconds 60
fi

# chaos_sanitizers ARGS...: tests/chaos/chaos.sh ARGS on the ASan+UBSan build, failing on any
# sanitizer report. chaos.sh restarts a node that exits by itself, so a node aborted by a report
# would not fail the run: the nodes' and the proxy's output (kept in the --out directory) is
# searched for reports instead. (log_path would not do: GCC 12's UBSan, linked with ASan, writes
# its reports to stderr whatever log_path says.)
chaos_sanitizers() {
  local out reports
  out=$(mktemp -d /tmp/s3lect-chaos-XXXXXX)
  bash tests/chaos/chaos.sh --bin "$main_build" --out "$out" "$@"
  reports=$(grep -rlE 'runtime error:|ERROR: (Address|Leak)Sanitizer|SUMMARY: [A-Za-z]+Sanitizer' \
    "$out" || true)
  if [ -n "$reports" ]; then
    for report in $reports; do
      printf '\n== sanitizer report in %s ==\n' "$report"
      grep -E -A 30 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$report" | head -n 60
    done
    echo "chaos: sanitizer reports (above; the whole run is in $out)" >&2
    exit 1
  fi
}

if [ -f tests/chaos/chaos.sh ]; then
  # Every stage's leaders run jobs with process trees (grandchildren, setsid daemons), each node
  # in a cgroup of its own, and the faults include SIGKILL and SIGSTOP of s3lect alone: the
  # whole tree must be gone before another node's job starts (docs/chaos.md).
  stage "chaos"
  chaos_sanitizers --duration 150 --min-transitions 50
  # Peer mode both ways, 75 s each: CA certificates, and zero-configuration TLS (key pins).
  stage "chaos, peer-watch mode, CA certificates"
  chaos_sanitizers --duration 75 --min-transitions 25 --peer-watch --peer-tls ca
  stage "chaos, peer-watch mode, zero-configuration TLS"
  chaos_sanitizers --duration 75 --min-transitions 25 --peer-watch --peer-tls zero-config
  # Coordinated leadership under every fault: named successors, hold-offs, ranked crash
  # takeovers and preemption toward the priority-3 node (docs/coordination.md).
  stage "chaos, peer-watch mode, priorities 1,1,2,3"
  chaos_sanitizers --duration 60 --min-transitions 15 --nodes 4 --peer-watch \
    --peer-tls zero-config --priorities 1,1,2,3
  # Node 1's wall clock 5 minutes off (libfaketime), its monotonic clock right: a live leader
  # must keep the lock whichever way the clock is wrong. 60 s runs see 26-29 transitions (the
  # first 3 s have no faults), so 15 leaves room for a slow machine.
  stage "chaos, node 1's clock 5 min ahead"
  chaos_sanitizers --duration 60 --min-transitions 15 --clock-fault ahead
  stage "chaos, peer-watch mode, node 1's clock 5 min behind"
  chaos_sanitizers --duration 60 --min-transitions 15 --clock-fault behind --peer-watch
  # The other two pairs, shorter: S3 mode's first-hand followers behind, peer-watch ahead.
  stage "chaos, node 1's clock 5 min behind"
  chaos_sanitizers --duration 45 --min-transitions 10 --clock-fault behind
  stage "chaos, peer-watch mode, node 1's clock 5 min ahead"
  chaos_sanitizers --duration 45 --min-transitions 10 --clock-fault ahead --peer-watch
  # `run --slots 2` on four nodes: each slot checked on its own, so at most two commands at once.
  # 120 s on the debug build saw 53 and 63 transitions per slot: 15 per 60 s leaves room.
  stage "chaos, 2 slots on 4 nodes"
  chaos_sanitizers --duration 60 --min-transitions 15 --nodes 4 --slots 2
  # Fenced writes (about 65 s): leaders write with `s3lect put` every 200 ms while the driver
  # also freezes leaders' s3lect alone; no stale write may be accepted, and zombies must be
  # refused with exit 10 (a 60 s run sees about 13 zombies and 50 refusals).
  stage "chaos, fencing mode, peer-watch"
  chaos_sanitizers --duration 60 --fencing --peer-watch
  # Where no writable cgroup v2 exists, chaos.sh finds a node's processes through /proc (tags
  # in their environment, parent links) and stops them one by one: 60 s of that path too.
  stage "chaos, node processes found through /proc"
  chaos_sanitizers --duration 60 --min-transitions 15 --no-cgroup
fi

if [ -f tests/chaos/chaos.sh ]; then
  # The same election driver on the second store: chaos.sh reads the store from S3LECT_TEST_*.
  stage "second store: three s3lect run nodes on moto (chaos.sh)"
  (
    export S3LECT_TEST_ENDPOINT_HTTP=$S3LECT_MOTO_ENDPOINT_HTTP S3LECT_TEST_BUCKET=$S3LECT_MOTO_BUCKET
    export S3LECT_TEST_ACCESS_KEY=$S3LECT_MOTO_ACCESS_KEY S3LECT_TEST_SECRET_KEY=$S3LECT_MOTO_SECRET_KEY
    export S3LECT_TEST_REGION=$S3LECT_MOTO_REGION
    chaos_sanitizers --duration 60 --min-transitions 15
  )
fi

end_stage
echo
echo "all tests passed"
