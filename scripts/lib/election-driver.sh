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
# leader work; SIGKILL it and time the crash failover; stop the rest with SIGTERM.
#
# Throughout, every log is checked for two leaders at once: a "leader" line while another
# candidate has printed "leader" and since then neither "lost" nor "stopped" and was not
# SIGKILLed; and for terms (fencing tokens) that fail to increase. Either is fatal.
#
# The caller sets, then calls ed_init:
#   ED_BIN       candidate program            ED_BUCKET   bucket of the lock key
#   ED_CA_FILE   CA file or empty             ED_LEASE_MS empty = library defaults, else --lease-ms
#   ED_VERBOSE   1: narrate every step        ED_HOLD_MS  empty = a random hold, see _ed_hold
#   ED_KEEP_LOGS 1: keep the log directory even after success
# and installs `trap 'ed_cleanup $?' EXIT` (plus INT/TERM traps that exit), so that the
# candidates it started are stopped however the script ends. Only those PIDs are ever signalled.
# ed_round N then sets ED_HANDOVER_MS, ED_FAILOVER_MS and ED_LEADERS ("a t1 → b t2 → c t3").
# Functions fail by calling ed_fail, which exits 1 after printing the candidates' log tails.

ED_IDS=(node-a node-b node-c)
declare -A ED_PID=() ED_SIGNALLED=()
ED_DIR=
ED_ROUND_DIR=
ED_OWNER=

# --------------------------------------------------------------------------------- helpers

# Wall clock in ms into REPLY (no fork; CLOCK_REALTIME like the candidates' timestamps).
_ed_now_ms() {
  local t=${EPOCHREALTIME//[!0-9]/}  # "seconds.micros", decimal point per locale
  REPLY=$((t / 1000))
}

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
  [[ -n $pid && -r /proc/$pid/stat ]] || return 1
  stat=$(<"/proc/$pid/stat") 2>/dev/null || return 1
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
    if _ed_ours "$pid"; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  for id in "${!ED_PID[@]}"; do
    pid=${ED_PID[$id]}
    for ((n = 0; n < 50; n++)); do
      _ed_ours "$pid" || break
      sleep 0.1
    done
    {
      if _ed_ours "$pid"; then kill -KILL "$pid" || true; fi
      wait "$pid" || true
    } 2>/dev/null
  done
  ED_PID=()
  [[ -n $ED_DIR && -d $ED_DIR ]] || return 0
  if ((rc != 0)) || [[ ${ED_KEEP_LOGS:-0} == 1 ]]; then
    echo "candidate logs kept in $ED_DIR" >&2
  else
    rm -rf -- "$ED_DIR"
  fi
}

# ------------------------------------------------------------------------------- analysis

# Merges the round's logs and the driver's own signal events in time order (at equal ms, an
# end of leadership sorts before a start) and replays them. Writes $ED_ROUND_DIR/analysis:
#   L <ms> <id> <term>          a "leader" line
#   E <ms> <id> <event> <term>  lost / stopped / stopping / sigterm / sigkill (term "-": not leader)
#   C <since ms> <id> <term>    who leads now
#   V <text>                    a safety violation
# Timestamps stay strings: mawk would print 13-digit numbers in exponent form.
_ed_analyse() {
  local files=() id
  for id in "${ED_IDS[@]}"; do files+=("$ED_ROUND_DIR/$id.log"); done
  files+=("$ED_ROUND_DIR/driver.events")
  awk '$1 ~ /^[0-9]+$/ && NF >= 3 {
         print $1, ($3 == "lost" || $3 == "stopped" || $3 == "sigkill") ? 0 : 1, $0
       }' "${files[@]}" 2>/dev/null |
    sort -s -k1,1n -k2,2n |
    awk '
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
      ev == "stopping" || ev == "sigterm" { print "E", ms, id, ev, (id in leading) ? leading[id] : "-" }
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
    _ed_ours "$pid" && continue
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
# ED_NEW_TERM, ED_NEW_MS. $2 says what is awaited, for the error message.
_ed_wait_leader() {
  local min_term=$1 what=$2 deadline kind ms id term
  _ed_now_ms
  deadline=$((REPLY + ED_BOUND_MS))
  for (( ; ; )); do
    _ed_poll
    while read -r kind ms id term; do
      if [[ $kind == L ]] && ((term > min_term)); then
        ED_NEW_ID=$id ED_NEW_TERM=$term ED_NEW_MS=$ms
        return 0
      fi
    done <"$ED_ROUND_DIR/analysis"
    _ed_now_ms
    ((REPLY < deadline)) ||
      ed_fail "no $what within $(ed_fmt_s "$ED_BOUND_MS") s (3 × lease + 10 s)"
    sleep 0.1
  done
}

# Waits, bounded, for candidate $1 (signalled) to exit; SIGKILLs it after the bound.
_ed_wait_exit() {
  local id=$1 pid=${ED_PID[$1]} deadline st=0
  _ed_now_ms
  deadline=$((REPLY + ED_L_MS + 10000))
  while _ed_ours "$pid"; do
    _ed_now_ms
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
  _ed_now_ms
  until=$((REPLY + hold))
  while _ed_now_ms && ((REPLY < until)); do
    _ed_poll
    sleep 0.1
  done
  _ed_poll
}

