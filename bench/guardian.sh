#!/usr/bin/env bash
# The job guardian of `s3lect run`, measured as a user meets it: one `s3lect run` on the local
# radosgw, defaults, leading with the command `sh -c 'sleep 600; echo done'`
# (issue 22's) or, with --tree, a command that also starts a background child and a setsid
# daemon. Each round:
#   1. waits until the command runs, then reads what the guardian costs (its processes' RSS and
#      PSS from /proc; the PID namespace adds its init and the process waiting for it);
#   2. SIGKILLs the s3lect process alone and times how long until every process of the job is
#      gone: each process of the job holds the write end of a FIFO the bench reads, and the
#      kernel closes it when the last one dies (end of file);
#   3. times the release the guardian then writes (its log line's time) from the kill.
# Baseline, in the same run: the same tree SIGKILLed directly (pkill -KILL), timed the same way:
# the ratio says what the guardian adds to the kernel's own work.
# With --fault, step 2 is another fault (docs/safety-and-fencing.md#what-can-still-keep-a-job-past-its-lease),
# each against its own baseline in the same run, and the time is from the fault to the job gone:
#   pgstop          SIGSTOP of s3lect's whole process group (s3lect started in a session of its
#                   own, as a service or a shell's job is): the guardian, in a session of its own,
#                   ends the job at the renew deadline of the last renewal. Baseline: SIGSTOP of
#                   the s3lect process alone, which meets the same deadline.
#   guardian-stop   the command ignores SIGTERM and stops its guardian (its parent: --isolation
#                   guardian or cgroup) with SIGSTOP every 50 ms; then SIGTERM to s3lect, which
#                   kills the tree itself when the guardian does not report its end within the
#                   grace and a margin. Baseline: the same command, its guardian left alone.
#
# usage: bench/guardian.sh [--runs N] [--tree] [--isolation LEVEL] [--s3lect PATH] [--fault F]
#   --runs N         rounds (default 10)
#   --tree           the command forks a child and a setsid daemon as well
#   --isolation L    passed to s3lect run (default: auto, what the system allows)
#   --s3lect PATH    the binary (default: build/release/bin/s3lect, built here with the guardian)
#   --fault F        kill (default), pgstop or guardian-stop
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  echo "usage: $0 [--runs N] [--tree] [--isolation LEVEL] [--s3lect PATH]" >&2
  exit 2
}
runs=10 tree=0 isolation=auto s3lect='' fault=kill
while (($#)); do
  case $1 in
    --runs) (($# >= 2)) || usage; runs=$2; shift 2 ;;
    --fault) (($# >= 2)) || usage; fault=$2; shift 2 ;;
    --tree) tree=1; shift ;;
    --isolation) (($# >= 2)) || usage; isolation=$2; shift 2 ;;
    --s3lect) (($# >= 2)) || usage; s3lect=$(realpath -e -- "$2"); shift 2 ;;
    *) usage ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage
[[ $fault == kill || $fault == pgstop || $fault == guardian-stop ]] || usage
cd "$root"
source scripts/lib/build.sh
source scripts/lib/local-s3.sh
source scripts/lib/measure.sh
source scripts/lib/processes.sh
[[ -n $s3lect ]] || s3lect=$(release_s3lect)
use_local_s3

work=$(mktemp -d "${TMPDIR:-/tmp}/s3lect-bench-guardian.XXXXXX")
node_pid=''
kill_round() {
  if [[ -n $node_pid ]]; then kill -KILL "$node_pid" 2>/dev/null || true; fi
  if [[ -n ${marker:-} ]]; then pkill -KILL -f "sleep 600\\.$marker" 2>/dev/null || true; fi
}
on_exit_run kill_round "$work"

# The job: fd 9 (the FIFO's write end) is inherited by every process it starts.
job_script() {
  local fifo=$1 marker=$2
  if ((tree)); then
    echo "exec 9>$fifo; sleep 600.${marker}1 & (setsid sleep 600.${marker}2 &); sleep 600.${marker}3; echo done"
  else
    echo "exec 9>$fifo; sleep 600.${marker}3; echo done"
  fi
}

# Sums VmRSS and Pss (kB) of the guardian's processes: s3lect's child s3lect-guardian and, with
# a PID namespace, its helpers s3lect-ns-wait and s3lect-ns-init below it.
guardian_memory() {
  local rss=0 pss=0 pid kb
  local -a pending=("$1") found=()
  while ((${#pending[@]})); do
    for pid in $(pgrep -P "${pending[0]}"); do
      case $(cat "/proc/$pid/comm" 2>/dev/null) in
        s3lect-guardia* | s3lect-ns-*) found+=("$pid") pending+=("$pid") ;;
      esac
    done
    pending=("${pending[@]:1}")
  done
  for pid in "${found[@]}"; do
    kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || continue
    rss=$((rss + kb))
    kb=$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null) || kb=0
    pss=$((pss + kb))
  done
  echo "$rss $pss"
}

# The baseline: the same tree started directly (no s3lect), its processes SIGKILLed by one
# `kill` (the PIDs found beforehand), timed the same way. Echoes microseconds.
baseline_round() {
  local fifo=$work/base.fifo start end pids
  marker=$((RANDOM * 32768 + RANDOM))
  rm -f "$fifo" && mkfifo "$fifo"
  setsid sh -c "$(job_script "$fifo" "$marker")" >/dev/null 2>&1 &
  exec 8<"$fifo"
  sleep 0.2
  pids=$(pgrep -f "sleep 600\\.$marker|exec 9>$fifo" | tr '\n' ' ')
  start=$(date +%s%N)
  # shellcheck disable=SC2086  # a list of PIDs
  kill -KILL $pids
  cat <&8 >/dev/null
  end=$(date +%s%N)
  exec 8<&-
  echo $(((end - start) / 1000))
}

# One round with s3lect: prints "kill_to_gone_us release_ms rss_kb pss_kb processes".
guardian_round() {
  local round=$1 fifo=$work/job$1.fifo log=$work/node$1.log key start end released mem
  marker=$((RANDOM * 32768 + RANDOM))
  key="bench/guardian/$(date +%s)-$$-$round.json"
  rm -f "$fifo" && mkfifo "$fifo"
  "$s3lect" run --lock "s3://$S3LECT_TEST_BUCKET/$key" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" \
    --path-style --isolation "$isolation" -- sh -c "$(job_script "$fifo" "$marker")" \
    >/dev/null 2>"$log" &
  node_pid=$!
  exec 8<"$fifo"  # Blocks until the job opens its end: the command runs.
  sleep 0.5       # Past start-up: the guardian idles as it will for hours.
  mem=$(guardian_memory "$node_pid")
  local processes
  processes=$(pgrep -c -f "^sleep 600\\.$marker")
  start=$(date +%s%N)
  kill -KILL "$node_pid"
  cat <&8 >/dev/null
  end=$(date +%s%N)
  exec 8<&-
  wait "$node_pid" 2>/dev/null || true
  node_pid=''
  for _ in $(seq 200); do
    grep -q 'lock released for s3lect' "$log" && break
    sleep 0.01
  done
  released=$(sed -n 's/^time=\([^ ]*\) .*lock released for s3lect.*/\1/p' "$log" | head -1)
  local release_ms=-1
  if [[ -n $released ]]; then
    release_ms=$(($(date -d "$released" +%s%3N) - start / 1000000))
  fi
  echo "$(((end - start) / 1000)) $release_ms $mem $processes"
}

max() { sort -n | tail -1; }

# One round of another fault: prints the microseconds from the fault to the job gone.
#   fault_round ROUND pgstop|freeze|guardian-stop|term
fault_round() {
  local round=$1 kind=$2 fifo=$work/fault$1.fifo log=$work/fault-$2-$1.log key start end
  local body
  marker=$((RANDOM * 32768 + RANDOM))
  key="bench/guardian/$(date +%s)-$$-$kind-$round.json"
  rm -f "$fifo" && mkfifo "$fifo"
  body="exec 9>$fifo; sleep 600.${marker}3"
  case $kind in
    guardian-stop) body="trap '' TERM; exec 9>$fifo; sleep 600.${marker}1 &
      while :; do kill -STOP \$PPID; sleep 0.05; done" ;;
    term) body="trap '' TERM; exec 9>$fifo; sleep 600.${marker}1 & while :; do sleep 0.05; done" ;;
  esac
  setsid "$s3lect" run --lock "s3://$S3LECT_TEST_BUCKET/$key" \
    --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style --isolation "$isolation" \
    -- sh -c "$body" >/dev/null 2>"$log" &
  node_pid=$!
  exec 8<"$fifo"  # the command runs
  sleep 1
  start=$(date +%s%N)
  case $kind in
    pgstop) kill -STOP -- "-$node_pid" ;;
    freeze) kill -STOP "$node_pid" ;;
    guardian-stop | term) kill -TERM "$node_pid" ;;
  esac
  cat <&8 >/dev/null
  end=$(date +%s%N)
  exec 8<&-
  kill -CONT -- "-$node_pid" 2>/dev/null || true
  kill -KILL "$node_pid" 2>/dev/null || true
  wait "$node_pid" 2>/dev/null || true
  node_pid=''
  echo $(((end - start) / 1000))
}

