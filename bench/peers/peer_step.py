"""The standard training step of bench/standard_step.hpp, ported to PyTorch 2 (eager and
torch.compile) and JAX (jit): the same model (read from the checkpoint train_step_check wrote, tensor
names of docs/checkpoint.md), the same batch, label-smoothed cross-entropy (0.1), global-norm
clipping (1.0, factor 1 / (norm + 1e-12) as the engine's) and Adam (lr 1e-4, betas 0.9 / 0.98,
eps 1e-9, eps added to the bias-corrected sqrt(v)), dropout off.

--precision f32 (the default) runs every product in float32. --precision bf16 is each framework's
own mixed precision, as a user would turn it on, float32 weights and optimizer: PyTorch's
torch.autocast("cpu", dtype=torch.bfloat16) around the loss (matmuls and scaled_dot_product_attention
in bf16, as autocast lists them), and for JAX every matmul and attention einsum on bf16 operands with
float32 results (preferred_element_type), as Flax's dtype=bfloat16 layers compute. scalelab's
matmul_precision = "bf16" rounds the operands of the linear maps only (docs/precision.md); the peers'
bf16 does at least as much in bf16.

First the check: 3 steps from the checkpoint's weights, then the loss of the updated weights, to
be compared with scalelab's by bench/compare_train_step.py. Then the timing: --warmup untimed
steps, --repeats timed ones; prints one JSON line (median step time, tokens per second).
Run with the peers' Python (bench/peers/setup.sh):
  build/peers-venv/bin/python bench/peers/peer_step.py --framework jax --check check.json \
      --checkpoint init.safetensors --threads 1 [--precision bf16]
"""
import argparse
import json
import math
import os
import statistics
import struct
import sys
import time

# Knobs this port implements; any other value in the checkpoint's config is refused (a port that
# silently ignored a knob would not compute the same step).
SUPPORTED = {
    "activation": {"relu"}, "norm": {"post", "pre"}, "norm_type": {"layernorm"},
    "positions": {"sinusoidal", "none"}, "bias": {True}, "output_softcap": {0, 0.0},
}
SUPPORTED_ATTENTION = {"scale": {"inv_sqrt_dk"}, "apply_to": {"logits"}, "qk_norm": {"none"},
                       "learned_temperature": {False}, "softcap": {0, 0.0}}


def read_checkpoint(path):
    """docs/checkpoint.md's reader: {name: float32 array}."""
    import numpy as np
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    data = raw[8 + n:]
    return {name: np.frombuffer(data[a:b], dtype="<f4").reshape(info["shape"]).copy()
            for name, info in header.items() for a, b in [info["data_offsets"]]}


def check_knobs(cfg):
    for key, allowed in SUPPORTED.items():
        if cfg.get(key) not in allowed:
            sys.exit(f"peer_step: model.{key} = {cfg.get(key)!r} is not ported (ported: {sorted(map(str, allowed))})")
    for key, allowed in SUPPORTED_ATTENTION.items():
        if cfg["attention"].get(key) not in allowed:
            sys.exit(f"peer_step: attention.{key} = {cfg['attention'].get(key)!r} is not ported")
    emb = cfg["embedding"]
    if (emb.get("layernorm") or emb.get("scale") not in ("sqrt_d", "1") or emb.get("output_scale") != "1"
            or emb.get("scale_dtype") != "f32" or "learned_init" in emb):
        sys.exit(f"peer_step: embedding settings {emb} are not ported")


def embed_scale(cfg):
    return math.sqrt(cfg["d_model"]) if cfg["embedding"]["scale"] == "sqrt_d" else 1.0


def sinusoid(np, T, d):
    """positions[t, 2i] = sin(t / 10000^(2i/d)), positions[t, 2i+1] = cos(...) (docs/model.md)."""
    pos = np.arange(T, dtype=np.float64)[:, None]
    div = np.power(10000.0, np.arange(0, d, 2, dtype=np.float64) / d)
    pe = np.zeros((T, d))
    pe[:, 0::2] = np.sin(pos / div)
    pe[:, 1::2] = np.cos(pos / div)
    return pe.astype(np.float32)


