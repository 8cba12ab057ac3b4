#!/usr/bin/env bash
# Install Azurite (Microsoft's Azure Storage emulator, npm package `azurite`), pinned, into a
# project-owned prefix, for azurite-start.sh. Idempotent and quick when the pinned version is
# already there: npm is not run then. Prints the prefix on stdout; progress goes to stderr.
#
# 3.35.0 is pinned because it is the last release that runs on Node.js 20 (3.36 and later need
# Node.js 22); it needs node >= 10.
#
# Env (optional):
#   S3LECT_AZURITE_PREFIX  npm prefix (default /opt/s3lect-azurite as root, else
#                          /var/tmp/s3lect-azurite-$UID); azurite-start.sh looks in the same one
# Without node or npm it installs Debian's nodejs and npm (apt-get, root or sudo).
set -euo pipefail
# shellcheck source=scripts/lib/packages.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/../lib/packages.sh"

readonly version=3.35.0

if ((EUID == 0)); then default_prefix=/opt/s3lect-azurite; else default_prefix=/var/tmp/s3lect-azurite-$EUID; fi
prefix=$(realpath -m -- "${S3LECT_AZURITE_PREFIX:-$default_prefix}")
log() { printf '[azurite] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

installed_version() {
  local manifest=$prefix/node_modules/azurite/package.json
  [[ -f $manifest && -x $prefix/node_modules/.bin/azurite-blob ]] || return 0
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("version", ""))' \
    "$manifest" 2>/dev/null || true
}

command -v python3 >/dev/null || die "python3 not found; run scripts/install-deps.sh"
if [[ $(installed_version) == "$version" ]]; then
  log "azurite $version already installed in $prefix"
  echo "$prefix"
  exit 0
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  log "node or npm missing: installing Debian's nodejs and npm"
  install_missing_packages nodejs npm >&2
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
((node_major >= 10)) || die "azurite $version needs node >= 10; this is $(node --version)"

log "installing azurite $version into $prefix"
mkdir -p -- "$prefix"
# --prefix: a project-owned tree, no global install; an older or broken azurite there is
# replaced. No audit or funding requests, no update notice.
npm install --prefix "$prefix" --save-exact --no-audit --no-fund --no-update-notifier --loglevel=error \
  "azurite@$version" >&2
[[ $(installed_version) == "$version" ]] || die "npm finished, but $prefix has no azurite $version"
log "installed azurite $version ($prefix/node_modules/.bin/azurite-blob)"
echo "$prefix"
