#!/usr/bin/env bash
# Runs every test: installs what is missing, starts the local Ceph radosgw, then
#   1. builds everything under ASan+UBSan (warnings are errors) and runs every CTest label:
#      unit, integration (against radosgw), the examples and the install test;
#   2. builds the unit and integration tests under TSan and runs them;
#   2b. builds the release packages, installs them with apt and builds a consumer against them
#       (tests/package/run.sh: this machine is meant to be thrown away; it removes them again);
#   3. fuzzes (scripts/fuzz.sh) and runs the chaos test (tests/chaos/chaos.sh), when present,
#      jobs that attack their own guardian included; meanwhile, in the background, compiles
#      every unit with clang 14, syntax only (scripts/syntax-check.sh: clang 14's errors and
#      warnings, no code generated) and checks src/'s structure rules with clang-tidy
#      (scripts/check-structure.sh), then builds the library, the tool and the unit tests with
#      clang 19 and libc++, taking the code paths of other POSIX systems (macOS, FreeBSD)
#      instead of Linux's; its unit tests run after the chaos stages;
#   4. runs an election of three `s3lect run` nodes (chaos.sh) on moto, the second store, whose
#      S3 client and elector integration tests run in step 1 beside the radosgw's (and the Azure
#      Blob client's and the elector's on Azurite, the Azure Blob server, started beside them);
#   5. the newest toolchain (scripts/newest-toolchain.sh): in a Debian sid chroot with GCC 15 and
#      the newest Boost, the release preset's build of the library, the tool and the unit tests,
#      the unit tests and the consumer matrix. The chroot and the build run in the background
#      from the start, at the lowest CPU priority, on the CPU the other stages leave idle (their
#      tests and chaos runs mostly wait); the stage at the end waits for what is left of the
#      build, then runs the tests at normal priority (none starved of CPU).
# There is no separate plain debug build: step 1 runs every test a plain build would, with the
# sanitizers watching, and CI must fit in 90 minutes on two cores. Prints each stage's wall and
# CPU time. Stops the server only if it started it.
#
# Env: S3LECT_BUILD_PREFIX  where the build trees go, "<prefix>asan", "<prefix>tsan",
#                           "<prefix>clang" and "<prefix>libcxx-portable"
#                           (default build/, the presets' directories)
#      S3LECT_JOBS          parallel compile and test jobs (default: nproc)
#      S3LECT_NEWEST_TOOLCHAIN=0  skips stage 5 (it needs root and debootstrap)
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
  check_background_stages
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

# ------------------------------------------------------------------ background stages
# A stage that runs in the background (its own session, at nice 19) from its start to the
# stage that waits for it; check_background_stages, at every stage boundary, ends the run as
# soon as one has failed. Its output goes to a log, shown when it is waited for.
newest_pid="" newest_log="" newest_status="" newest_dir=""

# low_priority_session COMMAND...: COMMAND in a session of its own (so that cleanup can stop all
# of it) at the lowest CPU priority. With the kernel's autogroup scheduling
# (/proc/sys/kernel/sched_autogroup_enabled, on in Debian's kernels) every session is a
# scheduling group of its own, and a nice value counts only against processes of the same group:
# a `setsid nice -n 19` build took as much CPU as the stages in front of it (seen: the sid
# build's two compilers at 50 % each beside the ASan build's two). So the new session's group
# itself gets nice 19 (/proc/self/autogroup), and the command nice 19 within it for kernels
# without autogroups. Does not fork before exec: $! is the session's leader.
low_priority_session() {
  setsid bash -c '{ echo 19 >/proc/self/autogroup; } 2>/dev/null || true
    exec nice -n 19 "$@"' low-priority-session "$@"
}

# full_priority_session PID: gives the background session led by PID the CPU as any stage has
# it (its autogroup's nice back to 0), when a stage waits for it alone. The other background
# session keeps nice 19, so it no longer takes half of the CPU from the one waited for (seen: the
# TSan build's tail took 1,106 s beside the sid build, which had the other half). Needs root.
full_priority_session() {
  { echo 0 >"/proc/$1/autogroup"; } 2>/dev/null || true
}

# start_newest_toolchain: stage 5's chroot and build in the background
# (scripts/newest-toolchain.sh --steps build), kept in newest_dir for its tests.
start_newest_toolchain() {
  [ "${S3LECT_NEWEST_TOOLCHAIN:-1}" != 0 ] || return 0
  newest_log=$(mktemp)
  newest_dir=$(mktemp -d /var/tmp/s3lect-newest-toolchain-XXXXXX)
  low_priority_session bash scripts/newest-toolchain.sh --jobs "$jobs" --keep "$newest_dir" \
    --steps build >"$newest_log" 2>&1 &
  newest_pid=$!
}

