#!/usr/bin/env bash
# Compares what two LES trees compute, for a change that must not alter
# behaviour (a refactoring). For every fixture model (synthetic/*.gguf,
# trained/tiny-*.gguf):
#   - `les run` greedy text (32 tokens, 2 threads), resident, and its streaming
#     statistics on demand in a 2 MiB budget (lru);
#   - scripts/behaviour_dump.c: the bytes of every logit row (one prompt batch
#     with all positions' logits, then 24 greedy steps) and the token ids,
#     resident and streamed within a 2 MiB expert budget: on demand (c = 0;
#     lru and lfu_aged) and lookahead c = k (lfu_aged), with the predictor's
#     recall and the streaming counters (reads, bytes, demand and prefetched
#     experts, hits, misses); LES_COMPARE_MORE=1 adds c = 2k (lru, 3 MiB) and
#     the library's default c;
#   - bench_stream's fixed-seed random feed (--feed random), on demand
#     (lfu_aged) and the lookahead rows, every figure but the timings;
# and, for each recorded routing trace (traces/*.route.csv), bench_trace's
# cache-only replay (hit rate and bytes per budget and eviction policy, with
# and without simulated lookahead hints), which is deterministic.
#
#   scripts/compare_behaviour.sh OLD_TREE NEW_TREE [OUT_DIR]
#
# Each tree needs build/tools/les, build/bench/bench_stream,
# build/bench/bench_trace and build/libles.so (cmake --build build --target
# les bench_stream bench_trace les_shared). Outputs: OUT_DIR/{old,new}/
# (default: a temp dir). The dump is compiled by $CC (default Debian's
# /usr/bin/gcc, never whichever `cc` is first on PATH).
#
# Strict checks (must be identical): texts, tokens, logits, recall, slots, the
# on-demand counters, the trace replays. With lookahead (c > 0) the counters
# depend on when reads complete (a prefetch still in flight is an in-flight
# hit, a late one a demand read), so they vary between two runs of one build:
# those files (*.timed.txt) are listed side by side, not judged. Exit status 1
# when a strict check differs.
set -euo pipefail

old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
out=${3:-$(mktemp -d)}
fixtures=${LES_FIXTURES_DIR:-/work/shared/fixtures}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/old" "$out/new"

