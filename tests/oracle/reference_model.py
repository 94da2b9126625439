"""The reference model both PyTorch oracles check scalelab against (transformer_oracle.py for the
documented model, knobs_oracle.py for every scale knob): an independent float64 implementation of
docs/model.md, written from the documentation only, evaluated on a checkpoint's tensors by name.

`cfg` is a case's [model] table (dotted keys such as "attention.scale"); a key it does not set
takes the documented default (DOC_DEFAULTS). `cfg["_alt"]`, when present, names one plausible
other reading of the doc (knobs_oracle.py's `alternatives`): the oracle evaluates it to show that
the case can tell it apart from the documented reading.
"""
import math

import torch

PAD, BOS, EOS, UNK = 0, 1, 2, 3

# Documented defaults (docs/model.md) of the keys the model reads.
DOC_DEFAULTS = {
    "norm_eps": 1e-5, "activation": "relu", "positions": "sinusoidal", "tie_output": False,
    "norm_type": "layernorm", "bias": True, "output_softcap": 0.0,
    "rope_base": 10000.0, "t5_buckets": 32, "t5_max_distance": 128,
    "embedding.scale": "sqrt_d", "embedding.output_scale": "1", "embedding.layernorm": False,
    "attention.scale": "inv_sqrt_dk", "attention.multiplier": 1.0,
    "attention.apply_to": "logits", "attention.learned_temperature": False,
    "attention.qk_norm": "none", "attention.qk_norm_learned": True, "attention.softcap": 0.0,
    "attention.fold_into_init": False, "attention.zero_init_query": False,
}


def activation(kind, x):
    if kind == "relu":
        return torch.clamp(x, min=0.0)
    if kind == "gelu":  # erf form
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
    raise ValueError(kind)


def sinusoid(T, d):
    pe = torch.zeros(T, d, dtype=torch.float64)
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    i2 = torch.arange(0, d, 2, dtype=torch.float64)
    div = torch.pow(torch.tensor(10000.0, dtype=torch.float64), i2 / d)
    pe[:, 0::2] = torch.sin(pos / div)
    pe[:, 1::2] = torch.cos(pos / div)
    return pe


def smoothed_loss(logits, target, e):
    """(1/N) sum_t -sum_j q_tj log softmax(logits_t)_j, q_t = (1-e) onehot + e/V, pad targets ignored."""
    V = logits.shape[-1]
    logp = torch.log_softmax(logits.reshape(-1, V), dim=-1)
    t = target.reshape(-1)
    keep = t != PAD
    q = torch.full_like(logp, e / V)
    q[torch.arange(t.numel()), t] += 1.0 - e
    per = -(q * logp).sum(-1)
    return per[keep].sum() / keep.sum()


def opt(cfg, key):
    return cfg[key] if key in cfg else DOC_DEFAULTS.get(key)


def has_bias(cfg):
    return bool(opt(cfg, "bias"))


def linear(P, name, x, cfg):
    y = x @ P[name + ".weight"].t()
    return y + P[name + ".bias"] if has_bias(cfg) else y


def norm_fn(kind, x, eps, g=None, b=None):
    if kind == "layernorm":
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)  # biased
        y = (x - mean) / torch.sqrt(var + eps)
        if g is not None:
            y = y * g
        if b is not None:
            y = y + b
        return y
    if kind == "rmsnorm":
        y = x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)
        return y * g if g is not None else y
    raise ValueError(kind)


def layer_norm_of(P, cfg, name, x):
    """norm1..3, post_norm1..3, final_norm: model.norm_type."""
    kind = opt(cfg, "norm_type")
    return norm_fn(kind, x, float(opt(cfg, "norm_eps")), P[name + ".weight"],
                   P[name + ".bias"] if kind == "layernorm" else None)


def round_to(x, fmt):
    if fmt in (None, "f32", "float32"):
        return x
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[fmt]
    # round to nearest even; the float64 and float32 paths must agree (no double-rounding tie)
    r = torch.tensor(x, dtype=torch.float64).to(dt).double().item()
    r32 = torch.tensor(x, dtype=torch.float32).to(dt).double().item()
    assert r == r32, f"double rounding ambiguity for {x} -> {fmt}"
    return r


