#!/usr/bin/env bash
# Installs the Debian 12 packages s3lect needs to build and test. Quick when all are present.
set -euo pipefail
# shellcheck source=scripts/lib/packages.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/lib/packages.sh"

# clang: the second compiler's build (the clang preset); clang-19 with libc++: the third standard
# library (the libcxx-portable preset, which compiles GoogleTest from googletest's sources);
# dpkg-dev and file: cpack's .deb, whose dependencies dpkg-shlibdeps finds (tests/package/run.sh);
# libboost-json1.81-dev: Boost.JSON linked, not compiled into libs3lect (S3LECT_BOOST_JSON);
# debootstrap: the newest toolchain's chroot (scripts/newest-toolchain.sh).
# doxygen: the API reference (the `docs` target, tested as docs.reference).
install_missing_packages g++ cmake ninja-build ccache pkg-config libboost1.81-dev \
  libboost-json1.81-dev libssl-dev libgtest-dev googletest libbenchmark-dev openssl curl faketime \
  clang-tidy clang dpkg-dev file clang-19 libc++-19-dev libc++abi-19-dev debootstrap doxygen
