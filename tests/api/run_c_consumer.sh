#!/usr/bin/env bash
# Installs LES into a temporary prefix, builds tests/api/c_consumer.c as C99 with
# -Wall -Wextra -Werror -pedantic against the installed header and shared library
# (found through pkg-config, and once more through the CMake package), runs a
# greedy generation on the trained fixture model and compares it with llama.cpp's
# reference text. Exit 77 (skip) when the fixtures are absent, unless CI=true.
# Both builds use CC, the C compiler of the LES build (never whichever `cc` is
# first on PATH).
# usage: run_c_consumer.sh BUILD_DIR SOURCE_DIR FIXTURES_DIR CC
set -euo pipefail
BUILD="$1"; SRC="$2"; FIX="$3"; CC="$4"
MODEL="$FIX/trained/tiny-qwen3moe-F16.gguf"
REF="$FIX/trained/reference/tiny-qwen3moe-F16.json"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT

cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null
PC="$TMP/prefix/lib/pkgconfig"; [ -d "$PC" ] || PC="$(dirname "$(find "$TMP/prefix" -name les.pc | head -1)")"
export PKG_CONFIG_PATH="$PC"
"$CC" -std=c99 -Wall -Wextra -Werror -pedantic "$SRC/tests/api/c_consumer.c" -o "$TMP/c_consumer" \
   $(pkg-config --cflags --libs les)
LIBDIR="$(pkg-config --variable=libdir les)"

# The CMake package: find_package(les) and link les::les.
cmake -S "$SRC/tests/api/cmake_consumer" -B "$TMP/cmake_consumer" -DCMAKE_PREFIX_PATH="$TMP/prefix" -DCMAKE_C_COMPILER="$CC" \
      -DLES_CONSUMER_SOURCE="$SRC/tests/api/c_consumer.c" >/dev/null
cmake --build "$TMP/cmake_consumer" >/dev/null

if [ ! -f "$MODEL" ]; then
  if [ "${CI:-}" = "true" ] || [ "${CI:-}" = "1" ]; then echo "fixture missing: $MODEL" >&2; exit 1; fi
  echo "SKIPPED: fixture missing: $MODEL" >&2; exit 77
fi
PROMPT="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["prompts"][1]["text"], end="")' "$REF")"
# The exact bytes of the 32 generated pieces (the JSON's "text" drops the first piece's leading space).
EXPECT="$(python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["prompts"][1]["greedy"]; sys.stdout.write(bytes.fromhex("".join(g["pieces_hex"])).decode())' "$REF")"
# The pkg-config build with experts resident, the CMake build with them streamed
# through a 4 MiB expert cache (of the model's 25 MiB): the same text either way.
for run in "$TMP/c_consumer" "$TMP/cmake_consumer/c_consumer 4"; do
  bin="${run%% *}"; budget=""; [ "$run" != "$bin" ] && budget="${run#* }"
  GOT="$(LD_LIBRARY_PATH="$LIBDIR" "$bin" "$MODEL" "$PROMPT" 32 $budget)"
  if [ "$GOT" != "$EXPECT" ]; then
    echo "MISMATCH ($run)"; echo " got:      $GOT"; echo " expected: $EXPECT"; exit 1
  fi
done
echo "C99 consumer (pkg-config, resident; CMake package, experts streamed in 4 MiB) matches llama.cpp: $EXPECT"
