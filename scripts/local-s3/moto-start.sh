#!/usr/bin/env bash
# Start moto (Python's S3 emulation, `moto_server`) on 127.0.0.1 as the second store of s3lect's
# tests: it answers as AWS does where the RADOS Gateway does not (quoted ETags, 404 NoSuchKey for
# If-Match on a missing key). Creates the test bucket, writes "$dir/env" (export lines with
# S3LECT_MOTO_* names, beside the RGW's S3LECT_TEST_* ones) and prints its path on stdout;
# progress goes to stderr. Already running and answering: prints the path again, exit 0.
#
# Env (all optional):
#   S3LECT_MOTO_DIR    scratch directory (default /tmp/s3lect-moto)
#   S3LECT_MOTO_PORT   port on 127.0.0.1 (default 7490; a busy default moves to the next free
#                      port, an explicit one must be free)
# Stop it with moto-stop.sh (by its PID, never by name).
set -euo pipefail

readonly access_key=s3lectMOTOKEY
readonly secret_key=s3lectMOTOSECRET00000000000000000000000
readonly bucket=s3lect-test
readonly region=us-east-1

dir=$(realpath -m -- "${S3LECT_MOTO_DIR:-/tmp/s3lect-moto}")
log() { printf '[moto] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v moto_server >/dev/null || die "moto_server not found. Install moto 5.2 with its \
server extra: pip install 'moto[server]==5.2.1' (Debian 12's python3-moto 4.1 predates \
conditional writes), then run this again."
for tool in curl python3; do
  command -v "$tool" >/dev/null || die "$tool not found; run scripts/install-deps.sh"
done

# True if $1 is the moto_server this directory started (a recycled PID has another command line).
is_ours() {
  local pid=$1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q "moto_server -H 127.0.0.1 -p $2 "
}

answers() {
  [[ $(curl -s --noproxy '*' --max-time 2 -o /dev/null -w '%{http_code}' \
    "http://127.0.0.1:$1/moto-api/data.json" 2>/dev/null) == 200 ]]
}

port_free() {
  python3 -c 'import socket, sys
s = socket.socket()
try: s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError: sys.exit(1)' "$1"
}

if [[ -f $dir/pid && -f $dir/env ]]; then
  port=$(<"$dir/port")
  if is_ours "$(<"$dir/pid")" "$port" && answers "$port"; then
    log "already running on port $port"
    echo "$dir/env"
    exit 0
  fi
  log "cleaning up stale state in $dir"
  bash "$(dirname -- "${BASH_SOURCE[0]}")/moto-stop.sh"
fi

if [[ -n ${S3LECT_MOTO_PORT:-} ]]; then
  port=$S3LECT_MOTO_PORT
  [[ $port =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) || die "S3LECT_MOTO_PORT=$port is not a port"
  port_free "$port" || die "S3LECT_MOTO_PORT=$port: port is already in use"
else
  port=7490
  until port_free "$port"; do
    ((++port < 7590)) || die "no free port in 7490..7589"
  done
fi

mkdir -p -- "$dir"
rm -f -- "$dir/env"
# Its own session, so that a Ctrl-C aimed at the caller does not reach it; the shim of a Python
# version manager execs the interpreter, so $! stays the server's PID.
setsid moto_server -H 127.0.0.1 -p "$port" </dev/null >"$dir/moto.log" 2>&1 &
echo "$!" >"$dir/pid"
echo "$port" >"$dir/port"
pid=$!

deadline=$((SECONDS + 30))
until answers "$port"; do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail -n 20 "$dir/moto.log" >&2
    die "moto_server exited during start-up (log above, in $dir/moto.log)"
  fi
  ((SECONDS < deadline)) || { bash "$(dirname -- "${BASH_SOURCE[0]}")/moto-stop.sh"; die "moto_server did not answer within 30 s"; }
  sleep 0.1
done
is_ours "$pid" "$port" || die "another server answers on port $port"

code=$(curl -sS --noproxy '*' --max-time 10 -o /dev/null -w '%{http_code}' -X PUT \
  --aws-sigv4 "aws:amz:$region:s3" --user "$access_key:$secret_key" \
  -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "http://127.0.0.1:$port/$bucket") || true
[[ $code == 200 ]] || die "creating bucket $bucket: HTTP $code"

printf 'export %s=%q\n' \
  S3LECT_MOTO_ENDPOINT_HTTP "http://127.0.0.1:$port" \
  S3LECT_MOTO_ACCESS_KEY "$access_key" \
  S3LECT_MOTO_SECRET_KEY "$secret_key" \
  S3LECT_MOTO_BUCKET "$bucket" \
  S3LECT_MOTO_REGION "$region" >"$dir/env.tmp"
mv -f -- "$dir/env.tmp" "$dir/env"
log "ready on port $port (pid $pid); source $dir/env"
echo "$dir/env"
