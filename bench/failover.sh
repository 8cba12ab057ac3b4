#!/usr/bin/env bash
# Failover benchmark on the local Ceph radosgw, S3 mode (no peer health checks). Each run starts
# three candidates (examples/leader_worker.cpp) on a fresh lock key, waits for a leader, stops it
# with SIGTERM and times the graceful handover (the next "leader" line minus the signal time),
# then crashes the new leader (SIGKILL, see --crash) and times the crash failover. Every run is
# also checked for two leaders at once (fatal). The same driver as scripts/demo-election.sh.
# With --cli the candidates are `s3lect run` processes instead (scripts/lib/cli-candidate.sh; the
# leader's command prints the event lines), and with --peer-watch they run in peer mode with
# watches (`s3lect run --peer --peer-watch`, a throw-away CA and a certificate per node for
# 127.0.0.1, each node's health endpoint on its own port). Both also check that no command's
# process tree outlived its leadership into the next one's (fatal): every process of a command
# holds a FIFO the driver reads, whose end of file marks the moment the last one was gone.
#
# usage: bench/failover.sh [--runs N] [--lease-ms N] [--hold-ms N] [--program PATH] [--keep-logs]
#                          [--cli | --peer-watch] [--s3lect PATH] [--base-port N] [--stable]
#                          [--stratified] [--over-reads] [--crash kill|kill-all|stop] [--azure]
#   --runs N      rounds (default 5); one takes about L + 2F + 5 s (about 30 s with defaults)
#   --lease-ms N  lease in ms, renewal and follower polls every third of it (default: the
#                 library's defaults, lease 15 s, renewal every 5 s)
#   --hold-ms N   signal each leader N ms after its election (default: 1 s + a random part of
#                 F, so the signal falls at a random point between two renewals)
#   --program P   candidate program (default: build/release/examples/example_leader_worker,
#                 built here)
#   --stable      signal each leader 11 s + a random part of F after its election (a new random
#                 value each run): the followers have gone stable by then (two reads of the
#                 same leader), and in peer-watch mode they hold a watch. Overrides --hold-ms.
#   --stratified  instead of a random part of F, run i of N takes (i - 1/2)/N of F: the signals
#                 fall evenly between two renewals, so that the median of N runs is the median
#                 over all signal times instead of a sample of it (crash failover's spread is F).
#   --over-reads  with --stable: the random (or stratified) part spans the stable followers'
#                 read interval I = 6 F (the CLI's proportions: 30 s by default) instead of F, so
#                 that the signal falls at any point of their read cycle. In S3 mode a stable
#                 follower learns of a release, or of a leader that stopped renewing, only at
#                 such a read, so handover and failover depend on that phase; with F alone they
#                 sample only the part of the cycle 11–11 + F s after the election.
#   --cli         candidates are `s3lect run` in S3 mode (the handover then includes starting
#                 the leader's command, a few ms)
#   --peer-watch  candidates are `s3lect run --peer --peer-watch` (implies --cli)
#   --s3lect P    the s3lect binary for --cli and --peer-watch (default: build/release/bin/s3lect,
#                 built here)
#   --base-port N peer-watch mode: the nodes' health endpoints listen on 127.0.0.1:N+1..N+3
#                 (default 18440)
#   --azure       the store is Azurite, the Azure Blob server (az://; the env file of
#                 scripts/local-s3/azurite-start.sh must be sourced): the same runs, to set
#                 beside the radosgw's
#   --crash C     how the second leader fails (default kill):
#                 kill      SIGKILL to its process: with --cli or --peer-watch the s3lect process
#                           alone, its machine staying up (the job guardian lives on)
#                 kill-all  with --cli or --peer-watch: SIGKILL to s3lect and its guardian at
#                           once, so nobody releases the lock: what a crashed leader gave before
#                           the guardian (and what a dead machine gives, except that here the
#                           kernel still closes the connections)
#                 stop      SIGSTOP to the s3lect process alone (the guardian and the job run on),
#                           SIGCONT once the next leader's command has started (or after 3 L);
#                           with --cli or --peer-watch
#
# What to expect, with lease L, renewal interval F and infrequent interval I (defaults 15 s,
# 5 s, 30 s):
# - Crash failover of a leader that nobody releases for (examples/leader_worker, --crash
#   kill-all, --crash stop) ≈ L − (time since the dead leader's last renewal). With the default
#   hold the kill falls at a random point between two renewals: median ≈ L − F/2 (12.5 s),
#   min ≈ L − F (10 s), max ≈ L (15 s). A follower counts the lease from its own first read of
#   the last record (expiry rule (b)) or from the record's lastUpdated plus max_clock_skew
#   (rule (c), 2 s), whichever comes first, so up to min(F, 2 s) more is within the design.
# - `s3lect run` killed alone (--crash kill with --cli or --peer-watch): its guardian kills the
#   job and releases the lock within tens of ms, so the followers take over at their next read
#   as after a graceful release (below); a frozen s3lect (--crash stop) releases nothing and its
#   guardian stops the job at the renew deadline, so takeover waits for the lease as above.
# - Graceful handover: the leader writes a released record at once, but in S3 mode followers
#   only learn of it at their next read: up to F / 2 (2.5 s) with the default first-hand reads
#   (every F / 2, settled or not). Peer mode's watch, and etcd or ZooKeeper, push the release:
#   milliseconds (docs/anchors.md: 3–5 ms).
# - With `--follower-reads economy` (the schedule before issue 26; set it through
#   BENCH_RUN_OPTIONS for --cli), followers read every F until they have gone stable (two reads
#   showing the same leader renewing, about F after an election), then only every I: both
#   handover and failover then take up to I (30 s), which --stable measures.
#   A first-hand follower sees the dead leader's last renewal within F / 2 of its write, so a
#   crash nobody releases for (kill-all) is taken over L − F … L + F / 2 after it.
# - Peer-watch mode: followers keep a watch open on the leader's health endpoint. A graceful
#   release answers the watch at once (milliseconds). A killed s3lect's closed connection sends
#   the followers to re-read the store at once and then at 50, 100, 200 ms … (up to F), so they
#   find its guardian's release within milliseconds. With no release (kill-all, a frozen
#   s3lect, a dead machine) the expiry rule applies, so crash failover stays about L minus the
#   time since the last renewal, as in S3 mode.
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)

