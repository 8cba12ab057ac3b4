#!/usr/bin/env bash
# The consumer matrix (docs/integration.md): tests/consumers/legacy_asio_app, an application
# written against Asio's deprecated API, built and run three ways, each electing itself:
#   1. find_package(s3lect) from a prefix chosen only at install time (`cmake --install
#      --prefix`), never given to the configure step;
#   2. pkg-config from that prefix, with the flags `pkg-config --cflags --libs s3lect` gives;
#   3. add_subdirectory of the source tree (as FetchContent does): s3lect built as a subproject
#      with the parent's own flags.
#
#   bash tests/consumers/run.sh BUILD_DIR
# Env: LDFLAGS for an instrumented BUILD_DIR (its library needs the sanitizer runtimes).
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
app=$source_dir/tests/consumers/legacy_asio_app
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/chosen-at-install

fail() {
  echo "consumer test: $*" >&2
  exit 1
}

cmake --install "$build_dir" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/s3lect" || fail "no s3lect in $prefix/bin"

echo "1. find_package, prefix chosen at install time"
cmake -S "$app" -B "$work/find_package" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/find_package" >/dev/null
"$work/find_package/legacy_consumer"

echo "2. pkg-config, the same prefix"
pc_file=$(find "$prefix" -name s3lect.pc)
[ -n "$pc_file" ] || fail "no s3lect.pc under $prefix"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc_file")
includedir=$(pkg-config --variable=includedir s3lect)
[ -f "$includedir/s3lect/elector.hpp" ] ||
  fail "s3lect.pc's includedir '$includedir' does not hold the installed headers"
# shellcheck disable=SC2046,SC2086  # word lists from pkg-config and the environment
c++ -o "$work/pkg-config-consumer" "$app/main.cpp" $(pkg-config --cflags s3lect) \
  $(pkg-config --libs s3lect) ${LDFLAGS:-}
"$work/pkg-config-consumer"

echo "3. add_subdirectory of the source tree"
cmake -S "$app" -B "$work/subproject" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DS3LECT_SOURCE_DIR="$source_dir" >/dev/null
cmake --build "$work/subproject" >/dev/null
"$work/subproject/legacy_consumer"
[ ! -e "$work/subproject/s3lect/s3lect" ] || fail "the subproject built the s3lect tool"

echo "consumer matrix passed"
