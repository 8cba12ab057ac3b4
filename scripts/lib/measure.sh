# shellcheck shell=bash
# The measurements' small parts: the clock, s3lect's log times, the median. Sourced.
#   now_ms            the wall clock in ms into REPLY (no fork; CLOCK_REALTIME, like s3lect's
#                     log lines and the candidates' event lines)
#   log_time_ms LINE  prints the ms since the epoch of an s3lect log line's time= field
#   median            prints the median of the numbers on stdin, one a line
now_ms() {
  local t=${EPOCHREALTIME//[!0-9]/}  # "seconds.micros", decimal point per locale
  REPLY=$((t / 1000))
}

log_time_ms() { date -d "$(sed -E 's/^time=([^ ]+) .*/\1/' <<<"$1")" +%s%3N; }

median() {
  sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
