# shellcheck shell=bash
# A chaos node's processes, as a machine's (docs/chaos.md, "A node is a machine"): its s3lect,
# whatever s3lect starts of its own (a guardian) and its job's whole tree, grandchildren and
# setsid daemons included, which are in neither s3lect's process group nor the command's, and
# may have been re-parented away from s3lect. Sourced by chaos.sh (whole, before the run
# starts, like chaos.sh itself); not meant to be run. No function forks in the driver's loop.
#
# Where a writable cgroup v2 exists, node I runs in CGROUP_ROOT/nodeI, each incarnation of its
# s3lect in a child cgroup nodeI/K of its own: the kernel then knows every process of the node,
# a stop freezes them all at once (cgroup.freeze) and a crash kills them all (cgroup.kill). The
# cgroups get no controllers, so that a guardian may put its job in a child cgroup of its own.
# Without cgroups, a node's processes are found in /proc: every process whose environment holds
# the node's tag (CHAOS_TAG=RUN/nodeI/K/, inherited by all that s3lect starts), and everything
# below its s3lect by parent links; a stop then SIGSTOPs them one by one until none is left.
#
# The caller sets cgroup_root (empty: /proc), run_id, lock, pid[] and incarnation[] (the current
# s3lect of each node and its number), and defines note, say and now_us (which sets now).
# Results come back in globals (P, J, S, G, L, N), as from now_us: no subshells.
# shellcheck disable=SC2154,SC2034

# cgroup_setup WANTED: sets cgroup_root to a fresh cgroup v2 directory for this run when WANTED
# is 1 and one can be made (the unified hierarchy of a hybrid system, or /sys/fs/cgroup), with
# the freeze and kill files (Linux 5.14); else leaves it empty.
cgroup_setup() {
  local base
  cgroup_root=""
  (($1)) || return 0
  for base in /sys/fs/cgroup/unified /sys/fs/cgroup; do
    [[ -w $base && -e $base/cgroup.procs && ! -e $base/tasks ]] || continue  # v1 has tasks
    mkdir -p "$base/s3lect-chaos/$run_id" 2>/dev/null || continue
    cgroup_root=$base/s3lect-chaos/$run_id
    [[ -e $cgroup_root/cgroup.freeze && -e $cgroup_root/cgroup.kill ]] && return 0
    rmdir "$cgroup_root" 2>/dev/null
    cgroup_root=""
  done
}

# incarnation_cgroup I: node I's current incarnation's cgroup in $G (made if need be); empty
# without cgroups
incarnation_cgroup() {
  G=""
  [[ -n $cgroup_root ]] || return 0
  G=$cgroup_root/node$1/${incarnation[$1]}
  mkdir -p "$G"
}

# in_cgroup PID DIR: true when PID's cgroup v2 is DIR (whose path ends with the one /proc shows,
# relative to the hierarchy's mount point)
in_cgroup() {
  local line
  while read -r line; do
    [[ $line == 0::/?* ]] || continue
    [[ $2 == *"${line#0::}" ]]
    return
  done 2>/dev/null <"/proc/$1/cgroup"
  return 1
}

