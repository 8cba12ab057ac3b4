#!/usr/bin/env bash
# Start Azurite's blob service (Microsoft's Azure Storage emulator, `azurite-blob` 3.35.0, as
# installed by azurite-install.sh) on 127.0.0.1 for s3lect's Azure Blob tests: in-memory, no
# telemetry, Azurite's well-known account devstoreaccount1. Creates the test container, writes
# "$dir/env" (export lines with S3LECT_AZURE_* names) and prints its path on stdout; progress
# goes to stderr. Already running and answering: prints the path again, exit 0.
#
# Env (all optional):
#   S3LECT_AZURITE_DIR     scratch directory (default /tmp/s3lect-azurite)
#   S3LECT_AZURITE_PORT    port on 127.0.0.1 (default 10000; a busy default moves to the next
#                          free port, an explicit one must be free)
#   S3LECT_AZURITE_PREFIX  where azurite-install.sh put it (default /opt/s3lect-azurite as root,
#                          else /var/tmp/s3lect-azurite-$UID); else azurite-blob from PATH
# Stop it with azurite-stop.sh (by its PID, never by name).
set -euo pipefail

readonly account=devstoreaccount1
# Azurite's fixed, publicly documented development key of devstoreaccount1 (not a secret).
readonly key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
readonly container=s3lect-test

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
dir=$(realpath -m -- "${S3LECT_AZURITE_DIR:-/tmp/s3lect-azurite}")
if ((EUID == 0)); then default_prefix=/opt/s3lect-azurite; else default_prefix=/var/tmp/s3lect-azurite-$EUID; fi
prefix=$(realpath -m -- "${S3LECT_AZURITE_PREFIX:-$default_prefix}")
log() { printf '[azurite] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

for tool in curl python3 node; do
  command -v "$tool" >/dev/null || die "$tool not found; run scripts/install-deps.sh and scripts/local-s3/azurite-install.sh"
done
blob=$prefix/node_modules/.bin/azurite-blob
if [[ ! -x $blob ]]; then
  blob=$(command -v azurite-blob) ||
    die "azurite-blob not found in $prefix: run scripts/local-s3/azurite-install.sh, then this again"
fi
blob=$(realpath -- "$blob") # .../azurite/dist/src/blob/main.js, started with node

# True if $1 is the azurite-blob this directory started (a recycled PID has another command line).
is_ours() {
  local pid=$1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" |
    grep -qF "azurite/dist/src/blob/main.js --blobHost 127.0.0.1 --blobPort $2 "
}

# Azurite answers a request without credentials with an error of its own, and names itself.
answers() {
  curl -s --noproxy '*' --max-time 2 -o /dev/null -D - "http://127.0.0.1:$1/$account?comp=list" \
    2>/dev/null | grep -qi '^server: Azurite-Blob/'
}

# SO_REUSEADDR as node binds: a port held only by TIME_WAIT connections (those of a previous
# Azurite, which closes idle keep-alive connections itself) is free; a listening one is not.
port_free() {
  python3 -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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
fi
if [[ -e $dir ]]; then
  log "cleaning up stale state in $dir"
  bash "$here/azurite-stop.sh"
fi

if [[ -n ${S3LECT_AZURITE_PORT:-} ]]; then
  port=$S3LECT_AZURITE_PORT
  if ! [[ $port =~ ^[0-9]+$ ]] || ((10#$port < 1 || 10#$port > 65535)); then
    die "S3LECT_AZURITE_PORT=$port is not a port"
  fi
  port_free "$port" || die "S3LECT_AZURITE_PORT=$port: port is already in use"
else
  port=10000
  until port_free "$port"; do
    ((++port < 10100)) || die "no free port in 10000..10099"
  done
fi

mkdir -p -- "$dir"
rm -f -- "$dir/env"
# Its own session, so that a Ctrl-C aimed at the caller does not reach it; node itself, so that $!
# is the server's PID. Its workspace is the current directory ("$dir"): --location cannot be
# combined with --inMemoryPersistence (RangeError), and in memory nothing is written there.
# --disableTelemetry: no Application Insights traffic. No --loose, no --skipApiVersionCheck.
(cd -- "$dir" && exec setsid node "$blob" --blobHost 127.0.0.1 --blobPort "$port" \
  --inMemoryPersistence --disableTelemetry </dev/null >"$dir/azurite.log" 2>&1) &
pid=$!
echo "$pid" >"$dir/pid"
echo "$port" >"$dir/port"

deadline=$((SECONDS + 30))
until answers "$port"; do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail -n 20 "$dir/azurite.log" >&2
    die "azurite-blob exited during start-up (log above, in $dir/azurite.log)"
  fi
  ((SECONDS < deadline)) || { bash "$here/azurite-stop.sh"; die "azurite-blob did not answer within 30 s"; }
  sleep 0.1
done
is_ours "$pid" "$port" || die "another server answers on port $port"

endpoint=http://127.0.0.1:$port/$account
code=$(S3LECT_AZURE_ACCOUNT=$account S3LECT_AZURE_KEY=$key \
  python3 "$here/azurite-request.py" --status PUT "$endpoint/$container?restype=container") || true
[[ $code == 201 || $code == 409 ]] || die "creating container $container: HTTP ${code:-(no answer)}"

printf 'export %s=%q\n' \
  S3LECT_AZURE_ENDPOINT_HTTP "$endpoint" \
  S3LECT_AZURE_ACCOUNT "$account" \
  S3LECT_AZURE_KEY "$key" \
  S3LECT_AZURE_CONTAINER "$container" \
  S3LECT_AZURE_CONNECTION_STRING \
  "DefaultEndpointsProtocol=http;AccountName=$account;AccountKey=$key;BlobEndpoint=$endpoint;" \
  >"$dir/env.tmp"
mv -f -- "$dir/env.tmp" "$dir/env"
log "ready on port $port (pid $pid); source $dir/env"
echo "$dir/env"
