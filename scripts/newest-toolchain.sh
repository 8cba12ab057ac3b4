#!/usr/bin/env bash
# The newest toolchain (a CI stage of scripts/test.sh, and runnable on its own): a Debian sid
# chroot made by debootstrap from the mirror of this machine's apt sources, with g++-15 and the
# newest libboost1.NN-dev and its Boost.JSON library, in which it
#   1. builds the library, the tool, the unit tests and the header checks with the release
#      preset (RelWithDebInfo, warnings as errors), Boost.JSON linked (S3LECT_BOOST_JSON=LIBRARY);
#   2. runs the unit tests, consumer.no_boost_json_in_library among them (the archive defines
#      no Boost.JSON symbol);
#   3. runs the consumer matrix (tests/consumers/run.sh): find_package, pkg-config and
#      add_subdirectory on that Boost (the legacy consumer skipped where the Boost lacks its API).
# The source tree is bind-mounted read-only: nothing is written into it, by root or anyone. The
# chroot lives in a scratch directory that is unmounted and removed at the end. Needs root
# (debootstrap, chroot, mount) and the debootstrap package. Prints each step's wall time.
#
#   bash scripts/newest-toolchain.sh [--jobs N] [--suite sid] [--gcc 15] [--keep DIR]
#                                    [--steps all|build|test|none] [--remove] [--ccache DIR]
# --keep DIR: make the chroot (and its build tree) in DIR, or reuse the one there, and keep it.
# --steps: the build only, or the tests only (of a build kept in DIR), or nothing; --remove:
#   remove DIR at the end all the same. scripts/test.sh builds in the background (--steps
#   build) and runs the tests in a stage of their own (--steps test --remove), so that no test
#   runs starved of CPU at the lowest priority.
# --ccache DIR: compile through ccache with its cache in DIR of this machine (not in CI, whose
#   cache is cold anyway; the build tree is then DIR/build-tree's absolute path in the chroot).
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)

jobs=$(nproc)
suite=sid
gcc=15
keep=""
steps=all
remove=0
ccache_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --suite) suite=$2; shift 2 ;;
    --gcc) gcc=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --remove) remove=1; shift ;;
    --ccache) ccache_dir=$2; shift 2 ;;
    *) sed -n '/^#   bash/,/^# --ccache/p' "$0" >&2; exit 2 ;;
  esac
done