# shellcheck source=scripts/lib/election-driver.sh
source "$root/scripts/lib/election-driver.sh"

usage() {
  echo "usage: $0 [--runs N] [--lease-ms N] [--hold-ms N] [--program PATH] [--keep-logs]" \
    "[--cli | --peer-watch] [--s3lect PATH] [--base-port N] [--stable] [--stratified]" \
    "[--over-reads] [--crash kill|kill-all|stop]" >&2
  exit 2
}

runs=5
ED_BIN=
ED_LEASE_MS=
ED_HOLD_MS=
ED_CRASH='kill'
mode=s3 cli=0 s3lect_bin='' base_port=18440 stable=0 stratified=0 over_reads=0 azure=0
while (($#)); do
  case $1 in
    --runs) (($# >= 2)) || usage; runs=$2; shift 2 ;;
    --lease-ms) (($# >= 2)) || usage; ED_LEASE_MS=$2; shift 2 ;;
    --hold-ms) (($# >= 2)) || usage; ED_HOLD_MS=$2; shift 2 ;;
    --program) (($# >= 2)) || usage; ED_BIN=$2; shift 2 ;;
    --keep-logs) ED_KEEP_LOGS=1; shift ;;
    --cli) cli=1; shift ;;
    --stable) stable=1; shift ;;
    --stratified) stratified=1; shift ;;
    --over-reads) over_reads=1; shift ;;
    --peer-watch) cli=1; mode=peer-watch; shift ;;
    --s3lect) (($# >= 2)) || usage; s3lect_bin=$2; shift 2 ;;
    --base-port) (($# >= 2)) || usage; base_port=$2; shift 2 ;;
    --crash) (($# >= 2)) || usage; ED_CRASH=$2; shift 2 ;;
    --azure) azure=1; shift ;;
    *) usage ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage
[[ -z $ED_HOLD_MS || $ED_HOLD_MS =~ ^[0-9]+$ ]] || usage
[[ $base_port =~ ^[1-9][0-9]*$ ]] || usage
[[ $ED_CRASH == kill || $ED_CRASH == kill-all || $ED_CRASH == stop ]] || usage
if ((!cli)) && [[ $ED_CRASH != kill ]]; then
  echo "error: --crash $ED_CRASH needs --cli or --peer-watch (a job guardian to leave running)" >&2
  exit 2
fi
if ((over_reads && !stable)); then
  echo "error: --over-reads goes with --stable" >&2
  exit 2
fi
if ((cli)) && [[ -n $ED_BIN ]]; then
  echo "error: --program and --cli/--peer-watch exclude each other" >&2
  exit 2
fi
if [[ -n $ED_BIN ]]; then
  ED_BIN=$(realpath -e -- "$ED_BIN") || { echo "error: no program $ED_BIN" >&2; exit 2; }
fi
if [[ -n $s3lect_bin ]]; then
  s3lect_bin=$(realpath -e -- "$s3lect_bin") || { echo "error: no program $s3lect_bin" >&2; exit 2; }
fi
cd "$root"
source scripts/lib/build.sh
source scripts/lib/certs.sh
source scripts/lib/local-s3.sh
source scripts/lib/processes.sh

bash scripts/install-deps.sh
bash scripts/local-s3/install.sh

on_exit() {
  ed_cleanup "$1"
  local_s3_stop_if_started
  if [[ -n ${cert_dir:-} ]]; then rm -rf -- "$cert_dir"; fi
}
on_exit_run on_exit

# Start the server while the build runs.
local_s3_start_behind
if ((cli)); then
  ED_BIN=scripts/lib/cli-candidate.sh
  ED_TRACK_JOBS=1
  [[ -n $s3lect_bin ]] || s3lect_bin=$(release_s3lect)
  export BENCH_S3LECT=$s3lect_bin
elif [[ -z $ED_BIN ]]; then
  ED_BIN=build/release/examples/example_leader_worker
  build_preset release example_leader_worker
fi
cert_dir=
if [[ $mode == peer-watch ]]; then
  cert_dir=$(mktemp -d "${TMPDIR:-/tmp}/s3lect-bench-certs.XXXXXX")
  make_test_certs "$cert_dir" node-a node-b node-c
  export BENCH_PEER_DIR=$cert_dir BENCH_PEER_PORT_node_a=$((base_port + 1))
  export BENCH_PEER_PORT_node_b=$((base_port + 2)) BENCH_PEER_PORT_node_c=$((base_port + 3))
fi
local_s3_wait
if ((azure)); then
  : "${S3LECT_AZURE_CONNECTION_STRING:?--azure: source \$(bash scripts/local-s3/azurite-start.sh)}"
  export AZURE_STORAGE_CONNECTION_STRING=$S3LECT_AZURE_CONNECTION_STRING
  ED_BUCKET=az://$S3LECT_AZURE_CONTAINER
  ED_CA_FILE=
else
  use_local_s3_endpoint
  ED_BUCKET=$S3LECT_TEST_BUCKET
  ED_CA_FILE=$S3LECT_TEST_CA_FILE
fi
ED_KEY_PREFIX=bench/failover
ED_VERBOSE=0
ed_init

lease=$(ed_fmt_s "$ED_L_MS") renew=$(ed_fmt_s "$ED_F_MS")
# The span of the hold's random (or stratified) part: F, or with --over-reads the stable
# followers' read interval.
spread_ms=$ED_F_MS spread_name="$renew s"
((over_reads)) && spread_ms=$((6 * ED_F_MS)) spread_name="I = $(ed_fmt_s $((6 * ED_F_MS))) s"
hold="1 s + random part of $renew s"
[[ -z $ED_HOLD_MS ]] || hold="$(ed_fmt_s "$ED_HOLD_MS") s"
((stable)) && hold="11 s + random part of $spread_name (followers stable)"
if ((stratified)); then
  hold="1 s + (i - 1/2)/$runs of $renew s in run i"
  ((stable)) && hold="11 s + (i - 1/2)/$runs of $spread_name in run i (followers stable)"
fi
echo "failover benchmark: $runs runs, lease $lease s, renewal every $renew s${ED_LEASE_MS:+ (--lease-ms $ED_LEASE_MS)}," \
  "each leader signalled $hold after its election"
case $mode in
  s3) mode_name="S3 mode" ;;
  peer-watch) mode_name="peer-watch mode" ;;
