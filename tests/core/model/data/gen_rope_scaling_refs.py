#!/usr/bin/env python3
"""Regenerates rope_scaling_refs.json: llama.cpp's greedy text and
log-probabilities for the copies of the trained qwen3moe fixture that
test_rope_scaling.cpp checks LES against (rope.scaling.* keys set, or routers
retyped to F16 / BF16 / Q8_0).

The copies are written by LES itself (the test executable's hidden case
"[.write_variants]"), so llama.cpp runs on the very bytes the test rebuilds.
Greedy text: llama-completion --temp 0 (argmax), the prompt not echoed, EOS
not ignored (--ignore-eos would bias the logits). Log-probabilities:
llama-perplexity --kl-divergence-base on the first chunk (n_ctx 64) of the
corpus validation text, decoded from its 16-bit file format; the top 10 ids
per scored position are kept.

usage: gen_rope_scaling_refs.py TEST_EXE LLAMA_BIN_DIR FIXTURES_DIR OUT.json
(LLAMA_BIN_DIR: ~/.cache/les-peers/llama.cpp-81ff7abe/build/bin, built by
shared/tools/build-llama-cpp.sh; TEST_EXE: build/tests/core_test_rope_scaling.)
"""
import json
import os
import subprocess
import sys
import tempfile

from llama_refs import completion, logprobs

N_PREDICT = 24
# Log-probabilities only for the RoPE variants (routers: greedy text).
LOGPROB_VARIANTS = ["yarn", "yarn_attn_factor", "linear"]
VARIANTS = ["yarn", "yarn_attn_factor", "linear", "router_f16", "router_bf16", "router_q8_0"]


def main():
    test_exe, bin_dir, fixtures, out_path = sys.argv[1:5]
    with open(os.path.join(fixtures, "trained/reference/tiny-qwen3moe-F16.json")) as f:
        prompts = [p["text"] for p in json.load(f)["prompts"]]
    with open(os.path.join(fixtures, "corpus/validation.txt"), encoding="utf-8") as f:
        text = f.read()[:4000]
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, LES_VARIANTS_OUT=d, LES_FIXTURES_DIR=fixtures)
        subprocess.run([test_exe, "[.write_variants]"], check=True, env=env)
        text_path = os.path.join(d, "text.txt")
        with open(text_path, "w", encoding="utf-8") as f:
            f.write(text)
        source = os.path.join(fixtures, "trained/tiny-qwen3moe-F16.gguf")
        refs = {"llama_cpp_commit": "81ff7abe", "source": "trained/tiny-qwen3moe-F16.gguf", "n_predict": N_PREDICT,
                "prompts": prompts, "base_greedy": [completion(bin_dir, source, p, N_PREDICT) for p in prompts], "variants": {}}
        for v in VARIANTS:
            model = os.path.join(d, v + ".gguf")
            entry = {"greedy": [completion(bin_dir, model, p, N_PREDICT) for p in prompts]}
            if v in LOGPROB_VARIANTS:
                entry["logprobs"] = logprobs(bin_dir, model, text_path)
            refs["variants"][v] = entry
            print(v, "done", file=sys.stderr)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(refs, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