# Sends signal $1 (TERM or KILL) to candidate $2, which must be the current leader; records the
# send time in REPLY and in driver.events.
_ed_signal() {
  local sig=$1 id=$2 pid=${ED_PID[$2]:-} ev
  ev=sig${sig,,}
  _ed_current
  [[ $ED_CUR_ID == "$id" ]] ||
    ed_fail "leadership moved on its own before the signal: expected $id to lead, found '${ED_CUR_ID:-nobody}'"
  _ed_ours "$pid" || ed_fail "$id (pid $pid) is not running"
  ED_SIGNALLED[$id]=$sig
  _ed_now_ms
  kill "-$sig" "$pid"
  printf '%s %s %s\n' "$REPLY" "$id" "$ev" >>"$ED_ROUND_DIR/driver.events"
  if [[ $sig == KILL ]]; then
    local sent=$REPLY n
    {
      for ((n = 0; n < 50; n++)); do _ed_ours "$pid" || break; sleep 0.1; done
      wait "$pid" || true
    } 2>/dev/null
    unset "ED_PID[$id]"
    REPLY=$sent
  fi
}

_ed_count_beats() {
  local n
  n=$(grep -c " $1 working term=$2 " "$ED_ROUND_DIR/$1.log" || true)
  REPLY=${n:-0}
}

# ------------------------------------------------------------------------------------ round

# Runs round $1 (see the top of this file).
ed_round() {
  local round=$1 id args=() start_ms t_term t_kill a a_term b b_term c c_term
  ED_ROUND_DIR=$ED_DIR/round-$round
  mkdir -p -- "$ED_ROUND_DIR"
  : >"$ED_ROUND_DIR/driver.events"
  _ed_now_ms
  # A fresh key per run, so no record left from an earlier run is in the way.
  ED_KEY=${ED_KEY_PREFIX:-s3lect-election}/run-$REPLY-$$-$round.json
  [[ -n ${ED_CA_FILE:-} ]] && args+=("$ED_CA_FILE")
  [[ -n ${ED_LEASE_MS:-} ]] && args+=(--lease-ms "$ED_LEASE_MS")

  _ed_say "three candidates campaign for s3://$ED_BUCKET/$ED_KEY"
  _ed_now_ms
  start_ms=$REPLY
  for id in "${ED_IDS[@]}"; do
    # Created here, not by the background job's redirections: the analysis may read the logs
    # before a loaded machine has run the forked shell that would open them.
    : >"$ED_ROUND_DIR/$id.log"
    : >"$ED_ROUND_DIR/$id.err"
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
  _ed_say "crash: SIGKILL to $b (pid ${ED_PID[$b]}); the survivor must wait for the lease to expire"
  _ed_signal KILL "$b"
  t_kill=$REPLY
  _ed_wait_leader "$b_term" "new leader after SIGKILL to $b"
  c=$ED_NEW_ID c_term=$ED_NEW_TERM
  ((ED_NEW_MS >= t_kill)) || ed_fail "$c became leader before the kill"
  ED_FAILOVER_MS=$((ED_NEW_MS - t_kill))
  _ed_say "  $c is leader, term $c_term: crash failover took $(ed_fmt_ms "$ED_FAILOVER_MS") s"

  # The survivor (and anyone else still running) stops gracefully.
  for id in "${ED_IDS[@]}"; do
    [[ -n ${ED_PID[$id]:-} ]] || continue
    ED_SIGNALLED[$id]=TERM
    _ed_now_ms
    kill -TERM "${ED_PID[$id]}" 2>/dev/null || true
    printf '%s %s sigterm\n' "$REPLY" "$id" >>"$ED_ROUND_DIR/driver.events"
  done
  for id in "${ED_IDS[@]}"; do
    [[ -z ${ED_PID[$id]:-} ]] || _ed_wait_exit "$id"
  done
  _ed_analyse
  _ed_check_violations
  # shellcheck disable=SC2034  # for the caller
  ED_LEADERS="$a t$a_term → $b t$b_term → $c t$c_term"
  _ed_say ""
  _ed_say "safety: never two leaders at once; terms $a_term → $b_term → $c_term strictly increasing"
}

# The round's events in time order, relative to the first one, heartbeats left out.
ed_timeline() {
  local files=("$ED_ROUND_DIR/driver.events") id t0=
  for id in "${ED_IDS[@]}"; do files+=("$ED_ROUND_DIR/$id.log"); done
  awk '$1 ~ /^[0-9]+$/ && NF >= 3 && $3 != "working"' "${files[@]}" 2>/dev/null |
    sort -s -k1,1n |
    while read -r ms id rest; do
      [[ -n $t0 ]] || t0=$ms
      case $rest in
        sigterm) rest="<- SIGTERM from the driver" ;;
        sigkill) rest="<- SIGKILL from the driver" ;;
      esac
      printf '  %9s s  %-7s %s\n' "+$(ed_fmt_ms $((ms - t0)))" "$id" "$rest"
    done
}
