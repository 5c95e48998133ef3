# Sourced by the scripts that need Debian packages: install_packages NAME... installs the
# ones not yet installed, with one apt-get update, as root or through sudo.
install_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "$(basename "$0"): installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # Without dpkg's fsync after every unpacked file: it halves a fresh machine's install
  # (104 s -> 53 s for scripts/run.sh's packages on a virtual disk). A crash in the middle can
  # leave files unwritten: then `apt-get install --reinstall` the packages apt lists.
  $sudo apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io \
    "${missing[@]}" >/dev/null
}
