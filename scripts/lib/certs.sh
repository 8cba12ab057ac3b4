# shellcheck shell=bash
# A throw-away CA and per-node certificates for 127.0.0.1 (EC P-256), made as docs/peer-mode.md
# shows. Sourced by the benchmark scripts and the chaos harness.
#   make_test_certs DIR NAME...   writes DIR/ca.pem, DIR/ca.key and DIR/NAME.pem, DIR/NAME.key
make_test_certs() {
  local dir=$1 name
  shift
  mkdir -p -- "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 30 -subj "/CN=s3lect bench CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  for name in "$@"; do
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
      -keyout "$dir/$name.key" -out "$dir/$name.csr" -subj "/CN=$name" 2>/dev/null
    cat >"$dir/$name.ext" <<EXT
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = IP:127.0.0.1
EXT
    openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
      -CAcreateserial -out "$dir/$name.pem" -days 30 -extfile "$dir/$name.ext" 2>/dev/null
    chmod 600 "$dir/$name.key"
  done
}
