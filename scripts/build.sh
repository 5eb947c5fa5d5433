#!/usr/bin/env bash
# Configures LES in Release mode into ./build (or $1), with Debian's GCC named
# (the Swift toolchain's clang, possibly first on PATH, builds only the
# dispatch_io file: cmake/LesDispatchIo.cmake; CC / CXX override the
# compilers), and builds what ships: the library (libles.so, libles.a) and the
# tools (les, and les-serve, which `les` depends on, unless
# -DLES_BUILD_SERVER=OFF). The tests, benchmarks and bindings are configured
# but not built here: the README's test command (cmake --build build && ctest
# --test-dir build) builds the rest and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER="${CC:-/usr/bin/gcc}" -DCMAKE_CXX_COMPILER="${CXX:-/usr/bin/g++}" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target les_shared les_static les
