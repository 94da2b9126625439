"""The files the oracles exchange with scalelab, written once for transformer_oracle.py,
knobs_oracle.py and checkpoint_numpy.py: a [model] config, the documented tensor shapes, and
safetensors (F32, read and written with numpy alone, per docs/checkpoint.md).

Numpy only (no torch), so that checkpoint_numpy.py can use it where torch is absent.
"""
import json
import struct

import numpy as np


def write_model_config(path, m):
    """A config of the copy task with [model] = m (booleans as TOML booleans, strings quoted)."""
    lines = ["[model]"]
    for k, v in m.items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif isinstance(v, str):
            v = json.dumps(v)
        lines.append(f"{k} = {v}")
    lines += ["", "[data]", 'task = "copy"', "", "[train]", ""]
    open(path, "w").write("\n".join(lines))


def expected_shape(name, m):
    """The shape docs/checkpoint.md gives the tensor `name` of a model with [model] m."""
    d, F = m["d_model"], m["d_ff"]
    if name.endswith("embed.weight"):
        return [m["src_vocab"] if name.startswith("encoder") else m["tgt_vocab"], d]
    if name == "decoder.out.weight":
        return [m["tgt_vocab"], d]
    if name.endswith("embed.scale"):
        return [1]
    if ".fc1." in name:
        return [F, d] if name.endswith("weight") else [F]
    if ".fc2." in name:
        return [d, F] if name.endswith("weight") else [d]
    if "_attn." in name:
        return [d, d] if name.endswith("weight") else [d]
    return [d]  # norms


def read_safetensors(path):
    """The reader of docs/checkpoint.md (plus the header, kept for checks)."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = raw[8 + n:]
    tensors = {name: np.frombuffer(data[a:b], dtype="<f4").reshape(info["shape"])
               for name, info in header.items() for a, b in [info["data_offsets"]]}
    return meta, tensors


def write_safetensors(path, tensors, meta):
    header = {"__metadata__": meta}
    blobs, off = [], 0
    for name in sorted(tensors):
        arr = np.ascontiguousarray(tensors[name], dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(arr.shape),
                        "data_offsets": [off, off + arr.nbytes]}
        blobs.append(arr.tobytes())
        off += arr.nbytes
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
