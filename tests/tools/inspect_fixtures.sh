#!/bin/sh
# CTest driver for `les inspect` (see tests/CMakeExtra.cmake).
#   inspect_fixtures.sh all       LES FIXTURES_DIR WORK_DIR  -> every GGUF under trained/, synthetic/,
#                                                                tokenizer/ must inspect with exit 0
#   inspect_fixtures.sh truncated LES FIXTURES_DIR WORK_DIR  -> truncated copies of a model must exit
#                                                                non-zero with a reader message on stderr
# A missing fixtures dir exits 77 (CTest "skipped"), or 1 when CI=true.
set -u
mode=$1 les=$2 dir=$3 work=$4

if [ ! -d "$dir" ]; then
  if [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; then
    echo "FAIL: fixtures dir $dir is missing [CI=true: missing fixtures are a failure]"
    exit 1
  fi
  echo "SKIPPED: fixtures dir $dir is missing (set -DLES_FIXTURES_DIR)"
  exit 77
fi

fail() { echo "FAIL: $*"; exit 1; }

case "$mode" in
  all)
    n=0
    for f in "$dir"/trained/*.gguf "$dir"/synthetic/*.gguf "$dir"/tokenizer/*.gguf; do
      [ -f "$f" ] || continue
      out=$("$les" inspect "$f" 2>&1) || fail "les inspect $f exited non-zero: $out"
      printf '%s\n' "$out" | grep -q '^GGUF version:  [23]$' || fail "no 'GGUF version' line for $f"
      printf '%s\n' "$out" | grep -q '^  routed experts' || fail "no totals for $f"
      case "$f" in
        *qwen35moe*)  # hybrid: only every 4th layer has attention and a KV cache
          printf '%s\n' "$out" | grep -q '^  KV cache per 1k tokens .*; 1 of 4 layers use attention$' ||
            fail "KV cache line of $f does not count only its attention layers" ;;
      esac
      if printf '%s\n' "$out" | grep -q '^  one token.s experts'; then
        printf '%s\n' "$out" | grep -q "^  one token.s experts .*; as --budget-mb [0-9.]* MiB" ||
          fail "no --budget-mb figure on the one-token line of $f"
      fi
      n=$((n + 1))
    done
    [ "$n" -gt 0 ] || fail "no GGUF files under $dir"
    echo "les inspect: $n fixture files OK"
    ;;
  truncated)
    src="$dir/trained/tiny-qwen3moe-Q4_K_M.gguf"
    [ -f "$src" ] || fail "missing $src"
    mkdir -p "$work"
    size=$(wc -c < "$src")
    # Inside the header, the counts, the tokenizer metadata, the tensor data (half), the last byte.
    for cut in 0 3 20 1000 100000 $((size / 2)) $((size - 1)); do
      t="$work/truncated-$cut.gguf"
      head -c "$cut" "$src" > "$t"
      if "$les" inspect "$t" > "$work/out" 2> "$work/err"; then fail "les inspect accepted $t"; fi
      grep -q "les inspect: format error: " "$work/err" || fail "no reader message for $t: $(cat "$work/err")"
      echo "cut at $cut: $(cat "$work/err")"
    done
    ;;
  *) fail "unknown mode $mode" ;;
esac
exit 0
