#!/usr/bin/python3
"""PyTorch oracle for scalelab's scale knobs (docs/model.md).

The independent float64 PyTorch implementation of docs/model.md (reference_model.py, shared with
transformer_oracle.py) checked on every knob: RoPE, ALiBi, T5 relative
bias, RMSNorm, QK-norm (layernorm / rmsnorm, learned / fixed gains), attention soft-cap, the
learned per-head temperature, sandwich norm, learned positions, embedding LayerNorm,
`model.bias = false`, `attention.apply_to = "query"`, `model.output_softcap`,
`attention.fold_into_init`, `attention.zero_init_query`, `embedding.scale_dtype` and
`attention.kernel = "flash" | "naive"`. Written from docs/model.md and docs/checkpoint.md only; it
does not read scalelab's C++ source.

For every case: `scalelab init` twice (kernel "flash" and "naive"; the weights must be identical),
checks of the tensor names/shapes (docs/checkpoint.md), of the resolved config and of the
documented initial values of the new tensors; then two variants, "init" and "perturbed" (every
parameter moved off its structured init so nothing cancels by accident). For each variant the
oracle runs once (float64 autograd) and `scalelab gradients` runs with both kernels; logits, loss
and every parameter gradient are compared.

Error measure per tensor: rel = max|a - b| / max|b| (a = scalelab float32, b = oracle float64),
tolerance 1e-4. A gradient that is zero in exact arithmetic (e.g. the key bias under ALiBi / T5
bias: softmax is invariant to a per-row constant) is checked as max|a| / (largest |gradient| of
the case) instead, as in transformer_oracle.py.

Readings of docs/model.md where it leaves room (the test asserts these readings):
  * The order inside attention is exactly the doc's list: projections -> qk_norm -> RoPE ->
    scale (on q with apply_to="query", else on q.k) -> soft-cap -> ALiBi -> T5 bias -> mask.
    (The engine rejects learned_temperature with apply_to="query", and fold_into_init with either.)
  * qk_norm, learned_temperature, softcap and apply_to act in every attention (self and cross);
    RoPE, ALiBi and the T5 bias in self-attention only. The QK-norm eps is model.norm_eps.
  * QK-norm RMSNorm has a gain only; LayerNorm a gain and a bias; `qk_norm_learned = false`
    means no tensors, gain 1, bias 0.
  * The embedding LayerNorm (`embedding.layernorm`) is a LayerNorm (with bias, eps
    model.norm_eps) whatever `model.norm_type`; norm_type picks norm1..3, post_norm1..3 and
    final_norm.
  * Positions (RoPE, learned table, ALiBi distances) are 0-based per sequence (RoPE and ALiBi only
    see differences, so the offset does not matter in exact arithmetic).
  * T5 buckets are Mesh-TF / HF T5's `_relative_position_bucket(j - i, bidirectional,
    t5_buckets, t5_max_distance)`: bidirectional halves the buckets and puts j > i in the upper
    half; causal uses n = max(i - j, 0); exact below max_exact = buckets/2, logarithmic above,
    truncated, clamped to buckets - 1. The script asserts that HF's float32 evaluation and the
    float64 one give the same bucket for every distance a case uses (they could differ where the
    log formula lands on an integer, e.g. distance 16, 32, 64 with the defaults).
  * ALiBi slopes for h not a power of two: the ALiBi paper's get_slopes (slopes of the nearest
    lower power of two, then every other slope of twice that power), in head order.
  * `output_softcap` acts after c_out; scalelab's written `logits` are the capped ones, which the
    loss uses.
  * `embedding.scale_dtype` rounds the constant s (round to nearest even) to bf16 / f16; it is
    applied to a numeric `embedding.scale` as well as to the named ones (scalelab records a
    numeric scale already rounded in the checkpoint's resolved config; accepted).
  * `fold_into_init = true`: c = 1 at run time; W_q (and b_q) start at c times their usual init.

Power: for each perturbed case the oracle also evaluates plausible other readings of the doc
(RoPE's interleaved pairing, RoPE before QK-norm, soft-cap after the position bias, reversed ALiBi
slopes, T5 bucket of i - j, bidirectional/causal buckets swapped, QK-norm eps 1e-6, QK-norm in
self-attention only, embedding norm following norm_type, unrounded embedding scale). Each must be
at least ALT_MIN from the documented reading (else the case cannot tell them apart and fails), and
scalelab must be far closer to the documented reading than to it. The long cases (up to 140
tokens) cross the flash kernel's 48-query x 128-key tiles and T5's max_distance.

Usage: knobs_oracle.py --bin build/scalelab --tmp DIR [--case NAME ...] [--verbose]
"""
import json
import math
import os
import subprocess
import sys
import time
import zlib

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_files import read_safetensors, write_model_config, write_safetensors  # noqa: E402
from reference_model import attention_scale, forward, has_bias, opt, round_to, smoothed_loss  # noqa: E402
from transformer_oracle import (Worst, chosen_cases, finish, flatten, make_batch, oracle_arguments,  # noqa: E402
                                rel_err, result_row, run)

