#!/usr/bin/env python3
"""Writes the i-quant dequantisation references of tests/kernels/data/iquants.

For each lattice i-quant (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
IQ1_M) it builds a row of blocks and asks gguf-py (llama.cpp's Python package,
`pip install gguf` or PYTHONPATH=<llama.cpp>/gguf-py) for the values they
stand for:
  <type>.qbytes        the blocks, back to back
  <type>.dequant.f32   gguf's dequantize of them (little-endian float32)
The blocks are
  * coverage blocks: together they use every grid index, every stored sign
    pattern (7-bit or full byte), every scale value and both IQ1 delta signs,
    with ordinary super-block scales d;
  * adversarial blocks: random content with d = +0, -0, the smallest
    subnormal, the smallest normal, the largest finite F16 and +inf;
  * random blocks: random bytes with random d.
Deterministic (fixed seed). Usage: tests/kernels/data/gen_iquant_refs.py [output dir]
"""
import os
import struct
import sys

import numpy as np
from gguf import quants
from gguf.constants import GGMLQuantizationType as Q

rng = np.random.default_rng(20260729)

COVER_D = [1.0, 0.5, -1.25, 0.0078125, 3.0, -0.3330078125, 100.0, 1.0009765625]
SPECIAL_D = [0.0, -0.0, 2.0 ** -24, 2.0 ** -14, 65504.0, float("inf")]


def f16(v):
    return struct.pack("<e", v)


def f16_bits(v):
    return struct.unpack("<H", f16(v))[0]


def random_d():
    return float(np.float16(rng.uniform(0.001, 0.05) * (1 if rng.random() < 0.5 else -1)))


# Each builder: (cover_index k, d) -> block bytes, where k numbers the coverage
# block; group g of block k gets the global number G = k * groups + g.

def iq2_xxs(k, d):
    out = bytearray(f16(d))
    for ib in range(8):
        idx = bytes(((k * 32 + ib * 4 + l) % 256) for l in range(4))
        word = 0
        for l in range(4):
            word |= ((k * 32 + ib * 4 + l) % 128) << (7 * l)
        word |= ((k * 8 + ib) % 16) << 28
        out += idx + struct.pack("<I", word)
    return bytes(out)


def iq2_xs(k, d):
    qs = []
    for g in range(32):
        G = k * 32 + g
        qs.append((G % 512) | ((G * 5 + k) % 128) << 9)
    scales = bytes(((k * 8 + ib) % 16) | (((k * 8 + ib + 5) % 16) << 4) for ib in range(8))
    return f16(d) + struct.pack("<32H", *qs) + scales


def iq2_s(k, d):
    G = [k * 32 + g for g in range(32)]
    idx = [x % 1024 for x in G]
    qs = bytes(i & 255 for i in idx)
    signs = bytes((x * 7 + k) % 256 for x in G)
    qh = bytes(sum(((idx[ib * 4 + l] >> 8) & 3) << (2 * l) for l in range(4)) for ib in range(8))
    scales = bytes(((k * 8 + ib) % 16) | (((k * 8 + ib + 5) % 16) << 4) for ib in range(8))
    return f16(d) + qs + signs + qh + scales


def iq3_xxs(k, d):
    qs = bytes((k * 64 + g) % 256 for g in range(64))
    words = b""
    for ib in range(8):
        w = 0
        for l in range(4):
            w |= ((k * 32 + ib * 4 + l) % 128) << (7 * l)
        w |= ((k * 8 + ib) % 16) << 28
        words += struct.pack("<I", w)
    return f16(d) + qs + words


def iq3_s(k, d):
    idx = [(k * 64 + g) % 512 for g in range(64)]
    qs = bytes(i & 255 for i in idx)
    qh = bytes(sum(((idx[ib * 8 + j] >> 8) & 1) << j for j in range(8)) for ib in range(8))
    signs = bytes((k * 32 + i) % 256 for i in range(32))
    scales = bytes(((k * 4 + i) % 16) | (((k * 4 + i + 7) % 16) << 4) for i in range(4))
    return f16(d) + qs + qh + signs + scales


