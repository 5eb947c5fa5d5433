#!/usr/bin/env bash
# Compiles the Kotlin layer (bindings/kotlin/jvm/src) and its test in one kotlinc
# run (Kotlin 1.3 on the JVM, Debian's `kotlin` package; about 30-60 s) against
# les.jar, then runs the test on the trained fixture model through
# bindings/jni/test/run_java_test.sh (which reads llama.cpp's reference).
# Without kotlinc: exit 77 (skip), or fail under CI=true; the same for the fixture.
# usage: run_kotlin_test.sh KOTLINC JAVA JNI_LIB_DIR LES_JAR FIXTURES_DIR OUT_DIR
set -euo pipefail
KOTLINC="$1"; JAVA="$2"; LIBDIR="$3"; LES_JAR="$4"; FIX="$5"; OUT="$6"
HERE="$(cd "$(dirname "$0")" && pwd)"
ci() { [ "${CI:-}" = "true" ] || [ "${CI:-}" = "1" ]; }
if ! command -v "$KOTLINC" >/dev/null 2>&1; then
  if ci; then echo "kotlinc not found ($KOTLINC): install Debian's kotlin package (scripts/setup.sh)" >&2; exit 1; fi
  echo "SKIPPED: kotlinc not found ($KOTLINC); scripts/setup.sh installs Debian's kotlin package" >&2; exit 77
fi
if [ ! -f "$FIX/trained/tiny-qwen3moe-F16.gguf" ]; then
  if ci; then echo "fixture missing: $FIX/trained/tiny-qwen3moe-F16.gguf" >&2; exit 1; fi
  echo "SKIPPED: fixture missing: $FIX/trained/tiny-qwen3moe-F16.gguf" >&2; exit 77
fi
mkdir -p "$OUT"
JAR="$OUT/les-kotlin-test.jar"
# -Werror: a warning in the layer or the test fails the build. The JVM's own
# deprecation note about -Xverify (kotlinc 1.3 on JDK 17) is not a compiler warning.
"$KOTLINC" -jvm-target 1.8 -Werror -cp "$LES_JAR" "$HERE"/src/org/les/kotlin/*.kt \
  "$HERE"/test/org/les/kotlin/test/KotlinTest.kt -include-runtime -d "$JAR"
exec "$HERE/../../jni/test/run_java_test.sh" "$JAVA" "$LIBDIR" "$LES_JAR" "$JAR" "$FIX" org.les.kotlin.test.KotlinTestKt