TOL = 1e-4
ZERO_GRAD_FRACTION = 1e-9

# Keys whose resolved value is checked against DOC_DEFAULTS when a case does not set them
# (the doc states these defaults explicitly).
CHECKED_DEFAULTS = ["norm_eps", "positions", "norm_type", "bias", "rope_base", "t5_buckets",
                    "t5_max_distance", "embedding.scale", "embedding.output_scale",
                    "attention.scale", "attention.multiplier"]

COMMON = {"d_model": 32, "n_heads": 4, "d_ff": 64, "dropout": 0.0, "src_vocab": 19, "tgt_vocab": 21,
          "max_len": 64, "seed": 11}
ED = dict(arch="encoder_decoder", encoder_layers=2, decoder_layers=2)
DO = dict(arch="decoder_only", decoder_layers=2)


def C(name, model, tgt_lens, src_lens=None, smoothing=0.0):
    return dict(name=name, model=model, src_lens=src_lens, tgt_lens=tgt_lens, smoothing=smoothing)


CASES = [
    # --- RoPE (self-attention only) ---
    C("rope_encdec_pre", dict(ED, norm="pre", positions="rope"),
      src_lens=[7, 4, 10], tgt_lens=[6, 9, 3], smoothing=0.1),
    C("rope_deconly_llama_query", dict(DO, norm="pre", positions="rope", norm_type="rmsnorm", bias=False,
                                        rope_base=500.0, activation="gelu",
                                        **{"attention.qk_norm": "rmsnorm", "attention.apply_to": "query"}),
      tgt_lens=[9, 5, 7]),
    # --- ALiBi ---
    C("alibi_encdec_post_query", dict(ED, norm="post", positions="alibi",
                                      **{"attention.apply_to": "query", "attention.softcap": 3.0}),
      src_lens=[8, 3, 6], tgt_lens=[5, 8, 7], smoothing=0.05),
    C("alibi_deconly_6heads", dict(DO, norm="pre", positions="alibi", d_model=48, n_heads=6),
      tgt_lens=[10, 4, 8]),
    # --- T5 relative bias (table shared by the layers of a stack) ---
    C("t5_encdec_rms_nobias_fold", dict(ED, norm="pre", positions="t5_bias", norm_type="rmsnorm",
                                        bias=False, linear_init="normal_fan_in",
                                        **{"attention.fold_into_init": True}),
      src_lens=[11, 5, 9], tgt_lens=[7, 10, 4], smoothing=0.1),
    C("t5_encdec_small_buckets", dict(ED, norm="post", positions="t5_bias", t5_buckets=8,
                                      t5_max_distance=20, **{"attention.learned_temperature": True}),
      src_lens=[12, 6, 9], tgt_lens=[12, 5, 9]),
    C("t5_deconly", dict(DO, norm="pre", positions="t5_bias", t5_buckets=12, t5_max_distance=30),
      tgt_lens=[13, 6, 10]),
    # --- QK-norm ---
    C("qk_ln_learned_encdec_temp", dict(ED, norm="pre", norm_eps=0.05,
                                        **{"attention.qk_norm": "layernorm",
                                           "attention.learned_temperature": True}),
      src_lens=[6, 9, 4], tgt_lens=[8, 4, 6], smoothing=0.1),
    C("qk_ln_fixed_deconly_sandwich", dict(DO, norm="sandwich", norm_eps=0.05,
                                           **{"attention.qk_norm": "layernorm",
                                              "attention.qk_norm_learned": False}),
      tgt_lens=[7, 9, 5]),
    C("qk_rms_fixed_encdec_rope", dict(ED, norm="post", positions="rope", norm_eps=0.05,
                                       **{"attention.qk_norm": "rmsnorm",
                                          "attention.qk_norm_learned": False}),
      src_lens=[5, 8, 7], tgt_lens=[6, 6, 9]),
    C("qk_rms_learned_deconly_inv_dk", dict(DO, norm="post", norm_type="rmsnorm", norm_eps=0.05,
                                            **{"attention.qk_norm": "rmsnorm",
                                               "attention.scale": "inv_dk",
                                               "attention.multiplier": 3.0}),
      tgt_lens=[8, 5, 9]),
    # --- soft-caps, temperature, apply_to ---
    C("softcap_temp_deconly", dict(DO, norm="pre", output_softcap=2.0,
                                   **{"attention.softcap": 1.0, "attention.learned_temperature": True,
                                      "attention.multiplier": 4.0}),
      tgt_lens=[9, 6, 8], smoothing=0.1),
    C("softcap_encdec_alibi_zeroq", dict(ED, norm="sandwich", positions="alibi", output_softcap=1.5,
                                         **{"attention.softcap": 0.8, "attention.scale": "none",
                                            "attention.learned_temperature": True,
                                            "attention.zero_init_query": True}),
      src_lens=[7, 9, 3], tgt_lens=[4, 8, 6]),
    # --- sandwich, learned positions, embedding LayerNorm, bias switch ---
    C("sandwich_learnedpos_embln_encdec", dict(ED, norm="sandwich", positions="learned",
                                               norm_type="rmsnorm", bias=False,
                                               learned_positions_std=0.5,
                                               **{"embedding.layernorm": True}),
      src_lens=[6, 10, 5], tgt_lens=[9, 3, 7], smoothing=0.1),
    C("learnedpos_embln_deconly_post", dict(DO, norm="post", positions="learned",
                                            learned_positions_std=0.3, tie_output=True,
                                            **{"embedding.layernorm": True,
                                               "embedding.scale": "learned"}),
      tgt_lens=[8, 8, 5]),
    # --- long sequences: several 48-query x 128-key flash tiles, T5 distances past max_distance ---
    C("long_encdec_t5_softcap", dict(ED, norm="pre", positions="t5_bias", max_len=160,
                                     **{"attention.softcap": 2.0}),
      src_lens=[140, 97], tgt_lens=[60, 135], smoothing=0.1),
    C("long_deconly_alibi_temp_qkln", dict(DO, norm="pre", positions="alibi", max_len=160,
                                           **{"attention.softcap": 1.5, "attention.learned_temperature": True,
                                              "attention.qk_norm": "layernorm"}),
      tgt_lens=[135, 70]),
    C("long_encdec_rope_query", dict(ED, norm="post", positions="rope", max_len=160, encoder_layers=1, bias=False,
                                    decoder_layers=1, **{"attention.apply_to": "query"}),
      src_lens=[131, 50], tgt_lens=[100, 140]),
    # --- embedding scale rounding (Gemma) ---
    C("scale_bf16_encdec_d48", dict(ED, norm="pre", d_model=48,
                                    **{"embedding.scale": "sqrt_d", "embedding.scale_dtype": "bf16"}),
      src_lens=[5, 8, 6], tgt_lens=[7, 4, 8]),
    C("scale_bf16_numeric_deconly", dict(DO, norm="pre",
                                         **{"embedding.scale": 5.7, "embedding.scale_dtype": "bf16"}),
      tgt_lens=[6, 9, 7]),
    # 4.0019 rounds to 4 in f16 (rel 4.7e-4, near the largest f16 rounding; sqrt(d) rounds far less)
    C("scale_f16_numeric_deconly", dict(DO, norm="pre",
                                        **{"embedding.scale": 4.0019, "embedding.scale_dtype": "f16"}),
      tgt_lens=[8, 5, 9]),
]


