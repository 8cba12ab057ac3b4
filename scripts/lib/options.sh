# shellcheck shell=bash
# `--name VALUE` options into an associative array that holds their defaults (so that it also
# names the options there are); an unknown name or a missing value exits 2. Sourced by the
# benchmark scripts.
#   parse_options ARRAY "$@"
parse_options() {
  local -n into=$1
  local name
  shift
  while [ $# -gt 0 ]; do
    name=${1#--}
    if [ $# -lt 2 ] || [ -z "${into[$name]+known}" ]; then
      echo "unknown option: $1" >&2
      exit 2
    fi
    into["$name"]=$2
    shift 2
  done
}