if [[ $fault != kill ]]; then
  baseline_kind=freeze
  [[ $fault == guardian-stop ]] && baseline_kind=term
  echo "s3lect: $s3lect ($("$s3lect" --version)), isolation $isolation, fault $fault" \
    "(baseline: $baseline_kind), $runs rounds, defaults (lease 15 s, renew deadline 10 s," \
    "kill grace 3 s)"
  : >"$work/fault" && : >"$work/fault-baseline"
  for round in $(seq "$runs"); do
    fault_round "$round" "$fault" >>"$work/fault"
    fault_round "$round" "$baseline_kind" >>"$work/fault-baseline"
  done
  paste "$work/fault" "$work/fault-baseline" | awk -v f="$fault" -v b="$baseline_kind" \
    '{ printf "round %d: %s -> job gone %.1f ms; %s -> %.1f ms\n", NR, f, $1 / 1000, b, $2 / 1000 }'
  awk -v f="$fault" -v b="$baseline_kind" -v g="$(median <"$work/fault")" \
    -v m="$(max <"$work/fault")" -v base="$(median <"$work/fault-baseline")" 'BEGIN {
    printf "%s -> every process of the job gone: median %.1f ms, max %.1f ms\n", f, g / 1000, m / 1000
    printf "baseline %s, same run: median %.1f ms (ratio %.2f)\n", b, base / 1000, g / base
  }'
  exit 0