def alternatives(cfg):
    """Plausible other readings of the doc that this case can tell apart from the documented one;
    each must be further than ALT_MIN from the oracle (so the test has the power to reject it),
    and scalelab must agree with the documented reading, not with these."""
    alts = []
    pos = opt(cfg, "positions")
    qk = opt(cfg, "attention.qk_norm") not in (None, "none")
    if pos == "rope":
        alts.append("rope_interleaved")
        if qk and (opt(cfg, "attention.qk_norm") == "layernorm" or opt(cfg, "attention.qk_norm_learned")):
            alts.append("rope_before_qk_norm")  # (a gain-free RMSNorm commutes with the rotation)
    if qk:
        if float(opt(cfg, "norm_eps")) >= 0.01:
            alts.append("qk_norm_eps_1e-6")
        if cfg["arch"] == "encoder_decoder":
            alts.append("qk_norm_self_only")
    if pos in ("alibi", "t5_bias") and float(opt(cfg, "attention.softcap")) > 0:
        alts.append("softcap_after_position_bias")
    if pos == "alibi":
        alts.append("alibi_slopes_reversed")
    if pos == "t5_bias":
        alts += ["t5_relative_i_minus_j", "t5_decoder_bidirectional"]
        if cfg["arch"] == "encoder_decoder":
            alts.append("t5_encoder_causal")
    if opt(cfg, "embedding.layernorm") and opt(cfg, "norm_type") == "rmsnorm":
        alts.append("embed_norm_follows_norm_type")
    if opt(cfg, "embedding.scale_dtype") in ("bf16", "f16"):
        alts.append("unrounded_embedding_scale")
    return alts


