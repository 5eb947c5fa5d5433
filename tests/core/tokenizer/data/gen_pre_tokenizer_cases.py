#!/usr/bin/env python3
"""Regenerates the pre-tokenizer reference: what llama.cpp's llama-tokenize
gives for every tokenizer.ggml.pre name it accepts, on three vocabularies,
for llama.cpp's .inp test strings plus hard strings of our own.
test_pre_tokenizer_llama.cpp checks LES against it.

Outputs (next to this script):
  probe-bytes.gguf  a byte-level BPE vocab trained on the test strings WITHOUT
                    pre-tokenization (a merge for every adjacent pair of bytes,
                    then the most frequent pairs), so its merges cross the
                    places a pre-tokenizer may split: a difference in where
                    text is split changes the token ids. A few whole-word tokens that
                    no merge reaches exercise ignore_merges.
  probe-chars.gguf  the same for SentencePiece-style BPE (raw UTF-8 characters,
                    U+2581 for spaces, <0xNN> byte tokens; some characters are
                    left out so byte fallback happens), for the names without
                    byte encoding (gemma4, granite-embed-multi-311m, sarvam-moe,
                    whitespace) and the tokenizer models "whitespace" and "gemma4".
  pre_tokenizer_cases.json  the ids, per vocabulary, name and string.
The third vocabulary is the real GPT-2 one, FIXTURES_DIR/tokenizer/ggml-vocab-gpt-2.gguf.

For each (vocabulary, name) the vocabulary is copied with tokenizer.ggml.pre
set to the name and llama-tokenize runs once on all strings joined by the
CONTROL token <|les_sep|> with special-token parsing on: llama.cpp tokenizes
the text between special tokens piece by piece, so the ids between two
separators are exactly that string's ids (the script checks that no string
contains a token text that special parsing could match). One more run on
"Hello world" with BOS/EOS (no --no-bos) records what each name adds.

This script does not build llama.cpp; it runs an installed llama-tokenize.
usage: gen_pre_tokenizer_cases.py LLAMA_TOKENIZE LLAMA_CPP_SRC FIXTURES_DIR
  LLAMA_CPP_SRC: llama.cpp source tree at the reference commit (the names are
  read from its src/llama-vocab.cpp); FIXTURES_DIR: ../shared/fixtures.
Needs gguf-py (PYTHONPATH=LLAMA_CPP_SRC/gguf-py) and numpy.
"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

import gguf  # noqa: E402  (from PYTHONPATH)

HERE = os.path.dirname(os.path.abspath(__file__))
SEP = "<|les_sep|>"
COMMIT = "81ff7abe50b95fb81cc70a6cdba1eb1a02a48f62"

# Hard strings of our own: combining marks, CJK, emoji, digit runs, mixed
# case, whitespace runs, contractions, and the inputs of the stranger stages.
HARD = [
    "a\u0301 e\u0308 o\u0302 Cafe\u0301 nai\u0308ve",
    "\u0301abc \u0301x !\u0301 1\u0301 \u0300\u0301\u0302 \u4e2d\u0301",
    "\u0939\u093f\u0928\u094d\u0926\u0940 \u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22 \u09ac\u09be\u0982\u09b2\u09be",
    "Tie\u0302\u0301ng Vie\u0323\u0302t \u05e9\u05b8\u05c1\u05dc\u05d5\u05b9\u05dd \u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\u4e2d\u6587\u5b57\u7b26 \u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4 \u6f22\u5b57kanji\u6df7\u5408123",
    "\U00020000\U00020001 \uf900 \u3072\u3089\u304c\u306a\u30ab\u30bf\u30ab\u30ca \uff76\uff80\uff76\uff85 \u3131\u3134\u3137 \u1100\u1101\u1102 \u3105\u3106\u3107",
    "\u4e2d\u6587English\u6df7\u5408 Kimi\u6a21\u578b\u7684tokenizer\u3002\uff01",
    "\U0001F999\U0001F525 \U0001F468\u200D\U0001F469\u200D\U0001F467 \u2713 \u00a9 \U0001F1FA\U0001F1F8 \U0001F44D\U0001F3FD",
    "1234567890123 12,345.678 $1,000,000 3.14159265358979 0 00 000 0000 00000",
    "\u0663\u0664\u0665 \u0661\u0662\u0663 \uff11\uff12\uff13\uff14 x\u00b2\u00b3 \u216b \u0e51\u0e52\u0e53 abc123def4567",
    "12345678901234567890 a1b22c333d4444e55555",
    "a  1234 b\t\t56\n\n789 x 12 (3456) \u00e9  7",
    "HelloWorld iPhone McDonald's HTTPServer \u00c9COLE \u00e9cole \u00c0\u00c9\u00ce\u00d5\u00dc\u00e0\u00e9\u00ee\u00f5\u00fc",
    "\u01c4 \u01c5 \u01c6 \u01c5ungla \u0391\u0392\u0393\u03b1\u03b2\u03b3 \u041f\u0420\u0418\u0412\u0415\u0422 \u043f\u0440\u0438\u0432\u0435\u0442 \u13e3\u13b3\u13a9",
    "camelCaseString snake_case_string SCREAMING_SNAKE MixedUPandDOWN ABCdefGHI aBC",
    "   ",
    "\t\t",
    "\n\n\n",
    " \n \n ",
    "a  b   c    d",
    "\r\n\r\nx\r\n",
    "\u00a0\u2009\u3000 x\u3000\u3000y \u2028line\u2029para \v\f a\u0085b",
    "trailing   ",
    "   leading",
    " " * 600 + "x" + "\t" * 20 + "y",
    "don't DON'T can't I'm you're we've they'll she'd it's",
    "'s 'S 'Re 'LL 'd o'clock rock'n'roll don\u2019t ''' l'homme 'tis ITS'",
    "~~~ ~a a~ $$$ +++ <=> ^^^ ``` ||| @@@ ###",
    "~a ~~ a~b (~) a ~ b x~\n~ \u00e9~\u00e9",
    "\u2026\u3002\uff0c\u3001 \u00bf\u00a1\u00ab\u00bb \u2014\u2013- \u00a9 \u00ae \u2122 \u20ac \u00a3 \u00a5 ((())) a/b\\c",
    "e.g., i.e.!? \u0964\u06d4\u060c (x|y) [z]",
    "<sentinel:12>IMGIMGABCZ IMGIMGABCDEFZ\tx\n  y    z",
    "def f(x):\n    return x**2\n\nif (a && b) { c++; }\n",
    "std::vector<int> v{1,2,3}; // http://example.com/a?b=c&d=e#f",
    "word word word a b c d e f \ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8",
    "\x01\x02\x1f a\u200bb \ufeffx \ue000 \u0378",
    "Hello world",
    "Hello",
    " Hello",
]

# Whole-word tokens added to probe-bytes without merges that reach them.
WHOLE_WORDS = ["Hello", " Hello", " world", "don", "'t", "HelloWorld", "\u00c9COLE", "123", "\u4e2d\u6587"]


def read_inp_strings(fixtures):
    tok_dir = os.path.join(fixtures, "tokenizer")
    seen, out = set(), []
    for name in sorted(os.listdir(tok_dir)):
        if not name.endswith(".inp"):
            continue
        with open(os.path.join(tok_dir, name), encoding="utf-8") as f:
            for s in f.read().split("\n__ggml_vocab_test__\n"):
                if s not in seen:
                    seen.add(s)
                    out.append(s)
    return out


def llama_cpp_names(src):
    with open(os.path.join(src, "src", "llama-vocab.cpp"), encoding="utf-8") as f:
        text = f.read()
    # The names of the if-else chain that maps a name to a type (llama_vocab::impl::load).
    text = text[text.index('tokenizer_pre == "default"'):text.index("unknown pre-tokenizer type")]
    names = []
    for n in re.findall(r'tokenizer_pre == "([^"]+)"', text):
        if n not in names:
            names.append(n)
    return names


def byte_map():
    bs = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    out, n = {}, 0
    for b in range(256):
        if b in bs:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return out


def bpe_encode(seq, ranks):
    """Standard BPE: merge the adjacent pair of lowest rank until none has one."""
    seq = list(seq)
    while len(seq) > 1:
        best = min(range(len(seq) - 1), key=lambda i: (ranks.get((seq[i], seq[i + 1]), 1 << 30), i))
        if (seq[best], seq[best + 1]) not in ranks:
            break
        seq[best:best + 2] = [seq[best] + seq[best + 1]]
    return seq


def train(seqs, max_merges, max_len):
    """BPE without pre-tokenization. First a merge for every adjacent pair of
    characters in the strings (most frequent first), then greedily the most
    frequent adjacent pair of the encoded strings (ties to the smallest pair);
    pairs longer than max_len characters are skipped."""
    seqs = [list(s) for s in seqs if s]
    counts = collections.Counter(p for s in seqs for p in zip(s, s[1:]))
    merges = [p for p, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    ranks = {m: i for i, m in enumerate(merges)}
    seqs = [bpe_encode(s, ranks) for s in seqs]
    while len(merges) < max_merges:
        counts = collections.Counter()
        for s in seqs:
            for a, b in zip(s, s[1:]):
                if len(a) + len(b) <= max_len and (a, b) not in ranks:
                    counts[(a, b)] += 1
        if not counts:
            break
        best = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        ranks[best] = len(merges)
        merges.append(best)
        joined = best[0] + best[1]
        for i, s in enumerate(seqs):
            out, k = [], 0
            while k < len(s):
                if k + 1 < len(s) and s[k] == best[0] and s[k + 1] == best[1]:
                    out.append(joined)
                    k += 2
                else:
                    out.append(s[k])
                    k += 1
            seqs[i] = out
    return merges


def write_vocab(path, tokens, types, merges, bos, eos, model="gpt2", pre="default"):
    w = gguf.GGUFWriter(path, "gpt2")
    w.add_name("les pre-tokenizer probe")
    w.add_tokenizer_model(model)
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(["%s %s" % m for m in merges])
    w.add_bos_token_id(bos)
    w.add_eos_token_id(eos)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def specials(tokens, types):
    ids = {}
    for t in ["<s>", "</s>", SEP]:
        ids[t] = len(tokens)
        tokens.append(t)
        types.append(gguf.TokenType.CONTROL)
    return ids


def make_probe_bytes(strings, path):
    bm = byte_map()
    enc = lambda s: "".join(bm[b] for b in s.encode("utf-8"))  # noqa: E731
    merges = train([enc(s) for s in strings], 6000, 48)
    tokens = [bm[b] for b in range(256)]
    known = set(tokens)
    for a, b in merges:
        if a + b not in known:
            known.add(a + b)
            tokens.append(a + b)
    for w in WHOLE_WORDS:
        if enc(w) not in known:
            known.add(enc(w))
            tokens.append(enc(w))
    types = [gguf.TokenType.NORMAL] * len(tokens)
    sp = specials(tokens, types)
    write_vocab(path, tokens, types, merges, sp["<s>"], sp["</s>"])
    return len(tokens), len(merges)


def make_probe_chars(strings, path):
    # Characters of the escaped strings; emoji and a few others are left out (byte fallback).
    esc = [s.replace(" ", "\u2581") for s in strings]
    left_out = lambda c: ord(c) >= 0x1F000 or c in "\u00e9\u4e2d"  # noqa: E731
    corpus = []
    for s in esc:
        for part in re.split(r"(\n+)", s):
            if part and not part.startswith("\n") and not any(left_out(c) for c in part):
                corpus.append(part)
    merges = train(corpus, 4000, 16)
    tokens = ["<0x%02X>" % b for b in range(256)]
    types = [gguf.TokenType.BYTE] * 256
    known = set()
    for s in esc:
        for c in s:
            if c not in known and not left_out(c) and c != "\n":
                known.add(c)
                tokens.append(c)
                types.append(gguf.TokenType.NORMAL)
    for t in ["\n", "\n\n", "\n\n\n"] + [a + b for a, b in merges]:
        if t not in known:
            known.add(t)
            tokens.append(t)
            types.append(gguf.TokenType.NORMAL)
    sp = specials(tokens, types)
    write_vocab(path, tokens, types, merges, sp["<s>"], sp["</s>"])
    return len(tokens), len(merges)


def copy_with_pre(src, dst, pre, model=None):
    r = gguf.GGUFReader(src)
    w = gguf.GGUFWriter(dst, str(bytes(r.fields["general.architecture"].parts[-1]), "utf-8"))
    for key, f in r.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        if key == "tokenizer.ggml.pre":
            continue
        if key == "tokenizer.ggml.model" and model is not None:
            w.add_tokenizer_model(model)
            continue
        t = f.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            sub = f.types[-1]
            if sub == gguf.GGUFValueType.STRING:
                val = [str(bytes(f.parts[i]), "utf-8") for i in f.data]
            else:
                val = [f.parts[i].tolist()[0] for i in f.data]
            w.add_array(key, val) if sub == gguf.GGUFValueType.STRING else w.add_key_value(key, val, t, sub)
        elif t == gguf.GGUFValueType.STRING:
            w.add_string(key, str(bytes(f.parts[-1]), "utf-8"))
        else:
            w.add_key_value(key, f.parts[-1].tolist()[0], t)
    w.add_tokenizer_pre(pre)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def vocab_texts(path):
    r = gguf.GGUFReader(path)
    f = r.fields["tokenizer.ggml.tokens"]
    tt = r.fields["tokenizer.ggml.token_type"]
    texts = [str(bytes(f.parts[i]), "utf-8") for i in f.data]
    types = [int(tt.parts[i][0]) for i in tt.data]
    return texts, types


def run_tokenize(binary, model, text, add_special):
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(text.encode("utf-8"))
        path = f.name
    try:
        args = [binary, "-m", model, "-f", path, "--ids", "--no-escape", "--log-disable"]
        if not add_special:
            args.append("--no-bos")
        r = subprocess.run(args, capture_output=True)
        if r.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr.decode()[-2000:]))
    finally:
        os.unlink(path)
    return json.loads([l for l in r.stdout.decode().splitlines() if l.startswith("[")][-1])


def main():
    binary, src, fixtures = sys.argv[1:4]
    strings = read_inp_strings(fixtures) + HARD
    names = llama_cpp_names(src)
    raw_names = {"gemma4", "granite-embed-multi-311m", "sarvam-moe", "whitespace"}
    bytes_path = os.path.join(HERE, "probe-bytes.gguf")
    chars_path = os.path.join(HERE, "probe-chars.gguf")
    print("probe-bytes: %d tokens, %d merges" % make_probe_bytes(strings, bytes_path))
    print("probe-chars: %d tokens, %d merges" % make_probe_chars(strings, chars_path))
    vocabs = {
        "probe-bytes": (bytes_path, [n for n in names if n not in raw_names]),
        # "whitespace" as the converter writes it (tokenizer model "whitespace"; with
        # model "gpt2" llama.cpp aborts on a space: its BPE asserts symbols have none),
        # and the "gemma4" tokenizer model (whose pre-tokenizer is always gemma4).
        "probe-chars": (chars_path, [n for n in names if n in raw_names and n != "whitespace"] +
                        ["whitespace@whitespace", "default@gemma4"]),
        "gpt-2": (os.path.join(fixtures, "tokenizer", "ggml-vocab-gpt-2.gguf"),
                  [n for n in names if n not in raw_names]),
    }
    pool, pool_index = [], {}

    def intern(ids):
        key = " ".join(map(str, ids))
        if key not in pool_index:
            pool_index[key] = len(pool)
            pool.append(key)
        return pool_index[key]

    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for vname, (base, vnames) in vocabs.items():
            texts, types = vocab_texts(base)
            special_texts = [t for t, ty in zip(texts, types) if ty in (3, 4)]
            for s in strings:
                for t in special_texts:
                    assert t not in s, "string %r contains special token text %r" % (s, t)
            sep_id = texts.index(SEP) if SEP in texts else texts.index("<|endoftext|>")
            sep_text = texts[sep_id]
            for name in vnames:
                path = os.path.join(tmp, "v.gguf")
                pre, _, model = name.partition("@")
                copy_with_pre(base, path, pre, model=model or None)
                joined = run_tokenize(binary, path, sep_text.join(strings), False)
                per, cur = [], []
                for i in joined:
                    if i == sep_id:
                        per.append(cur)
                        cur = []
                    else:
                        cur.append(i)
                per.append(cur)
                assert len(per) == len(strings), (vname, name, len(per))
                with_special = run_tokenize(binary, path, "Hello world", True)
                case = {"vocab": vname, "pre": pre}
                if model:
                    case["model"] = model
                case.update({"ids": [intern(p) for p in per], "hello_with_special": with_special})
                cases.append(case)
                print(vname, name, file=sys.stderr)
    doc = {
        "about": "llama-tokenize ids (parse_special off, no BOS/EOS) per vocab, pre-tokenizer name and string; "
                 "ids[i] indexes pool (space-separated ids). Regenerate with gen_pre_tokenizer_cases.py.",
        "llama_cpp_commit": COMMIT,
        "names": names,
        "strings": strings,
        "pool": pool,
        "cases": cases,
    }
    with open(os.path.join(HERE, "pre_tokenizer_cases.json"), "w", encoding="utf-8") as f:
        f.write("{\n")
        for k in ["about", "llama_cpp_commit", "names", "strings", "pool"]:
            f.write(" %s: %s,\n" % (json.dumps(k), json.dumps(doc[k], ensure_ascii=False)))
        f.write(' "cases": [\n')
        f.write(",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
