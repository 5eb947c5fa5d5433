#!/usr/bin/env bash
# Runs the Java JNI test (org.les.test.JniTest) on the trained fixture model with
# llama.cpp's reference: the prompt, its tokens and the greedy continuation are
# read from the reference JSON here and passed to the test as arguments.
# Exit 77 (skip) when the fixture is missing, unless CI=true (then fail).
# MAIN_CLASS (default org.les.test.JniTest) takes the same six arguments; the
# Kotlin test (bindings/kotlin/jvm/run_kotlin_test.sh) runs through here too.
# usage: run_java_test.sh JAVA JNI_LIB_DIR LES_JAR TEST_JAR FIXTURES_DIR [MAIN_CLASS]
set -euo pipefail
JAVA="$1"; LIBDIR="$2"; LES_JAR="$3"; TEST_JAR="$4"; FIX="$5"; MAIN="${6:-org.les.test.JniTest}"
MODEL="$FIX/trained/tiny-qwen3moe-F16.gguf"
REF="$FIX/trained/reference/tiny-qwen3moe-F16.json"
if [ ! -f "$MODEL" ] || [ ! -f "$REF" ]; then
  if [ "${CI:-}" = "true" ] || [ "${CI:-}" = "1" ]; then echo "fixture missing: $MODEL" >&2; exit 1; fi
  echo "SKIPPED: fixture missing: $MODEL" >&2; exit 77
fi
field() {
  python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["prompts"][1]
g = p["greedy"]
out = {
  "prompt": p["text"],
  "prompt_tokens": ",".join(map(str, p["tokens_model"])),
  "prompt_tokens_no_special": ",".join(map(str, p["tokens_no_special"])),
  "greedy_ids": ",".join(map(str, g["ids"])),
  # the exact bytes of the generated pieces (the JSON "text" drops the first leading space)
  "greedy_text": bytes.fromhex("".join(g["pieces_hex"])).decode(),
}[sys.argv[2]]
sys.stdout.write(out)' "$REF" "$1"
}
exec "$JAVA" -Xcheck:jni -Djava.library.path="$LIBDIR" -cp "$LES_JAR:$TEST_JAR" "$MAIN" \
  "$MODEL" "$(field prompt)" "$(field prompt_tokens)" "$(field prompt_tokens_no_special)" \
  "$(field greedy_ids)" "$(field greedy_text)"
