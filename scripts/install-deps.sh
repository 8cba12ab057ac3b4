#!/usr/bin/env bash
# Installs the Debian 12 packages s3lect needs to build and test. Quick when all are present.
set -euo pipefail

# clang: the second compiler's build (the clang preset); dpkg-dev and file: cpack's .deb, whose
# dependencies dpkg-shlibdeps finds (tests/package/run.sh).
packages=(g++ cmake ninja-build ccache pkg-config libboost1.81-dev libssl-dev libgtest-dev
  googletest libbenchmark-dev openssl curl faketime clang-tidy clang dpkg-dev file)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "installing: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