ALT_MIN = 2e-4  # an alternative reading closer than this to the oracle's logits is not rejected


# ---------------------------------------------------------------- docs/checkpoint.md

def expected_shapes(cfg):
    """name -> shape, the tensor table of docs/checkpoint.md for this config."""
    d, F, h = cfg["d_model"], cfg["d_ff"], cfg["n_heads"]
    d_k = d // h
    bias = has_bias(cfg)
    ln = opt(cfg, "norm_type") == "layernorm"
    out = {}

    def lin(p, o, i):
        out[p + ".weight"] = [o, i]
        if bias:
            out[p + ".bias"] = [o]

    def norm(p):
        out[p + ".weight"] = [d]
        if ln:
            out[p + ".bias"] = [d]

    def attn(p):
        for w in "qkvo":
            lin(f"{p}.{w}", d, d)
        qk = opt(cfg, "attention.qk_norm")
        if qk not in (None, "none") and opt(cfg, "attention.qk_norm_learned"):
            for w in "qk":
                out[f"{p}.{w}_norm.weight"] = [d_k]
                if qk == "layernorm":
                    out[f"{p}.{w}_norm.bias"] = [d_k]
        if opt(cfg, "attention.learned_temperature"):
            out[p + ".temperature"] = [h]

    def stack(s, vocab, n_layers, subl):
        out[s + ".embed.weight"] = [vocab, d]
        if str(opt(cfg, "embedding.scale")) == "learned":
            out[s + ".embed.scale"] = [1]
        if opt(cfg, "positions") == "learned":
            out[s + ".pos_embed.weight"] = [cfg["max_len"], d]
        if opt(cfg, "positions") == "t5_bias":
            out[s + ".rel_bias.weight"] = [int(opt(cfg, "t5_buckets")), h]
        if opt(cfg, "embedding.layernorm"):
            out[s + ".embed_norm.weight"] = [d]
            out[s + ".embed_norm.bias"] = [d]
        for l in range(n_layers):
            p = f"{s}.layers.{l}"
            for sub in subl:
                attn(f"{p}.{sub}")
            lin(p + ".ffn.fc1", F, d)
            lin(p + ".ffn.fc2", d, F)
            for i in range(1, len(subl) + 2):
                norm(f"{p}.norm{i}")
                if cfg["norm"] == "sandwich":
                    norm(f"{p}.post_norm{i}")
        if cfg["norm"] in ("pre", "sandwich"):
            norm(s + ".final_norm")

    if cfg["arch"] == "encoder_decoder":
        stack("encoder", cfg["src_vocab"], cfg["encoder_layers"], ["self_attn"])
        stack("decoder", cfg["tgt_vocab"], cfg["decoder_layers"], ["self_attn", "cross_attn"])
    else:
        stack("decoder", cfg["tgt_vocab"], cfg["decoder_layers"], ["self_attn"])
    if not opt(cfg, "tie_output"):
        out["decoder.out.weight"] = [cfg["tgt_vocab"], d]
    return out


