#!/usr/bin/env bash
# A failover candidate made of `s3lect run` (bench/failover.sh --cli / --peer-watch), with the
# command line of examples/leader_worker so that scripts/lib/election-driver.sh can drive it:
#   cli-candidate.sh BUCKET KEY ID [CA_FILE] [--lease-ms N]
# It becomes `s3lect run` itself (exec, same PID, so the driver's SIGTERM and SIGKILL reach
# s3lect), keeping this script's path as argv[0] so that the driver recognises its child.
# The leader's command is scripts/lib/cli-child.sh, which prints the event lines.
# Environment:
#   BENCH_S3LECT     the s3lect binary (required)
#   BENCH_PEER_DIR   peer-watch mode: directory with ca.pem and ID.pem/ID.key (certs.sh);
#                    empty: S3 mode
#   BENCH_PEER_PORT_node_a, ...  the health endpoint's port of each node (peer-watch mode)
#   BENCH_RUN_OPTIONS further `s3lect run` options, split at spaces (e.g.
#                    "--follower-reads economy")
#   AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: the store; with
#                    BUCKET az://CONTAINER, AZURE_STORAGE_CONNECTION_STRING instead
set -euo pipefail
self=$(realpath -- "${BASH_SOURCE[0]}")
here=$(dirname -- "$self")
bucket=$1 key=$2 id=$3
shift 3
if [[ $bucket == az://* ]]; then
  args=(--lock "$bucket/$key" --id "$id")
else
  args=(--lock "s3://$bucket/$key" --path-style --id "$id")
fi
while (($#)); do
  case $1 in
    --lease-ms)
      # The lease alone, as a user gives it: s3lect derives the rest in the library's proportions
      # (renew deadline 2/3 of the lease, renewal every third, kill grace 1/5).
      args+=(--lease "$2ms")
      shift 2 ;;
    *) args+=(--ca-file "$1"); shift ;;
  esac
done
read -r -a extra <<<"${BENCH_RUN_OPTIONS:-}"
args+=("${extra[@]}")
if [[ -n ${BENCH_PEER_DIR:-} ]]; then
  port_var=BENCH_PEER_PORT_${id//-/_}
  port=${!port_var:?no port for $id}
  args+=(--peer --peer-watch --addr "127.0.0.1:$port" --peer-listen "127.0.0.1:$port"
    --peer-cert "$BENCH_PEER_DIR/$id.pem" --peer-key "$BENCH_PEER_DIR/$id.key"
    --peer-ca "$BENCH_PEER_DIR/ca.pem")
fi
exec -a "$self" "${BENCH_S3LECT:?BENCH_S3LECT is not set}" run "${args[@]}" -- \
  bash "$here/cli-child.sh" "$id"
