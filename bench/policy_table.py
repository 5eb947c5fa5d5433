#!/usr/bin/env python3
"""Eviction-policy table on recorded routing traces (issue 15).

Runs bench_trace (cache-only mode) on every trace, at every budget, for every
LES eviction policy plus lru and the offline optimum, without hints and with
simulated lookahead hints of the given recalls, and writes
  OUT.json  {"machine", "traces": {name: {"no_hints": bench_trace JSON,
             "recall_R": ..., "prefetch_R": bench_trace JSON with --prefetch,
             "timing": bench_trace JSON with --timing}}}
  OUT.md    one markdown table per trace (hit rate %, rows = budgets,
            columns = policies, without / with hints), the default marked;
            then (unless --no-prefetch) the hints used as the engine uses
            them, read ahead through its prefetch gate: hit rate (cached or
            read ahead) and MiB read per decoded token (misses + prefetches)
            next to the optimum's demand-only MiB per token.
Cache-only replays are deterministic (fixed seed), so they need no quiet
machine; the --timing pass (policy cost per decoded token) does: run this
script under `flock -x /work/cpu.lock` when timing.

  bench/policy_table.py --bench build/bench/bench_trace \
      --traces ../shared/fixtures/traces/*.route.csv --out bench/results/policy_table-DATE-MACHINE
"""
import argparse
import gzip
import json
import os
import platform
import subprocess
import sys
import tempfile