def check_init_values(T, cfg):
    """The documented initial values of the knob tensors (exact ones exactly, random ones loosely)."""
    problems = []
    d = cfg["d_model"]
    c = attention_scale(cfg)
    fold = opt(cfg, "attention.fold_into_init")
    for n, t in T.items():
        last = n.split(".")[-2] if n.count(".") >= 1 else ""
        if n.endswith(".temperature"):
            want = 1.0 if fold else c
            if not np.allclose(t, np.float32(want), rtol=1e-6, atol=0):
                problems.append(f"{n} = {t.tolist()}, doc: initialised to c = {want}")
        elif last.endswith("norm") or last.startswith("post_norm") or last.startswith("norm"):
            want = 1.0 if n.endswith(".weight") else 0.0
            if not np.all(t == want):
                problems.append(f"{n} not all {want} at init")
        elif n.endswith(".bias"):
            if not np.all(t == 0):
                problems.append(f"{n} not zero at init")
        elif n.endswith("rel_bias.weight"):
            sd = float(t.std())
            if not 0.7 / math.sqrt(d) < sd < 1.3 / math.sqrt(d):
                problems.append(f"{n} std {sd:.4f}, doc N(0, 1/d): {1 / math.sqrt(d):.4f}")
        elif n.endswith("pos_embed.weight"):
            want = float(cfg["learned_positions_std"])
            sd = float(t.std())
            if not 0.85 * want < sd < 1.15 * want:
                problems.append(f"{n} std {sd:.4f}, doc learned_positions_std {want}")
    # W_q: zero (muP) or c times the usual init (fold_into_init); compared with W_k of the same layer.
    for n in T:
        if n.endswith(".q.weight"):
            wq, wk = T[n], T[n[:-len("q.weight")] + "k.weight"]
            if opt(cfg, "attention.zero_init_query"):
                if np.any(wq != 0):
                    problems.append(f"{n} not zero with zero_init_query")
            elif fold:
                ratio = float(wq.std() / wk.std())
                if not 0.8 * c < ratio < 1.2 * c:
                    problems.append(f"{n} std / k std = {ratio:.3f}, fold_into_init: c = {c:.3f}")
    return problems


def check_resolved_config(meta, cfg):
    resolved = flatten(json.loads(meta["config"])["model"])
    problems = []
    for k in set(cfg) | set(CHECKED_DEFAULTS):
        if k in ("name",):
            continue
        want = opt(cfg, k)
        have = resolved.get(k)
        if k in ("attention.scale", "attention.multiplier") and opt(cfg, "attention.scale") == "none":
            if not (resolved.get("attention.scale") == "none" or (
                    resolved.get("attention.scale") == "constant" and float(resolved.get("attention.multiplier")) == 1.0)):
                problems.append(f"attention.scale none resolved as {resolved.get('attention.scale')} "
                                f"x {resolved.get('attention.multiplier')}")
            continue
        if have is None:
            problems.append(f"{k}: missing from the resolved config")
            continue
        if k == "embedding.scale" and isinstance(want, float) and opt(cfg, "embedding.scale_dtype") in ("bf16", "f16"):
            want = round_to(want, opt(cfg, "embedding.scale_dtype"))  # scalelab records the rounded constant
        if isinstance(want, bool) or isinstance(have, bool):
            ok = bool(have) == bool(want) and isinstance(have, bool)
        elif isinstance(want, (int, float)):
            try:
                ok = abs(float(have) - float(want)) <= 1e-12 * max(1.0, abs(float(want)))
            except (TypeError, ValueError):
                ok = False
        else:
            ok = str(have).lower() == str(want).lower()
        if not ok:
            problems.append(f"{k}: resolved {have!r}, case/doc default {want!r}")
    return problems