fi

echo "s3lect: $s3lect ($("$s3lect" --version)), isolation $isolation, tree $tree, $runs rounds"
: >"$work/guardian" && : >"$work/baseline"
for round in $(seq "$runs"); do
  guardian_round "$round" >>"$work/guardian"
  baseline_round >>"$work/baseline"
done
awk '{ printf "round %d: job gone %.2f ms after kill -9 of s3lect, lock released after %d ms, guardian RSS %d kB PSS %d kB, %d sleeps in the job\n", NR, $1 / 1000, $2, $3, $4, $5 }' "$work/guardian"
gone_median=$(cut -d' ' -f1 "$work/guardian" | median)
gone_max=$(cut -d' ' -f1 "$work/guardian" | max)
base_median=$(median <"$work/baseline")
release_median=$(cut -d' ' -f2 "$work/guardian" | median)
awk -v g="$gone_median" -v m="$gone_max" -v b="$base_median" 'BEGIN {
  printf "kill -9 of s3lect -> every process of the job gone: median %.2f ms, max %.2f ms\n", g / 1000, m / 1000
  printf "baseline, the same tree SIGKILLed directly by one kill: median %.2f ms (ratio %.1f)\n", b / 1000, g / b
}'
echo "kill -9 of s3lect -> lock released by the guardian: median $release_median ms"
echo "guardian cost while the job runs: RSS $(cut -d' ' -f3 "$work/guardian" | median) kB," \
  "PSS $(cut -d' ' -f4 "$work/guardian" | median) kB (median; the guardian's processes)"
