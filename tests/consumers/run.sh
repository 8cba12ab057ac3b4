#!/usr/bin/env bash
# The consumer matrix (docs/integration.md): the applications of tests/consumers/ (CMakeLists.txt
# there) built and run three ways, each electing itself:
#   1. find_package(s3lect) from a prefix chosen only at install time (`cmake --install
#      --prefix`), never given to the configure step; and refused, saying why, when the Boost
#      found is not the one the library was built with;
#   2. pkg-config from that prefix, with the flags `pkg-config --cflags --libs s3lect` gives
#      (no -std among them: one consumer is C++23);
#   3. add_subdirectory of the source tree (as FetchContent does): s3lect built as a subproject
#      with the parent's own flags.
# The legacy consumer (Asio's deprecated API) runs only where the Boost has that API: 1.87
# removed io_context::work and io_context::post. The matrix says when it is skipped.
#
#   bash tests/consumers/run.sh BUILD_DIR
# Env: LDFLAGS for an instrumented BUILD_DIR (its library needs the sanitizer runtimes);
#      CXX the compiler (default c++).
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
app=$source_dir/tests/consumers
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/chosen-at-install
cxx=${CXX:-c++}

fail() {
  echo "consumer test: $*" >&2
  exit 1
}

cmake --install "$build_dir" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/s3lect" || fail "no s3lect in $prefix/bin"

# The Boost the library was built with decides whether the legacy consumer can exist.
build_config=$prefix/include/s3lect/detail/build_config.hpp
boost_version=$(sed -n 's/^#define S3LECT_BUILT_WITH_BOOST_VERSION \([0-9]*\)$/\1/p' \
  "$build_config")
[ -n "$boost_version" ] || fail "no S3LECT_BUILT_WITH_BOOST_VERSION in $build_config"
consumers=(multithreaded_consumer)
if [ "$boost_version" -lt 108700 ]; then
  consumers+=(legacy_consumer)
else
  echo "legacy consumer skipped: Boost" \
    "$((boost_version / 100000)).$((boost_version / 100 % 1000)) has no io_context::work or" \
    "io_context::post (removed in Boost 1.87)"
fi

# run_consumers DIR: runs each consumer built in DIR; each must exit 0 saying what it did.
run_consumers() {
  local name
  for name in "${consumers[@]}"; do
    [ -x "$1/$name" ] || fail "$name was not built in $1"
    "$1/$name"
  done
}

echo "1. find_package, prefix chosen at install time"
cmake -S "$app" -B "$work/find_package" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/find_package" >/dev/null
run_consumers "$work/find_package"

echo "1b. find_package with another Boost: refused, saying why"
other_boost=$work/other-boost
mkdir -p "$other_boost"
echo 'set(Boost_VERSION_STRING 1.80.0)' >"$other_boost/BoostConfig.cmake"
echo 'set(PACKAGE_VERSION 1.80.0)
set(PACKAGE_VERSION_COMPATIBLE TRUE)
if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()' >"$other_boost/BoostConfigVersion.cmake"
if cmake -S "$app" -B "$work/other_boost" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DBoost_DIR="$other_boost" >"$work/other_boost.log" 2>&1; then
  fail "find_package(s3lect) accepted Boost 1.80.0"
fi
grep -q "this libs3lect was compiled with Boost" "$work/other_boost.log" ||
  fail "find_package(s3lect) refused Boost 1.80.0 without saying why:" \
    "$(cat "$work/other_boost.log")"

echo "2. pkg-config, the same prefix"
pc_file=$(find "$prefix" -name s3lect.pc)
[ -n "$pc_file" ] || fail "no s3lect.pc under $prefix"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc_file")
includedir=$(pkg-config --variable=includedir s3lect)
[ -f "$includedir/s3lect/elector.hpp" ] ||
  fail "s3lect.pc's includedir '$includedir' does not hold the installed headers"
cflags=$(pkg-config --cflags s3lect)
[[ $cflags != *-std=* ]] || fail "s3lect.pc imposes a standard: $cflags"
# shellcheck disable=SC2046,SC2086  # word lists from pkg-config and the environment
"$cxx" -std=c++23 -DBOOST_ASIO_NO_DEPRECATED -o "$work/multithreaded_consumer" \
  "$app/multithreaded_app.cpp" $cflags $(pkg-config --libs s3lect) ${LDFLAGS:-}
if [[ " ${consumers[*]} " == *" legacy_consumer "* ]]; then
  # shellcheck disable=SC2046,SC2086
  "$cxx" -std=c++20 -o "$work/legacy_consumer" "$app/legacy_asio_app.cpp" $cflags \
    $(pkg-config --libs s3lect) ${LDFLAGS:-}
fi
run_consumers "$work"

echo "3. add_subdirectory of the source tree"
cmake -S "$app" -B "$work/subproject" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DS3LECT_SOURCE_DIR="$source_dir" >/dev/null
cmake --build "$work/subproject" >/dev/null
run_consumers "$work/subproject"
[ ! -e "$work/subproject/s3lect/bin/s3lect" ] || fail "the subproject built the s3lect tool"

echo "consumer matrix passed"
