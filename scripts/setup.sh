#!/usr/bin/env bash
# Installs everything LES needs to build, test and fuzz on Debian 12 (bookworm).
# Idempotent; run as root or with sudo available.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git python3 python3-venv
  liburing-dev libfmt-dev libspdlog-dev catch2 nlohmann-json3-dev libcli11-dev
  libbenchmark-dev libutf8proc-dev libcpp-httplib-dev libstb-dev
  default-jdk-headless kotlin
  clang libclang-rt-14-dev valgrind
  python3-jinja2
  g++-aarch64-linux-gnu qemu-user
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