fail() {
  echo "newest-toolchain: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot and mount)"
command -v debootstrap >/dev/null || fail "needs debootstrap (apt-get install debootstrap)"

if [ -n "$keep" ]; then
  mkdir -p "$keep"
  scratch=$(cd "$keep" && pwd)
else
  scratch=$(mktemp -d /var/tmp/s3lect-newest-toolchain-XXXXXX)
fi
root=$scratch/root

# Unmounts everything under the chroot (deepest first); removes the scratch directory only when
# nothing is mounted there any more: rm -rf through a bind mount would reach the source tree.
cleanup() {
  local status=$? mounts
  mounts=$(findmnt -rn -o TARGET | grep -F "$root/" | sort -r || true)
  for mount in $mounts; do umount -l "$mount" || true; done
  if findmnt -rn -o TARGET | grep -qF "$root/"; then
    echo "newest-toolchain: still mounted under $root; left in place" >&2
  elif [ -z "$keep" ] || [ "$remove" -eq 1 ]; then
    rm -rf "$scratch"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 143' TERM  # so that cleanup runs when scripts/test.sh stops this stage
trap 'exit 130' INT

step_start=$SECONDS
step_name=""
step() {
  end_step
  step_name=$1 step_start=$SECONDS
  echo "-- newest toolchain: $step_name"
}
end_step() {
  [ -n "$step_name" ] || return 0
  printf -- '-- newest toolchain: %s: %d s wall\n' "$step_name" $((SECONDS - step_start))
  step_name=""
}

# The Debian archive this machine's apt uses (deb822 .sources or one-line .list files).
debian_mirror() {
  {
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
      awk '/^URIs:/ { for (i = 2; i <= NF; ++i) print $i }'
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '$1 == "deb" { for (i = 2; i <= NF; ++i) if ($i ~ /:\/\//) { print $i; break } }'
  } | grep -E '/debian/?$' | head -n 1 || true
}

# in_chroot COMMAND...: runs COMMAND in the chroot with a clean environment.
in_chroot() {
  chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive CXX="g++-$gcc" "${ccache_env[@]}" "$@"
}
ccache_env=()

[[ $steps =~ ^(all|build|test|none)$ ]] || fail "--steps $steps: all, build, test or none"
[ "$steps" != none ] || exit 0

step "chroot ($suite, g++-$gcc, the newest Boost)"
if [ ! -x "$root/usr/bin/g++-$gcc" ]; then
  mirror=$(debian_mirror)
  [ -n "$mirror" ] || fail "no Debian mirror in /etc/apt/sources.list*"
  ! findmnt -rn -o TARGET | grep -qF "$root/" || fail "$root has mounts: unmount them first"
  rm -rf "$root"
  debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$scratch/debootstrap.log" 2>&1 || {
    tail -n 20 "$scratch/debootstrap.log" >&2
    fail "debootstrap $suite from $mirror failed (the whole log: $scratch/debootstrap.log)"
  }
  boost=$(in_chroot apt-cache search --names-only '^libboost1\.[0-9]+-dev$' |
    sed -n 's/^libboost\(1\.[0-9]*\)-dev .*/\1/p' | sort -V | tail -n 1)
  [ -n "$boost" ] || fail "no libboost1.NN-dev in $suite"
  packages=("g++-$gcc" cmake ninja-build pkg-config libssl-dev libgtest-dev "libboost$boost-dev"
    "libboost-json$boost-dev")
  [ -z "$ccache_dir" ] || packages+=(ccache)
  in_chroot apt-get install -y -qq --no-install-recommends "${packages[@]}" \
    >"$scratch/apt.log" 2>&1 || {
    tail -n 20 "$scratch/apt.log" >&2
    fail "installing ${packages[*]} failed"
  }
  printf '127.0.0.1 localhost\n::1 localhost ip6-localhost\n' >"$root/etc/hosts"
fi
boost_version=$(sed -n 's/^#define BOOST_LIB_VERSION "\(.*\)"/\1/p' \
  "$root/usr/include/boost/version.hpp")
echo "$(in_chroot "g++-$gcc" --version | head -n 1), Boost ${boost_version/_/.}," \
  "$(in_chroot cmake --version | head -n 1)"

mkdir -p "$root/src" "$root/proc" "$root/sys" "$root/dev/shm"
mount -t proc proc "$root/proc"
mount -t sysfs -o ro sysfs "$root/sys"
mount -t tmpfs tmpfs "$root/dev/shm"
mount --bind "$source_dir" "$root/src"
mount -o remount,bind,ro "$root/src"
build=/build
if [ -n "$ccache_dir" ]; then
  mkdir -p "$ccache_dir" "$root/ccache"
  mount --bind "$ccache_dir" "$root/ccache"
  ccache_env=(CCACHE_DIR=/ccache)
fi

if [[ $steps =~ ^(all|build)$ ]]; then
  step "build: library, tool, unit tests, header checks (release preset, -Werror)"
  in_chroot cmake -S /src --preset release -B "$build" -DS3LECT_WERROR=ON \
    -DS3LECT_BOOST_JSON=LIBRARY >"$scratch/configure.log" 2>&1 || {
    cat "$scratch/configure.log" >&2
    fail "configure failed"
  }
  grep -F "s3lect: Boost" "$scratch/configure.log"
  # The man page too: the consumer matrix installs the build tree, which includes it.
  in_chroot cmake --build "$build" -j "$jobs" --target s3lect s3lect_cli s3lect_unit_tests \
    s3lect_public_headers_alone s3lect_man_page
fi

[[ $steps =~ ^(all|test)$ ]] || { end_step; exit 0; }
[ -f "$root$build/CTestTestfile.cmake" ] || fail "no build in $root$build (--steps build first)"
step "tests: unit"
in_chroot ctest --test-dir "$build" --output-on-failure -j "$jobs" -L '^unit$'

step "tests: consumer matrix (find_package, pkg-config, add_subdirectory)"
# What the install.consumer_matrix test runs, run here so that its output (which consumers ran)
# shows.
in_chroot bash /src/tests/consumers/run.sh "$build"
end_step
echo "newest toolchain passed: g++-$gcc, Boost ${boost_version/_/.}"
