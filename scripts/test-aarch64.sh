#!/usr/bin/env bash
# Cross-build the dependency-free kernel library and its tests for aarch64
# (g++-aarch64-linux-gnu) and run them under qemu-aarch64 via ctest.
#
# Usage: scripts/test-aarch64.sh [build-dir] [extra cmake args...]
#   build-dir defaults to <repo>/build-aarch64.
# Environment:
#   LES_FIXTURES_DIR   fixtures root (default <repo>/../shared/fixtures); passed
#                      to CMake and to the tests so fixture tests run under qemu.
#   LES_AARCH64_MARCH  -march for the build (default armv8-a; armv8.2-a+dotprod
#                      compiles the dotprod paths).
#   JOBS               parallel build jobs (default 2).
# Needs: g++-aarch64-linux-gnu, qemu-user, cmake, ninja.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${repo}/build-aarch64}"
shift || true
fixtures="${LES_FIXTURES_DIR:-${repo}/../shared/fixtures}"
march="${LES_AARCH64_MARCH:-armv8-a}"
jobs="${JOBS:-2}"

cmake -S "${repo}" -B "${build}" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="${repo}/cmake/toolchain-aarch64.cmake" \
  -DCMAKE_BUILD_TYPE=Release \
  -DLES_KERNELS_ONLY=ON \
  -DLES_AARCH64_MARCH="${march}" \
  -DLES_FIXTURES_DIR="${fixtures}" \
  "$@"
cmake --build "${build}" -j "${jobs}"
LES_FIXTURES_DIR="${fixtures}" ctest --test-dir "${build}" --output-on-failure -j "${jobs}"
