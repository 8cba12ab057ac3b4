# shellcheck shell=bash
# The parts of bench/coordinated.sh, sourced by it (it defines the helpers they use).

# Seconds a freshly started node needs to hold a watch: two reads at F, then a check and a
# watch, as bench/peer_handover.sh waits; a little more than the default's 9 s.
watch_wait=$((lease_ms * 10 / 15000 + 1))

# start_in_order ID PRIORITY ...: each node a second after the previous; the first leads.
start_in_order() {
  while [ $# -gt 0 ]; do
    start_node "$1" "$2"
    [ "$(starts)" -gt 0 ] || wait_start_after 0 >/dev/null
    shift 2
    sleep 1
  done
}

# Four nodes with priorities 1, 1, 2, 3 (or all 0); rounds in which the leader goes: $1 = TERM
# (SIGTERM to its s3lect), KILL (SIGKILL to its s3lect alone), MACHINE (its whole machine) or
# PAIR (its machine and its first-ranked candidate's). The node expected to win is the
# priority-2 one, or for PAIR the record's second-ranked candidate.
four_node_rounds() {
  local how=$1 mode id count t0 at who wrong=0 checked=0 d_start renewed expected
  local -a times=() flat_times=() regain=() after=() flat_after=() ranked=() lost=()
  local -A priority_of=([p-a]=1 [p-b]=1 [p-c]=2 [p-d]=3)
  for mode in priorities flat; do
    new_group
    if [ "$mode" = priorities ]; then
      start_in_order p-a 1 p-b 1 p-c 2
      now_ms; d_start=$REPLY
      start_node p-d 3
      wait_leader p-d $((3 * lease_ms / 1000))
      now_ms
      [ "$how" = TERM ] && echo "priority-3 node leads $((REPLY - d_start)) ms after its start" \
        "(bound: three leases, $((3 * lease_ms)) ms)"
    else
      start_in_order p-a 0 p-b 0 p-c 0 p-d 0
    fi
    sleep "$watch_wait"
    for _ in $(seq 1 "$rounds"); do
      [ "$mode" = priorities ] && wait_candidate p-c
      id=$(leader_now) count=$(starts) expected=p-c lost=("$id")
      case $how in
        MACHINE | PAIR)
          wait_renewal
          renewed=$REPLY
          mapfile -t ranked < <(record_candidates)
          if [ "$how" = PAIR ]; then
            lost+=("${ranked[0]}") expected=${ranked[1]:-}
          fi
          ;;
      esac
      [ "$mode" = flat ] && [ "$how" != PAIR ] && expected=""
      now_ms; t0=$REPLY
      case $how in
        MACHINE | PAIR) for id in "${lost[@]}"; do lose_machine "$id"; done ;;
        *) stop_node "$id" "$how" ;;
      esac
      read -r at who < <(wait_start_after "$count")
      if [ -n "$expected" ]; then
        checked=$((checked + 1))
        [ "$who" = "$expected" ] || { wrong=$((wrong + 1)); echo "  $mode: went to $who, not $expected"; }
      fi
      [ "$mode" = flat ] && echo "  all priorities 0: went to $who"
      if [ "$mode" = priorities ]; then
        times+=($((at - t0)))
        [ -n "${renewed:-}" ] && after+=($((at - renewed - lease_ms)))
        now_ms; t0=$REPLY
        for id in "${lost[@]}"; do start_node "$id" "${priority_of[$id]}"; done
        wait_leader p-d $((4 * lease_ms / 1000 + 10))
        now_ms; regain+=($((REPLY - t0)))
      else
        flat_times+=($((at - t0)))
        [ -n "${renewed:-}" ] && flat_after+=($((at - renewed - lease_ms)))
        for id in "${lost[@]}"; do start_node "$id" 0; done
      fi
      sleep "$watch_wait"
    done
    stop_group
    check_no_overlap
  done
  local what="SIG$how"
  [ "$how" = MACHINE ] && what="machine lost"
  [ "$how" = PAIR ] && what="two machines lost"
  summary "$what -> next command, priorities 1,1,2,3" "${times[@]}"
  summary "$what -> next command, all priorities 0" "${flat_times[@]}"
  if [ "${#after[@]}" -gt 0 ]; then
    summary "lease end -> next command, priorities" "${after[@]}"
    summary "lease end -> next command, all priorities 0" "${flat_after[@]}"
  fi
  summary "restart of the priority-3 node -> it leads" "${regain[@]}"
  echo "$what: rounds that went to another node than expected: $wrong of $checked"
  [ "$wrong" = 0 ] || fail "leadership did not go to the expected node"
}

part_priorities() { four_node_rounds TERM; }
part_crash() {
  four_node_rounds KILL
  four_node_rounds MACHINE
}
part_ranks() { four_node_rounds PAIR; }

