#!/usr/bin/env python3
"""Regenerates gemma3_refs.json: llama-perplexity's log-probabilities (first
n_ctx 64 chunk of the corpus validation text) for the tiny random-weight
gemma3 models test_gemma3.cpp writes (its hidden case "[.write_gemma3]"), so
llama.cpp runs on the very bytes the test rebuilds.

usage: gen_gemma3_refs.py TEST_EXE LLAMA_BIN_DIR FIXTURES_DIR OUT.json
(TEST_EXE: build/tests/core_test_gemma3; LLAMA_BIN_DIR: the llama.cpp 81ff7abe
tools shared/tools/build-llama-cpp.sh builds.)
"""
import json
import os
import subprocess
import sys
import tempfile

from llama_refs import logprobs

MODELS = ["gemma3_default", "gemma3_variants"]


def main():
    test_exe, bin_dir, fixtures, out_path = sys.argv[1:5]
    with open(os.path.join(fixtures, "corpus/validation.txt"), encoding="utf-8") as f:
        text = f.read()[:4000]
    refs = {"llama_cpp_commit": "81ff7abe", "models": {}}
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, LES_VARIANTS_OUT=d, LES_FIXTURES_DIR=fixtures)
        subprocess.run([test_exe, "[.write_gemma3]"], check=True, env=env)
        text_path = os.path.join(d, "text.txt")
        with open(text_path, "w", encoding="utf-8") as f:
            f.write(text)
        for m in MODELS:
            refs["models"][m] = logprobs(bin_dir, os.path.join(d, m + ".gguf"), text_path)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(refs, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
