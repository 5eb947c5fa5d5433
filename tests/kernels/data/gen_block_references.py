#!/usr/bin/env python3
"""Regenerates the block-decoding references of tests/kernels/data: for each
format, <stem>.qbytes (raw ggml blocks: seeded random blocks and adversarial
ones that reach every scale, sign, code and exponent) and <stem>.dequant.f32
(what llama.cpp's gguf-py dequantises them to: its numpy decoders evaluate
ggml-quants.c's dequantize_row_* formulas one F32 operation at a time, in the
same order). test_block_references.cpp checks every kernel tier's
dequantize_row against these bit for bit.

usage: PYTHONPATH=<llama.cpp>/gguf-py gen_block_references.py [OUT_DIR]
(OUT_DIR defaults to this script's folder; needs numpy.)

To add a format: write a generator returning the raw blocks as a uint8 array
of shape (n_blocks, block_bytes) and list it in FORMATS.
"""
import os
import sys

import numpy as np
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as T
from gguf.quants import dequantize

F16_SPECIAL = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7C00, 0xFC00,
               0x7E00]  # 0, -0, 1, -1, +-max, +-min subnormal, max subnormal, min normal, +-inf, NaN


def f16_bytes(bits):
    return np.array([bits & 0xFF, bits >> 8], dtype=np.uint8)


def random_f16(rng, n, scale):
    d = (rng.standard_normal(n) * scale).astype(np.float16)
    return d.view(np.uint8).reshape(n, 2)


def iq4_xs_blocks(rng):
    """136-byte blocks: d (F16), scales_h (u16), scales_l[4], qs[128]."""
    blocks = []
    # Adversarial: 64 blocks; sub-block j of block k has the 6-bit scale
    # (k + 8 j) % 64, so every position meets every scale; code bytes cycle so
    # every nibble value appears at every byte position across blocks.
    for k in range(64):
        ls = [(k + 8 * j) % 64 for j in range(8)]
        scales_h = 0
        scales_l = np.zeros(4, dtype=np.uint8)
        for j, v in enumerate(ls):
            scales_l[j // 2] |= (v & 0xF) << (4 * (j % 2))
            scales_h |= (v >> 4) << (2 * j)
        i = np.arange(128)
        qs = (((i + k) % 16) | (((3 * i + 5 * k + 7) % 16) << 4)).astype(np.uint8)
        d = F16_SPECIAL[k % len(F16_SPECIAL)] if k < 2 * len(F16_SPECIAL) else int(
            np.float16(0.001 * (k - 31)).view(np.uint16))
        blocks.append(np.concatenate([f16_bytes(d), f16_bytes(scales_h), scales_l, qs]))
    # Random: 32 blocks of random bytes with a random F16 d.
    raw = rng.integers(0, 256, size=(32, 136), dtype=np.uint8)
    raw[:, 0:2] = random_f16(rng, 32, 0.01)
    return np.concatenate([np.stack(blocks), raw])


def mxfp4_blocks(rng):
    """17-byte blocks: e (E8M0), qs[16]."""
    blocks = []
    # Every exponent 0..255 (subnormal halves, 2^127, the NaN code 0xFF read as
    # a number), each with all 16 codes in both nibble halves.
    for e in range(256):
        j = np.arange(16)
        qs = (((j + e) % 16) | (((15 - j + e) % 16) << 4)).astype(np.uint8)
        blocks.append(np.concatenate([np.array([e], dtype=np.uint8), qs]))
    raw = rng.integers(0, 256, size=(32, 17), dtype=np.uint8)
    raw[:, 0] = rng.integers(110, 135, size=32)
    return np.concatenate([np.stack(blocks), raw])


def ternary_blocks(rng, qs_bytes, block_bytes):
    """TQ1_0 (54 bytes: qs[48], qh[4], d) / TQ2_0 (66 bytes: qs[64], d) blocks."""
    blocks = []
    # Adversarial: every byte value at every code-byte position across blocks
    # (TQ1_0 decodes bytes >= 243 too), every F16 special scale.
    for k in range(256):
        codes = ((np.arange(qs_bytes) * 7 + k) % 256).astype(np.uint8)
        d = F16_SPECIAL[k % len(F16_SPECIAL)] if k < 2 * len(F16_SPECIAL) else int(
            np.float16(0.01 * ((k % 37) - 18)).view(np.uint16))
        blocks.append(np.concatenate([codes, f16_bytes(d)]))
    raw = rng.integers(0, 256, size=(32, block_bytes), dtype=np.uint8)
    raw[:, -2:] = random_f16(rng, 32, 0.05)
    return np.concatenate([np.stack(blocks), raw])


# stem: (type, generator). Stems name the files; the C++ test lists the same stems.
FORMATS = {
    "iq4_xs": (T.IQ4_XS, iq4_xs_blocks),
    "mxfp4": (T.MXFP4, mxfp4_blocks),
    "tq1_0": (T.TQ1_0, lambda rng: ternary_blocks(rng, 52, 54)),
    "tq2_0": (T.TQ2_0, lambda rng: ternary_blocks(rng, 64, 66)),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for stem, (qtype, gen) in FORMATS.items():
        rng = np.random.default_rng(20260708)
        blocks = gen(rng)
        block_size, type_size = GGML_QUANT_SIZES[qtype]
        assert blocks.dtype == np.uint8 and blocks.shape[1] == type_size, stem
        with np.errstate(invalid="ignore", over="ignore"):
            values = dequantize(blocks.reshape(1, -1), qtype).astype(np.float32).reshape(-1)
        assert values.size == blocks.shape[0] * block_size
        blocks.tofile(os.path.join(out, stem + ".qbytes"))
        values.astype("<f4").tofile(os.path.join(out, stem + ".dequant.f32"))
        print(f"{stem}: {blocks.shape[0]} blocks, {values.size} values")


if __name__ == "__main__":
    main()
