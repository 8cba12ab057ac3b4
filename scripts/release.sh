#!/usr/bin/env bash
# A release's one version, checked everywhere it appears (docs/versioning.md): CMakeLists.txt's
# project(VERSION), where it is written; the generated <s3lect/version.hpp> of the build tree;
# the CHANGELOG's newest release section; `s3lect --version`; s3lect.pc and the CMake package's
# version file; the two .deb packages and the tarball.
#
#   bash scripts/release.sh [--jobs N]
#       builds the packages as a release does (the "package" preset in build/release, cpack into
#       build/release/packages), checks, and prints the tag to create;
#   bash scripts/release.sh --check-only [--build DIR] [--packages DIR]
#       checks what is built already (tests/package/run.sh runs this after making the packages,
#       so CI checks every change).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build/release
packages=""
check_only=0
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --check-only) check_only=1; shift ;;
    --build) build=$2; shift 2 ;;
    --packages) packages=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "usage: $0 [--check-only] [--build DIR] [--packages DIR] [--jobs N]" >&2; exit 2 ;;
  esac
done
packages=${packages:-$build/packages}

problems=()
problem() { problems+=("$*"); }

# The version, where it is written.
version=$(sed -n 's/^project(s3lect VERSION \([0-9]*\.[0-9]*\.[0-9]*\) .*/\1/p' CMakeLists.txt)
if [ -z "$version" ]; then
  echo "release: no project(s3lect VERSION X.Y.Z ...) in CMakeLists.txt" >&2
  exit 1
fi
IFS=. read -r major minor patch <<<"$version"

if [ "$check_only" -eq 0 ]; then
  cmake --preset package >/dev/null
  cmake --build "$build" -j "$jobs" --target s3lect s3lect_cli s3lect_man_page
  rm -rf "$packages"
  cpack --config "$build/CPackConfig.cmake" -B "$packages" >/dev/null
fi

# The CHANGELOG's newest release section: the first "## [X.Y.Z] - YYYY-MM-DD" heading.
release_heading=$(grep -m1 -E '^## \[[0-9]+\.[0-9]+\.[0-9]+\]' CHANGELOG.md || true)
if [[ $release_heading =~ ^'## ['([0-9.]+)'] - '([0-9]{4}-[0-9]{2}-[0-9]{2})$ ]]; then
  [ "${BASH_REMATCH[1]}" = "$version" ] ||
    problem "CHANGELOG.md's newest release is ${BASH_REMATCH[1]}, CMakeLists.txt says $version"
  date -d "${BASH_REMATCH[2]}" +%F >/dev/null 2>&1 ||
    problem "CHANGELOG.md's release $version has no valid date: '$release_heading'"
else
  problem "CHANGELOG.md has no release section '## [$version] - YYYY-MM-DD'" \
    "(found: '$release_heading')"
fi

# The generated header.
header=$build/include/s3lect/version.hpp
if [ -f "$header" ]; then
  for part in "MAJOR $major" "MINOR $minor" "PATCH $patch" "STRING \"$version\""; do
    grep -qx "#define S3LECT_VERSION_${part}" "$header" ||
      problem "$header: no '#define S3LECT_VERSION_${part}'"
  done
else
  problem "no $header (configure $build first)"
fi

# What the build installs: the tool, the pkg-config file, the CMake package.
tool=$build/bin/s3lect
if [ -x "$tool" ]; then
  said=$("$tool" --version)
  [ "$said" = "s3lect $version" ] || problem "$tool --version says '$said'"
else
  problem "no $tool (build s3lect_cli)"
fi
grep -qx "Version: $version" "$build/s3lect.pc" 2>/dev/null ||
  problem "$build/s3lect.pc: no 'Version: $version'"
grep -q "^set(PACKAGE_VERSION \"$version\")" "$build/s3lect-config-version.cmake" 2>/dev/null ||
  problem "$build/s3lect-config-version.cmake: not version $version"

# The packages.
for name in s3lect libs3lect-dev; do
  deb=$packages/${name}_${version}_amd64.deb
  if [ -f "$deb" ]; then
    said=$(dpkg-deb -f "$deb" Version)
    [ "$said" = "$version" ] || problem "$deb: Version: $said"
  else
    problem "no $deb (made: $(find "$packages" -maxdepth 1 -type f -printf '%f ' 2>/dev/null))"
  fi
done
[ -f "$packages/s3lect-${version}-Linux.tar.gz" ] ||
  problem "no $packages/s3lect-${version}-Linux.tar.gz"

if [ ${#problems[@]} -gt 0 ]; then
  printf 'release: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "release $version: CMakeLists.txt, <s3lect/version.hpp>, CHANGELOG.md, s3lect --version," \
  "s3lect.pc, the CMake package and the packages agree"
if [ "$check_only" -eq 0 ]; then
  echo "tag the commit CI passed: git tag -a v$version -m 's3lect $version'"
fi
