#!/usr/bin/env bash
# Compares the dynamic symbols exported by libles.so with the checked-in list
# tests/api/exported_symbols.txt. A new export must be added there on purpose
# (ABI review); anything not starting with les_ is an error.
# usage: check_exports.sh LIBLES_SO SOURCE_DIR
set -euo pipefail
SO="$1"; SRC="$2"
GOT="$(nm -D --defined-only "$SO" | awk '$2 ~ /^[TtDdBbRrVvWwi]$/ {print $3}' | sed 's/@.*//' | sort -u)"
BAD="$(echo "$GOT" | grep -v '^les_' || true)"
if [ -n "$BAD" ]; then echo "non-les_ symbols exported:"; echo "$BAD"; exit 1; fi
if ! diff -u "$SRC/tests/api/exported_symbols.txt" <(echo "$GOT"); then
  echo "exported symbols differ from tests/api/exported_symbols.txt (update it deliberately)"; exit 1
fi
echo "$(echo "$GOT" | wc -l) exported symbols, all les_*, match the list"
