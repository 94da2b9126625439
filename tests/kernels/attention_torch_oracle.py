#!/usr/bin/env python3
"""Independent oracle for scalelab's flash attention: PyTorch 1.13 autograd in float64.

Reads the cases that attention_flash_test wrote (cases.json and .npy files: inputs and the
kernel's outputs and gradients), recomputes attention from this file's own formulation, and
checks the kernel's float results:

  logits  x = scale_h · (q · kᵀ)                      per head h, q and k of shape [B, H, L, d]
          x = cap · tanh(x / cap)                      when softcap > 0
          x = x + bias[h] - slope_h · |i + Lk - Lq - j|
          masked keys (j > i + Lk - Lq when causal; j >= key_lengths[b]) take no probability;
          a row with no visible key outputs zeros
  out     softmax(x) · v
  grads   d(sum(out ⊙ dout)) / d(q, k, v, bias, head_scales) by autograd

Tolerance: max|kernel - torch| / max|torch| <= 1e-5 per tensor (the kernel is float32). The
per-head scale gradient sums q_len·k_len terms that cancel; it is judged relative to
sum |g ⊙ raw| (its condition), with g the gradient of the pre-scale logits.
"""
import json
import os
import sys

import numpy as np
import torch

TOL = 1e-5


def load(directory, name, key):
    path = os.path.join(directory, f"{name}_{key}.npy")
    return np.load(path) if os.path.exists(path) else None


def attention(case, arrays):
    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
         for k, v in arrays.items() if v is not None and k in ("q", "k", "v", "bias", "head_scales")}
    q, k, v = (t[n].permute(0, 2, 1, 3) for n in ("q", "k", "v"))  # [B, H, L, d]
    B, H, Lq, _ = q.shape
    Lk = k.shape[2]
    raw = torch.einsum("bhid,bhjd->bhij", q, k)
    raw.retain_grad()
    if "head_scales" in t:
        scale = t["head_scales"].view(1, H, 1, 1)
    else:
        scale = torch.tensor(case["scale"], dtype=torch.float64)
    x = raw * scale
    x.retain_grad()
    if case["softcap"] > 0:
        x_capped = case["softcap"] * torch.tanh(x / case["softcap"])
    else:
        x_capped = x
    logits = x_capped
    if "bias" in t:
        logits = logits + t["bias"].unsqueeze(0)
    i = torch.arange(Lq).view(Lq, 1) + (Lk - Lq)
    j = torch.arange(Lk).view(1, Lk)
    if arrays.get("alibi_slopes") is not None:
        slopes = torch.tensor(arrays["alibi_slopes"], dtype=torch.float64).view(1, H, 1, 1)
        logits = logits - slopes * (i - j).abs().to(torch.float64)
    visible = torch.ones(B, 1, Lq, Lk, dtype=torch.bool)
    if case["causal"]:
        visible = visible & (j <= i)
    if arrays.get("key_lengths") is not None:
        lengths = torch.tensor(arrays["key_lengths"].astype(np.int64)).view(B, 1, 1, 1)
        visible = visible & (j < lengths)
    any_visible = visible.any(dim=-1, keepdim=True)
    # Rows with no visible key: softmax over a dummy 0 row, then zeroed.
    logits = torch.where(visible, logits, torch.tensor(-float("inf"), dtype=torch.float64))
    logits = torch.where(any_visible, logits, torch.zeros_like(logits))
    p = torch.softmax(logits, dim=-1) * any_visible
    out = torch.einsum("bhij,bhjd->bhid", p, v).permute(0, 2, 1, 3)
    dout = torch.tensor(arrays["dout"], dtype=torch.float64)
    (out * dout).sum().backward()
    result = {"out": out.detach().numpy(), "dq": t["q"].grad.numpy(), "dk": t["k"].grad.numpy(),
              "dv": t["v"].grad.numpy()}
    if "bias" in t:
        result["dbias"] = t["bias"].grad.numpy()
    if "head_scales" in t:
        result["dhead_scales"] = t["head_scales"].grad.numpy()
        # g = d loss / d x (pre-cap logits); the terms of dhead_scales[h] are g · raw.
        result["dhead_scales_condition"] = (x.grad * raw.detach()).abs().sum(dim=(0, 2, 3)).numpy()
    return result


def main():
    directory = sys.argv[1]
    with open(os.path.join(directory, "cases.json")) as f:
        cases = json.load(f)
    assert cases, "no cases written"
    failures = 0
    for case in cases:
        name = case["name"]
        keys = ("q", "k", "v", "dout", "bias", "head_scales", "alibi_slopes", "key_lengths")
        arrays = {key: load(directory, name, key) for key in keys}
        ref = attention(case, arrays)
        for key in ("out", "dq", "dk", "dv", "dbias", "dhead_scales"):
            if key not in ref:
                continue
            got = load(directory, name, key).astype(np.float64)
            assert np.all(np.isfinite(got)), f"{name} {key}: non-finite values"
            err = np.abs(got - ref[key])
            if key == "dhead_scales":
                rel = float(np.max(err / ref["dhead_scales_condition"]))
            else:
                rel = float(err.max() / max(np.abs(ref[key]).max(), 1e-300))
            ok = rel <= TOL
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name:18s} {key:13s} rel err {rel:.2e}")
    print(f"torch {torch.__version__}: {len(cases)} cases, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
