"""Shared by the gen_*_refs.py scripts here: llama.cpp's greedy text
(llama-completion) and log-probabilities (llama-perplexity
--kl-divergence-base, decoded from its 16-bit file format) for a GGUF file."""
import os
import struct
import subprocess
import tempfile


def completion(bin_dir, model, prompt, n_predict):
    """Greedy continuation (--temp 0: argmax), prompt not echoed, EOS not
    ignored (--ignore-eos would bias the logits): the pieces llama-completion
    prints (common_token_to_piece of each generated token, special tokens
    not rendered). It ends its output with "\n\n" (after " [end of text]\n"
    when it stopped at EOS); its log thread can lose the tail of the output
    when the process exits (llama.cpp issue 22142), so a run whose output
    lacks that ending is repeated."""
    args = [os.path.join(bin_dir, "llama-completion"), "-m", model, "-p", prompt, "-n", str(n_predict),
            "--temp", "0", "-no-cnv", "--no-display-prompt", "--no-warmup", "-t", "2", "-c", "256", "--simple-io"]
    for _ in range(5):
        out = subprocess.run(args, check=True, capture_output=True).stdout.decode("utf-8")
        if out.endswith("\n\n"):
            out = out[:-2]
            return out[:-len(" [end of text]\n")] if out.endswith(" [end of text]\n") else out
    raise RuntimeError("llama-completion output keeps losing its tail: " + repr(out))


def logprobs(bin_dir, model, text_path, n_ctx=64, top=10):
    """Chunk 0 of llama-perplexity on text_path (BOS first): the evaluated
    tokens and, at the scored positions n_ctx/2 .. n_ctx-2, the top ids with
    their log-probabilities."""
    with tempfile.TemporaryDirectory() as d:
        base = os.path.join(d, "base.bin")
        args = [os.path.join(bin_dir, "llama-perplexity"), "-m", model, "-f", text_path, "-c", str(n_ctx),
                "-b", str(n_ctx), "--chunks", "1", "--kl-divergence-base", base, "-t", "2"]
        subprocess.run(args, check=True, capture_output=True)
        with open(base, "rb") as f:
            data = f.read()
    assert data[:8] == b"_logits_"
    n_ctx_f, n_vocab, n_chunk = struct.unpack_from("<Iii", data, 8)
    assert n_ctx_f == n_ctx
    off = 20
    tokens = list(struct.unpack_from("<%di" % (n_chunk * n_ctx), data, off))
    off += 4 * n_chunk * n_ctx
    nv = 2 * ((n_vocab + 1) // 2) + 4
    first = n_ctx // 2
    out = []
    for _ in range(n_ctx - 1 - first):
        scale, min_lp = struct.unpack_from("<ff", data, off)
        codes = struct.unpack_from("<%dH" % n_vocab, data, off + 8)
        off += 2 * nv
        order = sorted(range(n_vocab), key=lambda i: (-codes[i], i))[:top]
        out.append([[i, scale * codes[i] + min_lp] for i in order])
    evaluated = tokens[:n_ctx]
    return {"tokens": evaluated, "first_position": first, "top": out,
            "note": "llama-perplexity chunk 0 (BOS first), log p at positions n_ctx/2 .. n_ctx-2, top %d ids" % top}