def attention_scale(cfg):
    d_k = cfg["d_model"] // cfg["n_heads"]
    m = float(opt(cfg, "attention.multiplier"))
    return {"inv_sqrt_dk": m / math.sqrt(d_k), "inv_dk": m / d_k, "none": 1.0,
            "constant": m}[opt(cfg, "attention.scale")]


def alibi_slopes(h):
    """The ALiBi paper's get_slopes."""
    def pow2(n):
        start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]
    if math.log2(h).is_integer():
        return pow2(h)
    c = 2 ** math.floor(math.log2(h))
    return pow2(c) + alibi_slopes(2 * c)[0::2][:h - c]


def t5_bucket(rel, bidirectional, num_buckets, max_distance, log=math.log):
    """Mesh-TF / HF T5 _relative_position_bucket for one relative position rel = j - i."""
    ret = 0
    if bidirectional:
        num_buckets //= 2
        if rel > 0:
            ret += num_buckets
        n = abs(rel)
    else:
        n = max(-rel, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return ret + n
    v = max_exact + int(log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact))
    return ret + min(v, num_buckets - 1)


_BUCKETS = {}


def t5_bucket_table(Tq, Tk, bidirectional, cfg):
    key = (Tq, Tk, bidirectional, opt(cfg, "t5_buckets"), opt(cfg, "t5_max_distance"))
    if key not in _BUCKETS:
        _BUCKETS[key] = _t5_bucket_table(Tq, Tk, bidirectional, cfg)
    return _BUCKETS[key]


def _t5_bucket_table(Tq, Tk, bidirectional, cfg):
    nb, md = int(opt(cfg, "t5_buckets")), int(opt(cfg, "t5_max_distance"))
    rel = torch.arange(Tk)[None, :] - torch.arange(Tq)[:, None]  # j - i
    table = {r: t5_bucket(r, bidirectional, nb, md) for r in range(-Tq + 1, Tk)}
    # HF T5's float32 evaluation must give the same buckets as the exact one for these distances
    f32 = t5_bucket_hf_float32(torch.tensor(sorted(table)), bidirectional, nb, md)
    for r, b32 in zip(sorted(table), f32.tolist()):
        if table[r] != b32:
            raise SystemExit(f"T5 bucket of {r} is {table[r]} in float64, {b32} in HF's float32: change the case")
    return rel.clone().apply_(lambda r: table[r])


def t5_bucket_hf_float32(rel, bidirectional, num_buckets, max_distance):
    """HF transformers' T5Attention._relative_position_bucket (float32 log), for the cross-check."""
    ret = torch.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        ret += (rel > 0).to(torch.long) * num_buckets
        n = rel.abs()
    else:
        n = -torch.min(rel, torch.zeros_like(rel))
    max_exact = num_buckets // 2
    large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return ret + torch.where(n < max_exact, n, large)