def layer_names(cfg):
    """(prefix, attention sublayers, norm of the ffn) of every layer, in order."""
    out = []
    if cfg["arch"] == "encoder_decoder":
        out += [(f"encoder.layers.{l}", ["self_attn"], "norm2") for l in range(cfg["encoder_layers"])]
    cross = cfg["arch"] == "encoder_decoder"
    out += [(f"decoder.layers.{l}", ["self_attn"] + (["cross_attn"] if cross else []),
             "norm3" if cross else "norm2") for l in range(cfg["decoder_layers"])]
    return out


def forward_generic(F, cfg, P, src, tgt_in, positions_src, positions_tgt):
    """The model, written once over a small op table F (torch or jax): logits [B, T, V]."""
    pre = cfg["norm"] == "pre"
    eps = cfg["norm_eps"]
    h = cfg["n_heads"]
    scale = 1.0 / math.sqrt(cfg["d_model"] // h)

    def linear(name, x):
        return F.linear(x, P[name + ".weight"], P[name + ".bias"])

    def norm(name, x):
        return F.layer_norm(x, P[name + ".weight"], P[name + ".bias"], eps)

    def attention(name, xq, xkv, causal):
        B, Tq, d = xq.shape
        Tk = xkv.shape[1]
        split = lambda x, T: F.transpose12(F.reshape(x, (B, T, h, d // h)))
        q, k, v = (split(linear(name + s, x), T) for s, x, T in
                   ((".q", xq, Tq), (".k", xkv, Tk), (".v", xkv, Tk)))
        o = F.attention(q, k, v, scale, causal)
        return linear(name + ".o", F.reshape(F.transpose12(o), (B, Tq, d)))

    def sublayer(norm_name, x, f):
        if pre:
            return x + f(norm(norm_name, x))
        return norm(norm_name, x + f(x))

    def ffn(name, x):
        return linear(name + ".fc2", F.relu(linear(name + ".fc1", x)))

    def stack(prefix, x, memory):
        for layer, attns, ffn_norm in layer_names(cfg):
            if not layer.startswith(prefix):
                continue
            x = sublayer(layer + ".norm1", x, lambda z: attention(layer + ".self_attn", z, z, prefix == "decoder"))
            if "cross_attn" in attns:
                x = sublayer(layer + ".norm2", x, lambda z: attention(layer + ".cross_attn", z, memory, False))
            x = sublayer(layer + "." + ffn_norm, x, lambda z: ffn(layer + ".ffn", z))
        return norm(prefix + ".final_norm", x) if pre else x

    s = embed_scale(cfg)
    memory = None
    if cfg["arch"] == "encoder_decoder":
        memory = stack("encoder", s * F.take(P["encoder.embed.weight"], src) + positions_src, None)
    y = stack("decoder", s * F.take(P["decoder.embed.weight"], tgt_in) + positions_tgt, memory)
    w = P["decoder.embed.weight"] if cfg["tie_output"] else P["decoder.out.weight"]
    return F.linear(y, w, None)


# ---------------------------------------------------------------- PyTorch

def torch_runner(check, weights, compiled, bf16):
    import torch
    import torch.nn.functional as tF

    class Ops:
        # F.linear, as nn.Linear: under torch.compile with bf16 autocast, torch.matmul(x, w.t())
        # gave non-finite weight gradients in the attention projections (torch 2.15.0, the
        # small configuration, the first step), F.linear finite ones agreeing with eager's.
        linear = staticmethod(tF.linear)
        reshape = staticmethod(lambda x, s: x.reshape(s))
        transpose12 = staticmethod(lambda x: x.transpose(1, 2))
        relu = staticmethod(torch.relu)
        take = staticmethod(lambda table, ids: table[ids])
        layer_norm = staticmethod(lambda x, w, b, eps: tF.layer_norm(x, (x.shape[-1],), w, b, eps))
        attention = staticmethod(lambda q, k, v, scale, causal: tF.scaled_dot_product_attention(
            q, k, v, is_causal=causal, scale=scale))

    cfg = check["model"]
    B, S, T = batch_dims(check)
    P = {k: torch.nn.Parameter(torch.from_numpy(v)) for k, v in weights.items()}
    params = [P[k] for k in sorted(P)]
    src = torch.tensor(check["src"], dtype=torch.long).reshape(B, S) if S else None
    tgt_in = torch.tensor(check["tgt_in"], dtype=torch.long).reshape(B, T)
    tgt_out = torch.tensor(check["tgt_out"], dtype=torch.long).reshape(-1)
    import numpy as np
    pos_src = torch.from_numpy(sinusoid(np, S, cfg["d_model"])) if S else None
    pos_tgt = torch.from_numpy(sinusoid(np, T, cfg["d_model"]))
    if cfg["positions"] == "none":
        pos_src, pos_tgt = 0.0, 0.0
    smoothing = check["label_smoothing"]

    def loss_fn():
        logits = forward_generic(Ops, cfg, P, src, tgt_in, pos_src, pos_tgt)
        return tF.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out, label_smoothing=smoothing)

    compiled_fn = torch.compile(loss_fn) if compiled else loss_fn

    def fn():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            return compiled_fn()
    opt = torch.optim.Adam(params, lr=check["lr"], betas=(0.9, 0.98), eps=1e-9)

    def step():
        opt.zero_grad(set_to_none=False)
        loss = fn()
        loss.backward()
        with torch.no_grad():
            grads = [p.grad for p in params if p.grad is not None]  # an unused tensor has none
            norm = float(torch.sqrt(sum((g.double() ** 2).sum() for g in grads)))
            if norm > check["clip"]:
                torch._foreach_mul_(grads, check["clip"] / (norm + 1e-12))
        opt.step()
        return float(loss)

    def loss_now():
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            return float(loss_fn())

    return step, loss_now


# ---------------------------------------------------------------- JAX

def jax_runner(check, weights, bf16):
    import jax
    import jax.numpy as jnp
    import numpy as np
    jax.config.update("jax_default_matmul_precision", "highest")  # f32 GEMMs, no reduced precision

    # bf16: operands rounded to bf16, products summed into float32 results.
    low = (lambda x: x.astype(jnp.bfloat16)) if bf16 else (lambda x: x)

    def einsum(spec, a, b):
        return jnp.einsum(spec, low(a), low(b), preferred_element_type=jnp.float32)

    def matmul(a, b):
        return jnp.matmul(low(a), low(b), preferred_element_type=jnp.float32)

    def attention(q, k, v, scale, causal):
        s = einsum("bhqd,bhkd->bhqk", q, k) * scale
        if causal:
            Tq, Tk = s.shape[-2:]
            s = jnp.where(jnp.tril(jnp.ones((Tq, Tk), bool)), s, -jnp.inf)
        return einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)

    def layer_norm(x, w, b, eps):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + eps) * w + b

    class Ops:
        linear = staticmethod(lambda x, w, b: matmul(x, w.T) if b is None else matmul(x, w.T) + b)
        reshape = staticmethod(jnp.reshape)
        transpose12 = staticmethod(lambda x: jnp.swapaxes(x, 1, 2))
        relu = staticmethod(jax.nn.relu)
        take = staticmethod(lambda table, ids: table[ids])

    Ops.layer_norm = staticmethod(layer_norm)
    Ops.attention = staticmethod(attention)
    cfg = check["model"]
    B, S, T = batch_dims(check)
    src = jnp.asarray(np.array(check["src"], np.int32).reshape(B, S)) if S else None
    tgt_in = jnp.asarray(np.array(check["tgt_in"], np.int32).reshape(B, T))
    tgt_out = jnp.asarray(np.array(check["tgt_out"], np.int32))
    pos_src = jnp.asarray(sinusoid(np, S, cfg["d_model"])) if S else None
    pos_tgt = jnp.asarray(sinusoid(np, T, cfg["d_model"]))
    if cfg["positions"] == "none":
        pos_src, pos_tgt = 0.0, 0.0
    e = check["label_smoothing"]
    lr, clip = check["lr"], check["clip"]
    b1, b2, eps = 0.9, 0.98, 1e-9

    def loss_fn(P):
        logits = forward_generic(Ops, cfg, P, src, tgt_in, pos_src, pos_tgt)
        logp = jax.nn.log_softmax(logits.reshape(-1, logits.shape[-1]), axis=-1)
        nll = -jnp.take_along_axis(logp, tgt_out[:, None], axis=1)[:, 0]
        return jnp.mean((1 - e) * nll - e * logp.mean(-1))

    def train_step(P, m, v, t):
        loss, g = jax.value_and_grad(loss_fn)(P)
        norm = jnp.sqrt(sum(jnp.sum(x.astype(jnp.float32) ** 2) for x in jax.tree_util.tree_leaves(g)))
        factor = jnp.where(norm > clip, clip / (norm + 1e-12), 1.0)
        g = jax.tree_util.tree_map(lambda x: x * factor, g)
        m = jax.tree_util.tree_map(lambda a, x: b1 * a + (1 - b1) * x, m, g)
        v = jax.tree_util.tree_map(lambda a, x: b2 * a + (1 - b2) * x * x, v, g)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t
        P = jax.tree_util.tree_map(
            lambda p, a, b: p - (lr / c1) * a / (jnp.sqrt(b) / jnp.sqrt(c2) + eps), P, m, v)
        return P, m, v, loss

    jstep = jax.jit(train_step, donate_argnums=(0, 1, 2))
    jloss = jax.jit(loss_fn)
    state = {"P": {k: jnp.asarray(w) for k, w in weights.items()}, "t": 0}
    state["m"] = jax.tree_util.tree_map(jnp.zeros_like, state["P"])
    state["v"] = jax.tree_util.tree_map(jnp.zeros_like, state["P"])

    def step():
        state["t"] += 1
        state["P"], state["m"], state["v"], loss = jstep(state["P"], state["m"], state["v"],
                                                        jnp.float32(state["t"]))
        return float(loss)  # blocks until the step is done

    def loss_now():
        return float(jloss(state["P"]))

    return step, loss_now


def batch_dims(check):
    cfg = check["model"]
    B = len(check["tgt_in"]) // check["tgt_len"]
    return B, check["src_len"], check["tgt_len"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--framework", required=True, choices=["torch", "torch_compile", "jax"])
    ap.add_argument("--check", required=True, help="train_step_check's JSON (model, batch, losses)")
    ap.add_argument("--checkpoint", required=True, help="train_step_check's initial weights")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--precision", choices=["f32", "bf16"], default="f32")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    check = json.load(open(args.check))
    check_knobs(check["model"])
    weights = read_checkpoint(args.checkpoint)
    if args.framework == "jax":
        step, loss_now = jax_runner(check, weights, args.precision == "bf16")
        import jax
        version = "jax " + jax.__version__
    else:
        import torch
        torch.set_num_threads(args.threads)
        step, loss_now = torch_runner(check, weights, args.framework == "torch_compile",
                                      args.precision == "bf16")
        version = "torch " + torch.__version__
    n_check = len(check["step_losses"])
    t0 = time.perf_counter()
    step_losses = [step() for _ in range(n_check)]
    first_steps_s = time.perf_counter() - t0  # includes tracing and compilation
    loss_after = loss_now()
    for _ in range(args.warmup):
        step()
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    print(json.dumps({"framework": args.framework, "version": version, "threads": args.threads,
                      "precision": args.precision,
                      "step_losses": step_losses, "loss_after": loss_after,
                      "first_steps_s": first_steps_s, "median_step_s": med,
                      "tokens_per_s": len(check["tgt_out"]) / med, "repeats": args.repeats}), flush=True)


if __name__ == "__main__":
    main()
