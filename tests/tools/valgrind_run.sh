#!/bin/sh
# CTest driver (tests/CMakeExtra.cmake): a short greedy `les run` on the trained
# Q4_K_M fixture under valgrind's memcheck must report no errors at all (no use
# of uninitialised values, no invalid access, no leak). valgrind emulates a CPU
# without AVX-512, so the AVX2 tier runs where the CPU has it.
#   valgrind_run.sh VALGRIND LES FIXTURES_DIR
# A missing fixtures dir or valgrind exits 77 (CTest "skipped"), or 1 when CI=true.
set -u
valgrind=$1 les=$2 dir=$3
model="$dir/trained/tiny-qwen3moe-Q4_K_M.gguf"

skip() {
  if [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; then
    echo "FAIL: $* [CI=true: a missing prerequisite is a failure]"
    exit 1
  fi
  echo "SKIPPED: $*"
  exit 77
}
[ -x "$valgrind" ] || skip "valgrind not found (scripts/setup.sh installs it)"
[ -f "$model" ] || skip "fixture $model is missing (set -DLES_FIXTURES_DIR)"

# 11 prompt tokens then 4 decode steps: every attention row has n_kv % 16 != 0,
# the masked-lane path of the softmax.
"$valgrind" --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
  "$les" run -m "$model" --temp 0 -n 4 -t 1 -p "CHAPTER XII. In the year 1794," 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then echo "FAIL: exit code $rc (99 = memcheck reported errors)"; exit 1; fi
exit 0
