#!/usr/bin/python3
"""Checks that scalelab checkpoints follow docs/checkpoint.md and are readable with numpy alone,
and that `scalelab logits` writes exactly the `logits` tensor of `scalelab gradients`.

The reader used is the Python block of docs/checkpoint.md itself, executed with only json,
struct and numpy available (no torch, no safetensors package).

Usage: checkpoint_numpy.py --bin build/scalelab --source REPO_ROOT --tmp DIR
"""
import argparse
import json
import math
import os
import re
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_files import expected_shape, write_model_config  # noqa: E402

FAILURES = []


def check(ok, msg):
    if not ok:
        FAILURES.append(msg)
        print("FAIL:", msg)
    return ok


def doc_reader(source):
    """Extracts and executes the numpy reader from docs/checkpoint.md."""
    doc = open(os.path.join(source, "docs", "checkpoint.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    blocks = [b for b in blocks if "def read_safetensors" in b]
    if not blocks:
        sys.exit("docs/checkpoint.md has no ```python block defining read_safetensors")
    ns = {"__builtins__": __builtins__}
    exec(compile(blocks[0], "docs/checkpoint.md", "exec"), ns)
    return ns["read_safetensors"]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"command failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}{r.stderr}")


def expected_names(m):
    lin = lambda p: [p + ".weight", p + ".bias"]
    attn = lambda p: sum((lin(f"{p}.{w}") for w in "qkvo"), [])
    pre, learned = m["norm"] == "pre", m.get("embedding.scale") == "learned"
    encdec = m["arch"] == "encoder_decoder"
    names = []
    if encdec:
        names += ["encoder.embed.weight"] + (["encoder.embed.scale"] if learned else [])
        for l in range(m["encoder_layers"]):
            p = f"encoder.layers.{l}"
            names += attn(p + ".self_attn") + lin(p + ".ffn.fc1") + lin(p + ".ffn.fc2")
            names += lin(p + ".norm1") + lin(p + ".norm2")
        names += lin("encoder.final_norm") if pre else []
    names += ["decoder.embed.weight"] + (["decoder.embed.scale"] if learned else [])
    for l in range(m["decoder_layers"]):
        p = f"decoder.layers.{l}"
        names += attn(p + ".self_attn") + (attn(p + ".cross_attn") if encdec else [])
        names += lin(p + ".ffn.fc1") + lin(p + ".ffn.fc2")
        names += sum((lin(f"{p}.norm{k}") for k in range(1, (3 if encdec else 2) + 1)), [])
    names += lin("decoder.final_norm") if pre else []
    names += [] if m.get("tie_output") else ["decoder.out.weight"]
    return names


def check_layout(path, tag):
    """The raw layout: header length, JSON header, F32 only, contiguous offsets covering the data."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    check(8 + n <= len(raw), f"{tag}: header length {n} past the end of the file")
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    spans = sorted((info["data_offsets"][0], info["data_offsets"][1], name, info) for name, info in header.items())
    pos = 0
    for a, b, name, info in spans:
        check(info["dtype"] == "F32", f"{tag}: {name} dtype {info['dtype']} (doc: only F32)")
        check(a == pos, f"{tag}: {name} starts at {a}, previous tensor ended at {pos}")
        check(b - a == 4 * int(np.prod(info["shape"], dtype=np.int64)), f"{tag}: {name} byte size vs shape")
        pos = b
    check(pos == len(raw) - 8 - n, f"{tag}: data section is {len(raw) - 8 - n} bytes, tensors cover {pos}")
    check(not os.path.exists(path + ".tmp"), f"{tag}: {path}.tmp left behind")


MODELS = {
    "encdec_pre_learned": dict(arch="encoder_decoder", d_model=32, n_heads=4, d_ff=64, encoder_layers=2,
                               decoder_layers=2, norm="pre", dropout=0.0, src_vocab=17, tgt_vocab=23,
                               seed=3, **{"embedding.scale": "learned", "embedding.init": "normal_inv_d",
                                          "linear_init": "xavier_uniform"}),
    "deconly_post_tied": dict(arch="decoder_only", d_model=32, n_heads=4, d_ff=48, decoder_layers=3,
                              norm="post", dropout=0.0, src_vocab=20, tgt_vocab=20, seed=5, tie_output=True,
                              **{"embedding.init": "uniform_sqrt3_d", "linear_init": "torch_default",
                                 "embedding.scale": "learned", "embedding.learned_init": 1.5}),
}


def check_init_values(tensors, m, tag):
    """The documented initialisation: biases 0, gains 1, learned scale, weight distributions."""
    d = m["d_model"]
    for name, t in tensors.items():
        t = t.astype(np.float64)
        leaf = name.split(".")[-2]
        if name == "decoder.out.weight":
            continue  # the doc does not say whether it follows the embedding or the linear init
        if name.endswith(".bias"):
            check(np.all(t == 0), f"{tag}: {name} not all 0 at init")
        elif "norm" in leaf:
            check(np.all(t == 1), f"{tag}: {name} gain not all 1 at init")
        elif name.endswith("embed.scale"):
            want = m.get("embedding.learned_init", math.sqrt(d))
            check(abs(t[0] - want) <= 1e-6 * want, f"{tag}: {name} = {t[0]}, want {want}")
        elif name.endswith("embed.weight"):
            init = m.get("embedding.init", "normal_inv_d")
            if init == "normal_inv_d":
                check(abs(t.std() - 1 / math.sqrt(d)) < 0.15 / math.sqrt(d), f"{tag}: {name} std {t.std():.4f}, want 1/sqrt(d)")
            elif init == "uniform_sqrt3_d":
                bound = math.sqrt(3 / d)
                check(np.abs(t).max() <= bound * (1 + 1e-6) and np.abs(t).max() > 0.8 * bound,
                      f"{tag}: {name} max {np.abs(t).max():.4f}, want U(+-{bound:.4f})")
        else:  # linear weights [out, in]
            out_f, in_f = t.shape
            init = m.get("linear_init", "xavier_uniform")
            bound = math.sqrt(6 / (in_f + out_f)) if init == "xavier_uniform" else 1 / math.sqrt(in_f)
            check(np.abs(t).max() <= bound * (1 + 1e-6) and np.abs(t).max() > 0.8 * bound,
                  f"{tag}: {name} max {np.abs(t).max():.4f}, want U(+-{bound:.4f}) ({init})")
            check(abs(t.std() - bound / math.sqrt(3)) < 0.2 * bound / math.sqrt(3),
                  f"{tag}: {name} std {t.std():.4f}, want {bound / math.sqrt(3):.4f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("SCALELAB_BIN", "build/scalelab"))
    ap.add_argument("--source", default=os.environ.get("SCALELAB_SOURCE", "."))
    ap.add_argument("--tmp", default=os.environ.get("SCALELAB_TMP", "/tmp/scalelab-oracle"))
    a = ap.parse_args()
    read_safetensors = doc_reader(a.source)
    tmp = os.path.join(a.tmp, "checkpoint_numpy")
    os.makedirs(tmp, exist_ok=True)
    rng = np.random.default_rng(11)
    for tag, m in MODELS.items():
        cfg_path = os.path.join(tmp, tag + ".toml")
        write_model_config(cfg_path, m)
        ckpt = os.path.join(tmp, tag + ".safetensors")
        run([a.bin, "init", "--config", cfg_path, "--out", ckpt, "--force"])
        check_layout(ckpt, tag)
        meta, tensors = read_safetensors(ckpt)
        check(meta.get("format") == "scalelab-checkpoint-1", f"{tag}: format {meta.get('format')!r}")
        check(meta.get("step") == "0", f"{tag}: step {meta.get('step')!r}, want '0' after init")
        check(all(isinstance(v, str) for v in meta.values()), f"{tag}: non-string metadata values")
        config = json.loads(meta.get("config", "{}"))
        check(set(config) >= {"model", "data", "train"}, f"{tag}: config keys {sorted(config)}")
        names = expected_names(m)
        check(sorted(names) == sorted(tensors),
              f"{tag}: names: missing {sorted(set(names) - set(tensors))}, extra {sorted(set(tensors) - set(names))}")
        for n in set(names) & set(tensors):
            check(list(tensors[n].shape) == expected_shape(n, m), f"{tag}: {n} shape {tensors[n].shape}")
            check(tensors[n].dtype == np.dtype("<f4"), f"{tag}: {n} dtype {tensors[n].dtype}")
        check_init_values(tensors, m, tag)

        # the same seed gives the same weights; another seed other weights
        again = os.path.join(tmp, tag + "_again.safetensors")
        run([a.bin, "init", "--config", cfg_path, "--out", again, "--force"])
        _, t2 = read_safetensors(again)
        check(all(np.array_equal(tensors[n], t2[n]) for n in tensors), f"{tag}: init not deterministic")
        other = os.path.join(tmp, tag + "_seed.safetensors")
        run([a.bin, "init", "--config", cfg_path, "--set", f"model.seed={m['seed'] + 1}", "--out", other, "--force"])
        _, t3 = read_safetensors(other)
        check(not np.array_equal(tensors["decoder.embed.weight"], t3["decoder.embed.weight"]),
              f"{tag}: model.seed does not change the weights")

        # logits == gradients' logits
        B, T, S = 3, 7, 8
        args_src = []
        if m["arch"] == "encoder_decoder":
            src = rng.integers(4, m["src_vocab"], size=(B, S))
            for b, L in enumerate([8, 5, 3]):
                src[b, L - 1] = 2
                src[b, L:] = 0
            np.save(os.path.join(tmp, "src.npy"), src.astype(np.int32))
            args_src = ["--source", os.path.join(tmp, "src.npy")]
        inp = rng.integers(4, m["tgt_vocab"], size=(B, T))
        inp[:, 0] = 1
        tgt = np.concatenate([inp[:, 1:], np.full((B, 1), 2)], axis=1)
        inp[2, 4:] = 0
        tgt[2, 3], tgt[2, 4:] = 2, 0
        np.save(os.path.join(tmp, "inp.npy"), inp.astype(np.int64))
        np.save(os.path.join(tmp, "tgt.npy"), tgt.astype(np.int64))
        lpath, gpath = os.path.join(tmp, tag + "_logits.npy"), os.path.join(tmp, tag + "_grads.safetensors")
        run([a.bin, "logits", "--checkpoint", ckpt, *args_src, "--input", os.path.join(tmp, "inp.npy"),
             "--out", lpath, "--force"])
        run([a.bin, "gradients", "--checkpoint", ckpt, *args_src, "--input", os.path.join(tmp, "inp.npy"),
             "--target", os.path.join(tmp, "tgt.npy"), "--out", gpath, "--force"])
        check_layout(gpath, tag + " gradients")
        logits = np.load(lpath)
        _, g = read_safetensors(gpath)
        check(logits.dtype == np.float32 and list(logits.shape) == [B, T, m["tgt_vocab"]],
              f"{tag}: logits.npy {logits.dtype} {logits.shape}")
        check(set(g) == {"logits", "loss"} | {"grad." + n for n in names},
              f"{tag}: gradients file names {sorted(set(g) ^ ({'logits', 'loss'} | {'grad.' + n for n in names}))}")
        if "logits" in g and logits.shape == g["logits"].shape:
            diff = float(np.max(np.abs(logits.astype(np.float64) - g["logits"])))
            check(diff == 0.0, f"{tag}: scalelab logits differs from gradients' logits by {diff:.3g}")
            print(f"{tag}: {len(tensors)} tensors read with numpy per docs/checkpoint.md; "
                  f"`logits` vs `gradients` logits max |diff| = {diff:g}")
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        sys.exit(1)
    print("checkpoint/numpy checks passed")


if __name__ == "__main__":
    main()