part_rollout() {
  local mode id changes base first_settled="" late=0
  for mode in upgrade flat; do
    new_group
    local old=1 new=2
    [ "$mode" = flat ] && old=0 new=0
    start_in_order n-1 "$old" n-2 "$old" n-3 "$old" n-4 "$old" n-5 "$old"
    sleep "$watch_wait"
    base=$(starts) first_settled=""
    declare -A upgraded_at=()
    for id in n-1 n-2 n-3 n-4 n-5; do
      stop_node "$id" TERM
      now_ms; upgraded_at[$id]=$REPLY
      start_node "$id" "$new"
      wait_candidate "$id"
      sleep $((lease_ms / 1000 + 2))  # settled: watched for a settle time (the lease)
      if [ -z "$first_settled" ]; then
        now_ms; first_settled=$REPLY
      fi
    done
    changes=$(($(starts) - base))
    late=0
    if [ "$mode" = upgrade ]; then
      # Every command started after the first upgraded node settled runs on an upgraded node,
      # and so does the one running at that moment.
      while read -r at who; do
        [ "$at" -gt "$first_settled" ] || continue
        [ "${upgraded_at[$who]:-99999999999999}" -lt "$at" ] || late=$((late + 1))
      done < <(grep ' start ' "$events" | awk '{ print $1, $3 }')
    fi
    stop_group
    check_no_overlap
    echo "$mode rollout of five nodes: $changes leadership changes; commands on old nodes" \
      "after the first upgraded node settled: $late"
    if [ "$mode" = upgrade ]; then
      [ "$changes" -le 2 ] || fail "more than two leadership changes in the rollout"
      [ "$late" = 0 ] || fail "an old node led after the first upgraded node settled"
    fi
    unset upgraded_at
  done
}

part_forged() {
  local base leader port term end claims=0
  new_group
  start_in_order f-a 0 f-b 0 f-c 0
  sleep "$watch_wait"
  base=$(starts) leader=$(leader_now) port=${port_of[$(leader_now)]}
  term=$(current_term)
  end=$((SECONDS + forged_seconds))
  while [ $SECONDS -lt $end ]; do
    # Two watches at once, each a new token: a stranger's claims, made without credentials.
    local -a watchers=()
    for _ in 1 2; do
      curl -sk --max-time 10 -o /dev/null "https://$port/health/leadership?watch=8000&term=$term&candidate=node-9&priority=1000&token=$(openssl rand -hex 16)" &
      watchers+=($!)
    done
    wait "${watchers[@]}" 2>/dev/null || true
    claims=$((claims + 2))
  done
  echo "forged watcher: $claims claims of priority 1000 over ${forged_seconds} s;" \
    "leadership changes: $(($(starts) - base)) (leader $leader throughout: $([ "$(leader_now)" = "$leader" ] && echo yes || echo no))"
  stop_group
  check_no_overlap
  [ "$(($(starts) - base))" = 0 ] || fail "a forged watcher moved leadership"
}

part_release() {
  local r leader count at who back=0 wrong=0 target
  local -a times=() to_times=()
  new_group
  start_in_order r-a 0 r-b 0 r-c 0
  sleep "$watch_wait"
  for r in $(seq 1 $((2 * rounds))); do
    leader=$(leader_now) count=$(starts) target=""
    if [ "$r" -gt "$rounds" ]; then
      for target in r-a r-b r-c; do [ "$target" != "$leader" ] && [ $((RANDOM % 2)) = 0 ] && break; done
      [ "$target" = "$leader" ] && target=$([ "$leader" = r-a ] && echo r-b || echo r-a)
    fi
    now_ms
    local t0=$REPLY
    "$s3lect" release --lock "$key" --endpoint "$S3LECT_TEST_ENDPOINT_HTTP" --path-style \
      ${target:+--to "$target"} >/dev/null
    read -r at who < <(wait_start_after "$count")
    if [ -z "$target" ]; then
      times+=($((at - t0)))
      [ "$who" != "$leader" ] || { back=$((back + 1)); echo "  release went back to $leader"; }
    else
      to_times+=($((at - t0)))
      [ "$who" = "$target" ] || { wrong=$((wrong + 1)); echo "  release --to $target went to $who"; }
    fi
    sleep "$watch_wait"
  done
  stop_group
  check_no_overlap
  summary "release -> next command" "${times[@]}"
  summary "release --to -> named node's command" "${to_times[@]}"
  echo "releases back to the holder: $back of $rounds; --to to another node: $wrong of $rounds"
  [ "$back" = 0 ] && [ "$wrong" = 0 ] || fail "a release did not move leadership as asked"
}
