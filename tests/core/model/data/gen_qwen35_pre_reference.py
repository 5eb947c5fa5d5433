#!/usr/bin/env python3
"""Regenerates qwen35moe-F16-pre-qwen35.json: llama.cpp's tokenization and
greedy continuation for the synthetic qwen35moe F16 fixture with only
tokenizer.ggml.pre changed from "qwen2" to "qwen35" (what llama.cpp's converter
writes for real Qwen3.5 / 3.6 MoE files). test_qwen35moe_pre_qwen35.cpp makes
the same copy and checks LES against this file.

Per prompt (most with combining marks, which qwen35 keeps with their letters):
the prompt ids (llama-tokenize, add_special, parse_special off) and the greedy
text (llama-completion: --temp 0, at most 32 tokens, seed 1; --ignore-eos is
not used because llama.cpp implements it by banning end-of-generation tokens,
while LES's ignore_eos lets them be sampled) as hex bytes, and whether an
end-of-generation token ended it.

This script does not build llama.cpp; it runs installed tools.
usage: gen_qwen35_pre_reference.py LLAMA_BIN_DIR FIXTURES_DIR
Needs gguf-py (PYTHONPATH=<llama.cpp>/gguf-py) and numpy.
"""
import json
import os
import subprocess
import sys
import tempfile

import gguf  # noqa: E402  (from PYTHONPATH)

HERE = os.path.dirname(os.path.abspath(__file__))
COMMIT = "81ff7abe50b95fb81cc70a6cdba1eb1a02a48f62"
FIXTURE = "synthetic/qwen35moe-F16.gguf"
N_PREDICT = 32

PROMPTS = [
    "Hello",
    "Cafe\u0301 nai\u0308ve re\u0301sume\u0301",
    "The word \u201cna\u00efve\u201d has a diaeresis; \u201cnai\u0308ve\u201d spells it with U+0308.",
    "Tie\u0302\u0301ng Vie\u0323\u0302t co\u0301 da\u0302\u0301u",
    "!\u0301a (\u0300x) \u0915\u093f\u0924\u093e\u092c 2024",
]


def tokenize(binary, model, text):
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(text.encode("utf-8"))
        path = f.name
    try:
        out = subprocess.run([binary, "-m", model, "-f", path, "--ids", "--no-escape", "--log-disable",
                              "--no-parse-special"], check=True, capture_output=True).stdout.decode()
    finally:
        os.unlink(path)
    return json.loads([l for l in out.splitlines() if l.startswith("[")][-1])


def complete(binary, model, text):
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(text.encode("utf-8"))
        path = f.name
    try:
        # stdout is the generated text, " [end of text]\n" if an end-of-generation
        # token stopped it, then the "\n\n" llama-completion logs when it ends. Its logger is asynchronous: a run whose output lacks that ending may
        # have lost text too, so it is run again.
        for _ in range(5):
            out = subprocess.run([binary, "-m", model, "-f", path, "-n", str(N_PREDICT), "--temp", "0",
                                  "-s", "1", "-t", "2", "-c", "512", "-no-cnv", "--no-display-prompt",
                                  "--no-warmup", "--simple-io"],
                                 check=True, capture_output=True, stdin=subprocess.DEVNULL).stdout
            if out.endswith(b"\n\n"):
                out = out[:-2]
                # An end-of-generation token ends the text with this line.
                eog = out.endswith(b" [end of text]\n")
                return (out[:-len(b" [end of text]\n")] if eog else out), eog
    finally:
        os.unlink(path)
    raise RuntimeError("llama-completion output never complete for %r" % text)


def copy_with_pre(src, dst, pre):
    """src's keys (tokenizer.ggml.pre replaced) and tensors, unchanged otherwise."""
    r = gguf.GGUFReader(src)
    arch = str(bytes(r.fields["general.architecture"].parts[-1]), "utf-8")
    w = gguf.GGUFWriter(dst, arch)
    for key, f in r.fields.items():
        if key.startswith("GGUF.") or key in ("general.architecture", "tokenizer.ggml.pre"):
            continue
        t = f.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            sub = f.types[-1]
            if sub == gguf.GGUFValueType.STRING:
                w.add_array(key, [str(bytes(f.parts[i]), "utf-8") for i in f.data])
            else:
                w.add_key_value(key, [f.parts[i].tolist()[0] for i in f.data], t, sub)
        elif t == gguf.GGUFValueType.STRING:
            w.add_string(key, str(bytes(f.parts[-1]), "utf-8"))
        else:
            w.add_key_value(key, f.parts[-1].tolist()[0], t)
    w.add_tokenizer_pre(pre)
    for t in r.tensors:
        w.add_tensor_info(t.name, t.data.shape, t.data.dtype, t.data.nbytes, t.tensor_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for t in r.tensors:
        w.write_tensor_data(t.data)
    w.close()


def main():
    bin_dir, fixtures = sys.argv[1:3]
    src = os.path.join(fixtures, FIXTURE)
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "qwen35moe-F16-pre-qwen35.gguf")
        copy_with_pre(src, copy, "qwen35")
        prompts = []
        for text in PROMPTS:
            greedy, eog = complete(os.path.join(bin_dir, "llama-completion"), copy, text)
            prompts.append({
                "text": text,
                "tokens_model": tokenize(os.path.join(bin_dir, "llama-tokenize"), copy, text),
                "greedy_text_hex": greedy.hex(),
                "stopped_at_eog": eog,
            })
            print(prompts[-1], file=sys.stderr)
    doc = {
        "about": "llama.cpp on synthetic/qwen35moe-F16.gguf with tokenizer.ggml.pre = qwen35: prompt ids "
                 "(llama-tokenize, add_special, parse_special off) and the "
                 "greedy continuation (llama-completion --temp 0 -n 32, stopping at end of generation). Regenerate with "
                 "gen_qwen35_pre_reference.py.",
        "llama_cpp_commit": COMMIT,
        "fixture": FIXTURE,
        "n_predict": N_PREDICT,
        "prompts": prompts,
    }
    with open(os.path.join(HERE, "qwen35moe-F16-pre-qwen35.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
