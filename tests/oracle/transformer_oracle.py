#!/usr/bin/python3
"""PyTorch oracle for scalelab's Transformer.

The independent float64 PyTorch implementation of the model documented in docs/model.md
(reference_model.py, shared with knobs_oracle.py), built from a scalelab checkpoint (read with
numpy alone, per docs/checkpoint.md) by tensor name. For each case it runs `scalelab init` (and, for a second variant, rewrites the
checkpoint with perturbed biases, norm parameters and learned scales so that no parameter sits
at a value where a mistake would cancel), then `scalelab gradients`, and compares scalelab's
float32 logits, loss and every parameter gradient with the oracle's autograd results.

This file is written from the documentation only; it does not use scalelab's source.

Error measure, per tensor: rel = max|a - b| / max|b|, a = scalelab (float32), b = oracle
(float64). A gradient that is zero in exact arithmetic (e.g. the attention key bias: softmax
is invariant to the constant q.bk) has no meaningful relative error; such tensors (max|b| below
ZERO_GRAD_FRACTION times the largest gradient of the case) are instead checked with
max|a| / (largest |gradient| of the case) against the same tolerance.

Usage: transformer_oracle.py --bin build/scalelab --tmp DIR [--case NAME ...] [--verbose]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_files import expected_shape, read_safetensors, write_model_config, write_safetensors  # noqa: E402
from reference_model import BOS, EOS, PAD, forward, opt, smoothed_loss  # noqa: E402

# Tolerances on rel = max|a-b| / max|b|, keyed by the dtype of the engine's outputs.
TOLERANCE = {"float32": 1e-4}
ENGINE_DTYPE = "float32"
ZERO_GRAD_FRACTION = 1e-9

# The documented defaults (reference_model.DOC_DEFAULTS) the resolved config is checked against
# when a case does not set the key.
CHECKED_DEFAULTS = ["norm_eps", "activation", "positions", "tie_output", "embedding.scale",
                    "embedding.output_scale", "attention.scale", "attention.multiplier"]

COMMON = {
    "d_model": 32, "n_heads": 4, "d_ff": 64, "dropout": 0.0,
    "src_vocab": 19, "tgt_vocab": 21, "max_len": 64, "seed": 7,
}

CASES = [
    # name, model settings, batch shape (source lengths, target lengths), label smoothing
    dict(name="encdec_post", model=dict(
        arch="encoder_decoder", norm="post", encoder_layers=2, decoder_layers=2,
        **{"attention.scale": "inv_dk"}),
        src_lens=[7, 4, 9], tgt_lens=[6, 8, 3], smoothing=0.1),
    dict(name="encdec_pre", model=dict(
        arch="encoder_decoder", norm="pre", encoder_layers=2, decoder_layers=2,
        activation="gelu", **{"embedding.scale": "learned"}),
        src_lens=[5, 9, 6], tgt_lens=[8, 5, 7], smoothing=0.0),
    dict(name="deconly_post", model=dict(
        arch="decoder_only", norm="post", decoder_layers=2, tie_output=True,
        **{"embedding.output_scale": "inv_sqrt_d"}),
        src_lens=None, tgt_lens=[9, 5, 7], smoothing=0.0),
    dict(name="deconly_pre", model=dict(
        arch="decoder_only", norm="pre", decoder_layers=2,
        **{"embedding.scale": "learned", "embedding.learned_init": 2.5}),
        src_lens=None, tgt_lens=[6, 9, 4], smoothing=0.1),
    # Extra coverage of the remaining documented options.
    dict(name="encdec_pre_misc", model=dict(
        arch="encoder_decoder", norm="pre", encoder_layers=1, decoder_layers=2, activation="gelu",
        tie_output=True, positions="none", linear_init="torch_default", norm_eps=1e-3,
        **{"attention.scale": "constant", "attention.multiplier": 0.3,
           "embedding.scale": "d", "embedding.init": "xavier_uniform",
           "embedding.output_scale": "inv_sqrt_d"}),
        src_lens=[3, 8, 5], tgt_lens=[7, 7, 2], smoothing=0.2),
    dict(name="deconly_post_misc", model=dict(
        arch="decoder_only", norm="post", decoder_layers=3,
        **{"attention.scale": "none", "attention.multiplier": 2.0, "embedding.scale": 0.7,
           "embedding.init": "uniform_sqrt3_d"}),
        src_lens=None, tgt_lens=[5, 8, 8], smoothing=0.05),
]


# ---------------------------------------------------------------- the test driver

def expected_param_names(cfg):
    """The tensor table of docs/checkpoint.md for this config."""
    names = []
    lin = lambda p: [p + ".weight", p + ".bias"]
    attn = lambda p: sum((lin(f"{p}.{w}") for w in "qkvo"), [])
    pre = cfg["norm"] == "pre"
    learned = str(opt(cfg, "embedding.scale")) == "learned"
    if cfg["arch"] == "encoder_decoder":
        names.append("encoder.embed.weight")
        if learned:
            names.append("encoder.embed.scale")
        for l in range(cfg["encoder_layers"]):
            p = f"encoder.layers.{l}"
            names += attn(p + ".self_attn") + lin(p + ".ffn.fc1") + lin(p + ".ffn.fc2")
            names += lin(p + ".norm1") + lin(p + ".norm2")
        if pre:
            names += lin("encoder.final_norm")
    names.append("decoder.embed.weight")
    if learned:
        names.append("decoder.embed.scale")
    for l in range(cfg["decoder_layers"]):
        p = f"decoder.layers.{l}"
        names += attn(p + ".self_attn")
        if cfg["arch"] == "encoder_decoder":
            names += attn(p + ".cross_attn")
        names += lin(p + ".ffn.fc1") + lin(p + ".ffn.fc2")
        n_norms = 3 if cfg["arch"] == "encoder_decoder" else 2
        for k in range(1, n_norms + 1):
            names += lin(f"{p}.norm{k}")
    if pre:
        names += lin("decoder.final_norm")
    if not opt(cfg, "tie_output"):
        names.append("decoder.out.weight")
    return names


def make_batch(rng, lens, vocab, with_eos_in_input):
    """Rows of the given content lengths (excluding <eos>/<bos>), right-padded with <pad>."""
    B = len(lens)
    contents = [rng.integers(4, vocab, size=n) for n in lens]
    if with_eos_in_input:  # encoder input x_1..x_n <eos>
        L = max(lens) + 1
        src = np.zeros((B, L), dtype=np.int64)
        for b, c in enumerate(contents):
            src[b, :len(c)] = c
            src[b, len(c)] = EOS
        return src
    L = max(lens) + 1
    inp = np.zeros((B, L), dtype=np.int64)
    tgt = np.zeros((B, L), dtype=np.int64)
    for b, c in enumerate(contents):
        inp[b, 0] = BOS
        inp[b, 1:len(c) + 1] = c
        tgt[b, :len(c)] = c
        tgt[b, len(c)] = EOS
    return inp, tgt


def perturb(tensors, rng):
    """Move every parameter away from its structured init: biases and norm biases ~ N(0, 0.1),
    norm gains ~ 1 + N(0, 0.1), learned scales x (1 + N(0, 0.1)), matrices + N(0, (0.1 std)^2)."""
    out = {}
    for name, t in tensors.items():
        t = t.astype(np.float64)
        if name.endswith(".bias"):
            t = t + rng.normal(0, 0.1, t.shape)
        elif "norm" in name.split(".")[-2]:  # norm1/2/3, final_norm gains
            t = t + rng.normal(0, 0.1, t.shape)
        elif name.endswith(".scale"):
            t = t * (1 + rng.normal(0, 0.1, t.shape))
        else:
            t = t + rng.normal(0, 0.1, t.shape) * max(t.std(), 1e-3)
        out[name] = t.astype(np.float32)
    return out


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"command failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}{r.stderr}")
        raise SystemExit(2)
    return r


def write_config(path, case):
    m = dict(COMMON)
    m.update(case["model"])
    write_model_config(path, m)
    return m


def flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, prefix + k + "."))
        else:
            out[prefix + k] = v
    return out


def check_resolved_config(meta, cfg):
    """The checkpoint's resolved config agrees with what the case asked for and the doc's defaults."""
    resolved = flatten(json.loads(meta["config"])["model"])
    problems = []
    keys = set(cfg) | set(CHECKED_DEFAULTS)
    if opt(cfg, "attention.scale") == "none":
        # "none" means c = 1 whatever the multiplier; the engine may record it as constant with m = 1.
        keys -= {"attention.scale", "attention.multiplier"}
        have = (resolved.get("attention.scale"), _num(resolved.get("attention.multiplier")))
        if have[0] != "none" and have != ("constant", 1.0):
            problems.append(f"attention.scale: resolved {have}, case 'none' (c = 1)")
    for k in keys:
        want = opt(cfg, k)
        have = resolved.get(k)
        if have is None:
            problems.append(f"{k}: missing from the resolved config")
            continue
        if isinstance(want, (int, float)) and not isinstance(want, bool):
            ok = isinstance(have, (int, float)) and abs(float(have) - float(want)) <= 1e-12 * max(1, abs(want))
        else:
            ok = str(have).lower() == str(want).lower() or (
                _num(have) is not None and _num(have) == _num(want))
        if not ok:
            problems.append(f"{k}: resolved {have!r}, case/doc default {want!r}")
    return problems


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def rel_err(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b))), float(np.max(np.abs(b)))


def run_case(case, variant, binary, tmp, verbose):
    tol = TOLERANCE[ENGINE_DTYPE]
    name = f"{case['name']}/{variant}"
    work = os.path.join(tmp, case["name"])
    os.makedirs(work, exist_ok=True)
    cfg = write_config(os.path.join(work, "config.toml"), case)
    ckpt = os.path.join(work, "init.safetensors")
    run([binary, "init", "--config", os.path.join(work, "config.toml"), "--out", ckpt, "--force"])
    meta, tensors = read_safetensors(ckpt)
    failures = []
    failures += [f"{name}: config {p}" for p in check_resolved_config(meta, cfg)]
    names = expected_param_names(cfg)
    if sorted(names) != sorted(tensors):
        failures.append(f"{name}: tensor names differ from docs/checkpoint.md: "
                        f"missing {sorted(set(names) - set(tensors))}, extra {sorted(set(tensors) - set(names))}")
        return name, None, failures
    failures += [f"{name}: {n} shape {list(tensors[n].shape)}, doc {expected_shape(n, cfg)}"
                 for n in names if list(tensors[n].shape) != expected_shape(n, cfg)]
    rng = np.random.default_rng(1234 + CASES.index(case))
    if variant == "perturbed":
        tensors = perturb(tensors, rng)
        ckpt = os.path.join(work, "perturbed.safetensors")
        write_safetensors(ckpt, tensors, meta)
    # batch
    data_rng = np.random.default_rng(99 + CASES.index(case))
    args = [binary, "gradients", "--checkpoint", ckpt, "--force"]
    src = None
    if cfg["arch"] == "encoder_decoder":
        src = make_batch(data_rng, case["src_lens"], cfg["src_vocab"], True)
        np.save(os.path.join(work, "src.npy"), src.astype(np.int32))
        args += ["--source", os.path.join(work, "src.npy")]
    inp, tgt = make_batch(data_rng, case["tgt_lens"], cfg["tgt_vocab"], False)
    np.save(os.path.join(work, "inp.npy"), inp.astype(np.int64))
    np.save(os.path.join(work, "tgt.npy"), tgt.astype(np.int32))
    gpath = os.path.join(work, f"grads_{variant}.safetensors")
    args += ["--input", os.path.join(work, "inp.npy"), "--target", os.path.join(work, "tgt.npy"),
             "--label-smoothing", repr(case["smoothing"]), "--out", gpath]
    run(args)
    _, out = read_safetensors(gpath)

    # oracle
    P = {k: torch.tensor(v.astype(np.float64), requires_grad=True) for k, v in tensors.items()}
    logits = forward(P, cfg, None if src is None else torch.from_numpy(src), torch.from_numpy(inp))
    loss = smoothed_loss(logits, torch.from_numpy(tgt), case["smoothing"])
    # cross-check the loss against PyTorch's own definition named by the doc
    ref = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.from_numpy(tgt).reshape(-1),
                                            ignore_index=PAD, label_smoothing=case["smoothing"])
    if not abs(ref.item() - loss.item()) <= 1e-12 * abs(ref.item()):
        failures.append(f"{name}: oracle's documented loss {loss.item()!r} != torch cross_entropy {ref.item()!r}")
    loss.backward()

    expected_out = {"logits", "loss"} | {"grad." + n for n in names}
    if set(out) != expected_out:
        failures.append(f"{name}: gradients file names: missing {sorted(expected_out - set(out))}, "
                        f"extra {sorted(set(out) - expected_out)}")
        return name, None, failures
    res = {}
    res["logits"] = rel_err(out["logits"], logits.detach().numpy())[0]
    if list(out["logits"].shape) != list(logits.shape):
        failures.append(f"{name}: logits shape {out['logits'].shape} vs {tuple(logits.shape)}")
    res["loss"] = rel_err(out["loss"].reshape(-1)[:1], [loss.item()])[0]
    grad_scale = max(float(P[n].grad.abs().max()) for n in names)
    worst, worst_name, zero_worst, zero_names = 0.0, None, 0.0, []
    per_tensor = {}
    for n in names:
        a, b = out["grad." + n], P[n].grad.numpy()
        if list(a.shape) != list(b.shape):
            failures.append(f"{name}: grad.{n} shape {a.shape} vs {b.shape}")
            continue
        if np.max(np.abs(b)) <= ZERO_GRAD_FRACTION * grad_scale:
            e = float(np.max(np.abs(a))) / grad_scale
            zero_names.append(n)
            zero_worst = max(zero_worst, e)
            per_tensor[n] = ("zero", e)
            if e > tol:
                failures.append(f"{name}: grad.{n} is zero in exact arithmetic, scalelab max|g| / max grad = {e:.3g}")
            continue
        e, _ = rel_err(a, b)
        per_tensor[n] = ("rel", e)
        if e > worst:
            worst, worst_name = e, n
        if not e <= tol:
            failures.append(f"{name}: grad.{n} rel err {e:.3g} > {tol:g}")
    res["grads"], res["worst_grad"], res["zero"], res["zero_names"] = worst, worst_name, zero_worst, zero_names
    for k in ("logits", "loss"):
        if not res[k] <= tol:
            failures.append(f"{name}: {k} rel err {res[k]:.3g} > {tol:g}")
    if verbose:
        for n, (kind, e) in per_tensor.items():
            print(f"    {name:28s} {kind:4s} {e:9.2e}  grad.{n}")
    res["loss_value"] = loss.item()
    return name, res, failures


def oracle_arguments(doc):
    """The command line both PyTorch oracles share: --bin, --tmp, --case (repeatable), --verbose."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("SCALELAB_BIN", "build/scalelab"))
    ap.add_argument("--tmp", default=os.environ.get("SCALELAB_TMP", "/tmp/scalelab-oracle"))
    ap.add_argument("--case", action="append", help="run only these cases (repeatable)")
    ap.add_argument("--verbose", action="store_true", help="print every tensor's error")
    return ap


