#!/usr/bin/env bash
# Start a throw-away single-node Ceph RADOS Gateway (one mon, one memstore
# OSD, radosgw) on 127.0.0.1 with an HTTP and an HTTPS endpoint, a user with
# fixed keys and one bucket, for s3lect's integration tests and demo.
#
# All state lives in one scratch directory; nothing binds anything but
# 127.0.0.1. When ready, writes "$dir/env" (shell export lines) and prints its
# path on stdout (progress goes to stderr). See README.md next to this file.
#
# Env (all optional):
#   S3LECT_S3_DIR            scratch directory   (default /tmp/s3lect-local-s3)
#   S3LECT_S3_MON_PORT       monitor port        (default 16789)
#   S3LECT_S3_HTTP_PORT      S3 over HTTP        (default 7480)
#   S3LECT_S3_HTTPS_PORT     S3 over HTTPS       (default 7443)
#   S3LECT_S3_START_TIMEOUT  seconds until ready (default 90)
# A port given explicitly must be free; a default port that is busy is
# replaced by the next free one above it.
set -euo pipefail

readonly access_key=s3lectTESTKEY
readonly secret_key=s3lectTESTSECRET000000000000000000000000
readonly bucket=s3lect-test
readonly region=us-east-1
readonly marker_name=.s3lect-local-s3
# SHA-256 of the empty body: RGW insists on x-amz-content-sha256 and
# curl 7.88's --aws-sigv4 does not send it.
readonly empty_sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
# Absolute: ceph.conf paths must be, and stop.sh recognises our daemons by the
# absolute ceph.conf path on their command line.
dir=$(realpath -m -- "${S3LECT_S3_DIR:-/tmp/s3lect-local-s3}")
conf=$dir/ceph.conf
timeout=${S3LECT_S3_START_TIMEOUT:-90}

