# shellcheck shell=bash
# Debian packages the scripts need. Sourced.
#   install_missing_packages PACKAGE...   installs with apt-get those not installed yet (sudo
#                                         unless root)
install_missing_packages() {
  local missing=() p sudo_cmd=()
  for p; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "installing: ${missing[*]}"
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}
