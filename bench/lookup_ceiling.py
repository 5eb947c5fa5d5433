#!/usr/bin/env python3
"""Ceiling of prompt-lookup speculative decoding on one greedy run (issue 13).

Replays the prompt lookup drafter (src/core/speculative/prompt_lookup.cpp: the
longest of the last ngram_max..1 tokens, its most recent earlier occurrence,
what followed copied LZ77-style) over a finished plain greedy run, whose
output is exactly what every lossless speculative run must produce, and
counts target passes:
  forced D    every pass verifies min(D, tokens left) drafts; a pass emits its
              accepted prefix plus the target's own token;
  oracle      every pass verifies exactly the drafts that will be accepted
              (a perfect draft-length chooser: no rejected row is ever paid).
With a verify-pass cost T(n rows) = c0 + c1 * n (bench_verify), the run's
forward time is sum over passes of T(rows), plain = n_tokens * T(1), so the
oracle's ratio is an upper bound for any draft-length policy with this drafter.

  les tokenize --ids MODEL "PROMPT" > p.ids
  les run -m MODEL -p "PROMPT" --temp 0 --ignore-eos -n 128 > out.txt
  les tokenize --ids --no-special -f out.txt MODEL > o.ids
  bench/lookup_ceiling.py p.ids o.ids --c0 0.335 --c1 0.424

Re-tokenising the output text can differ from the generated ids at a few
places; the counts are then approximate (say so with the numbers).
"""
import argparse


def lookup(h, max_tokens, ngram_max):
    """The drafter's proposal after history h (prompt_lookup.cpp's rule)."""
    n_len = len(h)
    for n in range(min(ngram_max, n_len - 1), 0, -1):
        suffix = h[n_len - n:]
        for j in range(n_len - n - 1, -1, -1):
            if h[j:j + n] == suffix:
                d = []
                for i in range(max_tokens):
                    src = j + n + i
                    d.append(h[src] if src < n_len else d[src - n_len])
                return d
    return []


def replay(prompt, out, d_max, ngram_max, oracle):
    """(passes, rows, verified, accepted) to produce `out` after `prompt`."""
    h = prompt + out[:1]  # the first token comes from the prefill
    i, passes, rows, verified, accepted = 1, 0, 0, 0, 0
    while i < len(out):
        d = lookup(h, min(d_max, len(out) - i), ngram_max)
        k = 0
        while k < len(d) and d[k] == out[i + k]:
            k += 1
        n_ver = k if oracle else len(d)
        passes += 1
        rows += n_ver + 1
        verified += n_ver
        accepted += k
        h += out[i:i + k + 1]
        i += k + 1
    return passes, rows, verified, accepted


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prompt_ids")
    ap.add_argument("output_ids")
    ap.add_argument("--ngram", type=int, default=3, help="les run --lookup N (default 3)")
    ap.add_argument("--c0", type=float, default=0.0, help="fixed ms of a verify pass")
    ap.add_argument("--c1", type=float, default=1.0, help="ms per row of a verify pass")
    a = ap.parse_args()
    prompt = [int(x) for x in open(a.prompt_ids).read().split()]
    out = [int(x) for x in open(a.output_ids).read().split()]
    n = len(out) - 1  # tokens that need a target pass
    plain_ms = n * (a.c0 + a.c1)
    print("| drafts per pass | target passes | tokens / pass | acceptance | rows | forward ms | ratio to plain |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, d_max, oracle in [("forced %d" % d, d, False) for d in (1, 2, 3, 4, 6, 8, 16)] + [
            ("oracle (max 16)", 16, True)]:
        passes, rows, ver, acc = replay(prompt, out, d_max, a.ngram, oracle)
        ms = passes * a.c0 + rows * a.c1
        print("| %s | %d | %.2f | %.2f | %d | %.1f | %.2f |" %
              (label, passes, n / passes, acc / ver if ver else 0.0, rows, ms, plain_ms / ms))
    print("plain: %d passes, %.1f ms" % (n, plain_ms))


if __name__ == "__main__":
    main()
