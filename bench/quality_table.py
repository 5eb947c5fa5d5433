#!/usr/bin/env python3
"""Quality and size of LES's quantisations of the trained fixture (issue 12's table).

Quantises the trained fixture's F16 file with `les quantize` (q8_0, q4_k_m, les-mixed with and
without the shipped imatrix, les-mixed-down4 with it, iq4_xs, mxfp4_moe, and with the imatrix
iq3_xxs, iq2_xxs, les-mixed-iq3, les-mixed-iq2), makes llama.cpp's Q8_0, mixed-without-imatrix,
IQ4_XS, MXFP4_MOE, IQ3_XXS and IQ2_XXS (the last two with the imatrix) files with `llama-quantize`
when its build is given (the fixture ships its Q4_K_M and mixed-with-imatrix files), then scores
every file with `les perplexity` on `corpus/validation.txt` (llama-perplexity's chunking: -c 256
-b 256, 511 chunks), KL divergence against the F16 file's saved log-probabilities (--chunks N scores only the first N
chunks; the F16 run made by an earlier run of the script is reused whatever its chunk count, and
the KLD rows then compare the first N chunks of it). Prints a
markdown table (with each file's size relative to llama.cpp's Q4_K_M file) and writes JSON.

Each run is a separate process; files already made in --work are reused, and so are finished
perplexity runs (their logs), so an interrupted table resumes (delete them to redo).
Optionally times `les quantize` against `llama-quantize` on the same input and thread count
(--speed: interleaved repetitions, median; run it on a quiet machine, e.g. under
`flock -x /work/cpu.lock`).

--only codebook4 scores just F16 and the IQ4_XS / MXFP4_MOE pairs (issue 29's rows); --only
iquants just F16, llama.cpp's Q4_K_M and the lattice i-quant rows (issue 29's too); --only issue29
both. les-mixed-iq3 and les-mixed-iq2 have no llama-quantize preset: their llama.cpp counterpart
is llama-quantize given the same imatrix and, per tensor, the type LES's file has (read from its
GGUF header, passed as --tensor-type-file with anchored names), so both files have the same types
tensor by tensor (checked; a mismatch stops the script). After the table, each LES row is
compared with its llama.cpp counterpart: the differences in PPL and mean KLD and the combined
one-sigma error bar sqrt(e_les^2 + e_llama^2) of each difference (both are scored on the same
text, so the PPL bars, dominated by the text's own variance, are very loose for this difference).

Usage:
  bench/quality_table.py --les build/tools/les --fixtures ../shared/fixtures --work /tmp/q12 \
      [--llama-bin ~/.cache/les-peers/llama.cpp-81ff7abe/build/bin] [--chunks N] [--threads 2] \
      [--only codebook4|iquants|issue29] [--speed] [--json out.json] [--md out.md]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time


def run(cmd, log):
    with open(log, "w") as f:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=f, text=True)
        f.write("\n--- stdout ---\n" + r.stdout)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}; see {log}")
    return r.stdout


def grab(pattern, text, cast=float):
    m = re.search(pattern, text)
    return cast(m.group(1)) if m else None


# ggml type ids (the GGUF format's enumeration) of the types these files hold.
GGML_TYPES = {0: "f32", 1: "f16", 2: "q4_0", 3: "q4_1", 6: "q5_0", 7: "q5_1", 8: "q8_0", 10: "q2_k",
              11: "q3_k", 12: "q4_k", 13: "q5_k", 14: "q6_k", 16: "iq2_xxs", 17: "iq2_xs", 18: "iq3_xxs",
              19: "iq1_s", 20: "iq4_nl", 21: "iq3_s", 22: "iq2_s", 23: "iq4_xs", 29: "iq1_m", 30: "bf16",
              34: "tq1_0", 35: "tq2_0", 39: "mxfp4"}


def gguf_tensor_types(path):
    """{tensor name: ggml type name} from a GGUF file's header (little-endian GGUF v2/v3)."""
    import struct
    with open(path, "rb") as f:
        def rd(fmt):
            return struct.unpack("<" + fmt, f.read(struct.calcsize("<" + fmt)))[0]

        def rd_str():
            return f.read(rd("Q")).decode("utf-8")
        sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # GGUF value types

        def skip_value(vt):
            if vt == 8:
                rd_str()
            elif vt == 9:
                et, n = rd("I"), rd("Q")
                if et in sizes:
                    f.seek(sizes[et] * n, 1)
                else:
                    for _ in range(n):
                        skip_value(et)
            else:
                f.seek(sizes[vt], 1)
        if f.read(4) != b"GGUF":
            sys.exit(f"{path}: not a GGUF file")
        rd("I")  # version
        n_tensors, n_kv = rd("Q"), rd("Q")
        for _ in range(n_kv):
            rd_str()
            skip_value(rd("I"))
        types = {}
        for _ in range(n_tensors):
            name = rd_str()
            f.seek(8 * rd("I"), 1)  # dims
            t = rd("I")
            rd("Q")  # offset
            types[name] = GGML_TYPES.get(t, f"type{t}")
        return types