# ---------------------------------------------------------------- the test driver

def perturb(tensors, rng):
    """Every parameter off its structured init: biases + N(0, 0.1); norm gains/biases + N(0, 0.1);
    temperatures and learned scales x (1 + N(0, 0.2)); matrices + N(0, (0.1 max(std, 0.05))^2)."""
    out = {}
    for name, t in tensors.items():
        t = t.astype(np.float64)
        parent = name.split(".")[-2]
        if name.endswith(".bias") or "norm" in parent:
            t = t + rng.normal(0, 0.1, t.shape)
        elif name.endswith(".scale") or name.endswith(".temperature"):
            t = t * (1 + rng.normal(0, 0.2, t.shape))
        else:
            t = t + rng.normal(0, 0.1, t.shape) * max(float(t.std()), 0.05)
        out[name] = t.astype(np.float32)
    return out


def write_config(path, case):
    m = dict(COMMON)
    m.update(case["model"])
    write_model_config(path, m)
    return m


def compare(out, logits, loss, P, names, tol):
    """-> (res dict, failures list of str); res: logits, loss, grads, worst_grad, zero."""
    fails = []
    res = {}
    if list(out["logits"].shape) != list(logits.shape):
        fails.append(f"logits shape {list(out['logits'].shape)} vs {list(logits.shape)}")
        return None, fails
    res["logits"] = rel_err(out["logits"], logits.detach().numpy())[0]
    res["loss"] = rel_err(out["loss"].reshape(-1)[:1], [loss.item()])[0]
    for k in ("logits", "loss"):
        if not res[k] <= tol:
            fails.append(f"{k} rel err {res[k]:.3g} > {tol:g}")
    grad_scale = max(float(P[n].grad.abs().max()) for n in names)
    worst, worst_name, zero = 0.0, None, 0.0
    per = {}
    for n in names:
        a, b = out["grad." + n], P[n].grad.numpy()
        if list(a.shape) != list(b.shape):
            fails.append(f"grad.{n} shape {list(a.shape)} vs {list(b.shape)}")
            continue
        if np.max(np.abs(b)) <= ZERO_GRAD_FRACTION * grad_scale:
            e = float(np.max(np.abs(a))) / grad_scale
            zero = max(zero, e)
            per[n] = ("zero", e)
            if not e <= tol:
                fails.append(f"grad.{n} is zero in exact arithmetic, scalelab max|g| / max grad = {e:.3g}")
            continue
        e = rel_err(a, b)[0]
        per[n] = ("rel", e)
        if e > worst:
            worst, worst_name = e, n
        if not e <= tol:
            fails.append(f"grad.{n} rel err {e:.3g} > {tol:g}")
    res.update(grads=worst, worst_grad=worst_name, zero=zero, per=per)
    return res, fails


