#!/usr/bin/env bash
# Cross-build the dependency-free kernel library and its tests for aarch64
# (g++-aarch64-linux-gnu) and run them under qemu-aarch64 via ctest, once per
# target architecture level: the armv8-a baseline (NEON, widening multiplies,
# SDOT variants picked at run time) and armv8.2-a+dotprod (SDOT everywhere).
# The baseline build's tests run twice: on qemu's default CPU (which has SDOT)
# and on an emulated Cortex-A53 (no SDOT), so the runtime choice is tested too.
#
# Usage: scripts/test-aarch64.sh [build-dir] [extra cmake args...]
#   build-dir defaults to <repo>/build-aarch64; the second level builds in
#   <build-dir>-dotprod.
# Environment:
#   LES_FIXTURES_DIR    fixtures root (default <repo>/../shared/fixtures); passed
#                       to CMake and to the tests so fixture tests run under qemu.
#   LES_AARCH64_MARCHES space-separated -march list (default
#                       "armv8-a armv8.2-a+dotprod"); the first builds in build-dir.
#   JOBS                parallel build jobs (default 2).
# Needs: g++-aarch64-linux-gnu, qemu-user, cmake, ninja. The compilers are the
# cross GCC that cmake/toolchain-aarch64.cmake names (aarch64-linux-gnu-gcc/g++).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${repo}/build-aarch64}"
shift || true
fixtures="${LES_FIXTURES_DIR:-${repo}/../shared/fixtures}"
marches="${LES_AARCH64_MARCHES:-armv8-a armv8.2-a+dotprod}"
jobs="${JOBS:-2}"

first=1
for march in ${marches}; do
  if [ "${first}" = 1 ]; then
    dir="${build}"
    first=0
  else
    dir="${build}-$(echo "${march}" | sed 's/.*+//; s/[^A-Za-z0-9_.-]/_/g')"
  fi
  echo "=== aarch64 -march=${march} in ${dir}"
  cmake -S "${repo}" -B "${dir}" -G Ninja \
    -DCMAKE_TOOLCHAIN_FILE="${repo}/cmake/toolchain-aarch64.cmake" \
    -DCMAKE_BUILD_TYPE=Release \
    -DLES_KERNELS_ONLY=ON \
    -DLES_AARCH64_MARCH="${march}" \
    -DLES_FIXTURES_DIR="${fixtures}" \
    "$@"
  cmake --build "${dir}" -j "${jobs}"
  LES_FIXTURES_DIR="${fixtures}" ctest --test-dir "${dir}" --output-on-failure -j "${jobs}"
  if [ "${dir}" = "${build}" ] && [[ "${march}" != *dotprod* ]]; then
    echo "=== aarch64 -march=${march} on an emulated Cortex-A53 (no SDOT)"
    QEMU_CPU=cortex-a53 LES_FIXTURES_DIR="${fixtures}" \
      ctest --test-dir "${dir}" --output-on-failure -j "${jobs}"
  fi
done