esac
store_name="local radosgw at ${AWS_ENDPOINT_URL:-}"
((azure)) && store_name="Azurite at $S3LECT_AZURE_ENDPOINT_HTTP"
if ((cli)); then
  echo "store: $store_name; candidates: $s3lect_bin run ($mode_name)"
else
  echo "store: $store_name; candidates: $ED_BIN ($mode_name)"
fi
case $ED_CRASH in
  kill) crash_name="crash failover"; ((cli)) && crash_name="kill -9 of s3lect" ;;
  kill-all) crash_name="kill -9 of s3lect + guardian" ;;
  stop) crash_name="SIGSTOP of s3lect" ;;
esac
# The guardian's own event after the crash, from its log line in the crashed node's stderr.
case $ED_CRASH in
  kill) guardian_event="guardian released the lock" guardian_msg="lock released for s3lect" ;;
  stop) guardian_event="guardian stopped the job" guardian_msg="leadership not confirmed in time" ;;
  *) guardian_event='' guardian_msg='' ;;
esac
echo "crash: $crash_name; machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"

# Time in ms of the first line of candidate $1's stderr with message $2 (empty: none).
log_line_ms() {
  local line
  line=$(grep -m1 -F "msg=\"$2" "$ED_ROUND_DIR/$1.err") || return 0
  line=${line#time=}
  date -d "${line%% *}" +%s%3N
}

handovers=() failovers=() jobs_gone=() job_gaps=() guardian_times=() loads=()
for ((run = 1; run <= runs; run++)); do
  part=$(((RANDOM * 32768 + RANDOM) % spread_ms))
  ((stratified)) && part=$(((2 * run - 1) * spread_ms / (2 * runs)))
  if ((stable)); then
    ED_HOLD_MS=$((11000 + part))
  elif ((stratified)); then
    ED_HOLD_MS=$((1000 + part))
  fi
  # The driver starts the candidates in the background and analyses their logs at once; on a
  # loaded machine a candidate's log may not exist yet, awk then fails and set -e ends the run
  # (exit 2). Creating the logs first avoids that race.
  mkdir -p -- "$ED_DIR/round-$run"
  for id in "${ED_IDS[@]}"; do : >"$ED_DIR/round-$run/$id.log"; done
  ed_round "$run"
  handovers+=("$ED_HANDOVER_MS")
  failovers+=("$ED_FAILOVER_MS")
  loads+=("$(cut -d' ' -f1 /proc/loadavg)")
  details=''
  if ((cli)); then
    jobs_gone+=("$ED_JOB_GONE_MS")
    job_gaps+=("$ED_JOB_GAP_MS")
    details="; job gone at +$(ed_fmt_ms "$ED_JOB_GONE_MS") s, $(ed_fmt_ms "$ED_JOB_GAP_MS") s before the next command"
    if [[ -n $guardian_msg ]]; then
      at=$(log_line_ms "$ED_CRASHED_ID" "$guardian_msg")
      [[ -n $at ]] || ed_fail "no \"$guardian_msg\" line in $ED_CRASHED_ID's log"
      guardian_times+=($((at - ED_CRASH_MS)))
      details+="; $guardian_event at +$(ed_fmt_ms $((at - ED_CRASH_MS))) s"
    fi
  fi
  printf 'run %d/%d: graceful handover %s s, %s %s s%s; load %s  (%s)\n' "$run" "$runs" \
    "$(ed_fmt_ms "$ED_HANDOVER_MS")" "$crash_name" "$(ed_fmt_ms "$ED_FAILOVER_MS")" "$details" \
    "${loads[-1]}" "$ED_LEADERS"
done

# One table row: scenario name, then the measurements in ms.
row() {
  local name=$1 sorted n median
  shift
  mapfile -t sorted < <(printf '%s\n' "$@" | sort -n)
  n=${#sorted[@]}
  if ((n % 2)); then
    median=${sorted[n / 2]}
  else
    median=$(((sorted[n / 2 - 1] + sorted[n / 2]) / 2))
  fi
  printf '| %-44s | %4d | %9s s | %9s s | %9s s |\n' "$name" "$n" "$(ed_fmt_ms "$median")" \
    "$(ed_fmt_ms "${sorted[0]}")" "$(ed_fmt_ms "${sorted[n - 1]}")"
}
echo
printf '| %-44s | %4s | %11s | %11s | %11s |\n' scenario runs median min max
printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..46})" "------" "-------------" \
  "-------------" "-------------"
