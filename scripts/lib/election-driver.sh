# shellcheck shell=bash
# Drives leader-election rounds with the example candidate program (examples/leader_worker.cpp)
# and times handovers from the candidates' own event lines. Sourced by scripts/demo-election.sh
# and bench/failover.sh; not meant to be run.
#
# A candidate prints one line per event on stdout, with its wall clock in ms:
#   <unix ms> <id> started | leader term=N | working term=N beat=K | lost term=N | stopping | stopped
#
# One round: three fresh candidates on a fresh lock key; wait for a leader; let it work; SIGTERM
# it and time the graceful handover (next "leader" line minus the signal time); let the new
# leader work; crash it (ED_CRASH) and time the crash failover (next "leader" line minus the
# signal time); stop the rest with SIGTERM. The crash is one of:
#   kill      SIGKILL to the candidate's PID (with scripts/lib/cli-candidate.sh: s3lect alone,
#             not its job guardian nor its job)
#   kill-all  SIGKILL to the candidate's PID and to its s3lect-guardian child at once: what a
#             leader without a guardian left behind (no release; the job dies with the guardian)
#   stop      SIGSTOP to the candidate's PID alone; SIGCONT once the next leader has printed its
#             line, or after 3 leases, then F more of checks while the woken process settles
#
# Throughout, every log is checked for two leaders at once: a "leader" line while another
# candidate has printed "leader" and since then neither "lost" nor "stopped" and was not
# SIGKILLed; and for terms (fencing tokens) that fail to increase. Either is fatal.
# With ED_TRACK_JOBS=1 (candidates whose leader work is a job that opens $ED_JOB_FIFO, like
# scripts/lib/cli-child.sh) it also checks that no leader's job started while an earlier leader's
# job still had a process: every process of a job holds the FIFO's write end, and the driver's
# reader stamps the end of file (the kernel closes it when the last holder dies) as "jobend".
#
# The caller sets, then calls ed_init:
#   ED_BIN       candidate program            ED_BUCKET   bucket of the lock key
#   ED_CA_FILE   CA file or empty             ED_LEASE_MS empty = library defaults, else --lease-ms
#   ED_VERBOSE   1: narrate every step        ED_HOLD_MS  empty = a random hold, see _ed_hold
#   ED_KEEP_LOGS 1: keep the log directory even after success
#   ED_CRASH     kill (default), kill-all or stop
#   ED_TRACK_JOBS 1: give each candidate ED_JOB_FIFO and check its jobs as above
# and runs ed_cleanup with the exit status however the script ends (`on_exit_run ed_cleanup`,
# processes.sh), so that the candidates it started are stopped. Only those PIDs are ever signalled.
# ed_round N then sets ED_HANDOVER_MS, ED_FAILOVER_MS, ED_LEADERS ("a t1 → b t2 → c t3") and
# ED_CRASHED_ID (b), ED_CRASH_MS (the crash signal's time), and with ED_TRACK_JOBS=1
# ED_JOB_GONE_MS (the crashed leader's job gone, from the signal) and ED_JOB_GAP_MS (from then
# to the next leader's line; never negative: that is a violation).
# Functions fail by calling ed_fail, which exits 1 after printing the candidates' log tails.

# shellcheck source=scripts/lib/measure.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/measure.sh"

ED_IDS=(node-a node-b node-c)
declare -A ED_PID=() ED_SIGNALLED=() ED_READER_PID=()
ED_DIR=
ED_ROUND_DIR=
ED_OWNER=

# --------------------------------------------------------------------------------- helpers

# Milliseconds as seconds with three decimals: 12843 -> 12.843, -5 -> -0.005.
ed_fmt_ms() {
  local ms=$1 sign=
  if ((ms < 0)); then sign=-; ms=$((-ms)); fi
  printf '%s%d.%03d' "$sign" $((ms / 1000)) $((ms % 1000))
}

# Milliseconds as short seconds: 15000 -> 15, 2500 -> 2.5, 1667 -> 1.667.
ed_fmt_s() {
  local s
  s=$(ed_fmt_ms "$1")
  while [[ $s == *.*0 ]]; do s=${s%0}; done
  s=${s%.}
  printf '%s' "$s"
}

