#!/usr/bin/env python3
"""Speculative-decoding table on the trained fixture (issue 13, "Measured").

Target: trained/tiny-qwen3moe-F16.gguf, resident and streamed at a budget of a
quarter of its routed experts (MiB from `les inspect`). Drafters: none (plain
decoding, the baseline), prompt lookup (`--lookup`), and the file's Q4_K_M and
mixed (experts Q3_K, imatrix) copies as draft models (`--draft`). Prompts: a
repetitive one (a passage quoted back, where lookup can copy) and a plain one.
Every cell is `les run --temp 0 --ignore-eos -n N -t T --json` in a fresh
process; rounds run every cell once in order (interleaved), each round in its
own exclusive hold of /work/cpu.lock (`flock -x`, well under 10 minutes), and
the table gives medians over rounds, the plain run's spread (max - min over
median) as the noise floor, and whether the text equals the plain run's.

  bench/spec_table.py --les build/tools/les --fixtures /work/shared/fixtures \
      --rounds 5 --out bench/results/spec_table-DATE-MACHINE

writes OUT.json (every run's les run --json object, by cell) and OUT.md.
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys

_A = "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife."
# The passage, then the passage quoted back (tools/les/README.md's example).
REPETITIVE = (_A + " However little known the feelings or views of such a man may be on his first entering a "
              "neighbourhood, this truth is so well fixed in the minds of the surrounding families, that he is "
              "considered the rightful property of some one or other of their daughters. " + _A +
              " However little known the feelings")
PLAIN = "The old castle stood upon a rock above the river, and in the evening the"

DRAFTERS = {
    "plain": [],
    "lookup": ["--lookup"],
    "draft Q4_K_M": ["--draft", "{fix}/trained/tiny-qwen3moe-Q4_K_M.gguf"],
    "draft mixed Q3_K": ["--draft", "{fix}/trained/tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf"],
}
# (prompt name, drafters measured on it)
PROMPTS = [("repetitive", REPETITIVE, ["plain", "lookup", "draft Q4_K_M", "draft mixed Q3_K"]),
           ("plain", PLAIN, ["plain", "lookup", "draft Q4_K_M", "draft mixed Q3_K"])]


def quarter_budget_mib(les, model):
    out = subprocess.run([les, "inspect", model], check=True, capture_output=True, text=True).stdout
    m = re.search(r"routed experts\s+([0-9.]+) MiB", out)
    if not m:
        sys.exit("spec_table: no 'routed experts' line in les inspect " + model)
    return float(m.group(1)) / 4.0


def cells(a, budget):
    out = []
    for mode, extra in (("resident", []), ("streamed", ["--budget-mb", "%.3f" % budget])):
        for pname, prompt, drafters in PROMPTS:
            for d in drafters:
                args = ["run", "-m", a.fixtures + "/trained/tiny-qwen3moe-F16.gguf", "-p", prompt, "--temp", "0",
                        "--ignore-eos", "-n", str(a.n), "-t", str(a.threads), "--json", "--stats"] + extra
                args += [x.format(fix=a.fixtures) for x in DRAFTERS[d]]
                out.append({"mode": mode, "prompt": pname, "drafter": d, "args": args})
    return out


def one_round(a):
    """Runs every cell once (called under flock -x); prints one JSON list."""
    budget = float(a.budget_mib)
    res = []
    for c in cells(a, budget):
        p = subprocess.run([a.les] + c["args"], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit("spec_table: les %s failed (%d): %s" % (" ".join(c["args"][:8]), p.returncode, p.stderr[-2000:]))
        res.append({"mode": c["mode"], "prompt": c["prompt"], "drafter": c["drafter"], "run": json.loads(p.stdout)})
    print(json.dumps(res))


def median(xs):
    return statistics.median(xs) if xs else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--les", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lock", default="/work/cpu.lock")
    ap.add_argument("--out", help="output path without extension")
    ap.add_argument("--one-round", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--budget-mib", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one_round:
        one_round(a)
        return
    if not a.out:
        sys.exit("spec_table: --out is required")
    budget = quarter_budget_mib(a.les, a.fixtures + "/trained/tiny-qwen3moe-F16.gguf")
    runs = {}
    for r in range(a.rounds):
        # cpulock -x (where installed) is writer-preferring: no new build starts while a round waits.
        hold = ["cpulock", "-x"] if shutil.which("cpulock") else ["flock", "-x", a.lock]
        cmd = hold + [sys.executable, os.path.abspath(__file__), "--one-round", "--les", a.les,
               "--fixtures", a.fixtures, "-n", str(a.n), "--threads", str(a.threads), "--budget-mib", str(budget)]
        p = subprocess.run(cmd, check=True, capture_output=True, text=True)
        for x in json.loads(p.stdout):
            runs.setdefault((x["mode"], x["prompt"], x["drafter"]), []).append(x["run"])
        print("round %d of %d done" % (r + 1, a.rounds), file=sys.stderr)

    rows = []
    for (mode, prompt, drafter), rs in runs.items():
        base = runs[(mode, prompt, "plain")]
        base_tps = [b["decode_tok_per_s"] for b in base]
        tps = [x["decode_tok_per_s"] for x in rs]
        spec = [x["speculative"] for x in rs if x.get("speculative")]
        row = {"mode": mode, "prompt": prompt, "drafter": drafter, "decode_tok_per_s": tps,
               "median_tok_per_s": median(tps), "plain_median_tok_per_s": median(base_tps),
               "plain_spread": (max(base_tps) - min(base_tps)) / median(base_tps) if base_tps else 0.0,
               "ratio": median(tps) / median(base_tps) if median(base_tps) > 0 else 0.0,
               "same_text": all(x["text"] == base[0]["text"] for x in rs)}
        if spec:
            s = spec[0]  # greedy and deterministic drafters: every round drafts the same
            row.update({"acceptance": s["acceptance"], "tokens_per_target_pass": s["tokens_per_target_pass"],
                        "verified": s["verified"], "accepted": s["accepted"], "target_passes": s["target_passes"],
                        "verify_passes": s["verify_passes"],
                        "union_bytes_per_token": s["union_bytes_per_token"],
                        "read_bytes_per_token": s["read_bytes_per_token"],
                        "draft_ms_median": median([x["speculative"]["draft_ms"] for x in rs])})
        rows.append(row)

    machine = {"platform": platform.platform(), "processor": platform.processor(), "threads": a.threads,
               "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
                           "?")}
    doc = {"machine": machine, "n_predict": a.n, "rounds": a.rounds, "quarter_budget_mib": budget, "rows": rows,
           "runs": {"|".join(k): v for k, v in runs.items()}}
    with open(a.out + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    lines = ["# Speculative decoding on the trained fixture (F16 target)", "",
             "%s, %d threads; `les run --temp 0 --ignore-eos -n %d`; median of %d interleaved rounds, each in one "
             "exclusive hold of the CPU lock. Streamed: `--budget-mb %.2f` (a quarter of the routed experts). "
             "Spread = (max - min) / median of the plain runs." % (machine["cpu"], a.threads, a.n, a.rounds, budget),
             "", "| mode | prompt | drafter | acceptance | tokens / target pass | verify passes / target passes | "
             "decode tok/s (median) | plain tok/s | ratio | plain spread | same text | union KiB / token | read KiB / token |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["drafter"] == "plain":
            lines.append("| %s | %s | plain | - | 1.00 | - | %.1f | %.1f | 1.000 | %.1f%% | yes | - | - |" % (
                r["mode"], r["prompt"], r["median_tok_per_s"], r["plain_median_tok_per_s"], 100 * r["plain_spread"]))
            continue
        lines.append("| %s | %s | %s | %.1f%% | %.2f | %d / %d | %.1f | %.1f | %.3f | %.1f%% | %s | %.1f | %.1f |" % (
            r["mode"], r["prompt"], r["drafter"], 100 * r.get("acceptance", 0), r.get("tokens_per_target_pass", 0),
            r.get("verify_passes", 0), r.get("target_passes", 0), r["median_tok_per_s"], r["plain_median_tok_per_s"],
            r["ratio"], 100 * r["plain_spread"], "yes" if r["same_text"] else "NO",
            r.get("union_bytes_per_token", 0) / 1024, r.get("read_bytes_per_token", 0) / 1024))
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
