#!/usr/bin/python3
"""LES and llama.cpp side by side on the same GGUF file, threads and machine.

Rows (each LES row next to its llama.cpp counterpart; ratio = LES / llama.cpp):

  decode, CLI        greedy text (temperature 0, --ignore-eos, -n --gen tokens) through
                     each tool's own command line: `les run` against `llama-completion`;
                     both in the scope of llama.cpp's "eval time" line: the time inside
                     the decode phase's forward passes (llama.cpp: llama_decode up to the
                     logits' synchronisation, n - 1 single-token passes; LES: its
                     "forward passes" figure, the same n - 1 passes), sampling,
                     detokenizing and printing excluded on both sides. The JSON also
                     keeps LES's whole decode loop ("decode" figure: sampling,
                     detokenizing and printing included) and llama.cpp's eval plus its
                     "sampling time" (its detokenizing and printing are not timed).
  decode, bench      `bench_stream --resident` (fixed-seed random token ids, after
                     warm-up steps) against `llama-bench -p 0 -n --gen`
  prefill P          for each P in --prefill (default 64,512): `bench_stream --resident
                     --prompt P --prefill-warmup` against `llama-bench -p P -n 0`
  streamed, G GiB    for each G in --cgroups-gib (default 4,8; 30B-class files only):
                     the whole process in a memory cgroup of G GiB, page cache dropped
                     first; LES: `bench_stream --budget-mb B` and `les run --budget-mb B`
                     with B = G - dense bytes - --slack-mib set by hand (until LES has a
                     whole-process memory-limit option); llama.cpp: `llama-bench -p 0 -n
                     --cgroup-gen` through mmap, as its users run it.

The resident rows read the whole file into the page cache first. Repetitions
are interleaved (repetition 1 of every row, then repetition 2, ...; within a
row LES and llama.cpp alternate which goes first) and the median is reported,
with every run's value in the JSON. Each measured command runs under `flock -x
--lock` when given (a shared machine: each hold is one command, never the whole
series).

The streamed rows also give the compute time per token while streaming
(bench_stream: decode time - time compute waited for reads, per token) as a
ratio to the resident compute time per token of the same model measured in
the same run (the decode, bench row).

llama.cpp: --llama-bin is the folder with llama-bench and llama-completion
(../shared/tools/build-llama-cpp.sh builds them); when it is missing, every
llama.cpp cell is "skipped" and the JSON says why, and the LES rows still run.
Memory cgroups and dropping the page cache need root; without it those rows
are skipped and said so.

  sudo bench/side_by_side.py --build build --llama-bin ~/.cache/les-peers/llama.cpp-81ff7abe/build/bin \\
      --model /big/qwen3-30b-a3b.gguf --model ../shared/fixtures/trained/tiny-qwen3moe-Q4_K_M.gguf \\
      --lock /work/cpu.lock --out bench/results/side_by_side-DATE-CPU.json

It measures and prints; it asserts nothing.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stream_ablation import Cgroup, drop_caches  # noqa: E402  (same folder)

GIB = 1024 ** 3
MIB = 1024 ** 2
PROMPT = "The history of the expert cache begins with a question about memory, bandwidth and time:"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown-cpu"


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def warm_file(path):
    """Reads the whole file once so its pages are in the page cache."""
    with open(path, "rb", buffering=0) as f:
        while f.read(64 * MIB):
            pass


def run(cmd, args, cgroup_limit=None, cold=False):
    """Runs cmd, optionally in a memory cgroup after dropping the page cache
    (cold), under `flock -x --lock` when given (the page cache is dropped inside
    that hold, right before the command); returns (returncode, stdout, stderr,
    wall_s, cgroup_peak)."""
    cg = None
    if cgroup_limit is not None:
        cg = Cgroup("les_side_by_side", cgroup_limit)
        cmd = cg.prefix() + cmd
    if cold:
        if args.lock:
            cmd = ["sh", "-c", 'sync; echo 3 > /proc/sys/vm/drop_caches; exec "$@"', "sh"] + cmd
        else:
            drop_caches()
    if args.lock:
        cmd = ["flock", "-x", args.lock] + cmd
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, stdin=subprocess.DEVNULL)
    wall = time.time() - t0
    peak = cg.peak_bytes() if cg else None
    if cg:
        cg.close()
    return p.returncode, p.stdout, p.stderr, wall, peak


class Tools:
    def __init__(self, args):
        self.les = os.path.join(args.build, "tools", "les")
        self.bench_stream = os.path.join(args.build, "bench", "bench_stream")
        for p in (self.les, self.bench_stream):
            if not os.access(p, os.X_OK):
                raise SystemExit(f"{p} not found: build the les and bench_stream targets first")
        self.llama_note = None
        self.llama_bench = self.llama_completion = None
        if not args.llama_bin:
            self.llama_note = "skipped: no --llama-bin given"
        else:
            lb = os.path.join(args.llama_bin, "llama-bench")
            lc = os.path.join(args.llama_bin, "llama-completion")
            if os.access(lb, os.X_OK) and os.access(lc, os.X_OK):
                self.llama_bench, self.llama_completion = lb, lc
            else:
                self.llama_note = f"skipped: llama-bench / llama-completion not found in {args.llama_bin}"


# --- one measurement each; every function returns a dict with "tok_per_s" or "error"


def les_run(tools, model, args, budget_mb=None, cgroup_limit=None):
    cmd = [tools.les, "run", "-m", model, "--temp", "0", "--ignore-eos", "-n", str(args.gen), "-p", PROMPT,
           "-t", str(args.threads), "-s", "1"]
    if budget_mb is not None:
        cmd += ["--budget-mb", f"{budget_mb:.0f}"]
    rc, out, err, wall, peak = run(cmd, args, cgroup_limit, cold=cgroup_limit is not None)
    m = re.search(r"decode ([0-9.]+) tok/s \((\d+) tokens", err)
    if rc != 0 or not m:
        return {"error": f"les run exit {rc}: {err[-400:]}", "command": " ".join(cmd)}
    pm = re.search(r"prefill ([0-9.]+) tok/s", err)
    # The forward passes alone: llama.cpp's "eval time" scope (older builds
    # without the figure: the whole loop, which counts sampling and printing too).
    fm = re.search(r"forward passes ([0-9.]+) tok/s", err)
    return {"tok_per_s": float(fm.group(1)) if fm else float(m.group(1)), "tokens": int(m.group(2)),
            "scope": "forward passes" if fm else "whole decode loop", "loop_tok_per_s": float(m.group(1)),
            "prefill_tok_per_s": float(pm.group(1)) if pm else None, "text": out[:200],
            "wall_s": wall, "cgroup_peak_bytes": peak, "command": " ".join(cmd)}


def llama_completion(tools, model, args):
    cmd = [tools.llama_completion, "-m", model, "--temp", "0", "--ignore-eos", "-n", str(args.gen), "-p", PROMPT,
           "-t", str(args.threads), "-s", "1", "-no-cnv", "--no-display-prompt"]
    rc, out, err, wall, _ = run(cmd, args)
    m = re.search(r"\beval time =\s*([0-9.]+) ms /\s*(\d+) runs.*?([0-9.]+) tokens per second", err)
    if rc != 0 or not m:
        return {"error": f"llama-completion exit {rc}: {err[-400:]}", "command": " ".join(cmd)}
    sm = re.search(r"sampling time =\s*([0-9.]+) ms", err)
    eval_ms, runs = float(m.group(1)), int(m.group(2))
    return {"tok_per_s": float(m.group(3)), "tokens": runs, "scope": "eval time (forward passes)",
            "eval_plus_sampling_tok_per_s": runs / (eval_ms + float(sm.group(1))) * 1e3 if sm else None,
            "text": out[:200], "wall_s": wall, "command": " ".join(cmd)}


def bench_stream(tools, model, args, prompt, tokens, warmup, budget_mb=None, cgroup_limit=None,
                 prefill_warmup=False):
    cmd = [tools.bench_stream, "--model", model, "--json", "--threads", str(args.threads), "--prompt", str(prompt),
           "--tokens", str(tokens), "--warmup", str(warmup), "--disk-probe-mib", str(args.disk_probe_mib)]
    if budget_mb is None:
        cmd += ["--resident"]
    else:
        cmd += ["--budget-mb", f"{budget_mb:.0f}"]
    if prefill_warmup:
        cmd += ["--prefill-warmup"]
    rc, out, err, wall, peak = run(cmd, args, cgroup_limit, cold=cgroup_limit is not None)
    if rc != 0:
        return {"error": f"bench_stream exit {rc}: {err[-400:]}", "command": " ".join(cmd)}
    r = json.loads(out)
    res = {"tok_per_s": r["decode_tok_per_s"], "prefill_tok_per_s": r["prefill_tok_per_s"], "wall_s": wall,
           "cgroup_peak_bytes": peak, "command": " ".join(cmd), "bench_stream": r}
    if budget_mb is not None:
        res["compute_s_per_token"] = 1.0 / r["decode_tok_per_s"] - r.get("io_wait_s_per_token", 0.0)
    return res


def llama_bench(tools, model, args, n_prompt, n_gen, cgroup_limit=None):
    cmd = [tools.llama_bench, "-m", model, "-p", str(n_prompt), "-n", str(n_gen), "-t", str(args.threads),
           "-r", "1", "-o", "json"]
    rc, out, err, wall, peak = run(cmd, args, cgroup_limit, cold=cgroup_limit is not None)
    if rc != 0:
        return {"error": f"llama-bench exit {rc}: {err[-400:]}", "command": " ".join(cmd)}
    rows = json.loads(out)
    return {"tok_per_s": rows[0]["avg_ts"], "wall_s": wall, "cgroup_peak_bytes": peak, "command": " ".join(cmd)}


# --- rows


def median_of(runs, key="tok_per_s"):
    vals = [r[key] for r in runs if r and key in r and r[key] is not None]
    return statistics.median(vals) if vals else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="LES build directory")
    ap.add_argument("--llama-bin", default=None, help="folder with llama-bench and llama-completion")
    ap.add_argument("--model", action="append", required=True, help="GGUF file (repeatable)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--gen", type=int, default=32, help="decode tokens of the resident rows")
    ap.add_argument("--warmup", type=int, default=4, help="untimed bench_stream decode steps")
    ap.add_argument("--prefill", default="64,512", help="prompt lengths of the prefill rows")
    ap.add_argument("--cgroups-gib", default="4,8", help="whole-process memory limits of the streamed rows")
    ap.add_argument("--cgroup-min-file-gib", type=float, default=8.0,
                    help="streamed rows only for files at least this large (a small file fits any limit)")
    ap.add_argument("--cgroup-gen", type=int, default=8, help="decode tokens of the streamed rows")
    ap.add_argument("--slack-mib", type=float, default=768, help="cgroup room beyond LES's budget + dense bytes")
    ap.add_argument("--disk-probe-mib", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", default="cli,bench,prefill,cgroup", help="which row kinds to run")
    ap.add_argument("--lock", default=None, help="take `flock -x` on this file around every measured command")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one command may take")
    ap.add_argument("--out", default=None, help="JSON output path")
    args = ap.parse_args()

    tools = Tools(args)
    kinds = set(args.rows.split(","))
    root = os.geteuid() == 0
    flags = cpu_flags()
    result = {"cpu": cpu_model(), "isa": "avx512" if "avx512f" in flags else ("avx2" if "avx2" in flags else "other"),
              "threads": args.threads, "repeats": args.repeats, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
              "llama_bin": args.llama_bin, "llama_cpp_note": tools.llama_note, "root": root, "models": []}
    print(f"# {result['cpu']} ({result['isa']}), {args.threads} threads; llama.cpp: "
          f"{tools.llama_note or args.llama_bin}", file=sys.stderr)

    for model in args.model:
        size = os.path.getsize(model)
        name = os.path.basename(model)
        print(f"## {name} ({size / GIB:.2f} GiB)", file=sys.stderr, flush=True)
        # Row specs: (row name, les thunk, llama thunk or None)
        rows = []
        if "cli" in kinds:
            rows.append(("decode, CLI greedy (les run vs llama-completion)",
                         lambda: les_run(tools, model, args),
                         (lambda: llama_completion(tools, model, args)) if tools.llama_bench else None, True))
        if "bench" in kinds:
            rows.append(("decode, bench (bench_stream --resident vs llama-bench tg)",
                         lambda: bench_stream(tools, model, args, 16, args.gen, args.warmup),
                         (lambda: llama_bench(tools, model, args, 0, args.gen)) if tools.llama_bench else None, True))
        if "prefill" in kinds:
            for p in [int(x) for x in args.prefill.split(",") if x]:
                rows.append((f"prefill {p} (bench_stream --resident vs llama-bench pp)",
                             (lambda p=p: dict(bench_stream(tools, model, args, p, 1, 0, prefill_warmup=True),
                                               tok_per_s_key="prefill_tok_per_s")),
                             (lambda p=p: llama_bench(tools, model, args, p, 0)) if tools.llama_bench else None, True))
        cg_rows = []
        if "cgroup" in kinds and size >= args.cgroup_min_file_gib * GIB:
            for g in [float(x) for x in args.cgroups_gib.split(",") if x]:
                cg_rows.append(g)
        entry = {"model": name, "file_bytes": size, "rows": []}
        results = {r[0]: {"les": [], "llama_cpp": []} for r in rows}
        dense = None
        for rep in range(args.repeats):
            for i, (rname, les_fn, llama_fn, warm) in enumerate(rows):
                if warm:
                    warm_file(model)
                order = [("les", les_fn), ("llama_cpp", llama_fn)]
                if (rep + i) % 2 == 1:
                    order.reverse()
                for who, fn in order:
                    if fn is None:
                        continue
                    r = fn()
                    if "tok_per_s_key" in r:
                        r["tok_per_s"] = r.get(r.pop("tok_per_s_key"))
                    results[rname][who].append(r)
                    if who == "les" and dense is None and "bench_stream" in r:
                        dense = r["bench_stream"].get("dense_bytes_per_token")
                    print(f"  [{rep + 1}/{args.repeats}] {rname} {who}: "
                          f"{r.get('tok_per_s', 0) or 0:.3f} tok/s {r.get('error', '')[:200]}",
                          file=sys.stderr, flush=True)
        for rname, _, _, _ in rows:
            le, ll = median_of(results[rname]["les"]), median_of(results[rname]["llama_cpp"])
            entry["rows"].append({"row": rname, "les_tok_per_s": le, "llama_cpp_tok_per_s": ll,
                                  "les_over_llama_cpp": (le / ll) if le and ll else None,
                                  # decode, CLI: the wider scopes (see the docstring)
                                  "les_loop_tok_per_s": median_of(results[rname]["les"], "loop_tok_per_s"),
                                  "llama_cpp_eval_plus_sampling_tok_per_s": median_of(
                                      results[rname]["llama_cpp"], "eval_plus_sampling_tok_per_s"),
                                  "llama_cpp_note": tools.llama_note, "runs": results[rname]})
        # Streamed rows: whole process in a cgroup, cold page cache.
        resident_bench = next((r for r in entry["rows"] if r["row"].startswith("decode, bench")), None)
        resident_compute = (1.0 / resident_bench["les_tok_per_s"]) if resident_bench and resident_bench[
            "les_tok_per_s"] else None
        for g in cg_rows:
            rname = f"streamed, whole process in {g:g} GiB, cold page cache"
            if not root:
                entry["rows"].append({"row": rname, "note": "skipped: cgroups and dropping the page cache need root"})
                continue
            if dense is None:
                probe = bench_stream(tools, model, args, 16, 1, 0)
                dense = probe.get("bench_stream", {}).get("dense_bytes_per_token")
            limit = int(g * GIB)
            budget_mb = (limit - dense - args.slack_mib * MIB) / MIB
            runs = {"les_bench_stream": [], "les_run": [], "llama_cpp": []}
            saved_gen = args.gen
            for rep in range(args.repeats):
                runs["les_bench_stream"].append(
                    bench_stream(tools, model, args, 16, args.cgroup_gen, args.warmup, budget_mb, limit))
                args.gen = args.cgroup_gen
                runs["les_run"].append(les_run(tools, model, args, budget_mb, limit))
                args.gen = saved_gen
                if tools.llama_bench:
                    runs["llama_cpp"].append(llama_bench(tools, model, args, 0, args.cgroup_gen, limit))
                print(f"  [{rep + 1}/{args.repeats}] {rname}: bench_stream "
                      f"{runs['les_bench_stream'][-1].get('tok_per_s', 0):.3f}, les run "
                      f"{runs['les_run'][-1].get('tok_per_s', 0) or 0:.3f}, llama.cpp "
                      f"{(runs['llama_cpp'][-1].get('tok_per_s', 0) if runs['llama_cpp'] else 0) or 0:.3f} tok/s",
                      file=sys.stderr, flush=True)
            bs, lr, ll = (median_of(runs["les_bench_stream"]), median_of(runs["les_run"]),
                          median_of(runs["llama_cpp"]))
            comp = median_of(runs["les_bench_stream"], "compute_s_per_token")
            entry["rows"].append({
                "row": rname, "limit_bytes": limit, "les_budget_mb": budget_mb, "dense_bytes": dense,
                "les_tok_per_s": bs, "les_run_tok_per_s": lr, "llama_cpp_tok_per_s": ll,
                "les_over_llama_cpp": (bs / ll) if bs and ll else None,
                "les_run_over_llama_cpp": (lr / ll) if lr and ll else None,
                "streamed_compute_s_per_token": comp, "resident_compute_s_per_token": resident_compute,
                "streamed_over_resident_compute": (comp / resident_compute) if comp and resident_compute else None,
                "llama_cpp_note": tools.llama_note, "runs": runs})
        result["models"].append(entry)

    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    lines = [f"{result['cpu']} ({result['isa']}), {args.threads} threads, median of {args.repeats} interleaved runs",
             "", "| model | row | LES tok/s | llama.cpp tok/s | LES / llama.cpp |", "|---|---|---|---|---|"]
    for e in result["models"]:
        for r in e["rows"]:
            def f(v, fmt="{:.3f}"):
                return "-" if v is None else fmt.format(v)
            les_cell = f(r.get("les_tok_per_s"))
            if r.get("les_loop_tok_per_s") is not None:
                les_cell += f" (whole loop {f(r['les_loop_tok_per_s'])})"
            if r.get("les_run_tok_per_s") is not None:
                les_cell += f" (les run {f(r['les_run_tok_per_s'])})"
            if r.get("streamed_over_resident_compute") is not None:
                les_cell += f"; compute/token {r['streamed_over_resident_compute']:.2f}x resident"
            ll_cell = f(r.get("llama_cpp_tok_per_s")) if r.get("llama_cpp_tok_per_s") else (
                r.get("llama_cpp_note") or r.get("note") or "-")
            if r.get("llama_cpp_eval_plus_sampling_tok_per_s") is not None:
                ll_cell += f" (with sampling {f(r['llama_cpp_eval_plus_sampling_tok_per_s'])})"
            lines.append(f"| {e['model']} | {r['row']} | {les_cell} | {ll_cell} | "
                         f"{f(r.get('les_over_llama_cpp'), '{:.2f}')} |")
    table = "\n".join(lines)
    result["table"] = table
    print(table)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
        print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
