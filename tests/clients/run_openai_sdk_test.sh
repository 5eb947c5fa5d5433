#!/usr/bin/env bash
# Installs the OpenAI Python SDK (requirements-openai.txt: openai and its
# dependencies, pinned) into a virtual environment under the build tree (VENV_DIR;
# made again only when the requirements change; pip's own cache, ~/.cache/pip,
# saves the download on later builds) and runs openai_sdk_test.py against
# `les serve` on the trained fixture model. No system-wide pip install.
# Without the fixture, or when the venv or the packages cannot be had (no
# python3-venv, the package index unreachable): exit 77 (skip), or fail under CI=true.
# usage: run_openai_sdk_test.sh PYTHON3 LES_BINARY FIXTURES_DIR VENV_DIR
set -euo pipefail
PY="$1"; LES="$2"; FIX="$3"; VENV="$4"
HERE="$(cd "$(dirname "$0")" && pwd)"
ci() { [ "${CI:-}" = "true" ] || [ "${CI:-}" = "1" ]; }
unavailable() {
  if ci; then echo "$1" >&2; exit 1; fi
  echo "SKIPPED: $1" >&2; exit 77
}
MODEL="$FIX/trained/tiny-qwen3moe-Q4_K_M.gguf"
[ -f "$MODEL" ] || unavailable "fixture missing: $MODEL"
REQ="$HERE/requirements-openai.txt"
STAMP="$VENV/.les-requirements.sha256"
WANT="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null || true)" != "$WANT" ]; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV" || unavailable "cannot make a venv with $PY (Debian: python3-venv, scripts/setup.sh)"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$REQ" ||
    unavailable "cannot install $REQ from the package index"
  echo "$WANT" > "$STAMP"
fi
exec "$VENV/bin/python" "$HERE/openai_sdk_test.py" "$LES" "$MODEL"