row "graceful handover ($mode_name)" "${handovers[@]}"
row "$crash_name ($mode_name)" "${failovers[@]}"
if ((cli)); then
  row "  its job gone, from the signal" "${jobs_gone[@]}"
  row "  job gone -> next command" "${job_gaps[@]}"
  [[ -z $guardian_event ]] || row "  $guardian_event" "${guardian_times[@]}"
fi
echo
echo "load average (1 min) after each run: $(printf '%s\n' "${loads[@]}" | sort -n | sed -n '1p;$p' | paste -sd-)"
echo "no two leaders at once in any run"
((cli)) && echo "no command started while an earlier leader's command still had a process"
no_release="failover about $(ed_fmt_s $((ED_L_MS - ED_F_MS)))–$lease s (median about $(ed_fmt_s $((ED_L_MS - ED_F_MS / 2))) s: the lease must expire)"
if ((cli)) && [[ $ED_CRASH == kill ]]; then
  no_release="failover as a graceful handover plus the guardian's release (tens of ms)"
fi
if [[ $mode == peer-watch ]]; then
  echo "expected in peer-watch mode: handover in milliseconds (the release answers the followers' watch), $no_release"
  exit 0
fi
echo "expected while followers poll every $renew s: handover up to $renew s (their next read), $no_release;" \
  "followers gone stable read less often (see the comment at the top)"
