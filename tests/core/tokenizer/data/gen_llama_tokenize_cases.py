#!/usr/bin/env python3
"""Regenerates llama_tokenize_cases.json: the token ids llama.cpp's
llama-tokenize gives for extra strings (accents, emoji, digits, code,
contractions, special-token texts, whitespace runs) on the vocab-only GGUFs of
shared/fixtures/tokenizer, with parse_special on and off and no BOS/EOS.
test_tokenizer_llama_cases.cpp checks LES against the file.

usage: gen_llama_tokenize_cases.py LLAMA_TOKENIZE FIXTURES_DIR OUT.json
(LLAMA_TOKENIZE: shared/tools/build-llama-cpp.sh builds it at the fixtures'
llama.cpp commit into ~/.cache/les-peers/llama.cpp-81ff7abe/build/bin.)
"""
import json
import os
import subprocess
import sys
import tempfile

VOCABS = ["baichuan", "bert-bge", "deepseek-coder", "deepseek-llm", "falcon", "gpt-2", "gpt-neox",
          "llama-spm", "mpt", "phi-3", "refact", "starcoder"]

STRINGS = [
    "Hello world",
    " Hello World!  ",
    "don't you'll I'M we've THEY'RE it's O'Neil's",
    "3.14159 1234567890 12,345,678 007 \u0661\u0662\u0663",
    "00000000000000000000",
    "na\u00efve caf\u00e9 r\u00e9sum\u00e9 \u00d1and\u00fa Stra\u00dfe \u0130stanbul \u00c0\u00c9\u00ce\u00d5\u00dc",
    "a\u0301 e\u0308 o\u0302 (combining marks)",
    "emoji \U0001F999\U0001F525 \U0001F468\u200D\U0001F469\u200D\U0001F467 \u2713 \u00a9",
    "def f(x):\n\treturn x**2  # comment\n",
    "  \n\n   \t\t  spaces   ",
    "\u4e2d\u6587\u5b57\u7b26 \u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4",
    "x=1;y=2;z=x+y$ ^~|`<=> a<b>c",
    "\u00a0nbsp\u2009thin\u3000ideographic",
    "\uff26\uff55\uff4c\uff4c\uff57\uff49\uff44\uff54\uff48 \uff11\uff12\uff13",
    "....!!!???---___***",
    "http://example.com/path?q=1&r=2#frag",
    "tab\tsep\tvalues\r\nwindows line",
    "Mr. O'Neil's dog\u2014it's 5'11\" tall",
    "</s> text",
    "<s>hello</s> world",
    "<|endoftext|> x <|endoftext|>",
    "<unk> [CLS] [SEP] [MASK] <pad>",
    "<|user|>\nHi<|end|>\n<|assistant|>",
    "<|im_start|>user\nhi<|im_end|>",
]


def llama_tokenize(binary, model, text, parse_special):
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(text.encode("utf-8"))
        path = f.name
    try:
        args = [binary, "-m", model, "-f", path, "--ids", "--no-bos", "--no-escape", "--log-disable"]
        if not parse_special:
            args.append("--no-parse-special")
        out = subprocess.run(args, check=True, capture_output=True).stdout.decode()
    finally:
        os.unlink(path)
    line = [l for l in out.splitlines() if l.startswith("[")][-1]
    return json.loads(line)


def main():
    binary, fixtures, out_path = sys.argv[1:4]
    cases = []
    for vocab in VOCABS:
        model = os.path.join(fixtures, "tokenizer", "ggml-vocab-%s.gguf" % vocab)
        for text in STRINGS:
            for parse_special in (False, True):
                ids = llama_tokenize(binary, model, text, parse_special)
                cases.append({"vocab": vocab, "text": text, "parse_special": parse_special, "ids": ids})
    doc = {
        "about": "llama-tokenize ids (no BOS/EOS) for extra strings; regenerate with gen_llama_tokenize_cases.py",
        "llama_cpp_commit": "81ff7abe50b95fb81cc70a6cdba1eb1a02a48f62",
        "cases": cases,
    }
    with open(out_path, "w", encoding="utf-8") as f:  # one case per line
        f.write('{"about": %s,\n "llama_cpp_commit": %s,\n "cases": [\n'
                % (json.dumps(doc["about"]), json.dumps(doc["llama_cpp_commit"])))
        f.write(",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