def run(bench, args):
    out = subprocess.run([bench] + args + ["--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def trace_shape(path):
    """(n_layer, n_expert, total expert bytes) from a trace's header lines."""
    n_layer = n_expert = 0
    total = 0
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            if not line.startswith("#"):
                break
            kv = dict(x.split("=", 1) for x in line[1:].split() if "=" in x)
            if "n_layer" in kv:
                n_layer, n_expert = int(kv["n_layer"]), int(kv["n_expert"])
            elif "expert_bytes" in kv:
                total += int(kv["expert_bytes"]) * n_expert
    return n_layer, n_expert, total


def plain(path, tmp):
    """A path bench_trace can read: .gz traces are decompressed into tmp."""
    if not path.endswith(".gz"):
        return path
    out = os.path.join(tmp, os.path.basename(path)[:-3])
    with gzip.open(path, "rb") as f, open(out, "wb") as g:
        g.write(f.read())
    return out


def below(entry_results, default):
    """Budgets where the default policy's hit rate is below lru's, with the gap in points."""
    hit = {(r["budget_mb"], r["policy"]): r["hit_rate"] for r in entry_results}
    out = []
    for (b, p), h in sorted(hit.items()):
        if p == default and h < hit[(b, "lru")]:
            out.append("%g MiB: %.2f" % (b, 100 * (h - hit[(b, "lru")])))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--traces", nargs="+", required=True)
    ap.add_argument("--budgets-mb", default="500,1000,1500,2000,3000,4000,6000,8000")
    ap.add_argument("--recall", type=float, action="append", default=None)
    ap.add_argument("--timing", type=int, default=0, help="replays per cell for ns/token (0 = skip)")
    ap.add_argument("--no-prefetch", action="store_true", help="skip the read-ahead (--prefetch) tables")
    ap.add_argument("--no-hints", action="store_true", help="only the replays without hints (implies --no-prefetch)")
    ap.add_argument("--small-budgets-frac", default="0.08,0.12,0.16,0.25,0.35,0.5,0.7",
                    help="for a trace whose experts total less than the largest budget (the trained fixture): "
                         "budgets as these fractions of its expert bytes")
    ap.add_argument("--out", required=True, help="output path without extension")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    recalls = [] if a.no_hints else (a.recall or [0.886])
    a.no_prefetch = a.no_prefetch or a.no_hints
    summary = ["## Default against lru", "",
               "Budgets where the default policy's hit rate is below lru's (points); `none` = never below.", "",
               "| trace | without hints |" + "".join(" hints r=%g |" % r for r in recalls),
               "|---|---|" + "---|" * len(recalls)]
    doc = {"machine": {"node": platform.node(), "cpu": platform.processor() or platform.machine(),
                       "cores": os.cpu_count()},
           "method": "bench_trace cache-only replay (src/trace/cache_replay.h accounting); hints simulated",
           "budgets_mb": a.budgets_mb, "traces": {}}
    md = ["# Eviction policies on recorded routing traces", "",
          "Decode hit rate (%) of LES's expert cache replaying each trace (bench_trace, cache only: one lookup "
          "per distinct expert of a (token, layer), prefill warms, decode counted, budget = bytes of expert "
          "data). `optimal` = Belady on the same cache. `+hints r` = simulated lookahead hints of recall r "
          "(they inform eviction only). * = the default policy of `les run`.", ""]
    for src in a.traces:
        name = os.path.basename(src).replace(".gz", "").replace(".route.csv", "")
        path = plain(src, tmp)
        budgets_mb = a.budgets_mb
        _, _, total = trace_shape(src)
        scaled = total < max(float(x) for x in a.budgets_mb.split(",")) * 2**20
        if scaled:
            budgets_mb = ",".join("%.3f" % (float(f) * total / 2**20) for f in a.small_budgets_frac.split(","))
        entry = {"no_hints": run(a.bench, ["--trace", path, "--budgets-mb", budgets_mb])}
        for r in recalls:
            entry["recall_%g" % r] = run(a.bench, ["--trace", path, "--budgets-mb", budgets_mb, "--recall", str(r)])
        if not a.no_prefetch:
            for r in recalls:
                entry["prefetch_%g" % r] = run(a.bench, ["--trace", path, "--budgets-mb", budgets_mb, "--recall", str(r),
                                                         "--prefetch"])
        if a.timing > 0:
            entry["timing"] = run(a.bench, ["--trace", path, "--budgets-mb", budgets_mb, "--timing", str(a.timing)])
        doc["traces"][name] = entry
        base = entry["no_hints"]
        policies = []
        for r in base["results"]:
            if r["policy"] not in policies:
                policies.append(r["policy"])
        default = next((r["policy"] for r in base["results"] if r["default"]), None)
        cols = [(p, "no_hints") for p in policies]
        cols += [(p, "recall_%g" % r) for r in recalls for p in policies if p not in ("lru", "layer_lfu", "optimal")]
        head = ["budget MiB"] + [(p + ("*" if p == default else "")) + ("" if k == "no_hints" else " +hints r=" + k[7:])
                                 for p, k in cols]
        dflt = next((r["policy"] for r in base["results"] if r["default"]), None)
        summary.append("| %s | %s |" % (name, ", ".join(below(base["results"], dflt)) or "none") +
                       "".join(" %s |" % (", ".join(below(entry["recall_%g" % r]["results"], dflt)) or "none")
                               for r in recalls))
        md += ["## %s (%s, %d layers, %d experts, top-%d, %d decode tokens; one token's experts %.2f MiB; "
               "experts in all %.1f MiB%s)" %
               (name, base["arch"], base["n_layer"], base["n_expert"], base["n_expert_used"], base["decode_tokens"],
                base["one_token_bytes"] / 2**20, total / 2**20,
                ("; budgets = %s of that" % a.small_budgets_frac) if scaled else ""), "",
               "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        budgets = sorted({r["budget_mb"] for r in base["results"]})
        for b in budgets:
            row = ["%.4g" % b]
            for p, k in cols:
                hit = next(r["hit_rate"] for r in entry[k]["results"] if r["budget_mb"] == b and r["policy"] == p)
                row.append("%.1f" % (100 * hit))
            md.append("| " + " | ".join(row) + " |")
        if not a.no_prefetch:
            ntok = base["decode_tokens"]
            opt_bytes = {r["budget_mb"]: r["bytes_read"] for r in base["results"] if r["policy"] == "optimal"}
            pols = [p for p in policies if p not in ("optimal", "layer_lfu")]
            for r in recalls:
                pf = entry["prefetch_%g" % r]["results"]
                md += ["", "Hints of recall %g read ahead as the engine does (prefetch gate %g): hit rate %% (cached or "
                       "read ahead, so not a demand-paging rate) / MiB read per decoded token (misses + prefetches); "
                       "`optimal` = Belady without prefetch, MiB per token of its misses:" %
                       (r, entry["prefetch_%g" % r].get("prefetch_gate", 0.5)), "",
                       "| budget MiB | " + " | ".join(p + ("*" if p == default else "") for p in pols) +
                       " | optimal MiB/token |", "|" + "---|" * (len(pols) + 2)]
                for b in budgets:
                    cells = []
                    for p in pols:
                        x = next(x for x in pf if x["budget_mb"] == b and x["policy"] == p)
                        cells.append("%.1f / %.1f" % (100 * x["hit_rate"], x["bytes_read"] / ntok / 2**20))
                    md.append("| %g | " % b + " | ".join(cells) + " | %.1f |" % (opt_bytes[b] / ntok / 2**20))
        if a.timing > 0:
            md += ["", "Policy + cache bookkeeping cost, ns per decoded token (median of %d replays):" % a.timing, "",
                   "| budget MiB | " + " | ".join(policies) + " |", "|" + "---|" * (len(policies) + 1)]
            t = {(x["budget_mb"], x["policy"]): x["ns_per_token"] for x in entry["timing"]["timing"]}
            for b in budgets:
                md.append("| %g | " % b + " | ".join("%.0f" % t[(b, p)] for p in policies) + " |")
        md.append("")
    md += [""] + summary + [""]
    with open(a.out + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(md))
    print("wrote %s.json and %s.md" % (a.out, a.out))


if __name__ == "__main__":
    sys.exit(main())
