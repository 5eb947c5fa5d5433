#!/usr/bin/python3
"""Expert-streaming ablation at real scale: decode tok/s of a large MoE GGUF
under several expert-cache budgets, adding one LES technique per row:

  on-demand        plain GGUF (3 reads per expert), no lookahead, compute after
                   the whole layer's reads are in
  + lookahead c=k  the next layer's router on this layer's input, top-k prefetch
  + lookahead c=2k the same with 2k candidates
  + contiguous     `les repack` file: one 4 KiB-aligned read per expert
                   (c = the better of the two lookahead rows at that budget)
  + ready-first    each expert computed as soon as its bytes arrive

Each row is one fresh `bench_stream` process (bench/bench_stream.cpp) started
with the page cache dropped (when root) and expert reads in O_DIRECT, inside a
memory cgroup (v1 or v2, when root) whose limit is the expert budget + the
model's dense bytes + --slack-mib. A `--resident` run first (whole file in the
page cache, no limit) measures the compute time per token C; every streaming
row's bound is max(missed-expert bytes / disk bandwidth, touched bytes /
memory bandwidth, C), with both bandwidths measured inside that row's process.

Target check (issue 5): with C and I the compute time and the read-wait time
per token of the on-demand run (which never overlaps the two), every later
row's gain t(on-demand)/t(row) - 1 is compared with the ideal overlap gain
(C + I) / max(C, I) - 1 (the I/O time from bytes / probed disk bandwidth is
reported beside it).

A row "LES, whole process under a T GiB cgroup" (expert budget = T - dense -
slack) sits next to llama.cpp running the plain file through mmap under the
same cgroup when --llama-bench gives the path of a llama.cpp `llama-bench`
binary; without it that row is skipped and said so.

--rows picks the configurations (default: the five above); "default" is
`les run --budget-mb` as it ships on the plain file: the default c (k + 2)
and ready-first. Long series
split into short runs: each run can take its resident figures from an earlier
output (--resident-from) and measure one repetition (--repeats 1); --merge then
combines such outputs (every run of a row kept, the median reported) into one
JSON, table and plot without measuring anything.

Writes JSON (--out) and a PNG plot of tok/s against budget (--plot; needs
Debian's python3-matplotlib). It measures and prints; it asserts nothing.

  sudo bench/stream_ablation.py --build build \\
      --model /big/qwen3-30b-a3b-synth-Q3_K.gguf \\
      --contiguous /big/qwen3-30b-a3b-synth-Q3_K.contiguous.gguf \\
      --budgets-gib 2,4,8 --out bench/results/stream_ablation.json --plot bench/results/stream_ablation.png
  # three rows, one repetition per run, then merged:
  sudo bench/stream_ablation.py --model M.gguf --rows on-demand,c=k,default --repeats 1 --total-limit-gib 0 \\
      --out r1.json
  sudo bench/stream_ablation.py --model M.gguf --rows on-demand,c=k,default --repeats 1 --total-limit-gib 0 \\
      --resident-from r1.json --out r2.json
  bench/stream_ablation.py --merge r1.json r2.json --out merged.json --plot merged.png
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

GIB = 1024 ** 3
MIB = 1024 ** 2


def drop_caches():
    """Drops the page cache (root only). Returns whether it happened."""
    try:
        subprocess.run(["sync"], check=True)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def run_measured(full, cg, what):
    """Runs argv `full` (a bench printing one JSON object); returns (that object, wall seconds, the cgroup's
    peak bytes or None) and closes `cg`; exits naming `what` when the bench fails."""
    t0 = time.time()
    p = subprocess.run(full, capture_output=True, text=True)
    wall = time.time() - t0
    peak = cg.peak_bytes() if cg else None
    if cg:
        cg.close()
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
        raise SystemExit(f"{what} failed")
    return json.loads(p.stdout), wall, peak


class Cgroup:
    """A memory cgroup (v2 unified or v1 memory controller) with a byte limit."""

    def __init__(self, name, limit_bytes):
        self.path = None
        self.v2 = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
        base = "/sys/fs/cgroup" if self.v2 else "/sys/fs/cgroup/memory"
        path = os.path.join(base, name)
        try:
            if os.path.isdir(path):
                os.rmdir(path)
            os.mkdir(path)
            limit_file = "memory.max" if self.v2 else "memory.limit_in_bytes"
            with open(os.path.join(path, limit_file), "w") as f:
                f.write(str(int(limit_bytes)))
            if not self.v2:
                # Count swap too where the kernel offers it (no swap here, but be explicit).
                sw = os.path.join(path, "memory.memsw.limit_in_bytes")
                if os.path.exists(sw):
                    with open(sw, "w") as f:
                        f.write(str(int(limit_bytes)))
            self.path = path
        except OSError as e:
            print(f"  (no memory cgroup: {e}; running without a limit)", file=sys.stderr)

    def prefix(self):
        """argv prefix that moves the child into the cgroup before exec."""
        if not self.path:
            return []
        procs = os.path.join(self.path, "cgroup.procs")
        return ["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh"]

    def peak_bytes(self):
        if not self.path:
            return None
        f = "memory.peak" if self.v2 else "memory.max_usage_in_bytes"
        try:
            with open(os.path.join(self.path, f)) as fh:
                return int(fh.read().strip())
        except OSError:
            return None

    def close(self):
        if self.path:
            for _ in range(50):
                try:
                    os.rmdir(self.path)
                    break
                except OSError:
                    time.sleep(0.1)


def run_bench(bench, model, extra, args, cgroup_limit=None, label=""):
    cmd = [bench, "--model", model, "--json", "--threads", str(args.threads), "--prompt", str(args.prompt),
           "--warmup", str(args.warmup), "--tokens", str(args.tokens), "--disk-probe-mib",
           str(args.disk_probe_mib)] + extra
    dropped = drop_caches() if cgroup_limit is not None else False
    cg = Cgroup("les_stream_ablation", cgroup_limit) if cgroup_limit is not None else None
    full = (cg.prefix() if cg else []) + cmd
    print(f"  {label}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    r, wall, peak = run_measured(full, cg, f"bench_stream ({label})")
    r["label"] = label
    r["page_cache_dropped"] = dropped
    r["cgroup_limit_bytes"] = cgroup_limit if cg and cg.path else None
    r["cgroup_peak_bytes"] = peak
    r["process_wall_s"] = wall
    print(f"    {r['decode_tok_per_s']:.3f} tok/s, {r.get('bytes_read_per_token', 0) / MIB:.1f} MiB read/token, "
          f"hit {r.get('hit_rate', 0):.3f}, bound {r['bound_tok_per_s']:.3f} tok/s ({wall:.0f} s)",
          file=sys.stderr, flush=True)
    return r


def run_llama_bench(llama_bench, model, limit, args):
    cmd = [llama_bench, "-m", model, "-p", "0", "-n", str(args.tokens), "-t", str(args.threads), "-r", "1",
           "-o", "json"]
    drop_caches()
    cg = Cgroup("les_stream_ablation_llama", limit)
    p = subprocess.run(cg.prefix() + cmd, capture_output=True, text=True)
    peak = cg.peak_bytes()
    cg.close()
    if p.returncode != 0:
        print(p.stderr[-2000:], file=sys.stderr)
        return None
    rows = json.loads(p.stdout)
    return {"decode_tok_per_s": rows[0]["avg_ts"], "cgroup_limit_bytes": limit, "cgroup_peak_bytes": peak,
            "command": " ".join(cmd)}


# --rows keys -> row names.
ROW_NAMES = {"on-demand": "on-demand", "c=k": "+ lookahead c=k", "c=2k": "+ lookahead c=2k",
             "contiguous": "+ contiguous", "ready-first": "+ ready-first",
             "default": "LES default (plain file, c=k+2, ready-first)"}


def fmt_row(name, budget, r, extra=""):
    def g(k, scale=1.0, f="{:.3f}"):
        v = r.get(k)
        return "-" if v is None else f.format(v * scale)
    return (f"| {name} | {budget} | {g('decode_tok_per_s')} | {g('bytes_read_per_token', 1 / MIB, '{:.1f}')} | "
            f"{g('hit_rate')} | {g('recall_mean_layers_1_plus')} | {g('io_wait_share')} | "
            f"{g('peak_rss_bytes', 1 / GIB, '{:.2f}')} | {g('bound_tok_per_s')} | {g('fraction_of_bound', 1, '{:.2f}')} |"
            f"{extra}")


def summarize(runs, budgets, result):
    """runs[budget][row name] = list of run dicts -> result["rows"] (median run
    per row, every run's tok/s kept) and result["per_budget"]."""
    result["rows"] = []
    result["per_budget"] = []
    for b in budgets:
        rows = {}
        for name, rs in runs[b].items():
            ordered = sorted(rs, key=lambda r: r["decode_tok_per_s"])
            med = dict(ordered[len(ordered) // 2])
            med["repetitions_tok_per_s"] = [t for r in rs for t in r.get("repetitions_tok_per_s",
                                                                         [r["decode_tok_per_s"]])]
            rows[name] = med
        last = rows.get(ROW_NAMES["ready-first"]) or rows.get(ROW_NAMES["default"])
        best_c = last["prefetch_c"] if last else None
        per = {"budget_gib": b, "best_lookahead_c": best_c}
        od = rows.get("on-demand")
        if od:
            t_od = od["decode_s"] / od["decode_tokens"]
            # C and I of the on-demand run itself: it never overlaps, so its time per
            # token splits into compute (C_od) and waiting for reads (I_od).
            I = od["io_wait_s_per_token"]
            C_od = t_od - I
            ideal = (C_od + I) / max(C_od, I) - 1.0
            per.update({"C_s_per_token": C_od, "I_s_per_token": I, "ideal_overlap_gain": ideal,
                        "C_resident_s_per_token": result["compute_s_per_token"],
                        "I_probe_s_per_token": od["missed_expert_bytes_per_token"] /
                        od["disk_read_bandwidth_bytes_per_s"]})
        for name, r in rows.items():
            r["config"] = name
            r["budget_gib"] = b
            if od:
                t = r["decode_s"] / r["decode_tokens"]
                r["speedup_vs_on_demand"] = t_od / t
                if name != "on-demand":
                    r["overlap_gain"] = t_od / t - 1.0
                    r["ideal_overlap_gain"] = ideal
                    r["share_of_ideal_gain"] = (t_od / t - 1.0) / ideal if ideal > 0 else None
            result["rows"].append(r)
        result["per_budget"].append(per)


def merge(paths):
    """Combines outputs of earlier runs: every run of a (budget, row) kept."""
    result = None
    runs = {}
    for path in paths:
        with open(path) as f:
            part = json.load(f)
        if result is None:
            result = {k: v for k, v in part.items() if k not in ("rows", "per_budget", "table_markdown")}
            result["merged_from"] = []
        result["merged_from"].append({"file": os.path.basename(path), "started": part.get("started")})
        for r in part["rows"]:
            runs.setdefault(r["budget_gib"], {}).setdefault(r["config"], []).append(r)
    budgets = sorted(runs)
    result["repeats"] = max(len(rs) for b in budgets for rs in runs[b].values())
    summarize(runs, budgets, result)
    return result, budgets


def table(result, total_limit_gib):
    lines = ["| configuration | expert budget (GiB) | tok/s | MiB read/token | hit rate | recall | I/O wait share | "
             "peak RSS (GiB) | bound tok/s | of bound |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    lines.append(fmt_row("resident (all experts in RAM)", "-", result["resident"]))
    for r in result["rows"]:
        extra = ""
        if r.get("share_of_ideal_gain") is not None:
            extra = f" gain {r['overlap_gain']:.2f} = {r['share_of_ideal_gain']:.2f} of ideal {r['ideal_overlap_gain']:.2f}"
        lines.append(fmt_row(r["config"], f"{r['budget_gib']:g}", r, extra))
    if "total_limit" in result:
        tl = result["total_limit"]
        lines.append(fmt_row(tl["les"]["config"], f"{tl['les']['budget_bytes'] / GIB:.2f}", tl["les"]))
        if tl.get("llama_cpp"):
            lines.append(f"| llama.cpp mmap, whole process in {total_limit_gib:g} GiB | - | "
                         f"{tl['llama_cpp']['decode_tok_per_s']:.3f} | - | - | - | - | - | - | - |")
        else:
            lines.append(f"| llama.cpp mmap, whole process in {total_limit_gib:g} GiB | - | skipped (no "
                         f"--llama-bench) | - | - | - | - | - | - | - |")
    lines.append("")
    lines.append(f"Resident compute per token {result['compute_s_per_token']:.3f} s. Per budget, the on-demand "
                 "run's compute C and read wait I per token and the ideal overlap gain (C + I) / max(C, I) - 1: " +
                 "; ".join(f"{p['budget_gib']:g} GiB: C = {p['C_s_per_token']:.3f} s, I = {p['I_s_per_token']:.3f} s "
                           f"(probe: {p['I_probe_s_per_token']:.3f} s), ideal gain {p['ideal_overlap_gain']:.2f}"
                           for p in result.get("per_budget", []) if "C_s_per_token" in p))
    return "\n".join(lines)


def plot(result, budgets, threads, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib (apt-get install python3-matplotlib): plot skipped", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    names = []
    for r in result["rows"]:
        if r["config"] not in names:
            names.append(r["config"])
    for name in names:
        pts = [(r["budget_gib"], r["decode_tok_per_s"]) for r in result["rows"] if r["config"] == name]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    last = names[-1] if names else None
    bpts = [(r["budget_gib"], r["bound_tok_per_s"]) for r in result["rows"] if r["config"] == last]
    ax.plot([p[0] for p in bpts], [p[1] for p in bpts], linestyle="--", color="gray",
            label=f"bound of the {last} run")
    ax.axhline(result["resident"]["decode_tok_per_s"], color="black", linestyle=":", label="resident (all in RAM)")
    ax.set_xlabel("expert cache budget (GiB)")
    ax.set_ylabel("decode tok/s")
    ax.set_title(f"{result['model']}, {threads} threads, O_DIRECT, page cache dropped")
    ax.set_xticks(budgets)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="LES build directory (bench/bench_stream inside)")
    ap.add_argument("--model", help="plain GGUF (per-tensor expert layout)")
    ap.add_argument("--contiguous", help="the same model after `les repack`")
    ap.add_argument("--budgets-gib", default="2,4,8")
    ap.add_argument("--rows", default="on-demand,c=k,c=2k,contiguous,ready-first",
                    help="configurations, from: " + ", ".join(ROW_NAMES))
    ap.add_argument("--total-limit-gib", type=float, default=4.0,
                    help="whole-process cgroup limit of the LES-vs-llama.cpp row (0: skip)")
    ap.add_argument("--slack-mib", type=float, default=768, help="cgroup room beyond budget + dense bytes")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=24)
    ap.add_argument("--disk-probe-mib", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3, help="runs per row (interleaved); the median is reported")
    ap.add_argument("--resident-from", default=None,
                    help="take the resident run from this earlier output instead of measuring it")
    ap.add_argument("--merge", nargs="+", default=None, help="combine these earlier outputs; measure nothing")
    ap.add_argument("--llama-bench", default=None, help="path of llama.cpp's llama-bench (optional)")
    ap.add_argument("--out", default=None, help="JSON output path")
    ap.add_argument("--plot", default=None, help="PNG output path")
    args = ap.parse_args()

    if args.merge:
        result, budgets = merge(args.merge)
        args.threads = result.get("threads", args.threads)
    else:
        rows_wanted = [x for x in args.rows.split(",") if x]
        for x in rows_wanted:
            if x not in ROW_NAMES:
                raise SystemExit(f"unknown row '{x}' (known: {', '.join(ROW_NAMES)})")
        needs_contiguous = "contiguous" in rows_wanted or "ready-first" in rows_wanted or args.total_limit_gib > 0
        if not args.model or (needs_contiguous and not args.contiguous):
            raise SystemExit("--model is required, and --contiguous for the contiguous, ready-first and "
                             "whole-process rows (unless --merge)")
        result, budgets = measure(args, rows_wanted)

    text = table(result, args.total_limit_gib)
    result["table_markdown"] = text
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
        print(f"wrote {args.out}", file=sys.stderr)
    if args.plot:
        plot(result, budgets, args.threads, args.plot)


def measure(args, rows_wanted):
    bench = os.path.join(args.build, "bench", "bench_stream")
    if not os.access(bench, os.X_OK):
        raise SystemExit(f"{bench} not found: build the bench_stream target first")
    budgets = [float(b) for b in args.budgets_gib.split(",") if b]
    result = {"model": os.path.basename(args.model), "threads": args.threads, "prompt_tokens": args.prompt,
              "repeats": args.repeats,
              "warmup_tokens": args.warmup, "decode_tokens": args.tokens, "root": os.geteuid() == 0,
              "started": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": []}

    if args.resident_from:
        with open(args.resident_from) as f:
            prev = json.load(f)
        res = prev["resident"]
        print(f"resident run taken from {args.resident_from}", file=sys.stderr)
    else:
        print("resident run (compute time per token, whole file in the page cache):", file=sys.stderr)
        res = run_bench(bench, args.model, ["--resident", "--warm-file"], args, None, "resident")
    C = res["decode_s"] / res["decode_tokens"]
    result["resident"] = res
    result["compute_s_per_token"] = C
    k = res["n_expert_used"]
    dense = res["dense_bytes_per_token"]
    cfg_c = ["--compute-s-per-token", repr(C)]

    def limit_for(budget_bytes):
        return int(budget_bytes + dense + args.slack_mib * MIB)

    def run_budget(b, rep):
        bb = int(b * GIB)
        common = ["--budget-mb", str(int(b * 1024))] + cfg_c
        lim = limit_for(bb)
        print(f"budget {b:g} GiB (cgroup limit {lim / GIB:.2f} GiB), repetition {rep + 1}/{args.repeats}:",
              file=sys.stderr)
        rows = {}

        def row(key, model, extra):
            if key in rows_wanted:
                rows[ROW_NAMES[key]] = run_bench(bench, model, common + extra, args, lim, ROW_NAMES[key])

        row("on-demand", args.model, ["--prefetch-c", "0", "--no-ready-first"])
        row("c=k", args.model, ["--prefetch-c", str(k), "--no-ready-first"])
        row("c=2k", args.model, ["--prefetch-c", str(2 * k), "--no-ready-first"])
        ck, c2k = rows.get(ROW_NAMES["c=k"]), rows.get(ROW_NAMES["c=2k"])
        best_c = 2 * k if ck and c2k and c2k["decode_tok_per_s"] > ck["decode_tok_per_s"] else k
        row("contiguous", args.contiguous, ["--prefetch-c", str(best_c), "--no-ready-first"])
        row("ready-first", args.contiguous, ["--prefetch-c", str(best_c)])
        row("default", args.model, [])
        return rows

    # Repetitions interleave (every budget and configuration once, then again),
    # so slow drifts of the shared VM's disk hit all rows alike; each row is the
    # median run by tok/s, with every repetition's tok/s kept in the JSON.
    runs = {b: {} for b in budgets}
    for rep in range(args.repeats):
        for b in budgets:
            for name, r in run_budget(b, rep).items():
                runs[b].setdefault(name, []).append(r)
    summarize(runs, budgets, result)

    if args.total_limit_gib > 0:
        T = int(args.total_limit_gib * GIB)
        budget = T - dense - int(args.slack_mib * MIB)
        print(f"whole process under a {args.total_limit_gib:g} GiB cgroup (expert budget {budget / GIB:.2f} GiB):",
              file=sys.stderr)
        # The full LES configuration: contiguous layout, lookahead with the c the
        # ready-first rows used, ready-first.
        c_full = result["per_budget"][0]["best_lookahead_c"] or res["n_expert_used"] + 2
        extra = ["--budget-mb", str(budget // MIB)] + cfg_c + ["--prefetch-c", str(c_full)]
        r = run_bench(bench, args.contiguous, extra, args, T, f"LES under {args.total_limit_gib:g} GiB")
        r["config"] = f"LES (contiguous, c={c_full}, ready-first), whole process in {args.total_limit_gib:g} GiB"
        result["total_limit"] = {"limit_bytes": T, "les": r}
        if args.llama_bench:
            print(f"llama.cpp (mmap) under the same {args.total_limit_gib:g} GiB cgroup:", file=sys.stderr)
            lr = run_llama_bench(args.llama_bench, args.model, T, args)
            result["total_limit"]["llama_cpp"] = lr
            if lr:
                result["total_limit"]["les_over_llama_cpp"] = r["decode_tok_per_s"] / lr["decode_tok_per_s"]
        else:
            result["total_limit"]["llama_cpp"] = None
            result["total_limit"]["llama_cpp_note"] = "skipped: no --llama-bench given"
    return result, budgets


if __name__ == "__main__":
    main()