models=()
for f in "$fixtures"/synthetic/*.gguf "$fixtures"/trained/tiny-*.gguf; do models+=("$f"); done

# name|options (behaviour_dump; bench_stream gets the same with k resolved).
configs=(
  "resident|"
  "ondemand-lru|--budget-mb 2 --prefetch-c 0 --eviction lru"
  "ondemand-lfu|--budget-mb 2 --prefetch-c 0 --eviction lfu_aged"
  "ck-lfu|--budget-mb 2 --prefetch-c k --eviction lfu_aged"
)
[ -n "${LES_COMPARE_MORE:-}" ] && configs+=(
  "c2k-lru|--budget-mb 3 --prefetch-c 2k --eviction lru"
  "default-lfu|--budget-mb 2 --prefetch-c -1 --eviction lfu_aged"
)

# bench_stream JSON -> "key value" lines without timings; the counters of a
# lookahead run go to $2 (timed), the rest to stdout.
bench_filter() {
  python3 -c '
import json, re, sys
try:
    j = json.load(sys.stdin)
except Exception as e:
    print("no json:", e); sys.exit(0)
timing = re.compile(r"(_s$|_s_per_token|tok_per_s|bandwidth|load_average|peak_rss|bound|fraction|share|_s_|switches)")
stable = re.compile(r"^(recall|n_|budget|prefetch_c$|prompt|decode_tokens|warmup|model|io_|eviction|feed|ready|contig|resident|threads|dense|touched|expert_bytes)")
timed = open(sys.argv[1], "w")
lookahead = j.get("prefetch_c", 0) > 0
for key in sorted(j):
    if timing.search(key):
        continue
    line = "%s %s" % (key, j[key])
    (timed if lookahead and not stable.search(key) else sys.stdout).write(line + "\n")' "$1"
}

run_tree() {  # tree side
  local tree=$1 side=$2 dir="$out/$2"
  local bin="$dir/behaviour_dump"
  local have_dump=1
  # A tree older than the C API's all-positions logits (les_context_decode_all_logits) or with the
  # streaming fields still in les_model_params cannot build the dump: its other checks still run.
  "${CC:-/usr/bin/gcc}" -O2 -std=c11 -I"$tree/include" "$here/behaviour_dump.c" -L"$tree/build" -lles \
     -Wl,-rpath,"$tree/build" -o "$bin" 2> /dev/null || { have_dump=0; echo "$side: no behaviour_dump for $tree"; }
  for m in "${models[@]}"; do
    local name k ev
    name=$(basename "$m" .gguf)
    "$tree/build/tools/les" run -m "$m" --temp 0 -n 32 -t 2 --ignore-eos -p "Once upon a time" \
        > "$dir/$name.run.txt" 2> /dev/null || echo "les run failed" >> "$dir/$name.run.txt"
    for ev in lru; do  # les run's own streaming statistics, on demand (timings dropped)
      "$tree/build/tools/les" run -m "$m" --temp 0 -n 32 -t 2 --ignore-eos -p "Once upon a time" \
          --budget-mb 2 --prefetch-c 0 --eviction $ev --stats 2>&1 > /dev/null |
        grep -E "bytes read|cache hits|layer|^les run: +[0-9]|resident" > "$dir/$name.run-ondemand-$ev.txt" || true
    done
    k=$("$tree/build/tools/les" run -m "$m" -n 1 --budget-mb 2 --stats 2>&1 | sed -n 's/.* \([0-9]*\)x\([0-9]*\) experts.*/\2/p' | head -1)
    for c in "${configs[@]}"; do
      [ "$have_dump" = 1 ] || break
      local cname=${c%%|*} opts=${c#*|} f
      f="$dir/$name.$cname"
      # shellcheck disable=SC2086
      "$bin" "$m" $opts > "$f.raw" 2>&1 || true
      if [ "$cname" = "${cname#ondemand}" ] && grep -q '^counters:' "$f.raw"; then
        grep -v '^counters:' "$f.raw" > "$f.dump.txt" || true
        grep '^counters:' "$f.raw" > "$f.dump.timed.txt"
      else
        cp "$f.raw" "$f.dump.txt"
      fi
      rm -f "$f.raw"
    done
    [ -n "$k" ] && [ "$k" -gt 0 ] || continue
    for c in "${configs[@]:2}"; do  # bench_stream: on-demand lfu_aged and the lookahead rows
      local cname=${c%%|*} opts=${c#*|}
      opts=${opts//--prefetch-c 2k/--prefetch-c $((2 * k))}
      opts=${opts//--prefetch-c k/--prefetch-c $k}
      opts=${opts//--prefetch-c -1/}
      # shellcheck disable=SC2086
      "$tree/build/bench/bench_stream" --model "$m" $opts --io pread --threads 2 --prompt 16 --warmup 4 \
          --tokens 24 --disk-probe-mib 1 --json 2> /dev/null |
        bench_filter "$dir/$name.$cname.bench_stream.timed.txt" > "$dir/$name.$cname.bench_stream.txt"
      [ -s "$dir/$name.$cname.bench_stream.timed.txt" ] || rm -f "$dir/$name.$cname.bench_stream.timed.txt"
    done
  done
  for t in "$fixtures"/traces/*.route.csv; do
    local tname
    tname=$(basename "$t" .route.csv)
    for hints in "" "--recall 0.886"; do
      # shellcheck disable=SC2086
      "$tree/build/bench/bench_trace" --trace "$t" --budgets-mb 500,1000,2000,4000,8000 \
          --policy lru --policy lfu_aged $hints --json > "$dir/$tname.trace${hints:+-hints}.txt" 2>&1 || true
    done
  done
}

run_tree "$old" old
run_tree "$new" new

same=0 total=0 differ=()
for f in "$out"/old/*.txt; do
  b=$(basename "$f")
  case "$b" in *.timed.txt) continue ;; esac
  total=$((total + 1))
  if cmp -s "$f" "$out/new/$b"; then same=$((same + 1)); else differ+=("$b"); fi
done
echo "outputs in $out"
echo "identical: $same of $total strict checks"
for d in "${differ[@]}"; do echo "DIFFERS: $d"; done
echo "timing-dependent lookahead counters (old | new), not judged:"
for f in "$out"/old/*.dump.timed.txt; do
  b=$(basename "$f" .dump.timed.txt)
  echo "  $b: $(sed 's/^counters: //' "$f") | $(sed 's/^counters: //' "$out/new/$b.dump.timed.txt" 2> /dev/null)"
done
[ "${#differ[@]}" -eq 0 ]