def chosen_cases(cases, names):
    """The cases named by --case (all without it); exits naming the unknown names if none match."""
    chosen = [c for c in cases if not names or c["name"] in names]
    if not chosen:
        sys.exit(f"no such case: {names}")
    return chosen


class Worst:
    """The largest relative error seen over every row, and where."""

    def __init__(self):
        self.error, self.where = 0.0, None

    def add(self, row, res):
        for k in ("logits", "loss", "grads"):
            if res[k] > self.error:
                self.error, self.where = res[k], f"{row} {'grad.' + res['worst_grad'] if k == 'grads' else k}"


def result_row(row, res, fails, row_width, loss_width, grad_width):
    """One printed row: loss, the logits', loss's and gradients' errors, the worst gradient, zeros."""
    return (f"{row:{row_width}s} {res['loss_value']:{loss_width}.4f} {res['logits']:9.2e} {res['loss']:9.2e} "
            f"{res['grads']:9.2e}  {res['worst_grad'] or '-':{grad_width}s} {res['zero']:10.1e}"
            f"{'  FAIL' if fails else ''}")


def finish(failures, tol):
    """Prints every failure and exits 1, or says that all cases agree within tol."""
    if failures:
        print(f"\n{len(failures)} FAILURE(S):")
        for f in failures:
            print("  " + f)
        sys.exit(1)
    print("all cases agree within", tol)


def main():
    a = oracle_arguments(__doc__).parse_args()
    torch.set_num_threads(1)
    tmp = os.path.join(a.tmp, "transformer_oracle")
    os.makedirs(tmp, exist_ok=True)
    tol = TOLERANCE[ENGINE_DTYPE]
    print(f"scalelab ({ENGINE_DTYPE}) vs PyTorch {torch.__version__} float64 oracle; "
          f"error = max|a-b| / max|b| per tensor; tolerance {tol:g}")
    print(f"{'case':30s} {'loss':>8s} {'logits':>9s} {'loss err':>9s} {'grads':>9s}  "
          f"{'worst gradient':44s} {'zero-grads':>10s}")
    all_fail = []
    worst = Worst()
    for case in chosen_cases(CASES, a.case):
        for variant in ("init", "perturbed"):
            name, res, fails = run_case(case, variant, a.bin, tmp, a.verbose)
            all_fail += fails
            if res is None:
                print(f"{name:30s} FAILED (see below)")
                continue
            print(result_row(name, res, fails, 30, 8, 44))
            worst.add(name, res)
    print(f"worst relative error over all cases: {worst.error:.2e} ({worst.where})")
    finish(all_fail, tol)


if __name__ == "__main__":
    main()
