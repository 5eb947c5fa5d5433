#!/usr/bin/env python3
"""Writes a copy of a GGUF model keeping only its first N layers (blk.0 .. blk.N-1)
and, optionally, its first V vocabulary entries.

Used to make the i-quant golden fixtures small (README.md next to this file):
the trained fixture's F16 file cut to 2 layers and 2048 tokens, then quantised
by llama-quantize. Cutting the vocabulary keeps the first V pieces of the
SentencePiece vocabulary (the control and byte-fallback tokens and the
highest-ranked merges) and the first V rows of token_embd and output; the
tokenizer then spells words with the pieces that are left.
Needs the gguf Python package (pip install gguf, or PYTHONPATH=<llama.cpp>/gguf-py).

Usage: truncate_layers.py IN.gguf OUT.gguf N [V]
"""
import re
import sys

import gguf


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    src, dst, n_keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
    n_vocab = int(sys.argv[4]) if len(sys.argv) == 5 else 0
    vocab_arrays = {gguf.Keys.Tokenizer.LIST, gguf.Keys.Tokenizer.SCORES, gguf.Keys.Tokenizer.TOKEN_TYPE}
    reader = gguf.GGUFReader(src)
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(dst, arch)
    block_count_key = gguf.Keys.LLM.BLOCK_COUNT.format(arch=arch)
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        value = field.contents()
        if field.name == block_count_key:
            if n_keep > value:
                sys.exit(f"the model has only {value} layers")
            value = n_keep
        if n_vocab and field.name in vocab_arrays:
            value = value[:n_vocab]
        val_type = field.types[0]
        sub_type = field.types[-1] if val_type == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, value, val_type, sub_type=sub_type)
    kept = []
    for t in reader.tensors:
        m = re.match(r"blk\.(\d+)\.", t.name)
        if m and int(m.group(1)) >= n_keep:
            continue
        data = t.data
        if n_vocab and t.name in ("token_embd.weight", "output.weight"):
            data = data[:n_vocab]
        kept.append(data)
        writer.add_tensor_info(t.name, data.shape, data.dtype, data.nbytes, t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for data in kept:
        writer.write_tensor_data(data, tensor_endianess=reader.endianess)
    writer.close()
    print(f"{dst}: {len(kept)} tensors, {n_keep} layers" + (f", {n_vocab} tokens" if n_vocab else ""))


if __name__ == "__main__":
    main()
