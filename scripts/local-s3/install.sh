#!/usr/bin/env bash
# Install what start.sh needs on Debian 12 (or another apt-based system):
# Ceph's mon, OSD and RADOS Gateway, the ceph CLI, openssl and curl.
# Idempotent and quick when everything is already installed: apt is not
# touched at all then (no index refresh, no lock).
set -euo pipefail

readonly packages=(radosgw ceph-mon ceph-osd ceph-common openssl curl)

log() { printf '[local-s3] %s\n' "$*" >&2; }

missing=()
for pkg in "${packages[@]}"; do
  # "install ok installed" is dpkg's state for a fully configured package; a
  # half-installed or removed-but-configured one counts as missing.
  if [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true) != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  log "already installed: ${packages[*]}"
  exit 0
fi

sudo=()
if ((EUID != 0)); then
  command -v sudo >/dev/null || { log "error: need root (or sudo) to install ${missing[*]}"; exit 1; }
  sudo=(sudo)
fi

log "installing ${missing[*]}"
# noninteractive: no debconf questions on a CI machine (passed through env
# because sudo drops the environment). --no-install-recommends keeps the Ceph
# install small. The index is refreshed only here, when something is missing:
# on a fresh machine it is empty or stale.
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
log "installed ${missing[*]}"