def rope(x, base, interleaved=False):
    """x: [B, h, T, d_k], half-split pairing (i, i + d_k/2), angle p * base^(-2i/d_k), p from 0.
    interleaved=True: the GPT-J pairing (2i, 2i+1), only as an alternative reading."""
    if interleaved:
        B, h, T, d_k = x.shape
        y = x.reshape(B, h, T, d_k // 2, 2).transpose(-1, -2).reshape(B, h, T, d_k)
        y = rope(y, base)
        return y.reshape(B, h, T, 2, d_k // 2).transpose(-1, -2).reshape(B, h, T, d_k)
    T, d_k = x.shape[-2], x.shape[-1]
    half = d_k // 2
    inv = torch.pow(torch.tensor(float(base), dtype=torch.float64),
                    -2.0 * torch.arange(half, dtype=torch.float64) / d_k)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]  # [T, half]
    cos, sin = torch.cos(ang), torch.sin(ang)
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


def attention(P, name, xq, xkv, masked, cfg, self_attn, bidirectional, stack):
    """masked: bool [B, Tq, Tk], True where s_ij = -inf."""
    h = cfg["n_heads"]
    B, Tq, d = xq.shape
    Tk = xkv.shape[1]
    d_k = d // h
    q = linear(P, name + ".q", xq, cfg).view(B, Tq, h, d_k).transpose(1, 2)
    k = linear(P, name + ".k", xkv, cfg).view(B, Tk, h, d_k).transpose(1, 2)
    v = linear(P, name + ".v", xkv, cfg).view(B, Tk, h, d_k).transpose(1, 2)
    alt = cfg.get("_alt", "")
    positions = opt(cfg, "positions")
    rope_here = self_attn and positions == "rope"
    if rope_here and alt == "rope_before_qk_norm":
        q, k = rope(q, opt(cfg, "rope_base")), rope(k, opt(cfg, "rope_base"))
    qk = opt(cfg, "attention.qk_norm")
    if alt == "qk_norm_self_only" and not self_attn:
        qk = None
    if qk not in (None, "none"):
        eps = float(opt(cfg, "norm_eps")) if alt != "qk_norm_eps_1e-6" else 1e-6
        if opt(cfg, "attention.qk_norm_learned"):
            gq, gk = P[name + ".q_norm.weight"], P[name + ".k_norm.weight"]
            bq = P[name + ".q_norm.bias"] if qk == "layernorm" else None
            bk = P[name + ".k_norm.bias"] if qk == "layernorm" else None
        else:
            gq = gk = bq = bk = None
        q = norm_fn(qk, q, eps, gq, bq)
        k = norm_fn(qk, k, eps, gk, bk)
    if rope_here and alt != "rope_before_qk_norm":
        q = rope(q, opt(cfg, "rope_base"), interleaved=alt == "rope_interleaved")
        k = rope(k, opt(cfg, "rope_base"), interleaved=alt == "rope_interleaved")
    if opt(cfg, "attention.learned_temperature"):
        c = P[name + ".temperature"].view(1, h, 1, 1)
    elif opt(cfg, "attention.fold_into_init"):
        c = 1.0
    else:
        c = attention_scale(cfg)
    if opt(cfg, "attention.apply_to") == "query":
        s = (c * q) @ k.transpose(-1, -2)
    else:
        s = c * (q @ k.transpose(-1, -2))
    cap = float(opt(cfg, "attention.softcap"))
    if cap > 0 and alt != "softcap_after_position_bias":
        s = cap * torch.tanh(s / cap)
    if self_attn and positions == "alibi":
        sl = alibi_slopes(h) if alt != "alibi_slopes_reversed" else alibi_slopes(h)[::-1]
        slopes = torch.tensor(sl, dtype=torch.float64).view(1, h, 1, 1)
        dist = (torch.arange(Tq)[:, None] - torch.arange(Tk)[None, :]).abs().double()
        s = s - slopes * dist
    if self_attn and positions == "t5_bias":
        bidir = bidirectional
        if alt == "t5_decoder_bidirectional":
            bidir = True
        if alt == "t5_encoder_causal":
            bidir = False
        buckets = t5_bucket_table(Tq, Tk, bidir, cfg)  # [Tq, Tk]
        if alt == "t5_relative_i_minus_j":
            buckets = t5_bucket_table(Tk, Tq, bidir, cfg).t()  # bucket(i - j)
        table = P[stack + ".rel_bias.weight"]  # [buckets, h]
        s = s + table[buckets].permute(2, 0, 1)[None]  # [1, h, Tq, Tk]
    if cap > 0 and alt == "softcap_after_position_bias":
        s = cap * torch.tanh(s / cap)
    s = s.masked_fill(masked[:, None, :, :], float("-inf"))
    p = torch.softmax(s, dim=-1)
    o = (p @ v).transpose(1, 2).reshape(B, Tq, d)
    return linear(P, name + ".o", o, cfg)


def ffn(P, name, x, cfg):
    return linear(P, name + ".fc2", activation(opt(cfg, "activation"), linear(P, name + ".fc1", x, cfg)), cfg)


def embed_scale_constant(cfg):
    d = cfg["d_model"]
    kind = str(opt(cfg, "embedding.scale"))
    s = {"1": 1.0, "sqrt_d": math.sqrt(d), "d": float(d), "inv_sqrt_d": 1.0 / math.sqrt(d),
         "inv_d": 1.0 / d}.get(kind)
    if s is None:
        s = float(kind)
    if cfg.get("_alt") == "unrounded_embedding_scale":
        return s
    return round_to(s, opt(cfg, "embedding.scale_dtype"))


def embed(P, prefix, ids, cfg):
    d = cfg["d_model"]
    if str(opt(cfg, "embedding.scale")) == "learned":
        s = P[prefix + ".embed.scale"]
    else:
        s = embed_scale_constant(cfg)
    x = s * P[prefix + ".embed.weight"][ids]
    T = ids.shape[1]
    pos = opt(cfg, "positions")
    if pos == "sinusoidal":
        x = x + sinusoid(T, d)[None]
    elif pos == "learned":
        x = x + P[prefix + ".pos_embed.weight"][:T][None]
    if opt(cfg, "embedding.layernorm"):
        if cfg.get("_alt") == "embed_norm_follows_norm_type" and opt(cfg, "norm_type") == "rmsnorm":
            return norm_fn("rmsnorm", x, float(opt(cfg, "norm_eps")), P[prefix + ".embed_norm.weight"])
        x = norm_fn("layernorm", x, float(opt(cfg, "norm_eps")), P[prefix + ".embed_norm.weight"],
                    P[prefix + ".embed_norm.bias"])
    return x


def sublayer(P, pfx, i, x, f, cfg):
    kind = cfg["norm"]
    if kind == "post":
        return layer_norm_of(P, cfg, f"{pfx}.norm{i}", x + f(x))
    if kind == "pre":
        return x + f(layer_norm_of(P, cfg, f"{pfx}.norm{i}", x))
    if kind == "sandwich":
        return x + layer_norm_of(P, cfg, f"{pfx}.post_norm{i}", f(layer_norm_of(P, cfg, f"{pfx}.norm{i}", x)))
    raise ValueError(kind)


def forward(P, cfg, src, inp):
    final = cfg["norm"] in ("pre", "sandwich")
    B, T = inp.shape
    memory = None
    if cfg["arch"] == "encoder_decoder":
        S = src.shape[1]
        idx = torch.arange(S)[None, :].expand(B, S)
        lens = torch.where(src != PAD, idx + 1, torch.zeros_like(idx)).max(dim=1).values
        key_pad = torch.arange(S)[None, :] >= lens[:, None]
        enc_mask = key_pad[:, None, :].expand(B, S, S)
        x = embed(P, "encoder", src, cfg)
        for l in range(cfg["encoder_layers"]):
            p = f"encoder.layers.{l}"
            x = sublayer(P, p, 1, x, lambda z: attention(P, p + ".self_attn", z, z, enc_mask, cfg,
                                                         True, True, "encoder"), cfg)
            x = sublayer(P, p, 2, x, lambda z: ffn(P, p + ".ffn", z, cfg), cfg)
        memory = layer_norm_of(P, cfg, "encoder.final_norm", x) if final else x
        cross_mask = key_pad[:, None, :].expand(B, T, S)
    causal = (torch.arange(T)[None, :] > torch.arange(T)[:, None])[None].expand(B, T, T)
    y = embed(P, "decoder", inp, cfg)
    for l in range(cfg["decoder_layers"]):
        p = f"decoder.layers.{l}"
        y = sublayer(P, p, 1, y, lambda z: attention(P, p + ".self_attn", z, z, causal, cfg,
                                                     True, False, "decoder"), cfg)
        n = 2
        if memory is not None:
            y = sublayer(P, p, 2, y, lambda z: attention(P, p + ".cross_attn", z, memory, cross_mask, cfg,
                                                         False, False, "decoder"), cfg)
            n = 3
        y = sublayer(P, p, n, y, lambda z: ffn(P, p + ".ffn", z, cfg), cfg)
    h = layer_norm_of(P, cfg, "decoder.final_norm", y) if final else y
    W = P["decoder.embed.weight"] if opt(cfg, "tie_output") else P["decoder.out.weight"]
    c_out = {"1": 1.0, "inv_sqrt_d": 1.0 / math.sqrt(cfg["d_model"])}[str(opt(cfg, "embedding.output_scale"))]
    logits = c_out * (h @ W.t())
    cap = float(opt(cfg, "output_softcap"))
    if cap > 0:
        logits = cap * torch.tanh(logits / cap)
    return logits
