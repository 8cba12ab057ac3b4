#!/usr/bin/env bash
# Chaos test of `s3lect run` (docs/chaos.md): N nodes elect a leader on the local radosgw, each
# through its own listener of a fault-injecting proxy, while a seeded driver kills, stops,
# freezes, partitions and slows them. Every leader's command is a job with a process tree
# (grandchildren, a setsid daemon) and logs when it starts and stops; a watcher outside the
# trees logs when each tree is gone. The checker then proves from that log that no two leaders'
# trees ever ran at once, that terms only grew, and that a leader came back within the
# documented bound after every fault.
#
#   tests/chaos/chaos.sh [--duration SECONDS] [--nodes N] [--seed S] [--min-transitions M]
#                        [--bin DIR]... [--out DIR] [--no-cgroup]
#                        [--peer-watch [--peer-base-port P] [--peer-tls ca|zero-config]]
#                        [--clock-fault ahead|behind [--clock-offset DUR]] [--slots K] [--fencing]
#                        [--priorities P1,P2,...] [--claim-flood] [--isolation LEVEL]
#                        [--attacks] [--azure]
#
# --bin DIR (repeatable): where to find s3lect, s3lect_fault_proxy, s3lect_tree_watch and
# s3lect_chaos_checker (DIR, DIR/bin and DIR/tests/chaos are searched; default build/chaos).
# --no-cgroup: find a node's processes through /proc even where a writable cgroup v2 exists (by
# default each node runs in a cgroup of its own, which a stop freezes and a crash kills).
# --peer-watch: the nodes run in peer mode with watches, node i's health endpoint on
# 127.0.0.1:P+i (default P 19740; peer traffic goes straight between the nodes, not through the
# proxy); --peer-tls: a throw-away CA and one certificate for 127.0.0.1 (ca, the default), or no
# certificate options at all: each node start makes its own key, followers trust it by the pin
# in the record (zero-config).
# --clock-fault: node 1's s3lect runs with its wall clock DUR ahead or behind (libfaketime; its
# monotonic clocks and its command's clock stay right); DUR is Ns or Nm, default 5m, at most 14m
# (S3 signatures allow 15).
# --slots K (2-4, fewer than the nodes): the nodes run `s3lect run --slots K`, and the checker
# checks each slot's commands on their own (at most one at a time, terms growing, a leader back
# within the bound), so at most K commands run at once; M is then per slot.
# --fencing: each leader's command writes one object with `s3lect put` every 200 ms
# (fenced_writer.sh), and the driver also freezes a leader's s3lect alone so that its
# command writes on as a zombie; the checker then checks the writes (docs/chaos.md).
# --priorities (with --peer-watch): node i runs with `--priority Pi` (docs/coordination.md), so
# that named successors, hold-offs, ranked crash takeovers and preemption run under every fault;
# the checker's rules are the same, since coordination only delays writes.
# --claim-flood (with --peer-watch): for the whole run s3lect_claim_forger reads the lock record
# (straight from the store) and sends whichever node leads, at its leaderAddr, a forged claim of
# priority 1000000 with a fresh token every 900 ms from 127.0.0.1 (ids flood-N; trusting the
# leader by the record's pin, or by the CA), so that verification, preemption and ranked
# takeovers run under a flood of claims that must move nothing (s3lect issue 35). Its summary
# becomes a `claimflood` record: a record or answer naming a forged id, a forged id running a
# command, or a flood no node answered, is a violation.
# --isolation LEVEL: the nodes run `s3lect run --isolation LEVEL` (default: what the system
# allows, a PID namespace and a cgroup as root).
# --attacks: one command in three attacks its own guardian: in a PID namespace it tries to take
# the guardian's descriptors from the namespace's init and to forge the job's end with them
# (s3lect_channel_thief; a `thief` record says how many it took, and any is a violation);
# without one it stops its guardian (its parent) with SIGSTOP again and again. The driver then
# spares that node's s3lect the freeze and group-stop faults: a job that stops its guardian while
# its s3lect is stopped too is outside the promise (docs/safety-and-fencing.md).
# --azure: the store is Azurite, the Azure Blob server, from the S3LECT_AZURE_* variables of
# scripts/local-s3/azurite-start.sh's env file: the lock is az://CONTAINER/..., reached through
# the proxy with Shared Key (not with --claim-flood, whose forger speaks S3 only).
# Exit status: the checker's (0 pass, 1 violations or too few transitions), 2 for bad usage or
# a harness failure.
set -u
# The whole script is one compound command, parsed before it runs: editing this file while a
# long run is going does not change that run.
{
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

duration=120
node_count=3
seed=$(((${EPOCHREALTIME/./} / 1000) % 1000000))
min_transitions=0
bin_dirs=()
out_dir=""
peer_watch=0
peer_base_port=19740
peer_tls=ca
clock_fault=""
clock_offset=5m
slot_count=0
fencing=0
use_cgroup=1
priorities=()
isolation=""
attacks=0
claim_flood=0
azure=0

# The nodes' timings: short, so that a two-minute run sees many transitions. The retry schedule
# (3 x 250 ms + 50 ms + 100 ms = 900 ms) fits in renew deadline - frequent (1100 ms), and the kill
# grace (200 ms) is below lease - renew deadline (600 ms).
lease_ms=2000
renew_deadline_ms=1400
frequent_ms=300
infrequent_ms=600
request_timeout_ms=250
retry_delays_ms="50,100"
kill_grace_ms=200
# How long the processes left of a node's s3lect that ended (killed alone, stopped, exited) may
# live on before the driver kills them: long enough for another node to take over beside them.
leftover_ms=$((3 * lease_ms))

usage() {
  sed -n '10,57p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

while (($#)); do
  case $1 in
    --duration) duration=${2:?}; shift 2 ;;
    --nodes) node_count=${2:?}; shift 2 ;;
    --seed) seed=${2:?}; shift 2 ;;
    --min-transitions) min_transitions=${2:?}; shift 2 ;;
    --bin) bin_dirs+=("${2:?}"); shift 2 ;;
    --out) out_dir=${2:?}; shift 2 ;;
    --peer-watch) peer_watch=1; shift ;;
    --peer-base-port) peer_base_port=${2:?}; shift 2 ;;
    --peer-tls) peer_tls=${2:?}; shift 2 ;;
    --clock-fault) clock_fault=${2:?}; shift 2 ;;
    --clock-offset) clock_offset=${2:?}; shift 2 ;;
    --slots) slot_count=${2:?}; shift 2 ;;
    --fencing) fencing=1; shift ;;
    --priorities) IFS=, read -r -a priorities <<<"${2:?}"; shift 2 ;;
    --no-cgroup) use_cgroup=0; shift ;;
    --isolation) isolation=${2:?}; shift 2 ;;
    --attacks) attacks=1; shift ;;
    --claim-flood) claim_flood=1; shift ;;
    --azure) azure=1; shift ;;
    -h | --help) usage ;;
    *) echo "chaos.sh: unknown argument $1" >&2; usage ;;
  esac
