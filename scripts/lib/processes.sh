# shellcheck shell=bash
# Ending a script and the processes it started. Sourced.
#   on_exit_run FUNCTION [WORK_DIR]
# However the script ends (SIGINT and SIGTERM end it with status 130 and 143), runs FUNCTION
# with the exit status as $1, then removes WORK_DIR if that status is 0 or says that it is kept,
# and exits with that status.
#   stop_processes TENTHS PID...
# SIGTERM to each PID, up to TENTHS tenths of a second for each to exit, then SIGKILL; reaps them.
on_exit_run() {
  _exit_function=$1 _exit_work_dir=${2:-}
  trap _on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

_on_exit() {
  local rc=$?
  trap '' INT TERM
  "$_exit_function" "$rc"
  if [[ -n $_exit_work_dir ]]; then
    if ((rc == 0)); then rm -rf -- "$_exit_work_dir"; else echo "files kept in $_exit_work_dir" >&2; fi
  fi
  exit "$rc"
}

stop_processes() {
  local tenths=$1 p n
  shift
  for p; do kill -TERM "$p" 2>/dev/null || true; done
  for p; do
    for ((n = 0; n < tenths; n++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
}
