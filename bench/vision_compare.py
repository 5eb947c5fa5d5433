#!/usr/bin/env python3
"""Vision encode time per image, LES (bench_vision --images) next to llama.cpp's
llama-mtmd-cli on the same mmproj, images and threads.

  bench/vision_compare.py --les-build build --llama-bin DIR [--mmproj F --text F]
                          [--images A.ppm,B.ppm] [--threads 2] [--reps 5] [--json OUT]

Defaults: the fixture's tiny mmproj and its text model with the image markers,
the fixture's 448x224 image and a 448x448 one made here from it (the 448x224
image on top of its left-right mirror; written to --workdir). llama-mtmd-cli
encodes each image chunk separately and logs "encoding mtmd batch" / "batch
encoding done"; the time of a chunk is the difference of those two lines' log
timestamps, an image's time the sum over its chunks. One run of mtmd-cli gets
the same image reps + 1 times; the first copy is the warm-up and the best of the
others is reported (bench_vision: best of --iters after one warm-up).
Each measured command runs under `cpulock -x` where installed (else flock -x
/work/cpu.lock). Ratio = llama.cpp ms / LES ms (>= 1: LES faster).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys


def hold(lock):
    return ["cpulock", "-x"] if shutil.which("cpulock") else ["flock", "-x", lock]


def make_448x448(src, dst):
    """The 448x224 PPM on top of its left-right mirror (deterministic)."""
    data = open(src, "rb").read()
    magic, dims, maxv, pix = data.split(b"\n", 3)
    w, h = map(int, dims.split())
    assert magic == b"P6" and maxv == b"255" and len(pix) == w * h * 3, "unexpected PPM header"
    rows = [pix[i * w * 3:(i + 1) * w * 3] for i in range(h)]
    mirror = [b"".join(r[j * 3:j * 3 + 3] for j in range(w - 1, -1, -1)) for r in rows]
    with open(dst, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, 2 * h) + b"".join(rows) + b"".join(mirror))


STAMP = re.compile(r"^(\d+)\.(\d+)\.(\d+)\.(\d+) ")


def stamp_ms(line):
    """Milliseconds of a common/log timestamp, minutes.seconds.milliseconds.microseconds."""
    m = STAMP.match(line)
    if not m:
        return None
    mi, se, ms, us = (int(x) for x in m.groups())
    return (mi * 60 + se) * 1000.0 + ms + us / 1000.0


def llama_times(a, image):
    cmd = hold(a.lock) + [os.path.join(a.llama_bin, "llama-mtmd-cli"), "-m", a.text, "--mmproj", a.mmproj,
                          "-p", "Describe the image.", "-n", "1", "--temp", "0", "-t", str(a.threads),
                          "--chat-template", "chatml", "-c", "32768"]
    for _ in range(a.reps + 1):
        cmd += ["--image", image]
    out = subprocess.run(cmd, capture_output=True, text=True)
    starts, chunks = None, []
    for line in (out.stdout + out.stderr).splitlines():
        if "encoding mtmd batch" in line:
            starts = stamp_ms(line)
        elif "batch encoding done" in line and starts is not None:
            chunks.append(stamp_ms(line) - starts)
            starts = None
    if not chunks or len(chunks) % (a.reps + 1):
        sys.exit("llama-mtmd-cli: could not read encode times (%d chunks); rc %d\n%s" %
                 (len(chunks), out.returncode, out.stderr[-2000:]))
    per = len(chunks) // (a.reps + 1)
    images = [sum(chunks[i * per:(i + 1) * per]) for i in range(a.reps + 1)][1:]
    return per, min(images), sorted(images)[len(images) // 2]


def les_times(a, image):
    cmd = hold(a.lock) + [os.path.join(a.les_build, "bench", "bench_vision"), "--mmproj", a.mmproj, "--images", image,
                          "--threads", str(a.threads), "--iters", str(a.reps), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)[0]


def main():
    fx = os.environ.get("LES_FIXTURES_DIR", "/work/shared/fixtures") + "/multimodal"
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--les-build", default="build")
    p.add_argument("--llama-bin", default=os.path.expanduser("~/.cache/les-peers/llama.cpp-81ff7abe/build/bin"))
    p.add_argument("--mmproj", default=fx + "/mmproj-minicpmv4_6-tiny-F16.gguf")
    p.add_argument("--text", default=fx + "/qwen35moe-mm-F16.gguf")
    p.add_argument("--images", default="")
    p.add_argument("--workdir", default="/tmp/les-vision-compare")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--lock", default="/work/cpu.lock")
    p.add_argument("--json", default="")
    a = p.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    images = a.images.split(",") if a.images else []
    if not images:
        big = os.path.join(a.workdir, "test-448x448.ppm")
        make_448x448(fx + "/test-448x224.ppm", big)
        images = [fx + "/test-448x224.ppm", big]
    rows = []
    print("| image | chunks | LES ms | llama.cpp ms (best / median) | ratio llama.cpp / LES |")
    print("|---|---|---|---|---|")
    for img in images:
        les = les_times(a, img)
        n_chunks, best, median = llama_times(a, img)
        ratio = best / les["ms"]
        rows.append({"image": os.path.basename(img), "chunks": les["chunks"], "llama_chunks": n_chunks,
                     "les_ms": les["ms"], "llama_ms_best": best, "llama_ms_median": median, "ratio": ratio,
                     "threads": a.threads, "tier": les["tier"], "mmproj": os.path.basename(a.mmproj)})
        print("| %s | %d | %.2f | %.2f / %.2f | %.2f |" % (os.path.basename(img), les["chunks"], les["ms"], best,
                                                          median, ratio), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