_ed_say() { if [[ ${ED_VERBOSE:-0} == 1 ]]; then printf '%s\n' "$*"; fi; }

# Is PID $1 alive and our own child running ED_BIN? (A reaped PID may be recycled.)
_ed_ours() {
  local pid=$1 stat rest state ppid arg args=()
  [[ -n $pid ]] || return 1
  { read -r stat <"/proc/$pid/stat"; } 2>/dev/null || return 1
  rest=${stat##*) }
  read -r state ppid _ <<<"$rest"
  [[ $state != Z && $ppid == "$ED_OWNER" ]] || return 1
  # The program itself, or a script's interpreter with the script among its first arguments.
  mapfile -d '' -n 3 args <"/proc/$pid/cmdline" 2>/dev/null || return 1
  for arg in "${args[@]}"; do
    [[ $arg == "$ED_BIN" ]] && return 0
  done
  return 1
}

# Is PID $1 our child and not yet exited? ED_PID holds unreaped children only, whose PIDs cannot
# be reused; unlike _ed_ours this also holds between the fork and the exec of the candidate,
# when its command line is still the driver's own (waiting for such a child would block until
# it ends).
_ed_running() {
  local pid=$1 stat rest state ppid
  [[ -n $pid ]] || return 1
  # A failed redirection of a builtin is not fatal; that of `stat=$(<file)` ends the shell.
  { read -r stat <"/proc/$pid/stat"; } 2>/dev/null || return 1
  rest=${stat##*) }
  read -r state ppid _ <<<"$rest"
  [[ $state != Z && $ppid == "$ED_OWNER" ]]
}

_ed_tails() {
  local id f
  [[ -n $ED_ROUND_DIR ]] || return 0
  for id in "${ED_IDS[@]}"; do
    for f in "$ED_ROUND_DIR/$id.log" "$ED_ROUND_DIR/$id.err"; do
      [[ -s $f ]] || continue
      printf '\n----- last lines of %s -----\n' "$f" >&2
      tail -n 15 -- "$f" >&2
    done
  done
}

ed_fail() {
  printf '\nerror: %s\n' "$*" >&2
  _ed_tails
  exit 1
}

# ---------------------------------------------------------------------------- set-up, clean-up

ed_init() {
  [[ -x $ED_BIN ]] || { echo "error: candidate program $ED_BIN not found or not executable" >&2; exit 1; }
  ED_BIN=$(realpath -- "$ED_BIN")
  [[ -n ${ED_BUCKET:-} ]] || { echo "error: no bucket (ED_BUCKET)" >&2; exit 1; }
  if [[ -n ${ED_LEASE_MS:-} ]] && ! [[ $ED_LEASE_MS =~ ^[1-9][0-9]*$ && $ED_LEASE_MS -ge 3 ]]; then
    echo "error: --lease-ms wants an integer ≥ 3, got '$ED_LEASE_MS'" >&2
    exit 2
  fi
  # leader_worker keeps the library's proportions lease:renewal = 15:5 when given --lease-ms.
  ED_L_MS=${ED_LEASE_MS:-15000}
  ED_F_MS=$((ED_L_MS / 3))
  # A new leader must appear within a lease plus two polls (3 L bounds that with room to spare).
  ED_BOUND_MS=$((3 * ED_L_MS + 10000))
  ED_OWNER=$BASHPID
  ED_DIR=$(mktemp -d "${TMPDIR:-/tmp}/s3lect-election.XXXXXX")
}

# Stops every candidate still running (SIGTERM so a leader releases, then SIGKILL after 5 s),
# and removes the log directory unless the exit status $1 is non-zero or ED_KEEP_LOGS=1.
ed_cleanup() {
  local rc=${1:-0} id pid n
  trap '' INT TERM
  for id in "${!ED_PID[@]}"; do
    pid=${ED_PID[$id]}
    if _ed_running "$pid"; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  for id in "${!ED_PID[@]}"; do
    pid=${ED_PID[$id]}
    for ((n = 0; n < 50; n++)); do
      _ed_running "$pid" || break
      sleep 0.1
    done
    {
      if _ed_running "$pid"; then kill -KILL "$pid" || true; fi
      wait "$pid" || true
    } 2>/dev/null
  done
  ED_PID=()
  _ed_stop_readers
  [[ -n $ED_DIR && -d $ED_DIR ]] || return 0
  if ((rc != 0)) || [[ ${ED_KEEP_LOGS:-0} == 1 ]]; then
    echo "candidate logs kept in $ED_DIR" >&2
  else
    rm -rf -- "$ED_DIR"
  fi
}

# Appends "<ms> $2 jobend" to $3 at each end of file on FIFO $1: the end of one job of
# candidate $2, whose every process held the write end. Reopening waits for the next job.
# Runs in the background until _ed_stop_readers.
_ed_job_reader() {
  local fifo=$1 id=$2 events=$3
  for (( ; ; )); do
    exec 3<"$fifo"
    while read -r -u 3 _; do :; done
    now_ms
    printf '%s %s jobend\n' "$REPLY" "$id" >>"$events"
    exec 3<&-
  done
}

# With ED_TRACK_JOBS=1: a FIFO and a reader per candidate for this round.
_ed_start_readers() {
  local id
  [[ ${ED_TRACK_JOBS:-0} == 1 ]] || return 0
  : >"$ED_ROUND_DIR/jobs.events"
  for id in "${ED_IDS[@]}"; do
    mkfifo -- "$ED_ROUND_DIR/$id.job"
    _ed_job_reader "$ED_ROUND_DIR/$id.job" "$id" "$ED_ROUND_DIR/jobs.events" &
    ED_READER_PID[$id]=$!
  done
}

# Ends the readers (our own background subshells).
_ed_stop_readers() {
  local id pid
  for id in "${!ED_READER_PID[@]}"; do
    pid=${ED_READER_PID[$id]}
    if _ed_running "$pid"; then kill -TERM "$pid" 2>/dev/null || true; fi
    wait "$pid" 2>/dev/null || true
  done
  ED_READER_PID=()
}

# ------------------------------------------------------------------------------- analysis

# Merges the round's logs, the driver's own signal events and the job ends in time order (at
# equal ms, an end of leadership or of a job sorts before a start) and replays them. Writes
# $ED_ROUND_DIR/analysis:
#   L <ms> <id> <term>          a "leader" line
#   E <ms> <id> <event> <term>  lost / stopped / stopping / sigterm / sigkill / sigstop / sigcont
#                               (term "-": not leader)
#   J <ms> <id> <term>          the end of the job the candidate started as leader of that term
#   C <since ms> <id> <term>    who leads now
#   V <text>                    a safety violation
# Timestamps stay strings: mawk would print 13-digit numbers in exponent form.
_ed_analyse() {
  local files=() id
  for id in "${ED_IDS[@]}"; do files+=("$ED_ROUND_DIR/$id.log"); done
  files+=("$ED_ROUND_DIR/driver.events")
  [[ ${ED_TRACK_JOBS:-0} == 1 ]] && files+=("$ED_ROUND_DIR/jobs.events")
  awk '$1 ~ /^[0-9]+$/ && NF >= 3 {
         print $1, ($3 == "lost" || $3 == "stopped" || $3 == "sigkill" || $3 == "jobend") ? 0 : 1, $0
       }' "${files[@]}" 2>/dev/null |
    sort -s -k1,1n -k2,2n |
    awk -v track="${ED_TRACK_JOBS:-0}" '
      {
        ms = $3; id = $4; ev = $5; term = ""
        for (i = 6; i <= NF; i++) if ($i ~ /^term=[0-9]+$/) term = substr($i, 6) + 0
      }
      ev == "leader" {
        if (term == "") { print "V malformed leader line: " substr($0, index($0, $3)); next }
        for (other in leading)
          if (other != id)
            print "V two leaders: " id " became leader (term " term ") at " ms " while " other \
                  " (leader since " since[other] ", term " leading[other] ") had printed neither" \
                  " lost nor stopped and had not been killed"
        if (seen && term <= maxterm)
          print "V term did not increase: " id " became leader with term " term " at " ms \
                ", after term " maxterm
        if (track == 1)
          for (other in job)
            print "V jobs overlap: " id "\047s job (term " term ") started at " ms " while the job" \
                  " of " other " (term " job[other] ", started " jobsince[other] ") still had a process"
        job[id] = term; jobsince[id] = ms
        leading[id] = term; since[id] = ms
        if (!seen || term > maxterm) maxterm = term
        seen = 1
        print "L", ms, id, term
        next
      }
      ev == "lost" || ev == "stopped" || ev == "sigkill" {
        print "E", ms, id, ev, (id in leading) ? leading[id] : "-"
        delete leading[id]
        next
      }
      ev == "jobend" {
        print "J", ms, id, (id in job) ? job[id] : "-"
        delete job[id]
        next
      }
      ev == "stopping" || ev == "sigterm" || ev == "sigstop" || ev == "sigcont" {
        print "E", ms, id, ev, (id in leading) ? leading[id] : "-"
      }
      END { for (id in leading) print "C", since[id], id, leading[id] }
    ' >"$ED_ROUND_DIR/analysis"
}

_ed_check_violations() {
  local v
  v=$(sed -n 's/^V //p' "$ED_ROUND_DIR/analysis")
  [[ -z $v ]] && return 0
  {
    printf '\n%s\n' '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
    printf '!!! SAFETY VIOLATION: leadership overlapped or a term went backwards\n'
    printf '!!! %s\n' "$v" | sed 's/^!!! !!! /!!! /'
    printf '%s\n' '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
  } >&2
  ED_KEEP_LOGS=1
  ed_fail "safety violation (logs in $ED_ROUND_DIR)"
}

# Fails if a candidate the driver has not signalled is no longer running.
_ed_check_alive() {
  local id pid st
  for id in "${ED_IDS[@]}"; do
    pid=${ED_PID[$id]:-}
    [[ -n $pid && -z ${ED_SIGNALLED[$id]} ]] || continue
    _ed_running "$pid" && continue
    st=0
    wait "$pid" 2>/dev/null || st=$?
    unset "ED_PID[$id]"
    ed_fail "$id (pid $pid) exited on its own with status $st"
  done
}

# One poll step: analyse, check safety and liveness.
_ed_poll() {
  _ed_analyse
  _ed_check_violations
  _ed_check_alive
}

# Who leads now, from the analysis, into ED_CUR_ID (empty: nobody).
_ed_current() {
  local kind ms id term
  ED_CUR_ID=''
  while read -r kind ms id term; do
    if [[ $kind == C ]]; then ED_CUR_ID=$id; fi
  done <"$ED_ROUND_DIR/analysis"
}

# Time of the first event $2 (lost, stopped, ...) of candidate $1 into REPLY (empty: none).
_ed_event_ms() {
  local kind ms id ev term
  REPLY=
  while read -r kind ms id ev term; do
    if [[ $kind == E && $id == "$1" && $ev == "$2" ]]; then REPLY=$ms; return; fi
  done <"$ED_ROUND_DIR/analysis"
}

# Waits, bounded, for the first "leader" line with a term above $1. Sets ED_NEW_ID,
# ED_NEW_TERM, ED_NEW_MS. $2 says what is awaited, for the error message. With $3, waits at
# most $3 ms and returns 1 when none came by then, instead of failing.
_ed_wait_leader() {
  local min_term=$1 what=$2 soft_ms=${3:-} deadline kind ms id term
  now_ms
  deadline=$((REPLY + ${soft_ms:-$ED_BOUND_MS}))
  for (( ; ; )); do
    _ed_poll
    while read -r kind ms id term; do
      if [[ $kind == L ]] && ((term > min_term)); then
        ED_NEW_ID=$id ED_NEW_TERM=$term ED_NEW_MS=$ms
        return 0
      fi
    done <"$ED_ROUND_DIR/analysis"
    now_ms
    if ((REPLY >= deadline)); then
      [[ -z $soft_ms ]] || return 1
      ed_fail "no $what within $(ed_fmt_s "$ED_BOUND_MS") s (3 × lease + 10 s)"
    fi
    sleep 0.1
  done
}

# Waits, bounded, for candidate $1 (signalled) to exit; SIGKILLs it after the bound.
_ed_wait_exit() {
  local id=$1 pid=${ED_PID[$1]} deadline st=0
  now_ms
  deadline=$((REPLY + ED_L_MS + 10000))
  while _ed_running "$pid"; do
    now_ms
    if ((REPLY >= deadline)); then
      echo "warning: $id (pid $pid) still running $(ed_fmt_s $((ED_L_MS + 10000))) s after SIGTERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.1
  done
  { wait "$pid" || st=$?; } 2>/dev/null
  unset "ED_PID[$id]"
  ((st == 0)) || echo "warning: $id exited with status $st after SIGTERM" >&2
}

# Lets the leader work: ED_HOLD_MS if set, else 1 s plus a random part of one renewal interval,
# so that the signal falls at a random point between two renewals (what crash failover depends
# on). Keeps checking safety and liveness meanwhile.
_ed_hold() {
  local hold=${ED_HOLD_MS:-} until
  [[ -n $hold ]] || hold=$((1000 + (RANDOM * 32768 + RANDOM) % ED_F_MS))
  now_ms
  until=$((REPLY + hold))
  while now_ms && ((REPLY < until)); do
    _ed_poll
    sleep 0.1
  done
  _ed_poll
}

# The PID of candidate $1's s3lect-guardian child into REPLY (empty: none).
_ed_guardian_of() {
  local child comm
  REPLY=
  for child in $(<"/proc/$1/task/$1/children"); do
    comm=$(<"/proc/$child/comm") 2>/dev/null || continue
    if [[ $comm == s3lect-guardia* ]]; then REPLY=$child; return; fi
  done
}

# Sends signal $1 (TERM, KILL, STOP, or KILL-ALL: SIGKILL to the candidate and its guardian
# together) to candidate $2, which must be the current leader; records the send time in REPLY
# and in driver.events.
_ed_signal() {
  local sig=$1 id=$2 pid=${ED_PID[$2]:-} ev targets
  ev=sig${sig,,}
  _ed_current
  [[ $ED_CUR_ID == "$id" ]] ||
    ed_fail "leadership moved on its own before the signal: expected $id to lead, found '${ED_CUR_ID:-nobody}'"
  _ed_ours "$pid" || ed_fail "$id (pid $pid) is not running"
  targets=$pid
  if [[ $sig == KILL-ALL ]]; then
    _ed_guardian_of "$pid"
    [[ -n $REPLY ]] || ed_fail "$id (pid $pid) has no s3lect-guardian child"
    targets="$pid $REPLY" sig=KILL ev=sigkill
  fi
  ED_SIGNALLED[$id]=$sig
  now_ms
  # shellcheck disable=SC2086  # one or two PIDs
  kill "-$sig" $targets
  printf '%s %s %s\n' "$REPLY" "$id" "$ev" >>"$ED_ROUND_DIR/driver.events"
  if [[ $sig == KILL ]]; then
    local sent=$REPLY n
    {
      for ((n = 0; n < 50; n++)); do _ed_running "$pid" || break; sleep 0.1; done
      wait "$pid" || true
    } 2>/dev/null
    unset "ED_PID[$id]"
    REPLY=$sent
  fi
}

# SIGCONT to candidate $1 (stopped by _ed_signal STOP), which is then checked for liveness again.
_ed_resume() {
  local id=$1 pid=${ED_PID[$1]:-}
  _ed_ours "$pid" || ed_fail "$id (pid $pid) is not running"
  now_ms
  kill -CONT "$pid"
  printf '%s %s sigcont\n' "$REPLY" "$id" >>"$ED_ROUND_DIR/driver.events"
  ED_SIGNALLED[$id]=
}

_ed_count_beats() {
  local n
  n=$(grep -c " $1 working term=$2 " "$ED_ROUND_DIR/$1.log" || true)
  REPLY=${n:-0}
}

# ------------------------------------------------------------------------------------ round

# Runs round $1 (see the top of this file).
ed_round() {
  local round=$1 id args=() start_ms t_term t_kill a a_term b b_term c c_term settle_ms
  local crash=${ED_CRASH:-kill} kind ms term
  ED_ROUND_DIR=$ED_DIR/round-$round
  mkdir -p -- "$ED_ROUND_DIR"
  : >"$ED_ROUND_DIR/driver.events"
  _ed_start_readers
  now_ms
  # A fresh key per run, so no record left from an earlier run is in the way.
  ED_KEY=${ED_KEY_PREFIX:-s3lect-election}/run-$REPLY-$$-$round.json
  [[ -n ${ED_CA_FILE:-} ]] && args+=("$ED_CA_FILE")
  [[ -n ${ED_LEASE_MS:-} ]] && args+=(--lease-ms "$ED_LEASE_MS")

  local shown=s3://$ED_BUCKET
  [[ $ED_BUCKET == az://* ]] && shown=$ED_BUCKET
  _ed_say "three candidates campaign for $shown/$ED_KEY"
  now_ms
  start_ms=$REPLY
  for id in "${ED_IDS[@]}"; do
    # Created here, not by the background job's redirections: the analysis may read the logs
    # before a loaded machine has run the forked shell that would open them.
    : >"$ED_ROUND_DIR/$id.log"
    : >"$ED_ROUND_DIR/$id.err"
    ED_JOB_FIFO=${ED_READER_PID[$id]:+$ED_ROUND_DIR/$id.job} \
      "$ED_BIN" "$ED_BUCKET" "$ED_KEY" "$id" "${args[@]}" \
      </dev/null >"$ED_ROUND_DIR/$id.log" 2>"$ED_ROUND_DIR/$id.err" &
    ED_PID[$id]=$!
    ED_SIGNALLED[$id]=
  done
  _ed_say "  started ${ED_IDS[0]} (pid ${ED_PID[${ED_IDS[0]}]}), ${ED_IDS[1]} (pid ${ED_PID[${ED_IDS[1]}]}), ${ED_IDS[2]} (pid ${ED_PID[${ED_IDS[2]}]})"

  _ed_wait_leader 0 "leader"
  a=$ED_NEW_ID a_term=$ED_NEW_TERM
  _ed_say "  $a is leader, term $a_term ($(ed_fmt_ms $((ED_NEW_MS - start_ms))) s after the start)"
  _ed_hold
  _ed_count_beats "$a" "$a_term"
  _ed_say "  $a works with fencing token $a_term ($REPLY heartbeats so far)"

  _ed_say ""
  _ed_say "graceful stop: SIGTERM to $a (pid ${ED_PID[$a]})"
  _ed_signal TERM "$a"
  t_term=$REPLY
  _ed_wait_leader "$a_term" "new leader after SIGTERM to $a"
  b=$ED_NEW_ID b_term=$ED_NEW_TERM
  ((ED_NEW_MS >= t_term)) || ed_fail "$b became leader before the signal"
  ED_HANDOVER_MS=$((ED_NEW_MS - t_term))
  _ed_wait_exit "$a"
  _ed_analyse
  local lost_note=
  _ed_event_ms "$a" lost
  [[ -n $REPLY ]] && lost_note="lost the lease at +$(ed_fmt_ms $((REPLY - t_term))) s, "
  _ed_event_ms "$a" stopped
  if [[ -n $REPLY ]]; then
    _ed_say "  $a released the lock: ${lost_note}stopped at +$(ed_fmt_ms $((REPLY - t_term))) s"
  else
    _ed_say "  $a exited without printing \"stopped\""
  fi
  _ed_say "  $b is leader, term $b_term: graceful handover took $(ed_fmt_ms "$ED_HANDOVER_MS") s"
  _ed_hold
  _ed_count_beats "$b" "$b_term"
  _ed_say "  $b works with fencing token $b_term ($REPLY heartbeats so far)"

  _ed_say ""
  case $crash in
    kill)
      _ed_say "crash: SIGKILL to $b (pid ${ED_PID[$b]})"
      _ed_signal KILL "$b" ;;
    kill-all)
      _ed_say "crash: SIGKILL to $b (pid ${ED_PID[$b]}) and its guardian; the lease must expire"
      _ed_signal KILL-ALL "$b" ;;
    stop)
      _ed_say "freeze: SIGSTOP to $b (pid ${ED_PID[$b]}) alone; the lease must expire"
      _ed_signal STOP "$b" ;;
    *) ed_fail "ED_CRASH: kill, kill-all or stop, not '$crash'" ;;
  esac
  t_kill=$REPLY
  # shellcheck disable=SC2034  # for the caller
  ED_CRASHED_ID=$b ED_CRASH_MS=$t_kill
  if [[ $crash == stop ]]; then
    if _ed_wait_leader "$b_term" "new leader after SIGSTOP to $b" $((3 * ED_L_MS)); then
      _ed_resume "$b"
    else
      _ed_resume "$b"
      _ed_wait_leader "$b_term" "new leader after SIGSTOP to $b"
    fi
  else
    _ed_wait_leader "$b_term" "new leader after the SIGKILL to $b"
  fi
  c=$ED_NEW_ID c_term=$ED_NEW_TERM
  ((ED_NEW_MS >= t_kill)) || ed_fail "$c became leader before the crash"
  ED_FAILOVER_MS=$((ED_NEW_MS - t_kill))
  _ed_say "  $c is leader, term $c_term: crash failover took $(ed_fmt_ms "$ED_FAILOVER_MS") s"
  if [[ $crash == stop ]]; then
    # The woken process finds its renewal overdue and the record taken: it must not lead again.
    settle_ms=$((ED_F_MS > 2000 ? ED_F_MS : 2000))
    ED_HOLD_MS=$settle_ms _ed_hold
  fi

  # The survivor (and anyone else still running) stops gracefully.
  for id in "${ED_IDS[@]}"; do
    [[ -n ${ED_PID[$id]:-} ]] || continue
    ED_SIGNALLED[$id]=TERM
    now_ms
    kill -TERM "${ED_PID[$id]}" 2>/dev/null || true
    printf '%s %s sigterm\n' "$REPLY" "$id" >>"$ED_ROUND_DIR/driver.events"
  done
  for id in "${ED_IDS[@]}"; do
    [[ -z ${ED_PID[$id]:-} ]] || _ed_wait_exit "$id"
  done
  if [[ ${ED_TRACK_JOBS:-0} == 1 ]]; then
    sleep 0.2  # the readers stamp the last job's end
    _ed_stop_readers
  fi
  _ed_analyse
  _ed_check_violations
  ED_JOB_GONE_MS='' ED_JOB_GAP_MS=''
  if [[ ${ED_TRACK_JOBS:-0} == 1 ]]; then
    while read -r kind ms id term; do
      if [[ $kind == J && $id == "$b" && $term == "$b_term" ]]; then
        # shellcheck disable=SC2034  # for the caller
        ED_JOB_GONE_MS=$((ms - t_kill)) ED_JOB_GAP_MS=$((ED_NEW_MS - ms))
      fi
    done <"$ED_ROUND_DIR/analysis"
    [[ -n $ED_JOB_GONE_MS ]] || ed_fail "no end of $b's job (term $b_term) was recorded"
  fi
  # shellcheck disable=SC2034  # for the caller
  ED_LEADERS="$a t$a_term → $b t$b_term → $c t$c_term"
  _ed_say ""
  _ed_say "safety: never two leaders at once; terms $a_term → $b_term → $c_term strictly increasing"
}

# The round's events in time order, relative to the first one, heartbeats left out.
ed_timeline() {
  local files=("$ED_ROUND_DIR/driver.events") id t0=
  for id in "${ED_IDS[@]}"; do files+=("$ED_ROUND_DIR/$id.log"); done
  [[ ${ED_TRACK_JOBS:-0} == 1 ]] && files+=("$ED_ROUND_DIR/jobs.events")
  awk '$1 ~ /^[0-9]+$/ && NF >= 3 && $3 != "working"' "${files[@]}" 2>/dev/null |
    sort -s -k1,1n |
    while read -r ms id rest; do
      [[ -n $t0 ]] || t0=$ms
      case $rest in
        sigterm) rest="<- SIGTERM from the driver" ;;
        sigkill) rest="<- SIGKILL from the driver" ;;
        sigstop) rest="<- SIGSTOP from the driver" ;;
        sigcont) rest="<- SIGCONT from the driver" ;;
        jobend) rest="job gone (its last process ended)" ;;
      esac
      printf '  %9s s  %-7s %s\n' "+$(ed_fmt_ms $((ms - t0)))" "$id" "$rest"
    done
}