def llama_same_types(lq, f16, les_file, imat, out, threads):
    """llama-quantize's file of f16 with, tensor by tensor, the types of les_file (see the docstring)."""
    want = gguf_tensor_types(les_file)
    base = gguf_tensor_types(f16)
    lines, extra = [], []
    for name, t in want.items():
        if t == base.get(name):
            continue
        if name == "token_embd.weight":
            extra += ["--token-embedding-type", t]
        elif name == "output.weight":
            extra += ["--output-tensor-type", t]
        else:
            lines.append("^" + re.escape(name) + "$=" + t)
    tt = out + ".tensor-types.txt"
    open(tt, "w").write("\n".join(lines) + "\n")
    # Q4_K_S is only the default for tensors no line names (none: every quantised tensor is named).
    run([lq, "--imatrix", imat, "--tensor-type-file", tt] + extra + [f16, out, "Q4_K_S", str(threads)],
        out + ".quantize.log")
    got = gguf_tensor_types(out)
    diff = [n for n in want if got.get(n) != want[n]]
    if diff:
        sys.exit(f"{out}: llama-quantize wrote other types than {les_file} for {len(diff)} tensors, e.g. "
                 f"{diff[0]}: {got.get(diff[0])} vs {want[diff[0]]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--les", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--llama-bin", default="")
    ap.add_argument("--chunks", type=int, default=-1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--speed-only", action="store_true", help="only the quantising speed (implies --speed)")
    ap.add_argument("--speed-reps", type=int, default=5)
    ap.add_argument("--speed-input", default="", help="F16 GGUF to time (default: the trained fixture's F16 file)")
    ap.add_argument("--only", default="", choices=["", "codebook4", "iquants", "issue29"])
    ap.add_argument("--finished-only", action="store_true",
                    help="score nothing: tabulate only the rows whose perplexity log an earlier run finished")
    ap.add_argument("--note", default="", help="a line put above the markdown table and into the JSON "
                    "(e.g. the LES build and machine)")
    ap.add_argument("--json", default="")
    ap.add_argument("--md", default="")
    a = ap.parse_args()

    tr = os.path.join(a.fixtures, "trained")
    f16 = os.path.join(tr, "tiny-qwen3moe-F16.gguf")
    imat = os.path.join(tr, "imatrix-train.gguf")
    text = os.path.join(a.fixtures, "corpus", "validation.txt")
    os.makedirs(a.work, exist_ok=True)
    w = lambda n: os.path.join(a.work, n)
    t = str(a.threads)

    # (label, file, how to make it or None when shipped)
    les_q = [
        ("LES Q8_0", "les-Q8_0.gguf", ["q8_0"]),
        ("LES Q4_K_M", "les-Q4_K_M.gguf", ["q4_k_m"]),
        ("LES les-mixed", "les-mixed.gguf", ["les-mixed"]),
        ("LES les-mixed + imatrix", "les-mixed-imat.gguf", ["les-mixed", "--imatrix", imat]),
        ("LES les-mixed-down4 + imatrix", "les-mixed-down4-imat.gguf", ["les-mixed-down4", "--imatrix", imat]),
        ("LES IQ4_XS", "les-IQ4_XS.gguf", ["iq4_xs"]),
        ("LES MXFP4_MOE", "les-MXFP4_MOE.gguf", ["mxfp4_moe"]),
    ]
    # The lattice i-quants: llama-quantize's IQ3_XXS / IQ2_XXS recipes and LES's mixed ones (imatrix needed).
    iq_q = [
        ("LES IQ3_XXS + imatrix", "les-IQ3_XXS-imat.gguf", ["iq3_xxs", "--imatrix", imat]),
        ("LES IQ2_XXS + imatrix", "les-IQ2_XXS-imat.gguf", ["iq2_xxs", "--imatrix", imat]),
        ("LES les-mixed-iq3 + imatrix", "les-mixed-iq3-imat.gguf", ["les-mixed-iq3", "--imatrix", imat]),
        ("LES les-mixed-iq2 + imatrix", "les-mixed-iq2-imat.gguf", ["les-mixed-iq2", "--imatrix", imat]),
    ]
    if a.only in ("codebook4", "issue29"):
        les_q = les_q[5:]
    elif a.only == "iquants":
        les_q = []
    # The targets' files first (F16 makes the KLD reference), so a partial run answers them.
    rows = [("F16 (reference)", f16)]
    pairs = []  # (LES row label, llama.cpp row label) of the same types
    les_rows = []
    for label, name, args in les_q:
        out = w(name)
        if not os.path.exists(out):
            run([a.les, "quantize", f16, out] + args + ["-t", t, "-q"], w(name + ".quantize.log"))
        les_rows.append((label, out))
    lq = os.path.join(a.llama_bin, "llama-quantize") if a.llama_bin else ""
    if a.only == "":
        rows.append(les_rows[3])  # les-mixed + imatrix
        rows.append(("llama.cpp mixed + imatrix", os.path.join(tr, "tiny-qwen3moe-mixed-exps-Q3_K-imat.gguf")))
        rows.append(("llama.cpp Q4_K_M", os.path.join(tr, "tiny-qwen3moe-Q4_K_M.gguf")))
        rows.append(les_rows[1])  # Q4_K_M
        pairs += [(les_rows[3][0], "llama.cpp mixed + imatrix"), (les_rows[1][0], "llama.cpp Q4_K_M")]
        rows += [les_rows[2], les_rows[0], les_rows[4]]
    # The 4-bit codebook formats, each next to llama.cpp's file of the same preset.
    for les_row, ftype in zip(les_rows[-2:] if a.only != "iquants" else [], ["IQ4_XS", "MXFP4_MOE"]):
        rows.append(les_row)
        out = w(f"llama-{ftype}.gguf")
        if lq and os.path.exists(lq) and not os.path.exists(out):
            run([lq, f16, out, ftype, t], w(f"llama-{ftype}.quantize.log"))
        if os.path.exists(out):
            rows.append((f"llama.cpp {ftype}", out))
            pairs.append((les_row[0], rows[-1][0]))
    # The lattice i-quants, llama.cpp's files of the same presets next to LES's, and llama.cpp's Q4_K_M.
    if a.only in ("", "iquants", "issue29"):
        if a.only == "iquants":
            rows.append(("llama.cpp Q4_K_M", os.path.join(tr, "tiny-qwen3moe-Q4_K_M.gguf")))
        for i, (label, name, args) in enumerate(iq_q):
            out = w(name)
            if not os.path.exists(out):
                run([a.les, "quantize", f16, out] + args + ["-t", t, "-q"], w(name + ".quantize.log"))
            rows.append((label, out))
            if i < 2:
                ftype = ("IQ3_XXS", "IQ2_XXS")[i]
                out = w(f"llama-{ftype}-imat.gguf")
                if lq and os.path.exists(lq) and not os.path.exists(out):
                    run([lq, "--imatrix", imat, f16, out, ftype, t], w(f"llama-{ftype}.quantize.log"))
                if os.path.exists(out):
                    rows.append((f"llama.cpp {ftype} + imatrix", out))
                    pairs.append((label, rows[-1][0]))
            else:  # les-mixed-iq3 / -iq2: llama-quantize with the same type per tensor
                preset = args[0]
                out = w(f"llama-{preset}-types-imat.gguf")
                if lq and os.path.exists(lq) and not os.path.exists(out):
                    llama_same_types(lq, f16, w(name), imat, out, t)
                if os.path.exists(out):
                    rows.append((f"llama.cpp, {preset}'s types + imatrix", out))
                    pairs.append((label, rows[-1][0]))
    if a.only == "issue29":  # the size reference, scored last
        rows.append(("llama.cpp Q4_K_M", os.path.join(tr, "tiny-qwen3moe-Q4_K_M.gguf")))
    if lq and os.path.exists(lq) and a.only == "":
        out = w("llama-Q8_0.gguf")
        if not os.path.exists(out):
            run([lq, f16, out, "Q8_0", t], w("llama-Q8_0.quantize.log"))
        rows.append(("llama.cpp Q8_0", out))
        # the fixture README's mixed recipe, without the imatrix
        out = w("llama-mixed.gguf")
        if not os.path.exists(out):
            run([lq, "--tensor-type", "ffn_(gate|up|down)_exps=q3_k",
                 "--tensor-type", "attn_(q|k|v|output)\\.weight=q4_k", "--token-embedding-type", "q4_k",
                 "--output-tensor-type", "q4_k", f16, out, "Q4_K_S", t], w("llama-mixed.quantize.log"))
        rows.append(("llama.cpp mixed, no imatrix", out))
    elif not (lq and os.path.exists(lq)):
        print("note: no llama.cpp build given (--llama-bin): its Q8_0, mixed-without-imatrix, IQ4_XS and "
              "MXFP4_MOE rows are skipped", file=sys.stderr)

    if a.speed_only:
        a.speed, rows = True, []
    base = w("f16.kld")
    common = ["-c", "256", "-b", "256", "-t", t, "--chunks", str(a.chunks)]
    results = []
    base_chunks = None  # chunks of the F16 run (its log), which every KLD row compares against
    for label, path in rows:
        log = w(os.path.basename(path) + ".ppl.log")
        t0 = time.monotonic()
        prev = open(log).read() if os.path.exists(log) else ""
        done = "Final estimate" in prev and (path == f16 or "Mean    KLD" in prev)
        n_chunk = grab(r"(\d+) chunks of", prev, int)
        if path == f16:
            base_chunks = n_chunk
        elif done and base_chunks is not None and n_chunk != (base_chunks if a.chunks < 0 else min(a.chunks, base_chunks)):
            done = False  # scored over another number of chunks: redo
        if done and os.path.exists(base):  # finished by an earlier run of this script: reuse it
            out = prev
        elif a.finished_only:
            print(f"{label}: not scored (no finished log {log})", file=sys.stderr)
            continue
        elif path == f16:
            out = run([a.les, "perplexity", "-m", f16, "-f", text, "--kl-divergence-base", base] + common, log)
        else:
            out = run([a.les, "perplexity", "-m", path, "--kl-divergence-base", base, "--kl-divergence"] + common, log)
        r = {"label": label, "file": path, "bytes": os.path.getsize(path),
             "ppl": grab(r"Final estimate: PPL = ([0-9.]+)", out),
             "ppl_err": grab(r"Final estimate: PPL = [0-9.]+ \+/- ([0-9.]+)", out),
             "ppl_f16_same_chunks": grab(r"Mean PPL\(base\)\s+:\s+([0-9.]+)", out),
             "ppl_ratio": grab(r"Mean PPL\(Q\)/PPL\(base\)\s+:\s+([0-9.]+)", out),
             "ppl_ratio_err": grab(r"Mean PPL\(Q\)/PPL\(base\)\s+:\s+[0-9.]+ \+/-\s+([0-9.]+)", out),
             "kld_mean": grab(r"Mean    KLD:\s+([0-9.]+)", out),
             "kld_mean_err": grab(r"Mean    KLD:\s+[0-9.]+ \+/-\s+([0-9.]+)", out),
             "kld_p99": grab(r"99.0%   KLD:\s+([0-9.]+)", out),
             "top1_pct": grab(r"Same top p:\s+([0-9.]+)", out),
             "chunks": grab(r"(\d+) chunks of", open(log).read(), int),  # the stderr part of the log
             "seconds": round(time.monotonic() - t0, 1)}
        results.append(r)
        print(f"{label}: PPL {r['ppl']} KLD {r['kld_mean']} ({r['seconds']} s)", file=sys.stderr)

    speed = None
    if a.speed and lq and os.path.exists(lq):
        les_t, llama_t = [], []
        src = a.speed_input or f16
        for i in range(a.speed_reps):
            for which in ("les", "llama"):
                out = w(f"speed-{which}.gguf")
                t0 = time.monotonic()
                if which == "les":
                    run([a.les, "quantize", src, out, "q4_k_m", "-t", t, "-q"], w("speed.log"))
                    les_t.append(time.monotonic() - t0)
                else:
                    run([lq, src, out, "Q4_K_M", t], w("speed.log"))
                    llama_t.append(time.monotonic() - t0)
                os.remove(out)
        speed = {"input": src, "input_bytes": os.path.getsize(src), "preset": "Q4_K_M", "threads": a.threads, "reps": a.speed_reps,
                 "les_median_s": statistics.median(les_t), "llama_median_s": statistics.median(llama_t),
                 "les_s": les_t, "llama_s": llama_t,
                 "speedup_vs_llama": statistics.median(llama_t) / statistics.median(les_t)}

    # size relative to llama.cpp's Q4_K_M file (the shipped fixture)
    q4km = os.path.getsize(os.path.join(tr, "tiny-qwen3moe-Q4_K_M.gguf"))
    for r in results:
        r["size_vs_q4_k_m"] = round(r["bytes"] / q4km, 4)
    lines = []
    if a.note:
        lines += [a.note, ""]
    f16_sub = next((r["ppl_f16_same_chunks"] for r in results if r.get("ppl_f16_same_chunks")), None)
    f16_row = next((r for r in results if r["file"] == f16), None)
    if f16_row and f16_sub and f16_row["chunks"] != next(r["chunks"] for r in results if r.get("ppl_f16_same_chunks")):
        lines += [f"F16's row is its run over {f16_row['chunks']} chunks; over the chunks the other rows score, "
                  f"its PPL is {f16_sub:.4f} (the KLD runs' PPL(base)).", ""]
    lines += ["| file | bytes | size / Q4_K_M | chunks | PPL | PPL / PPL(F16) | mean KLD | KLD p99 | top-1 |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        fmt = lambda v, p: "-" if v is None else f"{v:.{p}f}"
        lines.append(f"| {r['label']} | {r['bytes']:,} | {r['size_vs_q4_k_m']:.3f} | {r['chunks']} | "
                     f"{fmt(r['ppl'], 4)} +/- {fmt(r['ppl_err'], 3)} | {fmt(r['ppl_ratio'], 6)} +/- {fmt(r['ppl_ratio_err'], 6)} | "
                     f"{fmt(r['kld_mean'], 6)} +/- {fmt(r['kld_mean_err'], 6)} | {fmt(r['kld_p99'], 5)} | "
                     f"{fmt(r['top1_pct'], 2)}% |")
    by_label = {r["label"]: r for r in results}
    comparisons = []
    for les_label, llama_label in pairs:
        x, y = by_label.get(les_label), by_label.get(llama_label)
        if not x or not y or None in (x["ppl"], y["ppl"], x["kld_mean"], y["kld_mean"]):
            continue
        c = {"les": les_label, "llama": llama_label,
             "d_ppl": x["ppl"] - y["ppl"], "d_ppl_pct": 100 * (x["ppl"] / y["ppl"] - 1),
             "ppl_sigma": (x["ppl_err"] ** 2 + y["ppl_err"] ** 2) ** 0.5,
             "d_kld": x["kld_mean"] - y["kld_mean"], "kld_ratio": x["kld_mean"] / y["kld_mean"],
             "kld_sigma": (x["kld_mean_err"] ** 2 + y["kld_mean_err"] ** 2) ** 0.5,
             "size_ratio": x["bytes"] / y["bytes"]}
        if None not in (x["ppl_ratio"], y["ppl_ratio"], x["ppl_ratio_err"], y["ppl_ratio_err"]):
            c["d_ppl_ratio"] = x["ppl_ratio"] - y["ppl_ratio"]
            c["ppl_ratio_sigma"] = (x["ppl_ratio_err"] ** 2 + y["ppl_ratio_err"] ** 2) ** 0.5
        c["ppl_within_1sigma"] = abs(c["d_ppl"]) <= c["ppl_sigma"]
        c["kld_within_1sigma"] = abs(c["d_kld"]) <= c["kld_sigma"]
        c["kld_sigmas"] = c["d_kld"] / c["kld_sigma"] if c["kld_sigma"] > 0 else None
        comparisons.append(c)
    if comparisons:
        lines += ["", "LES against llama-quantize, same types (sigma: sqrt(e_les^2 + e_llama^2) of the two rows' "
                  "error bars):", "",
                  "| LES file | llama.cpp file | size LES / llama | PPL LES - llama (sigma) | PPL/PPL(F16) LES - llama "
                  "(sigma) | mean KLD LES - llama (sigma) | KLD LES / llama | KLD diff in sigmas |",
                  "|---|---|---|---|---|---|---|---|"]
        for c in comparisons:
            pr = (f"{c['d_ppl_ratio']:+.6f} ({c['ppl_ratio_sigma']:.6f})" if "d_ppl_ratio" in c else "-")
            lines.append(f"| {c['les']} | {c['llama']} | {c['size_ratio']:.4f} | {c['d_ppl']:+.4f} ({c['ppl_sigma']:.3f}) "
                         f"{c['d_ppl_pct']:+.2f}% | {pr} | {c['d_kld']:+.6f} ({c['kld_sigma']:.6f}) | {c['kld_ratio']:.3f} | "
                         f"{c['kld_sigmas']:+.1f} |")
    if speed:
        lines.append(f"\nQuantise to Q4_K_M, {a.threads} threads, median of {a.speed_reps} interleaved runs: "
                     f"les {speed['les_median_s']:.2f} s, llama-quantize {speed['llama_median_s']:.2f} s "
                     f"(llama / les = {speed['speedup_vs_llama']:.2f}x)")
    md = "\n".join(lines)
    print(md)
    if a.md:
        open(a.md, "w").write(md + "\n")
    if a.json:
        json.dump({"note": a.note, "chunks": a.chunks, "threads": a.threads, "rows": results, "comparisons": comparisons,
                   "speed": speed}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
