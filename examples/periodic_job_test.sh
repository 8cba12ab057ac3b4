#!/bin/sh
# CTest driver of periodic_job against the local radosgw (S3LECT_TEST_* from its env file):
# two nodes share a lock; the leader runs its job twice, then gets SIGTERM; the other node must
# take over with the next term, run the job, and stop on SIGTERM too. Both must exit 0, and the
# first leader must not run its job after it was told to stop.
# usage: periodic_job_test.sh PATH/TO/example_periodic_job
set -u
exe=$1
key=examples/periodic-job-$$
logs=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$logs"' EXIT

fail() {
  echo "FAILED: $*"
  for f in "$logs"/*.log; do echo "--- $f"; cat "$f"; done
  exit 1
}

start_node() {
  AWS_ENDPOINT_URL=$S3LECT_TEST_ENDPOINT_HTTPS AWS_ACCESS_KEY_ID=$S3LECT_TEST_ACCESS_KEY \
    AWS_SECRET_ACCESS_KEY=$S3LECT_TEST_SECRET_KEY AWS_REGION=$S3LECT_TEST_REGION \
    "$exe" "$S3LECT_TEST_BUCKET" "$key" "$1" "$S3LECT_TEST_CA_FILE" \
    --lease-ms 3000 --every-ms 400 >"$logs/$1.log" 2>&1 &
  pids="$pids $!"
  eval "pid_$1=$!"
}

# wait_for PATTERN FILES...: up to 8 s for a line matching PATTERN in one of FILES; prints it.
wait_for() {
  pattern=$1
  shift
  for _ in $(seq 80); do
    line=$(cat "$@" 2>/dev/null | grep -m1 -E "$pattern") && { echo "$line"; return 0; }
    sleep 0.1
  done
  return 1
}

start_node a
start_node b
first=$(wait_for ' leader term=' "$logs/a.log" "$logs/b.log") || fail "nobody became leader"
leader=$(echo "$first" | cut -d' ' -f2)
term=${first##*term=}
if [ "$leader" = a ]; then other=b; else other=a; fi
wait_for " compacted term=$term run=2" "$logs/$leader.log" >/dev/null ||
  fail "$leader did not run its job twice"

eval "kill -TERM \$pid_$leader"
eval "wait \$pid_$leader" || fail "$leader exited with status $?"
stopped=$(grep ' stopped$' "$logs/$leader.log") || fail "$leader did not stop cleanly"
sed -n '/ stopping$/,$p' "$logs/$leader.log" | grep -q ' compacted ' &&
  fail "$leader ran its job after it was told to stop"

next=$(wait_for " leader term=$((term + 1))" "$logs/$other.log") ||
  fail "$other did not take over with term $((term + 1))"
echo "handover $leader -> $other after $((${next%% *} - ${stopped%% *})) ms"
wait_for " compacted term=$((term + 1)) run=1" "$logs/$other.log" >/dev/null ||
  fail "$other did not run its job"

eval "kill -TERM \$pid_$other"
eval "wait \$pid_$other" || fail "$other exited with status $?"
grep -q ' stopped$' "$logs/$other.log" || fail "$other did not stop cleanly"
cat "$logs/a.log" "$logs/b.log" | sort -n
echo "periodic job ok"
