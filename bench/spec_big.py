#!/usr/bin/env python3
"""Speculative decoding on a large streamed model (issue 13, "Measured": the
Qwen3-30B-A3B-shaped synthetic model under a 4 GiB expert budget with prompt
lookup): plain vs `--lookup`, the union bytes per verify pass.

Every run is `les run -m MODEL --budget-mb B -p PROMPT --temp 0 --ignore-eos
-n N -t T --json --stats [--lookup]` in a fresh process and its own exclusive
hold of the CPU lock (`flock -x`, one run well under 10 minutes); plain and
lookup alternate for --rounds rounds, and the table gives medians, the plain
runs' spread and whether the texts are equal. The prompt is spec_table.py's
repetitive one (a passage quoted back).

  bench/spec_big.py --les build/tools/les --model /work/models/qwen3-30b-a3b.gguf \\
      --budget-mb 4096 -n 24 --rounds 3 --out bench/results/spec_big-DATE-MACHINE

writes OUT.json (every run's les run --json object) and OUT.md.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spec_table import REPETITIVE  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--les", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--budget-mb", type=float, default=4096)
    ap.add_argument("-n", type=int, default=24)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lock", default="/work/cpu.lock")
    ap.add_argument("--out", required=True, help="output path without extension")
    a = ap.parse_args()
    runs = {"plain": [], "lookup": []}
    for r in range(a.rounds):
        for name, extra in (("plain", []), ("lookup", ["--lookup"])):
            # cpulock -x (where installed) is writer-preferring: no new build starts while a run waits.
            hold = ["cpulock", "-x"] if shutil.which("cpulock") else ["flock", "-x", a.lock]
            cmd = hold + [a.les, "run", "-m", a.model, "--budget-mb", str(a.budget_mb), "-p",
                   REPETITIVE, "--temp", "0", "--ignore-eos", "-n", str(a.n), "-t", str(a.threads), "--json",
                   "--stats"] + extra
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("spec_big: %s failed (%d): %s" % (name, p.returncode, p.stderr[-2000:]))
            runs[name].append(json.loads(p.stdout))
            print("round %d %s: %.3f tok/s" % (r + 1, name, runs[name][-1]["decode_tok_per_s"]), file=sys.stderr)
    plain = [x["decode_tok_per_s"] for x in runs["plain"]]
    look = [x["decode_tok_per_s"] for x in runs["lookup"]]
    s = runs["lookup"][0]["speculative"]
    mib = 1024.0 * 1024.0
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    row = {"plain_tok_per_s": plain, "lookup_tok_per_s": look, "plain_median": statistics.median(plain),
           "lookup_median": statistics.median(look), "ratio": statistics.median(look) / statistics.median(plain),
           "plain_spread": (max(plain) - min(plain)) / statistics.median(plain),
           "same_text": all(x["text"] == runs["plain"][0]["text"] for x in runs["plain"] + runs["lookup"]),
           "speculative": s}
    doc = {"machine": {"cpu": cpu, "platform": platform.platform(), "threads": a.threads}, "model": a.model,
           "budget_mb": a.budget_mb, "n_predict": a.n, "rounds": a.rounds, "summary": row, "runs": runs}
    with open(a.out + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    union_per_pass = s["union_bytes"] / mib / max(s["target_passes"], 1)
    lines = ["# Speculative decoding on %s, experts streamed in %.0f MiB" % (os.path.basename(a.model), a.budget_mb), "",
             "%s, %d threads; `les run --temp 0 --ignore-eos -n %d` on spec_table.py's repetitive prompt; median of %d "
             "alternating runs, each in its own exclusive hold of the CPU lock." % (cpu, a.threads, a.n, a.rounds), "",
             "| drafter | decode tok/s (median) | runs | ratio to plain | plain spread | same text | acceptance | "
             "verify passes / target passes | tokens / target pass | union MiB / target pass | read MiB / token |",
             "|---|---|---|---|---|---|---|---|---|---|---|",
             "| plain | %.3f | %s | 1.000 | %.1f%% | yes | - | - | 1.00 | - | - |" % (
                 row["plain_median"], ", ".join("%.3f" % x for x in plain), 100 * row["plain_spread"]),
             "| lookup | %.3f | %s | %.3f | %.1f%% | %s | %.1f%% | %d / %d | %.2f | %.1f | %.1f |" % (
                 row["lookup_median"], ", ".join("%.3f" % x for x in look), row["ratio"], 100 * row["plain_spread"],
                 "yes" if row["same_text"] else "NO", 100 * s["acceptance"], s["verify_passes"], s["target_passes"],
                 s["tokens_per_target_pass"], union_per_pass, s["read_bytes_per_token"] / mib)]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
