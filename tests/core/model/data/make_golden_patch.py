#!/usr/bin/env python3
"""Golden fixtures for formats whose llama-quantize files are too big to ship:
a *patch* GGUF holds some tensors of a llama-quantize output, byte for byte;
the model under test is the shared F16 fixture with those tensors replaced
(tests/support/gguf_patch.h builds it in the build tree; this script builds
the same model for llama.cpp, whose outputs become the committed reference).

usage: PYTHONPATH=<llama.cpp>/gguf-py make_golden_patch.py patch QUANTISED.gguf REGEX OUT_PATCH.gguf
       PYTHONPATH=<llama.cpp>/gguf-py make_golden_patch.py apply BASE.gguf PATCH.gguf OUT_MODEL.gguf

`patch`: every tensor of QUANTISED.gguf whose name matches REGEX (re.search).
`apply`: BASE.gguf's metadata and tensors in order, each tensor named in the
patch replaced by the patch's (type, shape and bytes).

Recipes of the committed patches (tests/core/model/test_golden_iq4_mxfp4.cpp),
from llama-quantize 81ff7abe on shared/fixtures/trained/tiny-qwen3moe-F16.gguf:
  trained-iq4_xs.patch.gguf:    `llama-quantize F16 out IQ4_XS` (no imatrix),
      REGEX 'blk\\.\\d+\\.attn_(q|k|v|output)\\.weight|blk\\.[01]\\.ffn_(gate|up)_exps'
  trained-mxfp4_moe.patch.gguf: `llama-quantize F16 out MXFP4_MOE`,
      REGEX 'blk\\.[01]\\.ffn_(gate|up|down)_exps'
then `apply` on the F16 file and gen_golden_reference.cpp on the result.
"""
import re
import sys

import numpy as np
from gguf import GGUFReader, GGUFWriter, GGUFValueType


def copy_kv(reader, writer, skip=("GGUF.", "general.architecture")):
    for field in reader.fields.values():
        if field.name.startswith(skip[0]) or field.name == skip[1]:
            continue
        vtype = field.types[0]
        if vtype == GGUFValueType.ARRAY:
            sub = field.types[-1]
            if sub == GGUFValueType.STRING:
                value = [bytes(field.parts[i]).decode("utf-8") for i in field.data]
            else:
                value = [field.parts[i].tolist()[0] for i in field.data]
            writer.add_key_value(field.name, value, vtype, sub_type=sub)
        elif vtype == GGUFValueType.STRING:
            writer.add_key_value(field.name, bytes(field.parts[field.data[0]]).decode("utf-8"), vtype)
        else:
            writer.add_key_value(field.name, field.parts[field.data[0]].tolist()[0], vtype)


def add_raw(writer, t):
    # The reader's array is the tensor in numpy order (quantised types: rows of
    # block bytes), which the writer takes with the same type as raw_dtype.
    writer.add_tensor(t.name, np.asarray(t.data), raw_dtype=t.tensor_type)


def main():
    mode = sys.argv[1]
    if mode == "patch":
        src, pattern, out = sys.argv[2], re.compile(sys.argv[3]), sys.argv[4]
        r = GGUFReader(src)
        w = GGUFWriter(out, arch=str(bytes(r.fields["general.architecture"].parts[-1]), "utf-8"))
        w.add_string("les.golden_patch.source", src.split("/")[-1])
        w.add_string("les.golden_patch.regex", sys.argv[3])
        for t in r.tensors:
            if pattern.search(t.name):
                add_raw(w, t)
    elif mode == "apply":
        base, patch, out = sys.argv[2], sys.argv[3], sys.argv[4]
        rb, rp = GGUFReader(base), GGUFReader(patch)
        repl = {t.name: t for t in rp.tensors}
        w = GGUFWriter(out, arch=str(bytes(rb.fields["general.architecture"].parts[-1]), "utf-8"))
        copy_kv(rb, w)
        for t in rb.tensors:
            add_raw(w, repl.get(t.name, t))
    else:
        sys.exit(__doc__)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