def run_case(case, binary, tmp, verbose):
    """-> list of (row name, res, failures)."""
    work = os.path.join(tmp, case["name"])
    os.makedirs(work, exist_ok=True)
    cfg_path = os.path.join(work, "config.toml")
    cfg = write_config(cfg_path, case)
    kernels = ("flash", "naive")
    metas, ckpts = {}, {}
    T = None
    setup_fail = []
    for kern in kernels:
        ck = os.path.join(work, f"init_{kern}.safetensors")
        run([binary, "init", "--config", cfg_path, "--set", f"model.attention.kernel={kern}", "--out", ck, "--force"])
        meta, tensors = read_safetensors(ck)
        kern_have = flatten(json.loads(meta["config"])["model"]).get("attention.kernel")
        if kern_have != kern:
            setup_fail.append(f"resolved attention.kernel {kern_have!r}, asked {kern!r}")
        metas[kern], ckpts[kern] = meta, ck
        if T is None:
            T = tensors
        elif sorted(T) != sorted(tensors) or any(not np.array_equal(T[n], tensors[n]) for n in T):
            setup_fail.append("the kernel choice changed the initial weights")
    setup_fail += [f"config {p}" for p in check_resolved_config(metas["flash"], cfg)]
    shapes = expected_shapes(cfg)
    names = sorted(shapes)
    if sorted(T) != names:
        setup_fail.append(f"tensor names differ from docs/checkpoint.md: missing {sorted(set(names) - set(T))}, "
                          f"extra {sorted(set(T) - set(names))}")
        return [(case["name"], None, setup_fail)]
    setup_fail += [f"{n} shape {list(T[n].shape)}, doc {shapes[n]}" for n in names if list(T[n].shape) != shapes[n]]
    setup_fail += check_init_values(T, cfg)

    seed = zlib.crc32(case["name"].encode())  # per case, independent of the case list's order
    data_rng = np.random.default_rng(seed)
    src = None
    if cfg["arch"] == "encoder_decoder":
        src = make_batch(data_rng, case["src_lens"], cfg["src_vocab"], True)
        np.save(os.path.join(work, "src.npy"), src.astype(np.int32))
    inp, tgt = make_batch(data_rng, case["tgt_lens"], cfg["tgt_vocab"], False)
    np.save(os.path.join(work, "inp.npy"), inp.astype(np.int64))
    np.save(os.path.join(work, "tgt.npy"), tgt.astype(np.int32))

    rows = []
    for variant in ("init", "perturbed"):
        tensors = T
        if variant == "perturbed":
            tensors = perturb(T, np.random.default_rng(seed + 1))
            for kern in kernels:
                ckpts[kern] = os.path.join(work, f"perturbed_{kern}.safetensors")
                write_safetensors(ckpts[kern], tensors, metas[kern])
        # oracle, once
        P = {k: torch.tensor(v.astype(np.float64), requires_grad=True) for k, v in tensors.items()}
        logits = forward(P, cfg, None if src is None else torch.from_numpy(src), torch.from_numpy(inp))
        loss = smoothed_loss(logits, torch.from_numpy(tgt), case["smoothing"])
        loss.backward()
        alt_logits = {}
        if variant == "perturbed":
            with torch.no_grad():
                for alt in alternatives(cfg):
                    alt_logits[alt] = forward(P, dict(cfg, _alt=alt), None if src is None else torch.from_numpy(src),
                                              torch.from_numpy(inp)).numpy()
        for kern in kernels:
            row = f"{case['name']}/{variant}/{kern}"
            gpath = os.path.join(work, f"grads_{variant}_{kern}.safetensors")
            args = [binary, "gradients", "--checkpoint", ckpts[kern], "--force"]
            if src is not None:
                args += ["--source", os.path.join(work, "src.npy")]
            args += ["--input", os.path.join(work, "inp.npy"), "--target", os.path.join(work, "tgt.npy"),
                     "--label-smoothing", repr(case["smoothing"]), "--out", gpath]
            run(args)
            _, out = read_safetensors(gpath)
            want = {"logits", "loss"} | {"grad." + n for n in names}
            if set(out) != want:
                rows.append((row, None, [f"gradients file names: missing {sorted(want - set(out))}, "
                                         f"extra {sorted(set(out) - want)}"]))
                continue
            res, fails = compare(out, logits, loss, P, names, TOL)
            if res is not None:
                res["loss_value"] = loss.item()
                res["alts"] = {}
                for alt, al in alt_logits.items():
                    power = rel_err(al, logits.detach().numpy())[0]   # documented vs alternative
                    engine = rel_err(out["logits"], al)[0]             # engine vs alternative
                    res["alts"][alt] = (power, engine)
                    if not power >= ALT_MIN:
                        fails.append(f"alternative reading {alt} is only {power:.2g} from the documented one: "
                                     f"the case cannot tell them apart (change the case)")
                    elif not engine >= 10 * res["logits"]:
                        fails.append(f"scalelab's logits are as close to the alternative reading {alt} "
                                     f"({engine:.2g}) as to the documented one ({res['logits']:.2g})")
                if verbose:
                    for n, (kind, e) in res["per"].items():
                        print(f"    {row:48s} {kind:4s} {e:9.2e}  grad.{n}")
            rows.append((row, res, fails))
    if setup_fail:
        rows.insert(0, (case["name"] + "/setup", None, setup_fail))
    return rows


