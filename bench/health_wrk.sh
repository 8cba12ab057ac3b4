#!/usr/bin/env bash
# Health endpoint throughput over TLS keep-alive, measured with wrk, side by side in one run:
# s3lect's health_server (bench/health_server_bench.cpp: one io_context thread, the real
# elector leading over memory_store) and nginx serving the same JSON body with the same
# headers, the same certificate (EC P-256), on the same 127.0.0.1, with 1 worker process (like
# s3lect's one thread) and with 2. Besides requests per second and latency it reports each
# server's CPU time per request (utime + stime from /proc, all of nginx's processes), which a
# machine shared with other work distorts far less than throughput.
#
# usage: bench/health_wrk.sh [--duration S] [--connections "32 128"] [--rounds N]
#                            [--server PATH] [--base-port N]
#   --duration S        seconds per wrk run (default 10)
#   --connections LIST  wrk -c values, each run with -t1 (default "32 128")
#   --rounds N          repeat the whole set N times, servers interleaved (default 1)
#   --server PATH       bench_health_server (default build/bench/bench/bench_health_server,
#                       built here)
#   --base-port N       servers listen on 127.0.0.1:N+1..N+4 (default 18600)
#   --compare PATH      a second bench_health_server (e.g. built from another commit), measured
#                       in the same run as "s3lect (compare)"
# Installs wrk and nginx with apt-get if missing (without starting nginx's system service).
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  echo "usage: $0 [--duration S] [--connections LIST] [--rounds N] [--server PATH] [--base-port N]" \
    "[--compare PATH]" >&2
  exit 2
}
duration=10 connections="32 128" rounds=1 server='' base_port=18600 compare=''
while (($#)); do
  case $1 in
    --duration) (($# >= 2)) || usage; duration=$2; shift 2 ;;
    --connections) (($# >= 2)) || usage; connections=$2; shift 2 ;;
    --rounds) (($# >= 2)) || usage; rounds=$2; shift 2 ;;
    --server) (($# >= 2)) || usage; server=$2; shift 2 ;;
    --base-port) (($# >= 2)) || usage; base_port=$2; shift 2 ;;
    --compare) (($# >= 2)) || usage; compare=$(realpath -e -- "$2"); shift 2 ;;
    *) usage ;;
  esac
done
cd "$root"
source scripts/lib/build.sh
source scripts/lib/certs.sh
source scripts/lib/processes.sh

if ! command -v wrk >/dev/null || ! command -v nginx >/dev/null; then
  # RUNLEVEL=1: the package's init script must not start a system nginx on port 80.
  sudo=; ((EUID == 0)) || sudo=sudo
  $sudo env RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -q wrk nginx-light >/dev/null
fi
if [[ -z $server ]]; then
  server=build/bench/bench/bench_health_server
  build_bench bench_health_server
fi
server=$(realpath -e -- "$server")

work=$(mktemp -d "${TMPDIR:-/tmp}/s3lect-bench-wrk.XXXXXX")
declare -A pid=()
stop_servers() { stop_processes 50 "${pid[@]}"; }
on_exit_run stop_servers "$work"

make_test_certs "$work" server
path=/health/leadership
s3lect_port=$((base_port + 1)) nginx1_port=$((base_port + 2)) nginx2_port=$((base_port + 3))
compare_port=$((base_port + 4))

# bench_health_server NAME PROGRAM PORT
start_s3lect() {
  local name=$1 program=$2 port=$3 n
  "$program" "127.0.0.1:$port" "$work/server.pem" "$work/server.key" >"$work/$name.out" 2>&1 &
  pid[$name]=$!
  for ((n = 0; n < 100; n++)); do
    grep -qs listening "$work/$name.out" && return 0
    kill -0 "${pid[$name]}" 2>/dev/null || { cat "$work/$name.out" >&2; exit 1; }
    sleep 0.1
  done
  echo "error: $program did not start" >&2
  exit 1
}
start_s3lect s3lect "$server" "$s3lect_port"
servers=(s3lect)
if [[ -n $compare ]]; then
  start_s3lect compare "$compare" "$compare_port"
  servers+=(compare)
fi
servers+=(nginx1 nginx2)

# The leader's answer, served as is by nginx.
curl -fsS --cacert "$work/ca.pem" -D "$work/headers" -o "$work/body.json" \
  "https://127.0.0.1:$s3lect_port$path"
grep -q "'" "$work/body.json" && { echo "error: body has a quote nginx cannot take" >&2; exit 1; }
body=$(<"$work/body.json")

# nginx with N workers on PORT, in the foreground of its own background job.
start_nginx() {
  local name=$1 workers=$2 port=$3 dir=$work/$1
  mkdir -p "$dir"
  cat >"$dir/nginx.conf" <<CONF
worker_processes $workers;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/tmp;
  proxy_temp_path $dir/tmp;
  fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp;
  scgi_temp_path $dir/tmp;
  # s3lect keeps a connection for any number of requests: so does nginx here (default 1000).
  keepalive_requests 1000000000;
  keepalive_timeout 90s;
  server {
    listen 127.0.0.1:$port ssl;
    ssl_certificate $work/server.pem;
    ssl_certificate_key $work/server.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    location = $path {
      default_type application/json;
      add_header Cache-Control "no-store" always;
      return 200 '$body';
    }
  }
}
CONF
  nginx -p "$dir" -c "$dir/nginx.conf" 2>"$dir/stderr" &
  pid[$name]=$!
  for ((n = 0; n < 50; n++)); do
    curl -fsS --cacert "$work/ca.pem" -o /dev/null "https://127.0.0.1:$port$path" 2>/dev/null && return 0
    kill -0 "${pid[$name]}" 2>/dev/null || break
    sleep 0.1
  done
  cat "$dir/stderr" "$dir/error.log" >&2 2>/dev/null
  echo "error: nginx ($name) did not start" >&2
  exit 1
}
start_nginx nginx1 1 "$nginx1_port"
start_nginx nginx2 2 "$nginx2_port"
cmp -s <(curl -fsS --cacert "$work/ca.pem" "https://127.0.0.1:$nginx1_port$path") "$work/body.json" ||
  { echo "error: nginx does not serve the same body" >&2; exit 1; }

# CPU ticks (utime + stime) of a process and its children's live processes (nginx workers).
cpu_ticks() {
  local p total=0 stat rest
  for p in "$1" $(pgrep -P "$1" || true); do
    stat=$(<"/proc/$p/stat") || continue
    rest=${stat##*) }
    read -r -a f <<<"$rest"
    total=$((total + f[11] + f[12]))  # fields 14 and 15 of stat, counted from field 3
  done
  echo "$total"
}
hz=$(getconf CLK_TCK)

echo "health endpoint over TLS keep-alive: wrk -t1 -d${duration}s, GET https://127.0.0.1:PORT$path"
echo "body $(wc -c <"$work/body.json") bytes; s3lect: $(basename "$server") (one io_context thread);" \
  "nginx $(nginx -v 2>&1 | sed 's/.*nginx\///'); certificate EC P-256; $(nproc) CPUs shared with other work"
echo
printf '| %-20s | %5s | %11s | %9s | %9s | %9s | %8s | %13s |\n' server conns "requests/s" \
  "lat avg" "lat p50" "lat p99" errors "CPU us/req"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' ---------------------- ------- ------------- ----------- \
  ----------- ----------- ---------- ---------------
for ((round = 1; round <= rounds; round++)); do
  for c in $connections; do
    for name in "${servers[@]}"; do
      case $name in
        s3lect) port=$s3lect_port label="s3lect health_server" ;;
        compare) port=$compare_port label="s3lect (compare)" ;;
        nginx1) port=$nginx1_port label="nginx, 1 worker" ;;
        nginx2) port=$nginx2_port label="nginx, 2 workers" ;;
      esac
      before=$(cpu_ticks "${pid[$name]}")
      wrk -t1 -c"$c" -d"${duration}s" --latency "https://127.0.0.1:$port$path" >"$work/wrk.out" 2>&1
      after=$(cpu_ticks "${pid[$name]}")
      awk -v label="$label" -v c="$c" -v ticks=$((after - before)) -v hz="$hz" '
        /Requests\/sec:/ { rps = $2 }
        /requests in/ { total = $1 }
        /^ +Latency +[0-9]/ { avg = $2 }
        /^ +50%/ { p50 = $2 }
        /^ +99%/ { p99 = $2 }
        /Non-2xx/ { errors += $NF }
        /Socket errors/ { gsub(",", ""); errors += $4 + $6 + $8 + $10 }
        END {
          cpu = total > 0 ? ticks / hz * 1e6 / total : 0
          printf "| %-20s | %5d | %11.0f | %9s | %9s | %9s | %8d | %13.1f |\n",
            label, c, rps, avg, p50, p99, errors, cpu
        }' "$work/wrk.out"
    done
  done
done