# wait_newest_toolchain: waits for stage 5's build, shows its output (without the build's
# progress lines), adds its steps' times to the summary, then runs its tests and removes the
# chroot.
wait_newest_toolchain() {
  [ -n "$newest_log" ] || { echo "skipped (S3LECT_NEWEST_TOOLCHAIN=0)"; return 0; }
  local line
  if [ -z "$newest_status" ]; then
    full_priority_session "$newest_pid"
    newest_status=0
    wait "$newest_pid" || newest_status=$?
  fi
  newest_pid=""
  grep -v '^\[[0-9]*/[0-9]*\] ' "$newest_log" || true
  while IFS= read -r line; do
    summary+=("   (in the background) ${line#-- }")
  done < <(grep -E '^-- newest toolchain: .*: [0-9]+ s wall$' "$newest_log")
  [ "$newest_status" -eq 0 ] || { echo "newest toolchain failed (above)" >&2; exit 1; }
  rm -f "$newest_log"
  bash scripts/newest-toolchain.sh --jobs "$jobs" --keep "$newest_dir" --steps test --remove
  newest_dir=""
}

# start_clang_builds: the clang 14 syntax pass and the clang 19 + libc++ build, one after the
# other in one background session, while the fuzzing and chaos stages leave the CPU mostly idle
# (chaos nodes wait on their leases). Their stage at the end waits for what is left and runs the
# libc++ build's unit tests at normal priority.
clang_pid="" clang_log="" clang_status=""
start_clang_builds() {
  clang_log=$(mktemp)
  low_priority_session bash -c 'set -e
    # The docs code blocks are extracted at build time (tests/docs/): only that, nothing compiled.
    cmake --preset clang -B "$1" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
    cmake --build "$1" -j "$3" --target s3lect_docs_snippet_sources
    bash scripts/syntax-check.sh --build "$1" --jobs "$3"
    echo "-- clang 14 syntax pass: done after $SECONDS s"
    # The structure rules (no file in src/ over 600 lines, no function over 60): clang-tidy,
    # the same clang 14 front end, over the same compile commands.
    bash scripts/check-structure.sh --build "$1" --jobs "$3"
    echo "-- structure check: done after $SECONDS s"
    cmake --preset libcxx-portable -B "$2" >/dev/null
    cmake --build "$2" -j "$3" --target s3lect_unit_tests s3lect_cli
    echo "-- clang 19 + libc++ build: done after $SECONDS s"' \
    clang-builds "$clang_build" "$libcxx_build" "$jobs" >"$clang_log" 2>&1 &
  clang_pid=$!
}

# wait_clang_builds: waits for start_clang_builds' session and shows its output (without the
# build's progress lines).
wait_clang_builds() {
  if [ -z "$clang_status" ]; then
    full_priority_session "$clang_pid"
    clang_status=0
    wait "$clang_pid" || clang_status=$?
  fi
  clang_pid=""
  grep -v '^\[[0-9]*/[0-9]*\] ' "$clang_log" || true
  [ "$clang_status" -eq 0 ] || { echo "clang builds failed (above)" >&2; exit 1; }
  rm -f "$clang_log"
}

check_background_stages() {
  if [ -n "$clang_pid" ] && [ -z "$clang_status" ] && ! kill -0 "$clang_pid" 2>/dev/null; then
    clang_status=0
    wait "$clang_pid" || clang_status=$?
    if [ "$clang_status" -ne 0 ]; then
      clang_pid=""
      grep -v '^\[[0-9]*/[0-9]*\] ' "$clang_log" | tail -n 60
      echo "clang builds (in the background) failed (above; the whole log: $clang_log)" >&2
      exit 1
    fi
  fi
  [ -n "$newest_pid" ] && [ -z "$newest_status" ] && ! kill -0 "$newest_pid" 2>/dev/null ||
    return 0
  newest_status=0
  wait "$newest_pid" || newest_status=$?
  [ "$newest_status" -ne 0 ] || return 0
  newest_pid=""
  tail -n 60 "$newest_log"
  echo "newest toolchain (in the background) failed (above; the whole log: $newest_log)" >&2
  exit 1
}