# Combinations docs/model.md says the engine rejects.
REJECTED = [
    {"attention.learned_temperature": True, "attention.apply_to": "query"},
    {"attention.fold_into_init": True, "attention.learned_temperature": True},
    {"attention.fold_into_init": True, "attention.apply_to": "query"},
]


def check_rejections(binary, tmp):
    fails = []
    cfg_path = os.path.join(tmp, "reject.toml")
    write_config(cfg_path, dict(model=dict(DO)))
    for combo in REJECTED:
        sets = sum((["--set", f"model.{k}={str(v).lower()}"] for k, v in combo.items()), [])
        r = subprocess.run([binary, "init", "--config", cfg_path, *sets, "--out",
                            os.path.join(tmp, "reject.safetensors"), "--force"], capture_output=True, text=True)
        if r.returncode == 0:
            fails.append(f"config {combo} accepted; docs/model.md says it is rejected")
    return fails


def main():
    ap = oracle_arguments(__doc__)
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    a = ap.parse_args()
    if a.list:
        for c in CASES:
            print(c["name"], json.dumps(c["model"]))
        return
    torch.set_num_threads(1)
    # scalelab's OpenMP threads must not spin between the tiny kernels (as in ctest's environment)
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    tmp = os.path.join(a.tmp, "knobs_oracle")
    os.makedirs(tmp, exist_ok=True)
    t0 = time.time()
    print(f"scalelab (float32) vs PyTorch {torch.__version__} float64 oracle of docs/model.md's knobs; "
          f"error = max|a-b| / max|b| per tensor; tolerance {TOL:g}")
    print(f"{'case/variant/kernel':50s} {'loss':>7s} {'logits':>9s} {'loss err':>9s} {'grads':>9s}  "
          f"{'worst gradient':42s} {'zero-grads':>10s}")
    cases = chosen_cases(CASES, a.case)
    all_fail = [] if a.case else check_rejections(a.bin, tmp)
    worst = Worst()
    summary = {}  # case -> worst logits, loss, grads over variants and kernels
    for case in cases:
        for row, res, fails in run_case(case, a.bin, tmp, a.verbose):
            all_fail += [f"{row}: {f}" for f in fails]
            if res is None:
                print(f"{row:50s} FAILED (see below)")
                continue
            print(result_row(row, res, fails, 50, 7, 42))
            if res["alts"] and row.endswith("/flash"):
                print("    rejected readings (logits distance from the doc's reading / from scalelab): " +
                      ", ".join(f"{k} {p:.1e}/{e:.1e}" for k, (p, e) in res["alts"].items()))
            w = summary.setdefault(case["name"], [0.0, 0.0, 0.0])
            for j, k in enumerate(("logits", "loss", "grads")):
                w[j] = max(w[j], res[k])
            worst.add(row, res)
    print(f"\n{'worst per case (init/perturbed x flash/naive)':50s} {'logits':>9s} {'loss':>9s} {'grads':>9s}")
    for n, (l1, l2, l3) in summary.items():
        print(f"{n:50s} {l1:9.2e} {l2:9.2e} {l3:9.2e}")
    print(f"worst relative error over all cases: {worst.error:.2e} ({worst.where}); {time.time() - t0:.1f} s")
    finish(all_fail, TOL)


if __name__ == "__main__":
    main()
