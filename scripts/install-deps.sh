#!/usr/bin/env bash
# Installs the Debian packages bulkscore builds with, only those missing.
# Debian 12 (bookworm). Needs root or sudo when something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  clang-14 libclang-rt-14-dev clang-tidy-14
  libsimdjson-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  gnuplot-nox
  golang-go python3
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