# proc_state PID: the state letter of PID in $S (R, S, D, T, t, Z...), empty once it is gone
proc_state() {
  local stat
  S=""
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
  stat=${stat##*) }
  S=${stat:0:1}
}

# is_gone PID: true once PID has exited (a zombie counts as gone)
is_gone() {
  proc_state "$1"
  [[ -z $S || $S == Z || $S == X ]]
}

# descendants PID: PID and every process below it by parent links, appended to $P
descendants() {
  local queue=("$1") p t kids
  while ((${#queue[@]})); do
    p=${queue[-1]}
    unset 'queue[-1]'
    P+=("$p")
    for t in /proc/"$p"/task/*/children; do
      kids=""
      read -r kids 2>/dev/null <"$t"
      # shellcheck disable=SC2206  # a list of pids
      queue+=($kids)
    done
  done
}

# job_of I: the first process below node I's s3lect that is not s3lect's own (a guardian is
# named s3lect-...) in $J, empty if none: that is the command, and node I leads while it has one
job_of() {
  local queue=("${pid[$1]}") p t kids k comm
  J=""
  while ((${#queue[@]})); do
    p=${queue[0]}
    queue=("${queue[@]:1}")
    for t in /proc/"$p"/task/*/children; do
      kids=""
      read -r kids 2>/dev/null <"$t"
      for k in $kids; do
        comm=""
        read -r comm 2>/dev/null <"/proc/$k/comm"
        if [[ $comm == s3lect* ]]; then
          queue+=("$k")
        else
          J=$k
          return
        fi
      done
    done
  done
}

# procs_of I [K]: the live processes of node I (all its incarnations, or incarnation K) in $P
procs_of() {
  local i=$1 k=${2:-} dirs entry e want envs p
  P=()
  if [[ -n $cgroup_root ]]; then
    dirs=("$cgroup_root/node$i${k:+/$k}")
    while ((${#dirs[@]})); do
      entry=${dirs[-1]}
      unset 'dirs[-1]'
      [[ -r $entry/cgroup.procs ]] || continue
      while read -r p; do P+=("$p"); done <"$entry/cgroup.procs"
      for e in "$entry"/*/; do [[ -d $e ]] && dirs+=("${e%/}"); done
    done
    return 0
  fi
  want="CHAOS_TAG=$run_id/node$i/${k:+$k/}"
  for entry in /proc/[0-9]*; do
    mapfile -d '' -t envs 2>/dev/null <"$entry/environ" || continue
    for e in "${envs[@]}"; do
      if [[ $e == "$want"* ]]; then
        P+=("${entry#/proc/}")
        break
      fi
    done
  done
  # In case one scrubbed its environment: everything below the current s3lect.
  if [[ -n ${pid[i]:-} && (-z $k || $k == "${incarnation[i]}") ]]; then descendants "${pid[i]}"; fi
  # Guardians carry no tag (their environment holds only the loader's and the sanitizers'
  # variables): one of an earlier incarnation, whose s3lect is gone, is found by its command
  # line, which names the lock and the node's id, and everything below it by parent links.
  [[ -n $k && $k == "${incarnation[i]}" ]] || orphaned_guardians "$i"
}

# orphaned_guardians I: appends to $P the guardians of node I that are not below its current
# s3lect, and their trees
orphaned_guardians() {
  local entry comm stat parent args
  for entry in /proc/[0-9]*; do
    comm=""
    read -r comm 2>/dev/null <"$entry/comm" || continue
    [[ $comm == s3lect-guardian ]] || continue
    read -r stat 2>/dev/null <"$entry/stat" || continue
    stat=${stat##*) }
    read -r _ parent _ <<<"$stat"
    [[ $parent == "${pid[$1]:-}" ]] && continue
    mapfile -d '' -t args 2>/dev/null <"$entry/cmdline" || continue
    [[ " ${args[*]} " == *" id=node$1 "* && " ${args[*]} " == *" lock=$lock"* ]] || continue
    descendants "${entry#/proc/}"
  done
}

# cgroup_is DIR KEY VALUE: true when DIR's cgroup.events says KEY VALUE (populated, frozen)
cgroup_is() {
  local key value
  while read -r key value; do
    if [[ $key == "$2" ]]; then
      [[ $value == "$3" ]]
      return
    fi
  done <"$1/cgroup.events"
  return 1
}

# wait_cgroup DIR KEY VALUE: waits up to 2 s for cgroup_is DIR KEY VALUE; false if it never came
wait_cgroup() {
  local deadline
  now_us
  deadline=$((now + 2000000))
  until cgroup_is "$@"; do
    now_us
    ((now < deadline)) || return 1
    sleep 0.001
  done
}

# stop_node_processes I: stops every process of node I, as a machine freezes; false (and all
# running again) if that could not be done within 2 s. Once it returns true, none runs.
stop_node_processes() {
  local i=$1 p round found
  if [[ -n $cgroup_root ]]; then
    echo 1 >"$cgroup_root/node$i/cgroup.freeze"
    wait_cgroup "$cgroup_root/node$i" frozen 1 && return 0
    echo 0 >"$cgroup_root/node$i/cgroup.freeze"
    return 1
  fi
  # Round after round, until a round finds every process stopped (one forked meanwhile shows in
  # the next round; the kernel delivers a SIGSTOP a moment after it is sent).
  stopped_procs[i]=" "
  for ((round = 0; round < 2000; round++)); do
    procs_of "$i"
    found=0
    for p in "${P[@]}"; do
      proc_state "$p"
      [[ -z $S || $S == [TtZX] ]] && continue
      kill -STOP "$p" 2>/dev/null
      found=1
      [[ ${stopped_procs[i]} == *" $p "* ]] || stopped_procs[i]+="$p "
    done
    ((found)) || return 0
    sleep 0.001
  done
  continue_node_processes "$i"
  return 1
}

# continue_node_processes I: lets every process of node I run again
continue_node_processes() {
  local i=$1 p
  if [[ -n $cgroup_root ]]; then
    echo 0 >"$cgroup_root/node$i/cgroup.freeze"
    return
  fi
  for p in ${stopped_procs[i]:-}; do kill -CONT "$p" 2>/dev/null; done
  stopped_procs[i]=""
}

# kill_processes I [K]: SIGKILLs every process of node I (or of its incarnation K) and waits
# until they are gone (2 s at most; false if some remain). Bash reports the death of a child of
# its own (s3lect) that it reaps meanwhile on stderr: callers silence it.
kill_processes() {
  local i=$1 k=${2:-} p dir deadline
  if [[ -n $cgroup_root ]]; then
    dir=$cgroup_root/node$i${k:+/$k}
    [[ -d $dir ]] || return 0
    echo 1 >"$dir/cgroup.kill"
    wait_cgroup "$dir" populated 0
    return
  fi
  now_us
  deadline=$((now + 2000000))
  while :; do
    procs_of "$i" "$k"
    local alive=0
    for p in "${P[@]}"; do
      is_gone "$p" && continue
      kill -KILL "$p" 2>/dev/null
      alive=1
    done
    ((alive)) || return 0
    now_us
    ((now < deadline)) || return 1
    sleep 0.001
  done
}

# leftovers I K: node I's incarnation K's processes that are still alive, as "pid(comm)" words in
# $L, their number in $N
leftovers() {
  local p comm
  procs_of "$1" "$2"
  L=""
  N=0
  for p in "${P[@]}"; do
    is_gone "$p" && continue
    comm=""
    read -r comm 2>/dev/null <"/proc/$p/comm"
    [[ " $L " == *" $p($comm) "* ]] && continue
    L+=" $p($comm)"
    N=$((N + 1))
  done
  L=${L# }
}

# remove_cgroup DIR: removes DIR and the cgroups below it (a guardian's), deepest first; they
# must be empty
remove_cgroup() {
  local sub
  [[ -d $1 ]] || return 0
  for sub in "$1"/*/; do [[ -d $sub ]] && remove_cgroup "${sub%/}"; done
  rmdir "$1" 2>/dev/null
}
