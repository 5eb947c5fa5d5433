#!/usr/bin/env python3
"""Records long routing traces of the trained fixture on the corpus's validation text (issue 32).

The trained fixture (../shared/fixtures/trained, qwen3moe, 8 layers, 32 experts, top-4) was
trained with a 256-token context, so one long generation would leave the distribution it
learned. Instead, each turn is one `les run --route-trace` (real learned routing, LES's own
forward pass): the prompt is a passage of validation.txt (whole words, about --prompt-chars
characters, starting at successive paragraphs), then --gen tokens are sampled (temperature 0.8,
the run's seed = --seed + turn, --ignore-eos, n_ctx 256). The turns are concatenated into one
route_trace v1 file (turn column = the run's index), until --decode-tokens decode tokens are
recorded. A cache replay keeps its cache across turns, as a server running one model would.

  bench/record_route_traces.py --les build/tools/les --model F16.gguf --start-paragraph 0 \
      --out bench/traces/trained-f16.route.csv [--decode-tokens 16000]

Deterministic for a given binary, model and arguments (the seeds are fixed). Writes OUT and
prints one line per 20 turns. Exit 1 when a run fails (its stderr is shown).
"""
import argparse
import gzip
import os
import subprocess
import sys
import tempfile

FIX = os.environ.get("LES_FIXTURES_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "fixtures"))


def passages(text, start, prompt_chars):
    paras = [p for p in text.split("\n") if len(p.split()) >= 8]
    i = start
    while True:
        words, n = [], 0
        j = i % len(paras)
        while n < prompt_chars:
            for w in paras[j].split():
                if n >= prompt_chars:
                    break
                words.append(w)
                n += len(w) + 1
            j = (j + 1) % len(paras)
        yield " ".join(words)
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--les", required=True)
    ap.add_argument("--model", default=os.path.join(FIX, "trained", "tiny-qwen3moe-F16.gguf"))
    ap.add_argument("--corpus", default=os.path.join(FIX, "corpus", "validation.txt"))
    ap.add_argument("--start-paragraph", type=int, default=0)
    ap.add_argument("--prompt-chars", type=int, default=300)
    ap.add_argument("--gen", type=int, default=180)
    ap.add_argument("--decode-tokens", type=int, default=16000)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--out", required=True, help="output file (.gz: gzip-compressed)")
    a = ap.parse_args()
    text = open(a.corpus, encoding="utf-8").read()
    header, rows, decode, turn = None, [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        tpath = os.path.join(tmp, "turn.route.csv")
        for prompt in passages(text, a.start_paragraph, a.prompt_chars):
            if decode >= a.decode_tokens:
                break
            cmd = [a.les, "run", "-m", a.model, "-f", "-", "-n", str(a.gen), "--ignore-eos", "--ctx", "256",
                   "--seed", str(a.seed + turn), "--route-trace", tpath, "-t", "1"]
            r = subprocess.run(cmd, input=prompt, capture_output=True, text=True)
            if r.returncode != 0:
                sys.stderr.write(r.stderr)
                sys.exit(1)
            lines = open(tpath).read().splitlines()
            cut = lines.index("turn,phase,step,layer,slot,expert,weight,residency,expert_bytes")
            if header is None:
                header = lines[: cut + 1]
            steps, prefill, dec = set(), [], []
            for line in lines[cut + 1:]:
                f = line.split(",")
                f[0] = str(turn)
                (prefill if f[1] == "0" else dec).append(f)
                if f[1] == "1":
                    steps.add(f[2])
            # The prompt layer-major, as a batched prefill routes it (les run writes it so too).
            prefill.sort(key=lambda f: (int(f[3]), int(f[2]), int(f[4])))
            rows.extend(",".join(f) for f in prefill + dec)
            decode += len(steps)
            turn += 1
            if turn % 20 == 0:
                print("turn %d: %d decode tokens" % (turn, decode), flush=True)
    header.insert(2, "# recorded by bench/record_route_traces.py: %d turns, %d decode tokens, model %s, "
                     "validation paragraphs from %d, prompt ~%d chars, %d generated per turn, seeds %d.." %
                  (turn, decode, os.path.basename(a.model), a.start_paragraph, a.prompt_chars, a.gen, a.seed))
    data = "\n".join(header + rows) + "\n"
    opener = gzip.open if a.out.endswith(".gz") else open
    with opener(a.out, "wt") as f:
        f.write(data)
    print("%s: %d turns, %d decode tokens" % (a.out, turn, decode))


if __name__ == "__main__":
    main()