def iq1_s(k, d):
    idx = [(k * 32 + g) % 2048 for g in range(32)]
    qs = bytes(i & 255 for i in idx)
    qh = []
    for ib in range(8):
        w = 0
        for l in range(4):
            w |= ((idx[ib * 4 + l] >> 8) & 7) << (3 * l)
        w |= ((k * 8 + ib) % 8) << 12
        w |= ((k + ib) % 2) << 15
        qh.append(w)
    return f16(d) + qs + struct.pack("<8H", *qh)


def iq1_m(k, d):
    idx = [(k * 32 + g) % 2048 for g in range(32)]
    qs = bytes(i & 255 for i in idx)
    qh = bytearray(16)
    for g in range(32):
        nib = ((idx[g] >> 8) & 7) | (((k + g // 3) % 2) << 3)
        qh[g // 2] |= nib << (4 * (g % 2))
    dbits = f16_bits(d)
    sc = []
    for w in range(4):
        v = 0
        for half_ib in range(2):
            ib = 2 * w + half_ib
            s1 = (k * 8 + ib) % 8
            s2 = (k * 8 + ib + 3) % 8
            v |= (s1 | (s2 << 3)) << (6 * half_ib)
        v |= ((dbits >> (4 * w)) & 0xF) << 12
        sc.append(v)
    return qs + bytes(qh) + struct.pack("<4H", *sc)


def set_d(t, block, d):
    """The block with its super-block scale replaced by d."""
    b = bytearray(block)
    if t == Q.IQ1_M:
        bits = f16_bits(d)
        for w in range(4):
            off = 48 + 2 * w
            v = struct.unpack_from("<H", b, off)[0]
            v = (v & 0x0FFF) | (((bits >> (4 * w)) & 0xF) << 12)
            struct.pack_into("<H", b, off, v)
    else:
        b[0:2] = f16(d)
    return bytes(b)


TYPES = [
    ("iq2_xxs", Q.IQ2_XXS, iq2_xxs, 256 // 32),
    ("iq2_xs", Q.IQ2_XS, iq2_xs, 512 // 32),
    ("iq2_s", Q.IQ2_S, iq2_s, 1024 // 32),
    ("iq3_xxs", Q.IQ3_XXS, iq3_xxs, 256 // 64),
    ("iq3_s", Q.IQ3_S, iq3_s, 512 // 64),
    ("iq1_s", Q.IQ1_S, iq1_s, 2048 // 32),
    ("iq1_m", Q.IQ1_M, iq1_m, 2048 // 32),
]
N_RANDOM = 8


def fields(qt, b):
    """(grid indices, sign patterns, scales, delta signs) a block stores."""
    idx, signs, scales, deltas = [], [], [], []
    if qt == Q.IQ2_XXS:
        for ib in range(8):
            word = struct.unpack_from("<I", b, 2 + 8 * ib + 4)[0]
            idx += list(b[2 + 8 * ib:2 + 8 * ib + 4])
            signs += [(word >> (7 * l)) & 127 for l in range(4)]
            scales.append(word >> 28)
    elif qt == Q.IQ2_XS:
        qs = struct.unpack_from("<32H", b, 2)
        idx += [q & 511 for q in qs]
        signs += [q >> 9 for q in qs]
        scales += [v for s in b[66:74] for v in (s & 15, s >> 4)]
    elif qt == Q.IQ2_S:
        qh = b[66:74]
        idx += [b[2 + g] | (((qh[g // 4] >> (2 * (g % 4))) & 3) << 8) for g in range(32)]
        signs += list(b[34:66])
        scales += [v for s in b[74:82] for v in (s & 15, s >> 4)]
    elif qt == Q.IQ3_XXS:
        idx += list(b[2:66])
        for ib in range(8):
            word = struct.unpack_from("<I", b, 66 + 4 * ib)[0]
            signs += [(word >> (7 * l)) & 127 for l in range(4)]
            scales.append(word >> 28)
    elif qt == Q.IQ3_S:
        qh = b[66:74]
        idx += [b[2 + g] | (((qh[g // 8] >> (g % 8)) & 1) << 8) for g in range(64)]
        signs += list(b[74:106])
        scales += [v for s in b[106:110] for v in (s & 15, s >> 4)]
    elif qt == Q.IQ1_S:
        qh = struct.unpack_from("<8H", b, 34)
        idx += [b[2 + g] | (((qh[g // 4] >> (3 * (g % 4))) & 7) << 8) for g in range(32)]
        scales += [(h >> 12) & 7 for h in qh]
        deltas += [h >> 15 for h in qh]
    elif qt == Q.IQ1_M:
        qh = b[32:48]
        idx += [b[g] | (((qh[g // 2] >> (4 * (g % 2))) & 7) << 8) for g in range(32)]
        deltas += [(qh[g // 2] >> (4 * (g % 2) + 3)) & 1 for g in range(32)]
        sc = struct.unpack_from("<4H", b, 48)
        scales += [(sc[ib // 2] >> (6 * (ib % 2) + 3 * h)) & 7 for ib in range(8) for h in range(2)]
    return idx, signs, scales, deltas


def check_coverage(qt, blocks, n_index):
    """The coverage blocks use every grid index, sign pattern, scale and delta sign."""
    n_sign = {Q.IQ2_XXS: 128, Q.IQ2_XS: 128, Q.IQ3_XXS: 128, Q.IQ2_S: 256, Q.IQ3_S: 256}.get(qt, 0)
    n_scale = 8 if qt in (Q.IQ1_S, Q.IQ1_M) else 16
    idx, signs, scales, deltas = set(), set(), set(), set()
    for b in blocks:
        i, s, c, dl = fields(qt, b)
        idx |= set(i)
        signs |= set(s)
        scales |= set(c)
        deltas |= set(dl)
    grid_entries = n_index * (64 if qt in (Q.IQ3_XXS, Q.IQ3_S) else 32)
    assert idx == set(range(grid_entries)), (qt, len(idx))
    assert signs == set(range(n_sign)), (qt, len(signs))
    assert scales == set(range(n_scale)), (qt, sorted(scales))
    if qt in (Q.IQ1_S, Q.IQ1_M):
        assert deltas == {0, 1}


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/kernels/data/iquants"
    os.makedirs(out_dir, exist_ok=True)
    for name, qt, build, n_cover in TYPES:
        block_size, type_size = quants.GGML_QUANT_SIZES[qt]
        blocks = []
        # Enough coverage blocks for every index; at least 8 (signs, scales).
        for k in range(max(n_cover, 8)):
            blocks.append(build(k, COVER_D[k % len(COVER_D)]))
        for d in SPECIAL_D:
            rand = bytes(rng.integers(0, 256, type_size, dtype=np.uint8))
            blocks.append(set_d(qt, rand, d))
        for _ in range(N_RANDOM):
            rand = bytes(rng.integers(0, 256, type_size, dtype=np.uint8))
            blocks.append(set_d(qt, rand, random_d()))
        for b in blocks:
            assert len(b) == type_size, (name, len(b), type_size)
        check_coverage(qt, blocks[:max(n_cover, 8)], n_cover)
        data = b"".join(blocks)
        raw = np.frombuffer(data, dtype=np.uint8)
        with np.errstate(all="ignore"):
            values = quants.dequantize(raw, qt).astype(np.float32)
        assert values.size == len(blocks) * block_size
        with open(os.path.join(out_dir, f"{name}.qbytes"), "wb") as f:
            f.write(data)
        with open(os.path.join(out_dir, f"{name}.dequant.f32"), "wb") as f:
            f.write(values.astype("<f4").tobytes())
        print(f"{name}: {len(blocks)} blocks ({n_cover} needed for every grid index)")


if __name__ == "__main__":
    main()
