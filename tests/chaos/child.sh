#!/usr/bin/env bash
# The command each chaos node runs under `s3lect run`: a job with a process tree, as a real
# service has. It records when its leadership work starts and stops in the shared event log and,
# besides its own loop, starts a grandchild (a background subshell, in the command's process
# group) and a daemon (double-forked and setsid: its own session and group, re-parented away
# from the command), which idle until they are killed.
#   child.sh EVENTS_LOG NODE WATCH_PORT [stubborn] [stubborn-grandchild] [stubborn-daemon]
#            [thief | stop-guardian]
# stubborn: the command ignores SIGTERM, so s3lect must SIGKILL it after --kill-grace: that takes
# the longest of all, and is what the lease's margin (lease - renew deadline) must cover.
# stubborn-grandchild, stubborn-daemon: that process ignores SIGTERM too.
# thief (in a PID namespace of its own): the command tries to take the guardian's descriptors
# from the namespace's init, PID 1, and to forge the job's end on any socket it gets
# ($CHAOS_THIEF --forge 1), and records how many it took.
# stop-guardian (without one): a process of the job stops the command's parent, its guardian,
# with SIGSTOP every 0.3-0.9 s, as a job hostile to its guardian would; s3lect resumes it.
# A signal-killed process logs nothing, so the tree's end is seen from outside: before anything
# else the command connects to the tree watcher (s3lect_tree_watch on 127.0.0.1:WATCH_PORT) and
# names itself; every process of its tree inherits that socket (fd 9), and when the last one is
# gone the kernel closes it and the watcher appends `treeend NODE TERM PID TIME`.
# Records (times from bash's $EPOCHREALTIME, read without forking):
#   start NODE TERM TIME PID   taken before the command does anything else but connect
#   end NODE TERM TIME PID     taken first thing in the SIGTERM/SIGINT trap: the command itself
#                              does nothing after it, but its tree may live on
#   thief NODE TERM TIME N     (thief) N descriptors taken: any is a violation
# PID is the command's pid as it sees it: in a PID namespace of its own (s3lect's guardian gives
# it one when it may), not the one s3lect logs, and the same for every command (2); the checker
# pairs a command's records by node, term and pid, in the order they come.
# Under `s3lect run --slots N` each record starts with "slotK " (K = $S3LECT_SLOT): the terms are
# the slot's, and chaos.sh checks every slot's records on their own.
set -u
log=$1
node=$2
watch_port=$3
shift 3
term=${S3LECT_TERM:?S3LECT_TERM is not set: run me under s3lect run}
pid=$$
slot=${S3LECT_SLOT:+slot$S3LECT_SLOT }
# Without the watcher the tree's end is unknown: the start record goes out all the same, and the
# checker reports the missing treeend.
if exec 9<>"/dev/tcp/127.0.0.1/$watch_port"; then
  echo "${slot}treeend $node $term $pid" >&9
else
  echo "child.sh: cannot reach the tree watcher on port $watch_port" >&2
fi
stubborn="" stubborn_grandchild="" stubborn_daemon="" thief="" stop_guardian=""
for word; do
  case $word in
    stubborn) stubborn=1 ;;
    stubborn-grandchild) stubborn_grandchild=1 ;;
    stubborn-daemon) stubborn_daemon=1 ;;
    thief) thief=1 ;;
    stop-guardian) stop_guardian=1 ;;
  esac
done
guardian=$PPID  # without a PID namespace; with one, the namespace's init
# A signal between `started=1` and the start record leaves an end without a start: the
# checker ignores those, since the command never got to work.
started=0
on_stop() {
  if ((started)); then echo "${slot}end $node $term $EPOCHREALTIME $pid" >>"$log"; fi
  exit 0
}
if [[ -n $stubborn ]]; then
  trap '' TERM INT  # no end record: its tree's end says when it died
else
  trap on_stop TERM INT
fi
started=1
echo "${slot}start $node $term $EPOCHREALTIME $pid" >>"$log"

if [[ -n $thief ]]; then
  taken=$("${CHAOS_THIEF:?}" --forge 1 | sed -n 's/^result taken=\([0-9]*\).*/\1/p')
  echo "${slot}thief $node $term $EPOCHREALTIME ${taken:--1}" >>"$log"  # -1: the thief failed
fi
if [[ -n $stop_guardian ]]; then
  (
    trap - TERM
    while :; do
      sleep "0.$((3 + RANDOM % 7))"
      kill -STOP "$guardian" 2>/dev/null
    done
  ) &
fi

# idle: sleeps forever. `wait` returns as soon as a trapped signal arrives; a foreground sleep
# would delay the trap.
idle() {
  while :; do
    sleep 5 &
    wait $!
  done
}
# A subshell inherits an ignored SIGTERM and resets a trapped one: say which it gets.
(
  if [[ -n $stubborn_grandchild ]]; then trap '' TERM; else trap - TERM; fi
  idle
) &
# The daemon: its parent exits at once, so it is re-parented (to init, or to the nearest child
# subreaper); setsid takes it out of the command's session and process group.
(
  if [[ -n $stubborn_daemon ]]; then trap '' TERM; else trap - TERM; fi
  setsid bash -c 'while :; do sleep 5; done' </dev/null &
)
idle
