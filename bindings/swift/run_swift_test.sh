#!/usr/bin/env bash
# Builds the Swift package (bindings/swift: CLes, LES and the LESTests XCTest
# suite, warnings as errors) against the libles.so of BUILD_DIR and runs its
# tests on the fixtures. pkg-config's `les` is BUILD_DIR/swift/pkgconfig/les.pc
# (written by bindings/swift/CMakeLists.txt); the loader finds libles.so through
# LD_LIBRARY_PATH; SwiftPM's scratch folder is BUILD_DIR/swift/scratch.
# Without `swift`, or without the fixtures: exit 77 (skip), or fail under CI=true.
# usage: run_swift_test.sh SWIFT BUILD_DIR FIXTURES_DIR
set -euo pipefail
SWIFT="$1"; BUILD="$2"; FIX="$3"
HERE="$(cd "$(dirname "$0")" && pwd)"
ci() { [ "${CI:-}" = "true" ] || [ "${CI:-}" = "1" ]; }
if ! command -v "$SWIFT" >/dev/null 2>&1; then
  if ci; then echo "swift not found ($SWIFT): the Swift toolchain (/opt/swift/usr/bin) must be on PATH" >&2; exit 1; fi
  echo "SKIPPED: swift not found ($SWIFT)" >&2; exit 77
fi
if [ ! -f "$FIX/trained/tiny-qwen3moe-F16.gguf" ]; then
  if ci; then echo "fixture missing: $FIX/trained/tiny-qwen3moe-F16.gguf" >&2; exit 1; fi
  echo "SKIPPED: fixture missing: $FIX/trained/tiny-qwen3moe-F16.gguf" >&2; exit 77
fi
if [ ! -e "$BUILD/libles.so" ]; then echo "no $BUILD/libles.so: build the les_shared target first" >&2; exit 1; fi
export PKG_CONFIG_PATH="$BUILD/swift/pkgconfig"
export LD_LIBRARY_PATH="$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LES_FIXTURES_DIR="$FIX"
SCRATCH="$BUILD/swift/scratch"
"$SWIFT" build --package-path "$HERE" --scratch-path "$SCRATCH" --build-tests -Xswiftc -warnings-as-errors
exec "$SWIFT" test --package-path "$HERE" --scratch-path "$SCRATCH" --skip-build