done
[[ $duration =~ ^[0-9]+$ && $seed =~ ^[0-9]+$ && $min_transitions =~ ^[0-9]+$ ]] || usage
[[ $peer_tls == ca || $peer_tls == zero-config ]] || usage
[[ $peer_base_port =~ ^[0-9]+$ ]] && ((peer_base_port > 0 && peer_base_port < 65530)) || usage
if ! [[ $node_count =~ ^[0-9]+$ ]] || ((node_count < 3 || node_count > 5)); then
  echo "chaos.sh: --nodes must be 3 to 5" >&2
  exit 2
fi
if ((slot_count)); then
  if ! [[ $slot_count =~ ^[0-9]+$ ]] || ((slot_count < 2 || slot_count > 4 ||
    slot_count >= node_count)); then
    echo "chaos.sh: --slots must be 2 to 4, and fewer than --nodes" >&2
    exit 2
  fi
  # s3lect refuses --slots with --peer; the clock fault's evidence and the fencing writer's
  # records are unslotted.
  if ((peer_watch || fencing)) || [[ -n $clock_fault ]]; then
    echo "chaos.sh: --slots goes with none of --peer-watch, --clock-fault and --fencing" >&2
    exit 2
  fi
fi
if ((${#priorities[@]})); then
  if ((!peer_watch || ${#priorities[@]} != node_count)); then
    echo "chaos.sh: --priorities goes with --peer-watch and gives one priority per node" >&2
    exit 2
  fi
  for p in "${priorities[@]}"; do [[ $p =~ ^-?[0-9]{1,7}$ ]] || usage; done
fi
if ((claim_flood && !peer_watch)); then
  echo "chaos.sh: --claim-flood goes with --peer-watch" >&2
  exit 2
fi
if ((claim_flood && azure)); then
  echo "chaos.sh: --claim-flood does not go with --azure (the forger speaks S3 only)" >&2
  exit 2
fi
if [[ -n $clock_fault && $clock_fault != ahead && $clock_fault != behind ]]; then
  echo "chaos.sh: --clock-fault must be ahead or behind" >&2
  exit 2
fi
# The offset in seconds, signed as node 1's clock is off: +300 is five minutes ahead.
if [[ $clock_offset =~ ^([0-9]{1,4})(s?|m)$ ]]; then
  clock_offset_s=$((10#${BASH_REMATCH[1]}))
  [[ ${BASH_REMATCH[2]} == m ]] && clock_offset_s=$((clock_offset_s * 60))
else
  clock_offset_s=-1
fi
if ((clock_offset_s < 1 || clock_offset_s > 840)); then
  echo "chaos.sh: --clock-offset must be 1s to 14m (radosgw refuses signatures 15 min off)" >&2
  exit 2
fi
[[ $clock_fault == behind ]] && clock_offset_s=$((-clock_offset_s))
((${#bin_dirs[@]})) || bin_dirs=("$root/build/chaos")

find_binary() {
  local name=$1 dir
  for dir in "${bin_dirs[@]}"; do
    for candidate in "$dir/$name" "$dir/bin/$name" "$dir/tests/chaos/$name"; do
      if [[ -x $candidate ]]; then
        echo "$candidate"
        return 0
      fi
    done
  done
  echo "chaos.sh: $name not found in ${bin_dirs[*]} (build it, or pass --bin DIR)" >&2
  return 1
}
s3lect=$(find_binary s3lect) || exit 2
proxy_bin=$(find_binary s3lect_fault_proxy) || exit 2
checker=$(find_binary s3lect_chaos_checker) || exit 2
tree_watch_bin=$(find_binary s3lect_tree_watch) || exit 2
thief_bin=""
job_namespace=0
if ((attacks)); then
  thief_bin=$(find_binary s3lect_channel_thief) || exit 2
  # Whether the jobs get a PID namespace: --isolation says, else the guardian's probe.
  if [[ -n $isolation ]]; then
    [[ $isolation == *pid-namespace* ]] && job_namespace=1
  elif "$(dirname "$s3lect")/s3lect-guardian" --probe | grep -q '^pid-namespace ok'; then
    job_namespace=1
  fi
fi
forger_bin=""
((claim_flood)) && { forger_bin=$(find_binary s3lect_claim_forger) || exit 2; }
child_script=$here/child.sh

# The store: from the environment when the caller sourced an env file (scripts/test.sh does, for
# the radosgw and for moto), else the local radosgw, started if it does not run. With --azure,
# Azurite's variables must be set (scripts/test.sh sources its env file).
if ((azure)); then
  for variable in S3LECT_AZURE_ENDPOINT_HTTP S3LECT_AZURE_ACCOUNT S3LECT_AZURE_KEY \
    S3LECT_AZURE_CONTAINER; do
    [[ -n ${!variable:-} ]] || {
      echo "chaos.sh: --azure needs $variable: source \$(bash scripts/local-s3/azurite-start.sh)" >&2
      exit 2
    }
  done
  store_endpoint=$S3LECT_AZURE_ENDPOINT_HTTP
  upstream=${store_endpoint#http://}
  endpoint_path=/${upstream#*/}  # Azurite's account, the first segment of its blob URLs
  upstream=${upstream%%/*}
  store_bucket=$S3LECT_AZURE_CONTAINER scheme=az
  store_flags=() fence_flags=""
  export AZURE_STORAGE_ACCOUNT=$S3LECT_AZURE_ACCOUNT AZURE_STORAGE_KEY=$S3LECT_AZURE_KEY
  unset AZURE_STORAGE_CONNECTION_STRING AZURE_STORAGE_SAS_TOKEN
else
  # shellcheck source=scripts/lib/local-s3.sh
  source "$root/scripts/lib/local-s3.sh"
  use_local_s3 || exit 2
  store_endpoint=$S3LECT_TEST_ENDPOINT_HTTP
  upstream=${store_endpoint#http://}
  endpoint_path=""
  store_bucket=$S3LECT_TEST_BUCKET scheme=s3
  store_flags=(--path-style --region "$S3LECT_TEST_REGION") fence_flags=--path-style
fi
unset AWS_SESSION_TOKEN AWS_PROFILE

run_id=chaos-$(date -u +%Y%m%dT%H%M%SZ)-seed$seed-$$
[[ -n $out_dir ]] || out_dir=/tmp/s3lect-chaos/$run_id
mkdir -p "$out_dir" || exit 2
events=$out_dir/events.log
: >"$events"
lock=$scheme://$store_bucket/chaos/$run_id.json
# Fencing mode: the writers go straight to the store, not through the proxy, so that a write
# fails only for fencing's reasons.
writes=$out_dir/writes.log
export FENCE_S3LECT=$s3lect FENCE_OBJECT=$scheme://$store_bucket/chaos/$run_id.data
export FENCE_ENDPOINT=$store_endpoint FENCE_STORE_FLAGS=$fence_flags

# Clock fault: node 1's s3lect runs with libfaketime, its wall clock off by the offset and its
# monotonic clocks left alone (FAKETIME_DONT_FAKE_MONOTONIC), as on a machine whose NTP is broken.
# The timer-fd shim goes before libfaketime (real_timerfd.c says why). An ASan
# s3lect (CI's build) is told not to insist on coming first: preloading libasan ahead of them
# instead hangs every uninstrumented program started with the preload, such as the `env` that
# starts s3lect's command. Its command runs without any of it (start_node), so that the event
# log stays on the true clock.
fake_env=()
faked_pids=()
if [[ -n $clock_fault ]]; then
  libfaketime=${S3LECT_LIBFAKETIME:-/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1}
  if [[ ! -r $libfaketime ]]; then
    echo "chaos.sh: no $libfaketime (apt-get install faketime, or set S3LECT_LIBFAKETIME)" >&2
    exit 2
  fi
  if [[ $out_dir == *[[:space:]:]* ]]; then
    echo "chaos.sh: --clock-fault needs an --out without spaces or colons (LD_PRELOAD)" >&2
    exit 2
  fi
  "${CC:-cc}" -O2 -shared -fPIC -o "$out_dir/real_timerfd.so" "$here/real_timerfd.c" || exit 2
  fake_env=(env "LD_PRELOAD=$out_dir/real_timerfd.so $libfaketime"
    "FAKETIME=$(printf '%+d' "$clock_offset_s")" FAKETIME_DONT_FAKE_MONOTONIC=1
    "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
fi

# Peer mode: one certificate for 127.0.0.1 that every node serves and verifies the leader's by.
if ((peer_watch)) && [[ $peer_tls == ca ]]; then
  # shellcheck source=scripts/lib/certs.sh
  source "$root/scripts/lib/certs.sh"
  if [[ -n $clock_fault ]]; then
    # Dated a day back, so that they are valid on node 1's clock too, however far behind it is.
    LD_PRELOAD=$libfaketime FAKETIME=-1d make_test_certs "$out_dir/certs" node || exit 2
  else
    make_test_certs "$out_dir/certs" node || exit 2
  fi
fi

note() { echo "$EPOCHREALTIME $*" >>"$out_dir/driver.log"; }
say() { echo "chaos: $*" >&2; note "$*"; }
record() { echo "$*" >>"$events"; }
now_us() { now=${EPOCHREALTIME/./}; }  # sets $now, microseconds; no fork
# rnd LO HI: a seeded random integer in [LO, HI] in $R (no subshell, so $RANDOM's sequence holds)
rnd() { R=$(($1 + (RANDOM * 32768 + RANDOM) % ($2 - $1 + 1))); }
RANDOM=$seed

# --- the proxy and the tree watcher -----------------------------------------------------------
listen_args=()
for ((i = 1; i <= node_count; i++)); do listen_args+=(--listen "node$i=0"); done
"$proxy_bin" --upstream "$upstream" "${listen_args[@]}" --control 0 \
  >"$out_dir/proxy.out" 2>"$out_dir/proxy.err" &
proxy_pid=$!
# The watcher dates the end of every job's tree: at a real-time priority when it may, so that
# it wakes at once on a loaded machine (its times are late by its wake-up delay, never early).
realtime=()
chrt -f 10 true 2>/dev/null && realtime=(chrt -f 10)
"${realtime[@]}" "$tree_watch_bin" --log "$events" \
  >"$out_dir/tree-watch.out" 2>"$out_dir/tree-watch.err" &
watch_pid=$!

declare -a pid state due since detail endpoint incarnation stopped_procs stopper zombie_guardians
retiring=()  # "I:K:DUE" for each ended incarnation of a node whose leftovers may still run
leftover_procs=0
leftover_incarnations=0

# shellcheck source=tests/chaos/node_processes.sh
source "$here/node_processes.sh"
cgroup_setup "$use_cgroup"

cleanup() {
  local i p
  # A forked subshell (a node between fork and exec) inherits this trap: only the driver cleans.
  ((BASHPID == driver_pid)) || exit 2
  for ((i = 1; i <= node_count; i++)); do
    [[ -n ${pid[i]:-} ]] || continue
    kill_processes "$i" 2>/dev/null ||
      say "node$i: processes left after SIGKILL: $(procs_of "$i"; echo "${P[*]}")"
  done
  kill "$proxy_pid" "$watch_pid" ${flood_pid:+"$flood_pid"} 2>/dev/null
  wait 2>/dev/null
  if [[ -n $cgroup_root ]]; then
    remove_cgroup "$cgroup_root"
    rmdir "${cgroup_root%/*}" 2>/dev/null  # the s3lect-chaos directory, unless other runs use it
  fi
  # libfaketime's shared memory and semaphore, left behind by the faked s3lects that were
  # SIGKILLed (one that exits cleans its own).
  for p in "${faked_pids[@]}"; do
    rm -f "/dev/shm/faketime_shm_$p" "/dev/shm/sem.faketime_sem_$p"
  done
}
driver_pid=$BASHPID
trap cleanup EXIT
trap '((BASHPID == driver_pid)) && say "interrupted"; exit 2' INT TERM
trap '' PIPE  # a dead proxy is reported by step, not by dying on its control socket

for _ in $(seq 100); do
  grep -q '^ready' "$out_dir/proxy.out" 2>/dev/null && grep -q '^ready' "$out_dir/tree-watch.out" &&
    break
  sleep 0.1
done
if ! grep -q '^ready' "$out_dir/proxy.out"; then
  say "the proxy did not start: $(cat "$out_dir/proxy.err")"
  exit 2
fi
if ! grep -q '^ready' "$out_dir/tree-watch.out"; then
  say "the tree watcher did not start: $(cat "$out_dir/tree-watch.err")"
  exit 2
fi
for ((i = 1; i <= node_count; i++)); do
  endpoint[i]=$(awk -v n="node$i" '$1 == "listen" && $2 == n { print $3 }' "$out_dir/proxy.out")
done
control=$(awk '$1 == "control" { print $2 }' "$out_dir/proxy.out")
exec 3<>"/dev/tcp/${control%:*}/${control##*:}" || exit 2
watch_address=$(awk '$1 == "listen" { print $2 }' "$out_dir/tree-watch.out")

# ctl COMMAND...: one control command; the reply goes to the proxy log
ctl() {
  local reply=""
  echo "$*" >&3
  read -r -t 5 reply <&3
  echo "$EPOCHREALTIME $* -> $reply" >>"$out_dir/proxy-control.log"
  [[ $reply == ok* ]] || say "proxy refused '$*': $reply"
}

# --- the nodes --------------------------------------------------------------------------------
start_node() {
  local i=$1 job_flags=() peer=() launcher=(setsid) command=("$child_script") log_file=$events
  local slots=() tags isolated=()
  [[ -n $isolation ]] && isolated=(--isolation "$isolation")
  ((slot_count)) && slots=(--slots "$slot_count")
  if ((fencing)); then
    command=("$here/fenced_writer.sh")
    log_file=$writes
  fi
  if ((peer_watch)); then
    # The peer timeout is the S3 request timeout, so a stopped leader costs a follower no more
    # than a stopped store would.
    peer=(--peer --peer-listen "127.0.0.1:$((peer_base_port + i))" --peer-watch
      --peer-timeout "${request_timeout_ms}ms")
    [[ $peer_tls == ca ]] && peer+=(--peer-cert "$out_dir/certs/node.pem"
      --peer-key "$out_dir/certs/node.key" --peer-ca "$out_dir/certs/ca.pem")
    ((${#priorities[@]})) && peer+=(--priority "${priorities[i - 1]}")
  fi
  if [[ -n $clock_fault ]] && ((i == 1)); then
    launcher+=("${fake_env[@]}")
    command=(env -u LD_PRELOAD -u FAKETIME -u FAKETIME_DONT_FAKE_MONOTONIC -u FAKETIME_SHARED
      "$child_script")
  fi
  # This incarnation's job: which of its processes ignore SIGTERM (the command itself one time
  # in five, so that s3lect must SIGKILL it after G).
  rnd 1 100
  ((R <= 20)) && job_flags+=(stubborn)
  rnd 1 100
  ((R <= 30)) && job_flags+=(stubborn-grandchild)
  rnd 1 100
  ((R <= 30)) && job_flags+=(stubborn-daemon)
  # The attacks on the guardian (--attacks): which one the job can make depends on whether it
  # has a PID namespace of its own.
  stopper[i]=0
  if ((attacks && !fencing)); then
    rnd 1 3
    if ((R == 1 && job_namespace)); then
      job_flags+=(thief)
    elif ((R == 1)); then
      job_flags+=(stop-guardian)
      stopper[i]=1
    fi
  fi
  ((fencing)) || job_flags=("${watch_address##*:}" "${job_flags[@]}")
  incarnation[i]=$((${incarnation[i]:-0} + 1))
  incarnation_cgroup "$i"
  tags=$run_id/node$i/${incarnation[i]}/
  # setsid: the node's s3lect leads its own process group (pid = pgid); its command gets another.
  # It joins its cgroup before the exec, so that everything it starts is born there.
  (
    if [[ -n $G ]] && ! echo "$BASHPID" >"$G/cgroup.procs"; then
      echo "chaos.sh: cannot join $G" >&2
      exit 97
    fi
    export CHAOS_TAG=$tags CHAOS_THIEF=$thief_bin
    # --allow-core-dumps: the harness reads the node's /proc/PID/environ (--no-cgroup) and maps
    # (the clock fault), which a non-dumpable process keeps from other processes of its user.
    exec "${launcher[@]}" "$s3lect" run --lock "$lock" \
      --endpoint "http://${endpoint[i]}$endpoint_path" "${store_flags[@]}" --id "node$i" \
      --allow-core-dumps \
      --lease "${lease_ms}ms" --renew-deadline "${renew_deadline_ms}ms" \
      --frequent "${frequent_ms}ms" --infrequent "${infrequent_ms}ms" \
      --request-timeout "${request_timeout_ms}ms" \
      --retry-delays "${retry_delays_ms//,/ms,}ms" --kill-grace "${kill_grace_ms}ms" "${peer[@]}" \
      "${slots[@]}" "${isolated[@]}" \
      -- "${command[@]}" "$log_file" "node$i" "${job_flags[@]}"
  ) >>"$out_dir/node$i.log" 2>&1 &
  pid[i]=$!
  ((${#launcher[@]} > 1)) && faked_pids+=("${pid[i]}")
  # Faults are for s3lect: until the forked shell has become s3lect, a signal would hit a copy
  # of this script instead.
  local comm="" tries
  for ((tries = 0; tries < 200; tries++)); do
    read -r comm 2>/dev/null <"/proc/${pid[i]}/comm"
    [[ $comm == s3lect ]] && break
    is_gone "${pid[i]}" && break
    sleep 0.005
  done
  if [[ -n $G && $comm == s3lect ]] && ! in_cgroup "${pid[i]}" "$G"; then
    say "node$i's s3lect (pid ${pid[i]}) is not in its cgroup $G"
    exit 2
  fi
  note "started node$i pid=${pid[i]} ($comm) incarnation ${incarnation[i]} ${job_flags[*]}"
  state[i]=up
}

# retire I: node I's s3lect is gone (and reaped); what is left of its job may run on for
# leftover_ms, long enough to overlap another node's, before sweep kills it
retire() {
  now_us
  retiring+=("$1:${incarnation[$1]}:$((now + leftover_ms * 1000))")
}

# end_incarnation I K: kills what is left of node I's incarnation K and removes its cgroup
end_incarnation() {
  local i=$1 k=$2
  leftovers "$i" "$k"
  if ((N)); then
    note "node$i: $N processes of incarnation $k outlived its s3lect: $L; killing them"
    leftover_procs=$((leftover_procs + N))
    leftover_incarnations=$((leftover_incarnations + 1))
  fi
  kill_processes "$i" "$k" 2>/dev/null || say "node$i: incarnation $k's processes survive SIGKILL"
  [[ -n $cgroup_root ]] && remove_cgroup "$cgroup_root/node$i/$k"
}

# sweep: ends the incarnations whose time is up
sweep() {
  local entry i k due keep=()
  for entry in "${retiring[@]}"; do
    IFS=: read -r i k due <<<"$entry"
    if ((now < due)); then
      keep+=("$entry")
    else
      end_incarnation "$i" "$k"
    fi
  done
  retiring=("${keep[@]}")
}

# signal_group SIGNAL PGID: signals a process group we started; never our own or init's
signal_group() {
  if ! [[ $2 =~ ^[0-9]+$ ]] || (($2 <= 1)); then
    say "refusing to signal process group '$2'"
    return 1
  fi
  kill "-$1" -- "-$2" 2>/dev/null
}

is_leader() {
  job_of "$1"
  [[ -n $J ]]
}

any_leader() {
  local i
  for ((i = 1; i <= node_count; i++)); do
    [[ ${state[i]} == up ]] && is_leader "$i" && return 0
  done
  return 1
}

# wait_gone PID...: waits up to 2 s for every PID to disappear; false if some remain
wait_gone() {
  local p deadline
  now_us
  deadline=$((now + 2000000))
  for p in "$@"; do
    while ! is_gone "$p"; do
      now_us
      ((now < deadline)) || return 1
      sleep 0.01
    done
  done
}

# stop_node I: the node's machine freezes: every process of it stops (s3lect, its guardian, the
# job's whole tree); false if that could not be done
stop_node() {
  local i=$1
  if ! stop_node_processes "$i"; then
    say "node$i: could not stop all of its processes; no stop this time"
    return 1
  fi
  since[i]=$EPOCHREALTIME  # everything is stopped from here on
}

cont_node() {
  local i=$1 t=$EPOCHREALTIME  # may run again from here on
  continue_node_processes "$i"
  record "stop node$i ${since[i]} $t"
}

# freeze_s3lect I [group]: SIGSTOP of node I's s3lect process alone, or of its whole process
# group (a shell's `kill -STOP %1`, a supervisor stopping a service's group: s3lect leads its
# group, and its guardian is in a session of its own): its guardian and its job run on
freeze_s3lect() {
  local i=$1 tries
  if [[ ${2:-} == group ]]; then signal_group STOP "${pid[i]}"; else kill -STOP "${pid[i]}"; fi
  for ((tries = 0; tries < 1000; tries++)); do
    proc_state "${pid[i]}"
    [[ $S == T || -z $S ]] && break
    sleep 0.001
  done
  since[i]=$EPOCHREALTIME  # s3lect is stopped from here on
}

thaw_s3lect() {
  local i=$1 t=$EPOCHREALTIME  # may run again from here on
  if [[ ${detail[i]} == group ]]; then signal_group CONT "${pid[i]}"; else kill -CONT "${pid[i]}"; fi
  record "freeze node$i ${since[i]} $t"
}

kill_node() {
  local i=$1 how=$2
  if [[ $how == crash ]]; then
    # The whole machine dies: every process of the node at once.
    kill_processes "$i" 2>/dev/null || say "node$i: processes survive SIGKILL"
    wait "${pid[i]}" 2>/dev/null
    record "kill node$i $EPOCHREALTIME"  # all its processes are gone by now
  else
    # s3lect alone dies: the job's whole tree must follow (its guardian's work); the tree
    # watcher says when it did.
    kill -KILL "${pid[i]}"
    wait "${pid[i]}" 2>/dev/null
  fi
  retire "$i"
}

# --- the clock fault's evidence ---------------------------------------------------------------
clock_checked=0

# seconds_of TIME: an s3lect log time (2026-11-25T14:06:51.546Z) as seconds since the epoch, in $T
seconds_of() { T=$(date -d "$1" +%s.%N); }

# clock_mismatch OBSERVED: true when OBSERVED seconds are more than 5 s from the requested offset
clock_mismatch() {
  awk -v d="$1" -v want="$clock_offset_s" 'BEGIN { exit !(d - want > 5 || want - d > 5) }'
}

# check_clock_fault: once node 1 leads, shows that its s3lect runs on the wrong wall clock and
# its command on the right one: libfaketime is mapped in the one and not in the other, and
# s3lect's "command started" line and the command's own start record, both written as it
# started, are the offset apart. Anything else is a harness failure.
check_clock_fault() {
  local kid record line observed
  job_of 1
  kid=$J
  [[ -n $kid ]] || return 0
  # s3lect names the command by its pid on this machine, the command itself by the one it sees
  # (another in a PID namespace of its own): the term pairs them. Its start record says the
  # command is child.sh by now, past every exec.
  line=$(grep -m1 "msg=\"command started\" pid=$kid " "$out_dir/node1.log") || return 0
  record=$(grep -m1 "^start node1 $(sed -n 's/.* term=\([0-9]*\).*/\1/p' <<<"$line") " "$events") ||
    return 0
  [[ -r /proc/$kid/maps && -r /proc/${pid[1]}/maps ]] || return 0  # gone: the next leadership
  seconds_of "$(sed -n 's/^time=\([^ ]*\).*/\1/p' <<<"$line")"
  observed=$(awk -v a="$T" -v b="$(cut -d' ' -f4 <<<"$record")" 'BEGIN { printf "%+.3f", a - b }')
  if ! grep -q libfaketime "/proc/${pid[1]}/maps" || grep -q libfaketime "/proc/$kid/maps" ||
    clock_mismatch "$observed"; then
    say "the clock fault is not as intended: node1's s3lect (pid ${pid[1]}) and its command" \
      "(pid $kid) are $observed s apart (requested $clock_offset_s s); libfaketime in s3lect:" \
      "$(grep -c libfaketime "/proc/${pid[1]}/maps"), in the command: $(grep -c libfaketime "/proc/$kid/maps")"
    exit 2
  fi
  say "clock fault in effect: node1's s3lect (pid ${pid[1]}) runs with libfaketime, its command" \
    "(pid $kid) without; s3lect dated the command's start $observed s from the command's own record"
  clock_checked=1
}

# --- faults -----------------------------------------------------------------------------------
directions=(both up down)
sides=(both client server)
declare -A fault_count
count_fault() { fault_count[$1]=$((${fault_count[$1]:-0} + 1)); }
slow_until=0
slow_since=""

leader_node() {  # the node in state up that leads; sets $N (0: none)
  local i
  N=0
  for ((i = 1; i <= node_count; i++)); do
    if [[ ${state[i]} == up ]] && is_leader "$i"; then
      N=$i
      return
    fi
  done
}

pick_node() {  # a node in state up, the leader with probability 90 %; sets $N (0: none)
  local i candidates=()
  N=0
  for ((i = 1; i <= node_count; i++)); do [[ ${state[i]} == up ]] && candidates+=("$i"); done
  ((${#candidates[@]})) || return
  rnd 1 100
  if ((R <= 90)); then
    leader_node
    ((N)) && return
  fi
  rnd 0 $((${#candidates[@]} - 1))
  N=${candidates[R]}
}

# guardians_of PID: the job guardians s3lect PID runs (its children named s3lect-guardian, each
# leading a process group of its own) in $P
guardians_of() {
  local t kids k comm
  P=()
  for t in /proc/"$1"/task/*/children; do
    kids=""
    read -r kids 2>/dev/null <"$t"
    for k in $kids; do
      comm=""
      read -r comm 2>/dev/null <"/proc/$k/comm"
      [[ $comm == s3lect-guardian ]] && P+=("$k")
    done
  done
}

# inject_zombie: freezes the leader's s3lect and its guardian's process group (the guardian and
# its PID namespace's parent and init) while its job runs on, a zombie, until another node
# leads; step() thaws it (end_zombie).
inject_zombie() {
  local i g
  leader_node
  i=$N
  ((i)) || return
  note "inject zombie node$i pid=${pid[i]}"
  guardians_of "${pid[i]}"
  zombie_guardians[i]="${P[*]}"
  for g in "${P[@]}"; do signal_group STOP "$g"; done
  signal_group STOP "${pid[i]}"  # s3lect's group only: its job has groups of its own
  since[i]=$EPOCHREALTIME
  state[i]=zombie
  now_us
  due[i]=$((now + 10000000))
  count_fault zombie
}

end_zombie() {
  local i=$1 g
  signal_group CONT "${pid[i]}"
  for g in ${zombie_guardians[i]:-}; do signal_group CONT "$g"; done
  echo "zombie node$i ${since[i]} $EPOCHREALTIME" >>"$writes"
  state[i]=up
  succeeded[i]=""
}

# other_leader I: true when a node other than I leads
other_leader() {
  local j
  for ((j = 1; j <= node_count; j++)); do
    ((j != $1)) && [[ ${state[j]} == up ]] && is_leader "$j" && return 0
  done
  return 1
}

inject() {
  local kind i dir ms
  rnd 1 100
  if ((fencing && R <= 30)); then
    inject_zombie
    return
  fi
  rnd 1 100
  if ((R <= 40)); then kind="term"
  elif ((R <= 52)); then kind="kill"
  elif ((R <= 58)); then kind="freeze"
  elif ((R <= 62)); then kind="pgstop"
  elif ((R <= 75)); then kind="stop"
  elif ((R <= 82)); then kind="blackhole"
  elif ((R <= 86)); then kind="drop"
  elif ((R <= 90)); then kind="reset"
  elif ((R <= 96)); then kind="latency"
  else kind="slow"
  fi
  now_us
  if [[ $kind == slow ]]; then
    ((slow_until == 0)) || return
    rnd 50 300
    ms=$R
    ctl latency global both "$ms"
    count_fault slow
    slow_since=$EPOCHREALTIME
    rnd 1000 5000
    slow_until=$((now + R * 1000))
    slow_detail="latency=${ms}ms"
    return
  fi
  if [[ $kind == freeze || $kind == pgstop ]]; then
    leader_node  # a follower's s3lect frozen alone has no job to stop
  else
    pick_node
  fi
  i=$N
  ((i)) || return
  # A job that stops its guardian while s3lect is stopped too keeps running: not this fault.
  [[ ($kind == freeze || $kind == pgstop) && ${stopper[i]:-0} == 1 ]] && return
  since[i]=$EPOCHREALTIME
  note "inject $kind node$i pid=${pid[i]}"
  case $kind in
    term)
      kill -TERM "${pid[i]}"
      state[i]=terminating
      rnd 0 300
      due[i]=$R  # restart delay, counted once it has exited
      detail[i]=""
      ;;
    kill)
      # Two in three kill s3lect alone: its job's tree must die with it.
      rnd 1 3
      local how=crash
      ((R <= 2)) && how="s3lect-only"
      kill_node "$i" "$how"
      state[i]=down
      rnd 0 1500
      due[i]=$((now + R * 1000))
      detail[i]=$how
      ;;
    stop)
      stop_node "$i" || return
      state[i]=stopped
      rnd 100 4500
      due[i]=$((now + R * 1000))
      ;;
    freeze | pgstop)
      detail[i]=""
      [[ $kind == pgstop ]] && detail[i]=group
      freeze_s3lect "$i" "${detail[i]}"
      state[i]=frozen
      rnd 100 $((3 * lease_ms))
      due[i]=$((now + R * 1000))
      ;;
    blackhole | drop | latency)
      case $kind in
        blackhole)
          rnd 1 3
          dir=${directions[R - 1]}
          ctl blackhole "node$i" "$dir" on
          detail[i]="direction=$dir"
          ;;
        drop)
          ctl drop "node$i" on
          ctl reset "node$i" both
          detail[i]="with_reset"
          ;;
        latency)
          rnd 1 3
          dir=${directions[R - 1]}
          rnd 50 600
          ms=$R
          ctl latency "node$i" "$dir" "$ms"
          detail[i]="direction=$dir latency=${ms}ms"
          ;;
      esac
      state[i]=$kind
      rnd 300 4000
      due[i]=$((now + R * 1000))
      ;;
    reset)
      rnd 1 3
      dir=${sides[R - 1]}
      ctl reset "node$i" "$dir"
      record "fault reset node$i ${since[i]} $EPOCHREALTIME side=$dir"
      count_fault reset
      return
      ;;
  esac
  count_fault "$kind"
}

# end_fault I: ends node I's fault (if it has one), recording it
end_fault() {
  local i=$1
  case ${state[i]} in
    stopped)
      cont_node "$i"
      ;;
    frozen)
      thaw_s3lect "$i"
      ;;
    zombie)
      end_zombie "$i"
      ;;
    down)
      start_node "$i"
      record "fault kill node$i ${since[i]} $EPOCHREALTIME ${detail[i]}"
      ;;
    blackhole | drop | latency)
      ctl heal "node$i"
      record "fault ${state[i]} node$i ${since[i]} $EPOCHREALTIME ${detail[i]}"
      ;;
  esac
  state[i]=up
  succeeded[i]=""
}

# step: advances every node's state machine once
step() {
  local i status
  now_us
  if is_gone "$proxy_pid"; then
    wait "$proxy_pid"
    say "the proxy died (status $?): $(tail -3 "$out_dir/proxy.err")"
    exit 2
  fi
  if is_gone "$watch_pid"; then
    wait "$watch_pid"
    say "the tree watcher died (status $?): $(tail -3 "$out_dir/tree-watch.err")"
    exit 2
  fi
  if [[ -n $flood_pid ]] && is_gone "$flood_pid"; then
    wait "$flood_pid"
    say "the claim forger died (status $?): $(tail -3 "$out_dir/claim-flood.err")"
    exit 2
  fi
  for ((i = 1; i <= node_count; i++)); do
    case ${state[i]} in
      up)
        if is_gone "${pid[i]}"; then
          wait "${pid[i]}"
          status=$?
          if ((status == 97)); then
            say "node$i could not join its cgroup: $(tail -1 "$out_dir/node$i.log")"
            exit 2
          fi
          record "exit node$i $EPOCHREALTIME $status"
          say "node$i exited by itself with status $status; restarting it"
          retire "$i"
          start_node "$i"
        fi
        ;;
      terminating)
        if is_gone "${pid[i]}"; then
          wait "${pid[i]}"
          status=$?
          ((status == 0)) || say "node$i exited with status $status after SIGTERM"
          retire "$i"
          state[i]=term-down
          due[i]=$((now + due[i] * 1000))
        elif ((now - ${since[i]/./} > 10000000)); then
          say "node$i did not exit within 10 s of SIGTERM; killing it"
          kill_node "$i" crash
          state[i]=term-down
          due[i]=$now
        fi
        ;;
      zombie)
        # Thawed a second after a successor leads (its writes by then carry the higher term),
        # or after 10 s at most.
        if ((now >= due[i])); then
          end_zombie "$i"
        elif [[ -z ${succeeded[i]:-} ]] && other_leader "$i"; then
          succeeded[i]=1
          due[i]=$((now + 1000000))
        fi
        ;;
      term-down)
        if ((now >= due[i])); then
          start_node "$i"
          record "fault term node$i ${since[i]} $EPOCHREALTIME"
        fi
        ;;
      *)
        ((now >= due[i])) && end_fault "$i"
        ;;
    esac
  done
  if ((slow_until && now >= slow_until)); then
    ctl heal global
    record "fault slow all $slow_since $EPOCHREALTIME $slow_detail"
    slow_until=0
  fi
  sweep
  if [[ -n $clock_fault && ${state[1]} == up ]] && ((!clock_checked)); then check_clock_fault; fi
}

# --- the claim flood (--claim-flood) ---------------------------------------------------------
flood_pid=""
flood_ids=flood-

# start_claim_flood: the forger, straight to the store (no proxy faults) for the record and to
# the leader's endpoint for the claims; trusting the record's pin, or the run's CA
start_claim_flood() {
  ((claim_flood)) || return 0
  local trust=()
  [[ $peer_tls == ca ]] && trust=(--ca "$out_dir/certs/ca.pem")
  "$forger_bin" --lock "$lock" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style \
    --interval 900ms --priority 1000000 --id "${flood_ids}%n" "${trust[@]}" \
    >"$out_dir/claim-flood.out" 2>"$out_dir/claim-flood.err" &
  flood_pid=$!
  note "started the claim forger pid=$flood_pid"
}

# stop_claim_flood: its totals as a `claimflood` record for the checker
stop_claim_flood() {
  [[ -n $flood_pid ]] || return 0
  local result sent answered named
  kill -TERM "$flood_pid"
  wait "$flood_pid"
  result=$(grep '^result ' "$out_dir/claim-flood.out")
  sent=$(sed -n 's/.* sent=\([0-9]*\).*/\1/p' <<<"$result")
  answered=$(sed -n 's/.* answered=\([0-9]*\).*/\1/p' <<<"$result")
  named=$(sed -n 's/.* named=\([0-9]*\).*/\1/p' <<<"$result")
  flood_pid=""
  if [[ -z $sent || -z $answered || -z $named ]]; then
    say "the claim forger left no result: $(tail -3 "$out_dir/claim-flood.err")"
    exit 2
  fi
  say "claim flood: $result"
  record "claimflood $EPOCHREALTIME $flood_ids $sent $answered $named"
}

# --- the run ----------------------------------------------------------------------------------
mode=s3
((peer_watch)) &&
  mode="peer-watch-$peer_tls (health endpoints from 127.0.0.1:$((peer_base_port + 1)))"
clock=right
[[ -n $clock_fault ]] && clock="node1:$(printf '%+d' "$clock_offset_s")s"
((slot_count)) && mode+=", $slot_count slots"
((${#priorities[@]})) && mode+=", priorities $(IFS=,; echo "${priorities[*]}")"
[[ -n $isolation ]] && mode+=", isolation $isolation"
((claim_flood)) && mode+=", claim flood"
((azure)) && mode+=", on Azurite (az://)"
((attacks)) && mode+=", jobs attack their guardians ($( ((job_namespace)) && echo thief || echo SIGSTOP))"
say "run $run_id: $node_count nodes, ${duration}s, seed $seed, mode $mode, clock $clock, lock $lock"
say "logs in $out_dir"
record "# chaos run $run_id seed=$seed nodes=$node_count duration=${duration}s mode=${mode%% *}" \
  "clock=$clock"
record "# s3lect=$s3lect lease=${lease_ms}ms renew_deadline=${renew_deadline_ms}ms" \
  "frequent=${frequent_ms}ms infrequent=${infrequent_ms}ms request_timeout=${request_timeout_ms}ms" \
  "retry_delays=${retry_delays_ms}ms kill_grace=${kill_grace_ms}ms"
record "begin $EPOCHREALTIME"
((fencing)) || record "treewatch $watch_address"
for ((i = 1; i <= node_count; i++)); do start_node "$i"; done
start_claim_flood
started_wall=$SECONDS
now_us
run_end=$((now + duration * 1000000))
next_fault=$((now + 3000000))  # let the first leader settle
while :; do
  step
  ((now < run_end)) || break
  if ((now >= next_fault)); then
    # Faults are worth most while someone leads: while nobody does, most are put off a little.
    rnd 1 100
    if ((R <= 25)) || any_leader; then
      inject
      rnd 150 700
    else
      rnd 100 300
    fi
    next_fault=$((now + R * 1000))
  fi
  sleep 0.05
done

# Wind down: end every fault, then stop every node gracefully so that each command writes its end.
say "winding down"
for ((i = 1; i <= node_count; i++)); do
  if [[ ${state[i]} == terminating ]]; then
    wait "${pid[i]}"
    retire "$i"
    state[i]=term-down
  fi
  if [[ ${state[i]} == term-down ]]; then
    start_node "$i"
    record "fault term node$i ${since[i]} $EPOCHREALTIME"
  fi
  [[ ${state[i]} == up ]] || end_fault "$i"
done
if ((slow_until)); then
  ctl heal global
  record "fault slow all $slow_since $EPOCHREALTIME $slow_detail"
fi
for ((i = 1; i <= node_count; i++)); do kill -TERM "${pid[i]}" 2>/dev/null; done
for ((i = 1; i <= node_count; i++)); do
  if ! wait_gone "${pid[i]}"; then
    say "node$i did not stop within 2 s of SIGTERM; killing it"
    kill_node "$i" crash
  else
    wait "${pid[i]}" 2>/dev/null
    retire "$i"
  fi
done
# What the jobs left behind: nothing, when every tree died with its command.
for entry in "${retiring[@]}"; do
  IFS=: read -r i k _ <<<"$entry"
  end_incarnation "$i" "$k"
done
retiring=()
# No tree is left: the watcher has every end once it has read its connections' closes.
kill -TERM "$watch_pid"
wait "$watch_pid"
watch_status=$?
((watch_status == 0)) ||
  say "the tree watcher exited with status $watch_status: $(tail -5 "$out_dir/tree-watch.err")"
stop_claim_flood
record "finish $EPOCHREALTIME"
exec 3>&-
kill "$proxy_pid" 2>/dev/null
wait "$proxy_pid" 2>/dev/null
pid=()

# Commands that s3lect had to SIGKILL (no end record): their end is when s3lect logged reaping
# them, rounded up to the next millisecond, and taken back to the true clock on a node whose
# clock is off.
for ((i = 1; i <= node_count; i++)); do
  skew=0
  [[ -n $clock_fault ]] && ((i == 1)) && skew=$clock_offset_s
  grep 'msg="command stopped"' "$out_dir/node$i.log" | grep 'killed=true' |
    while read -r line; do
      ts=$(sed -n 's/.*time=\([^ ]*\).*/\1/p' <<<"$line")
      p=$(sed -n 's/.* pid=\([0-9]*\).*/\1/p' <<<"$line")
      t=$(date -d "$ts" +%s.%N) &&
        record "reaped node$i $p $(awk -v t="$t" -v s="$skew" 'BEGIN { printf "%.6f", t - s + 0.001 }')"
    done
done
if [[ -n $clock_fault ]] && ((!clock_checked)); then
  # The driver never saw node 1's command at work. If s3lect started several and none wrote a
  # start record, the command side is broken (as when a preload hung them) and the run saw
  # none of node 1's leaderships.
  commands=$(grep -c 'msg="command started"' "$out_dir/node1.log")
  if ((commands > 1)) && ! grep -q '^start node1 ' "$events"; then
    say "node1's s3lect started $commands commands and none wrote a start record"
    exit 2
  fi
  # Only s3lect's side can be shown: its first log line against the driver's clock when it was
  # started (its command's records are checked against the run's span by the checker all the
  # same).
  first=$(sed -n '/^time=/ { s/^time=\([^ ]*\).*/\1/p; q }' "$out_dir/node1.log")
  started=$(awk '$2 == "started" && $3 == "node1" { print $1; exit }' "$out_dir/driver.log")
  seconds_of "$first"
  observed=$(awk -v a="$T" -v b="$started" 'BEGIN { printf "%+.3f", a - b }')
  if clock_mismatch "$observed"; then
    say "the clock fault is not as intended: node1's first log line is $observed s off"
    exit 2
  fi
  say "node1's first log line is $observed s off (requested $clock_offset_s s)"
fi

faults_line=""
for kind in "${!fault_count[@]}"; do faults_line+=" $kind=${fault_count[$kind]}"; done
say "driver injected:$faults_line; wall time $((SECONDS - started_wall)) s"
say "processes that outlived their node's s3lect by ${leftover_ms} ms (or the run), killed by" \
  "the driver: $leftover_procs, of $leftover_incarnations s3lect incarnations" \
  "(node processes found through ${cgroup_root:-/proc})"
# Coordination may delay a takeover by design: a crash takeover by up to 3 ranks of
# min(250 ms, (L - D) / 6) = 100 ms, a release naming a successor that is gone by the window
# (F / 5 raised to 100 ms). The liveness bound allows for both on top of the usual slack.
slack_ms=1000
((${#priorities[@]})) && slack_ms=$((1000 + 3 * 100 + 100))
check() {  # check LOG [REPORT_PREFIX]: the checker on LOG, its report appended to report.txt
  "$checker" --slack "$slack_ms" --lease "$lease_ms" --renew-deadline "$renew_deadline_ms" --frequent "$frequent_ms" \
    --infrequent "$infrequent_ms" --request-timeout "$request_timeout_ms" \
    --retry-delays "$retry_delays_ms" --kill-grace "$kill_grace_ms" \
    --min-transitions "$min_transitions" "$1" | tee -a "$out_dir/report.txt"
  return "${PIPESTATUS[0]}"
}
: >"$out_dir/report.txt"
if ((fencing)); then
  # The election check has nothing to check here: the writers log no start and end records
  # (their zombies overlap successors on purpose), so its liveness rule would see one leaderless
  # run broken only by faults. The fencing check below has this mode's liveness evidence.
  status=0
elif ((slot_count == 0)); then
  check "$events"
  status=$?
else
  # One log per slot: its commands' records (prefix taken off) and every record of the driver
  # (faults, kills, stops, exits), which concern whatever slot a node held. A record of a slot
  # outside 0..K-1 fails the run: it would be a (K+1)th command at once.
  status=0
  stray=$(grep -Ec '^slot([0-9]+) ' "$events" | tr -d ' ')
  for ((k = 0; k < slot_count; k++)); do
    awk -v k="$k" '$1 ~ /^slot[0-9]+$/ { if ($1 == "slot" k) { sub(/^slot[0-9]+ /, ""); print }; next }
      { print }' "$events" >"$out_dir/events.slot$k.log"
    stray=$((stray - $(grep -c "^slot$k " "$events")))
    echo "--- slot $k ($lock.slot-$k)" | tee -a "$out_dir/report.txt"
    check "$out_dir/events.slot$k.log" || status=1
  done
  if ((stray != 0)); then
    say "$stray command records name a slot outside 0..$((slot_count - 1))"
    status=1
  fi
fi
if ((fencing)); then
  # The zombies overlap their successors on purpose: the election's overlap check does not
  # apply to them, the fencing check does.
  "$checker" --fencing "$writes" | tee -a "$out_dir/report.txt"
  fencing_status=${PIPESTATUS[0]}
  ((fencing_status)) && status=$fencing_status
fi
mode_args=""
((peer_watch)) && mode_args+=" --peer-watch --peer-base-port $peer_base_port --peer-tls $peer_tls"
[[ -n $clock_fault ]] && mode_args+=" --clock-fault $clock_fault --clock-offset $clock_offset"
((slot_count)) && mode_args+=" --slots $slot_count"
((fencing)) && mode_args+=" --fencing"
((${#priorities[@]})) && mode_args+=" --priorities $(IFS=,; echo "${priorities[*]}")"
[[ -n $isolation ]] && mode_args+=" --isolation $isolation"
((claim_flood)) && mode_args+=" --claim-flood"
((attacks)) && mode_args+=" --attacks"
echo "command: tests/chaos/chaos.sh --duration $duration --nodes $node_count --seed $seed" \
  "--min-transitions $min_transitions$mode_args" | tee -a "$out_dir/report.txt"
echo "logs: $out_dir" | tee -a "$out_dir/report.txt"
exit "$status"
}