started_server=0
started_moto=0
started_azurite=0
tsan_pid=""
failed_build=""  # The build tree whose ctest run failed, for the report at the end.
cleanup() {
  local status=$?
  if [ -n "$tsan_pid" ]; then kill -- "-$tsan_pid" 2>/dev/null || true; fi
  if [ -n "$clang_pid" ] && [ -z "$clang_status" ]; then
    kill -- "-$clang_pid" 2>/dev/null || true
  fi
  # Its script unmounts and removes its chroot when stopped.
  if [ -n "$newest_pid" ] && [ -z "$newest_status" ]; then
    kill -- "-$newest_pid" 2>/dev/null || true
    wait "$newest_pid" 2>/dev/null || true
  fi
  if [ -n "$newest_dir" ]; then  # unmounted by now; removed by the script, which checks
    bash scripts/newest-toolchain.sh --keep "$newest_dir" --steps none --remove || true
  fi
  end_stage
  if [ ${#summary[@]} -gt 0 ]; then
    printf '\n== stages ==\n'
    printf '%s\n' "${summary[@]}"
  fi
  if [ -n "$failed_build" ]; then report_failed_tests "$failed_build"; fi
  if [ "$started_server" -eq 1 ]; then bash scripts/local-s3/stop.sh || true; fi
  if [ "$started_moto" -eq 1 ]; then bash scripts/local-s3/moto-stop.sh || true; fi
  if [ "$started_azurite" -eq 1 ]; then bash scripts/local-s3/azurite-stop.sh || true; fi
  rm -f "$times_file"
  exit "$status"
}
trap cleanup EXIT

# ------------------------------------------------------------------ stages
stage "dependencies"
bash scripts/install-deps.sh
bash scripts/local-s3/install.sh
# Azurite, the Azure Blob server, from npm (pinned; seconds when already installed).
bash scripts/local-s3/azurite-install.sh >/dev/null

start_newest_toolchain

# The server starts in the background while the first build runs: both take a while.
server_log=$(mktemp)
bash scripts/local-s3/start.sh >"$server_log" 2>&1 &
server_pid=$!

stage "build: everything, ASan+UBSan ($main_build)"
# Line tables (-g1) are all a sanitizer report needs; they compile ~10% faster than full -g and
# make far smaller objects to link. The TSan build below uses them too.
cmake --preset asan -B "$main_build" -DCMAKE_CXX_FLAGS_DEBUG=-g1 >/dev/null
cmake --build "$main_build" -j "$jobs"

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
# The Azure Blob store (Azurite, in memory, about a second to start): the Azure client's and the
# elector's store-generic integration tests run on it.
azurite_log=$(mktemp)
azurite_env=$(bash scripts/local-s3/azurite-start.sh 2>"$azurite_log") || {
  cat "$azurite_log"
  exit 1
}
cat "$azurite_log"
grep -q "already running" "$azurite_log" || started_azurite=1
rm -f "$azurite_log"
# shellcheck disable=SC1090
source "$azurite_env"

# The TSan build runs in the background at the lowest CPU priority while the ASan+UBSan tests run:
# those mostly wait on timers and the server, and a waking test preempts a nice-19 compiler.
stage "tests: unit, integration, examples, install (ASan+UBSan); TSan build behind"
tsan_log=$(mktemp)
# Its own session, so that cleanup can stop all of it if the tests fail.
low_priority_session bash -c 'cmake --preset tsan -B "$1" -DCMAKE_CXX_FLAGS_DEBUG=-g1 >/dev/null &&
  exec cmake --build "$1" -j "$2" --target s3lect_unit_tests s3lect_integration_tests' \
  tsan-build "$tsan_build" "$jobs" >"$tsan_log" 2>&1 &
tsan_pid=$!
ctest --test-dir "$main_build" --output-on-failure -j "$jobs" || {
  status=$?
  failed_build=$main_build
  exit "$status"
}

stage "build: unit and integration tests, TSan ($tsan_build), the rest"
full_priority_session "$tsan_pid"
tsan_status=0
wait "$tsan_pid" || tsan_status=$?
tsan_pid=""
grep -v '^\[[0-9]*/[0-9]*\] ' "$tsan_log" || true
if [ "$tsan_status" -ne 0 ]; then
  echo "TSan build failed" >&2
  exit 1
fi

stage "tests: unit, integration (TSan)"
# Not the two randomised simulations of the sans-I/O core (ElectionCoreSimulation,
# CandidateFloodSimulation): one thread, no Asio, no shared state, so TSan has nothing to watch
# in them, and they are half of this stage's CPU (320 of 602 test-seconds). ASan+UBSan ran them.
ctest --test-dir "$tsan_build" --output-on-failure -j "$jobs" -L 'unit|integration' \
  -E '^(example\.|ElectionCoreSimulation\.|CandidateFloodSimulation\.)' || {
  status=$?
  failed_build=$tsan_build
  exit "$status"
}

# The demo (the README's first command) builds with the release preset: -O2 finds warnings the
# sanitizer builds at -O0 do not, and warnings are errors.
# The package preset is the release preset with the prefix /usr, in the same build tree: the
# packages stage below builds from it, so nothing is compiled twice.
stage "build: what the demo builds, release preset (as the packages' build)"
cmake --preset package >/dev/null
cmake --build build/release -j "$jobs" --target s3lect_cli example_leader_worker

# The packages, from that release build with the prefix /usr: installed with apt on this machine,
# `s3lect --version`, and the consumer built against them.
stage "packages: .deb and tarball, installed with apt, consumer built against them"
bash tests/package/run.sh --jobs "$jobs"

# A second compiler: clang 14 (Debian's, on libstdc++) warns where GCC does not and refuses code
# that GCC takes (e.g. a lambda capturing a structured binding). Every unit the clang preset
# configures (library, tool, every test, the chaos and bench programs) is compiled with
# -fsyntax-only: the whole front end, every warning an error, no code generated. Then a third
# standard library and the other systems' code paths in one build, as on macOS: clang 19 with
# libc++ (GoogleTest compiled from source for it), S3LECT_PORTABLE_FALLBACKS on
# (docs/integration.md#toolchains-and-systems), warnings as errors; its unit tests run at the end.
# Between the two, the structure check (clang-tidy, over the clang tree's compile commands).
# All in the background from here on, while fuzzing and chaos runs leave CPU idle: CI is bound
# by its two cores' CPU time, and this is where some is left.
start_clang_builds

if [ -x scripts/fuzz.sh ]; then
  stage "fuzzing"
  bash scripts/fuzz.sh --seconds 30 --jobs "$jobs"
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
  # --attacks: one job in three attacks its guardian. Here, in a PID namespace, it tries to take
  # the guardian's descriptors from the namespace's init (none may be taken).
  stage "chaos"
  chaos_sanitizers --duration 100 --min-transitions 33 --attacks
  # Without a PID namespace the hostile jobs stop their guardian (SIGSTOP) again and again; with
  # SIGTERMs, kills and stops of s3lect's process group, no job may outlive its leadership.
  stage "chaos, jobs that stop their guardian (--isolation cgroup)"
  chaos_sanitizers --duration 60 --min-transitions 15 --attacks --isolation cgroup
  # Peer mode both ways, 60 s each: CA certificates, and zero-configuration TLS (key pins).
  stage "chaos, peer-watch mode, CA certificates"
  chaos_sanitizers --duration 60 --min-transitions 20 --peer-watch --peer-tls ca
  stage "chaos, peer-watch mode, zero-configuration TLS"
  chaos_sanitizers --duration 60 --min-transitions 20 --peer-watch --peer-tls zero-config
  # Coordinated leadership under every fault: named successors, hold-offs, ranked crash
  # takeovers and preemption toward the priority-3 node (docs/coordination.md), while a forger
  # sends whoever leads a fresh priority-1000000 claim every 900 ms (--claim-flood, issue 35):
  # no forged id may ever be named in a record or lead.
  stage "chaos, peer-watch mode, priorities 1,1,2,3, claim flood"
  chaos_sanitizers --duration 60 --min-transitions 15 --nodes 4 --peer-watch \
    --peer-tls zero-config --priorities 1,1,2,3 --claim-flood
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
  # in their environment, parent links) and stops them one by one: 45 s of that path too.
  stage "chaos, node processes found through /proc"
  chaos_sanitizers --duration 45 --min-transitions 10 --no-cgroup
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

if [ -f tests/chaos/chaos.sh ]; then
  # Azure Blob Storage (Azurite): the election under every fault, jobs attacking their guardians
  # included, then fenced writes with zombies in peer-watch mode (issue 38).
  stage "Azure Blob store: three s3lect run nodes on Azurite, az:// (chaos.sh --azure)"
  chaos_sanitizers --azure --duration 45 --min-transitions 10 --attacks
  stage "Azure Blob store: fencing mode, peer-watch (chaos.sh --azure)"
  chaos_sanitizers --azure --duration 45 --fencing --peer-watch
fi

stage "clang 14 syntax pass, structure check, clang 19 + libc++ build (what is left); its unit tests"
wait_clang_builds
ctest --test-dir "$libcxx_build" --output-on-failure -j "$jobs" -L '^unit$' || {
  status=$?
  failed_build=$libcxx_build
  exit "$status"
}

stage "newest toolchain: sid chroot, GCC 15, the newest Boost (what is left of it)"
wait_newest_toolchain

end_stage
echo
echo "all tests passed"