t0=$EPOCHREALTIME
log() { printf '[local-s3 %5.1fs] %s\n' "$(elapsed)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
elapsed() {
  local now=$EPOCHREALTIME
  # Microsecond arithmetic in bash: EPOCHREALTIME is "seconds.micros".
  local us=$(( (${now%.*} - ${t0%.*}) * 1000000 + 10#${now#*.} - 10#${t0#*.} ))
  printf '%d.%d' $((us / 1000000)) $((us / 100000 % 10))
}

[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "S3LECT_S3_START_TIMEOUT must be a positive integer"
# The beast frontend option and ceph.conf are whitespace-separated.
[[ $dir != *[[:space:]]* ]] || die "S3LECT_S3_DIR must not contain whitespace: '$dir'"

for tool in ceph ceph-mon ceph-osd monmaptool radosgw radosgw-admin openssl curl flock sha256sum; do
  command -v "$tool" >/dev/null || die "$tool not found; run $here/install.sh first"
done

# One start/stop at a time per scratch directory. stop.sh is told we hold it.
exec 9>"$dir.lock"
flock -w 180 9 || die "timed out waiting for the lock $dir.lock"
export S3LECT_S3_LOCK_HELD=1

# Keep every Ceph tool (ceph, radosgw-admin) on our config, never
# /etc/ceph/ceph.conf.
export CEPH_CONF=$conf

# ---------------------------------------------------------------- helpers

# True if $1 is a live process started with our ceph.conf (same test as stop.sh).
is_ours() {
  local pid=$1 cmdline
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  [[ " $cmdline " == *" $conf "* ]]
}

daemon_alive() {
  local pidfile=$dir/pid/$1.pid
  [[ -f $pidfile ]] && is_ours "$(<"$pidfile")"
}

# Signed S3 request: s3 METHOD PATH [BODY [extra curl args...]]. Prints the
# HTTP status. The body is sent as given; its SHA-256 goes into
# x-amz-content-sha256 (required by RGW, not added by curl 7.88).
s3() {
  local method=$1 path=$2 body=${3-} sha
  shift $(($# < 3 ? $# : 3))
  if [[ -n $body ]]; then
    sha=$(printf '%s' "$body" | sha256sum); sha=${sha%% *}
    set -- --data-binary "$body" "$@"
  else
    sha=$empty_sha256
  fi
  curl -sS --noproxy '*' --max-time 20 -o /dev/null -w '%{http_code}' \
    -X "$method" --aws-sigv4 "aws:amz:$region:s3" --user "$access_key:$secret_key" \
    -H "x-amz-content-sha256: $sha" "$@" "http://127.0.0.1:$http_port$path"
}

http_answers() {
  [[ $(curl -s --noproxy '*' --max-time "${2:-2}" -o /dev/null -w '%{http_code}' \
         "http://127.0.0.1:$1/" 2>/dev/null) == 200 ]]
}

# Is anything listening on TCP port $1 (any address, IPv4 or IPv6)? Read from
# /proc so that no extra tool (ss, lsof) is needed on a bare CI machine.
port_busy() {
  local hex f tables=()
  hex=$(printf '%04X' "$1")
  # tcp6 is absent when IPv6 is disabled, and awk gives up on a missing file.
  for f in /proc/net/tcp /proc/net/tcp6; do [[ -r $f ]] && tables+=("$f"); done
  awk -v p=":$hex" 'FNR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { f = 1 }
                    END { exit !f }' "${tables[@]}"
}

# pick_port NAME DEFAULT [TAKEN...]: an explicitly set port must be free; a
# busy default is replaced by the next free port above it.
pick_port() {
  local var=$1 port=$2 n; shift 2
  local explicit=${!var-}
  if [[ -n $explicit ]]; then
    if ! [[ $explicit =~ ^[0-9]+$ ]] || ((explicit < 1 || explicit > 65535)); then
      die "$var=$explicit is not a port number"
    fi
    ! port_busy "$explicit" || die "$var=$explicit: port is already in use"
    echo "$explicit"; return
  fi
  for ((n = 0; n < 100; n++, port++)); do
    if ! port_busy "$port" && [[ " $* " != *" $port "* ]]; then
      echo "$port"; return
    fi
  done
  die "no free port in $2..$((port - 1)) for $var"
}

# Run "$@" until it succeeds, failing if the deadline passes or a daemon we
# started has died (no point waiting for a corpse).
wait_until() {
  local what=$1; shift
  until "$@"; do
    local d
    for d in "${started[@]}"; do
      daemon_alive "$d" || die "$d died while waiting for $what"
    done
    (( EPOCHSECONDS < deadline )) || die "timed out after ${timeout}s waiting for $what"
    sleep 0.2
  done
}

# start_daemon NAME BINARY ARGS...: run in the foreground mode of the Ceph
# daemon (-f: our own PID is the daemon's, stderr goes to a file) in a new
# session, so a Ctrl-C or hang-up aimed at the caller does not reach it.
# Non-interactive bash leaves background jobs in its own process group (they
# are not group leaders), so setsid(1) does not need to fork and $! is the
# daemon's PID. fd 9 (our lock) is closed, or the daemons would hold the lock
# for as long as they live.
start_daemon() {
  local name=$1; shift
  setsid "$@" -c "$conf" -f </dev/null >"$dir/log/$name.out" 2>&1 9>&- &
  echo "$!" >"$dir/pid/$name.pid"
  started+=("$name")
}

# run_logged NAME CMD...: run CMD with its output in log/NAME.out, which is
# shown if the start fails.
run_logged() {
  step_out=$dir/log/$1.out; shift
  "$@" >"$step_out" 2>&1 || return
  step_out=
}

started=()
declare -A ceph_name=([mon]=mon.a [osd]=osd.0 [rgw]=client.rgw.a)
step_out=
ready=false
on_exit() {
  local rc=$?
  $ready && return
  # A second signal (timeout(1) and CI runners signal the whole process
  # group, sometimes twice) must not cut the clean-up short.
  trap '' INT TERM HUP
  # Only a start that got as far as creating its directory has anything to
  # show or stop.
  [[ -e $dir/$marker_name ]] || exit "$rc"
  # The failed step's own output, then the stderr and log of every daemon
  # started so far.
  local f files=("$step_out") name
  for name in "${started[@]}"; do
    files+=("$dir/log/$name.out" "$dir/log/${ceph_name[$name]}.log")
  done
  for f in "${files[@]}"; do
    [[ -s $f ]] || continue
    printf '\n===== last lines of %s =====\n' "$f" >&2
    tail -n 20 -- "$f" >&2
  done
  echo >&2
  log "start failed; stopping what was started (logs stay in $dir/log)"
  "$here/stop.sh" --keep-dir || true
  exit "$((rc ? rc : 1))"
}

# ------------------------------------------------- already running / stale

if [[ -d $dir ]]; then
  [[ -e $dir/$marker_name ]] \
    || die "$dir exists but was not created by this script; set S3LECT_S3_DIR elsewhere"
  if [[ -f $dir/env ]] && daemon_alive mon && daemon_alive osd && daemon_alive rgw; then
    port=$(sed -n 's|^export S3LECT_TEST_ENDPOINT_HTTP=http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$dir/env")
    # Generous, and retried: a gateway busy with a test run must not be
    # mistaken for a dead one and restarted under the tests' feet.
    for _ in 1 2 3; do
      if http_answers "$port" 10; then
        log "already running"
        echo "$dir/env"
        exit 0
      fi
    done
  fi
  log "cleaning up stale state in $dir"
  "$here/stop.sh"
fi

trap on_exit EXIT
# Make the clean-up run on these signals too, with the usual exit codes.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
deadline=$((EPOCHSECONDS + timeout))
mon_port=$(pick_port S3LECT_S3_MON_PORT 16789)
http_port=$(pick_port S3LECT_S3_HTTP_PORT 7480 "$mon_port")
https_port=$(pick_port S3LECT_S3_HTTPS_PORT 7443 "$mon_port" "$http_port")
log "dir $dir; ports: mon $mon_port, http $http_port, https $https_port"

mkdir -p -- "$dir"
: >"$dir/$marker_name"
mkdir -p -- "$dir"/{log,pid,run,tls,mon,osd/osd.0,rgw,crash}

# ------------------------------------------------------------ certificates
# A fresh CA per start (it never leaves the scratch dir); EC P-256 keys are
# generated instantly. The leaf carries SAN/EKU/AKID so that strict verifiers
# (OpenSSL X509_STRICT, Python 3.13+) accept it.
tls=$dir/tls
run_logged tls-ca openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$tls/ca.key" -out "$tls/ca.pem" -days 365 -subj "/CN=s3lect local-s3 test CA" \
  -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign"
run_logged tls-csr openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$tls/server.key" -out "$tls/server.csr" -subj "/CN=localhost"
cat >"$tls/server.ext" <<'EOF'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
run_logged tls-sign openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" \
  -set_serial "0x$(openssl rand -hex 16)" -days 365 -extfile "$tls/server.ext" \
  -out "$tls/server.pem"

# -------------------------------------------------------------- ceph.conf
fsid=$(</proc/sys/kernel/random/uuid)
cat >"$conf" <<EOF
# Generated by s3lect scripts/local-s3/start.sh: a throw-away one-node cluster.
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
# Both addresses, or the OSD also binds 0.0.0.0.
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr1 = false
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
# Everything inside the scratch dir, nothing in /var or /etc.
keyring = $dir/keyring
run dir = $dir/run
log file = $dir/log/\$name.log
mon cluster log file = $dir/log/cluster.log
crash dir = $dir/crash
# One OSD: one replica, few PGs, no autoscaler (there is no mgr either).
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false

[mon]
mon data = $dir/mon/\$name
# Commit map changes (pool creation, OSD boot) without the default 1 s
# batching delay: it dominates start-up on a one-node cluster.
paxos propose interval = 0.05

[osd]
osd data = $dir/osd/\$name
osd objectstore = memstore
# RGW needs its object classes (cls_rgw, cls_version, ...).
osd class load list = *
osd class default list = *

[client.rgw.a]
# Without this radosgw retries mon authentication forever (-13).
ms mon client mode = crc secure
rgw data = $dir/rgw
rgw frontends = beast endpoint=127.0.0.1:$http_port ssl_endpoint=127.0.0.1:$https_port ssl_certificate=$tls/server.pem ssl_private_key=$tls/server.key
EOF

# ---------------------------------------------------------------- monitor
run_logged monmaptool monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$dir/monmap"
run_logged mon-mkfs ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap"
start_daemon mon ceph-mon -i a
log "mon started"

# -------------------------------------------------------------------- OSD
# "osd create" also waits for the mon to be up; the OSD puts itself into the
# CRUSH map when it boots (osd crush update on start).
wait_until "the monitor" run_logged osd-create ceph --connect-timeout 5 osd create
run_logged osd-mkfs ceph-osd -c "$conf" -i 0 --mkfs
start_daemon osd ceph-osd -i 0
osd_up() { ceph osd dump 2>/dev/null | grep -q '^osd\.0 up'; }
wait_until "the OSD" osd_up
log "osd up"

# ---------------------------------------------------------------- radosgw
start_daemon rgw radosgw -n client.rgw.a
wait_until "radosgw on port $http_port" http_answers "$http_port"
log "radosgw answers"

run_logged user-create radosgw-admin user create --uid=s3lect --display-name="s3lect tests" \
  --access-key="$access_key" --secret-key="$secret_key"

# The first bucket and the first object each create a pool (~2 s): pay for
# both here, so that the tests' first requests are not slow.
code=$(s3 PUT "/$bucket") || true
[[ $code == 200 ]] || die "creating bucket $bucket: HTTP $code"
code=$(s3 PUT "/$bucket/warm-up" "warm-up") || true
[[ $code == 200 ]] || die "warm-up PUT: HTTP $code"
code=$(s3 GET "/$bucket/warm-up") || true
[[ $code == 200 ]] || die "warm-up GET: HTTP $code"
code=$(s3 DELETE "/$bucket/warm-up") || true
[[ $code == 204 ]] || die "warm-up DELETE: HTTP $code"
code=$(curl -sS --noproxy '*' --max-time 10 --cacert "$tls/ca.pem" -o /dev/null -w '%{http_code}' \
         "https://127.0.0.1:$https_port/") || true
[[ $code == 200 ]] || die "HTTPS endpoint: HTTP $code"

# ---------------------------------------------------------------- env file
# Written last (and atomically): its presence means "ready".
# %q: safe to source whatever the directory's name.
printf 'export %s=%q\n' \
  S3LECT_TEST_ENDPOINT_HTTP "http://127.0.0.1:$http_port" \
  S3LECT_TEST_ENDPOINT_HTTPS "https://127.0.0.1:$https_port" \
  S3LECT_TEST_ACCESS_KEY "$access_key" \
  S3LECT_TEST_SECRET_KEY "$secret_key" \
  S3LECT_TEST_BUCKET "$bucket" \
  S3LECT_TEST_REGION "$region" \
  S3LECT_TEST_CA_FILE "$tls/ca.pem" >"$dir/env.tmp"
mv -f -- "$dir/env.tmp" "$dir/env"
ready=true
log "ready; source $dir/env"
echo "$dir/env"
