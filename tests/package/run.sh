#!/usr/bin/env bash
# Builds the packages from the release build (the "package" preset: the release preset with the
# prefix /usr), checks what they hold, installs the two .debs into this system with apt, runs
# `s3lect --version`, checks that every place naming the version agrees (scripts/release.sh), and
# builds the consumers of tests/consumers/ against the installed library, with
# find_package(s3lect) and with pkg-config. Then removes the packages again, unless --keep.
# Installs into the system: meant for a throw-away CI machine, or run it knowing that it does.
#
#   bash tests/package/run.sh [--jobs N] [--keep]
set -euo pipefail
cd "$(dirname "$0")/../.."

jobs=$(nproc)
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--jobs N] [--keep]" >&2; exit 2 ;;
  esac
done

build=build/release
packages=$build/packages
version=$(sed -n 's/^project(s3lect VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

fail() {
  echo "package test: $*" >&2
  exit 1
}

for name in s3lect libs3lect-dev; do
  if dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed"; then
    fail "$name is installed already; remove it first (this test installs and removes it)"
  fi
done

cmake --preset package >/dev/null
cmake --build "$build" -j "$jobs" --target s3lect s3lect_cli s3lect_man_page
rm -rf "$packages"
cpack --config "$build/CPackConfig.cmake" -B "$packages" >/dev/null
deb_tool=$packages/s3lect_${version}_amd64.deb
deb_dev=$packages/libs3lect-dev_${version}_amd64.deb
tarball=$packages/s3lect-${version}-Linux.tar.gz
for file in "$deb_tool" "$deb_dev" "$tarball"; do
  [ -f "$file" ] || fail "cpack made no $file (made: $(ls "$packages"))"
done
bash scripts/release.sh --check-only --build "$build" --packages "$packages"

# contains LISTING PATH...: every PATH is in LISTING (one path a line, as dpkg-deb -c or tar tz).
contains() {
  local listing=$1 path
  shift
  for path in "$@"; do
    grep -qE "(^|[ /.])${path}\$" <<<"$listing" || fail "missing $path in:
$listing"
  done
}
contains "$(dpkg-deb -c "$deb_tool")" /usr/bin/s3lect /usr/libexec/s3lect/s3lect-guardian \
  /usr/share/man/man1/s3lect.1.gz /usr/lib/systemd/system/s3lect@.service \
  /usr/share/doc/s3lect/examples/s3lect.env
contains "$(dpkg-deb -c "$deb_dev")" /usr/include/s3lect/s3lect.hpp /usr/include/s3lect/version.hpp \
  /usr/include/s3lect/detail/abi.hpp /usr/include/s3lect/detail/build_config.hpp \
  '/usr/lib/[a-z0-9_-]*/?libs3lect.a' '/usr/lib/[a-z0-9_-]*/?cmake/s3lect/s3lect-config.cmake' \
  '/usr/lib/[a-z0-9_-]*/?pkgconfig/s3lect.pc'
contains "$(tar tzf "$tarball")" bin/s3lect libexec/s3lect/s3lect-guardian share/man/man1/s3lect.1.gz \
  include/s3lect/elector.hpp 'lib/[a-z0-9_-]*/?libs3lect.a'
dpkg-deb -f "$deb_tool" Depends | grep -q libssl3 || fail "s3lect does not depend on libssl3"
dpkg-deb -f "$deb_tool" Depends | grep -q ca-certificates ||
  fail "s3lect does not depend on ca-certificates (HTTPS to AWS verifies with the system roots)"
dpkg-deb -f "$deb_dev" Depends | grep -q libssl-dev || fail "libs3lect-dev does not depend on libssl-dev"
# The man page holds every command's help, generated from the binary. It is read whole first:
# `zcat | grep -q` under pipefail fails when grep exits before zcat's last write (SIGPIPE), which
# a page over gzip's 32 KiB output buffer makes likely.
man_page=$(zcat "$build/s3lect.1.gz")
for section in '.SS "s3lect run"' '.SS "s3lect status"' '.B s3lect \-\-version'; do
  grep -qF -- "$section" <<<"$man_page" || fail "the man page has no '$section'"
done

work=$(mktemp -d)
installed=0
cleanup() {
  local status=$?
  if [ "$installed" -eq 1 ] && [ "$keep" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get purge -y -qq s3lect libs3lect-dev \
      >/dev/null || status=1
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

installed=1
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
  "./$deb_tool" "./$deb_dev" >/dev/null
[ "$(command -v s3lect)" = /usr/bin/s3lect ] || fail "s3lect on PATH is $(command -v s3lect)"
[ "$(s3lect --version)" = "s3lect $version" ] || fail "s3lect --version says '$(s3lect --version)'"
grep -q '^ExecStart=/usr/bin/s3lect run ' /usr/lib/systemd/system/s3lect@.service ||
  fail "the unit does not run /usr/bin/s3lect"
# The installed s3lect finds its job guardian: without it, run exits 1 before reading the store;
# with it, the closed port below is what ends it (exit 4).
status=0
s3lect run --lock s3://bucket/key --endpoint http://127.0.0.1:9 -- true 2>"$work/run.err" ||
  status=$?
[ "$status" -eq 4 ] || fail "s3lect run exited $status, not 4: $(cat "$work/run.err")"
# The same CLI moved away from its prefix, as a package manager's tools directory holds it
# (vcpkg's tools/s3lect/): it finds the guardian at the absolute path fixed at build time.
mkdir -p "$work/tools/s3lect"
cp /usr/bin/s3lect "$work/tools/s3lect/s3lect"
status=0
"$work/tools/s3lect/s3lect" run --lock s3://bucket/key --endpoint http://127.0.0.1:9 -- true \
  2>"$work/moved.err" || status=$?
[ "$status" -eq 4 ] || fail "a moved s3lect run exited $status, not 4: $(cat "$work/moved.err")"
# Its whole output first: grep -q would close the pipe early, and pipefail count the SIGPIPE.
probe=$(/usr/libexec/s3lect/s3lect-guardian --probe) ||
  fail "the installed guardian's --probe failed"
grep -q '^pid-namespace ' <<<"$probe" || fail "the installed guardian's --probe said: $probe"

# The consumers, with no prefix given: the installed CMake package and pkg-config file. (This
# runs with Debian 12's Boost 1.81, which still has the legacy consumer's deprecated API.)
cmake -S tests/consumers -B "$work/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/legacy_consumer"
"$work/cmake/multithreaded_consumer"
# shellcheck disable=SC2046  # pkg-config's output is a list of words
c++ -std=c++20 -o "$work/pkg-config-consumer" tests/consumers/legacy_asio_app.cpp \
  $(pkg-config --cflags s3lect) $(pkg-config --libs s3lect)
"$work/pkg-config-consumer"
echo "package test passed: $(basename "$deb_tool") $(basename "$deb_dev") $(basename "$tarball")"
