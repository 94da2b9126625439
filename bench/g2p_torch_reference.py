#!/usr/bin/python3
"""An independent PyTorch implementation of the G2P recipe of configs/g2p.toml, to tell whether
scalelab's training learns as fast per step as a standard implementation of the same recipe.

It shares no code with scalelab: it reads data/cmudict-g014b2b itself, carves the same valid words
(FNV-1a + SplitMix64, seed 20170612, 5 %: data/split.cpp's rule, re-implemented), builds the same
pre-LN encoder-decoder (sinusoidal positions, embedding x sqrt(d), N(0, 1/d) embeddings, Xavier
linears, tied decoder output, ReLU FFN, final LayerNorms), and trains with the same Adam, warm-up +
cosine schedule, clipping, label smoothing, batch size and length bucketing. It then scores the
valid words: loss (nats/phone, no smoothing) and greedy WER/PER with any-variant scoring.

    OMP_NUM_THREADS=1 /usr/bin/python3 bench/g2p_torch_reference.py --steps 4000

Compare with the same --steps run of scalelab:
    build/scalelab train --config configs/g2p.toml --set train.steps=4000 ...
    build/scalelab eval -C <run>/checkpoint.safetensors --split valid --beam 1
"""
import argparse
import math
import random
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, BOS, EOS, UNK = 0, 1, 2, 3
MASK64 = (1 << 64) - 1


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for c in text.encode():
        h ^= c
        h = (h * 0x100000001B3) & MASK64
    return h


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def is_valid_word(word, seed=20170612, fraction=0.05):
    h = mix64(fnv1a64(word) ^ mix64((seed + 0x9E3779B97F4A7C15) & MASK64))
    return (h >> 11) * 2.0 ** -53 < fraction


def read_dict(path):
    entries = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            word, phones = line.rstrip("\n").split("\t")
            # lower-cased, as scalelab does before hashing and encoding
            entries.setdefault(word.lower(), []).append(phones.split())
    return entries


class Vocab:
    def __init__(self, symbols):
        self.itos = ["<pad>", "<bos>", "<eos>", "<unk>"] + sorted(symbols)
        self.stoi = {s: i for i, s in enumerate(self.itos)}

    def encode(self, symbols):
        return [self.stoi.get(s, UNK) for s in symbols]


def sinusoidal(max_len, d):
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float64) / d)
    table = torch.zeros(max_len, d, dtype=torch.float64)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)
    return table.float()


class G2pTransformer(nn.Module):
    def __init__(self, n_letters, n_phones, d=256, heads=4, d_ff=1024, layers=3, max_len=48,
                 qkv_init="fused"):
        super().__init__()
        self.d = d
        self.src_embed = nn.Embedding(n_letters, d)
        self.tgt_embed = nn.Embedding(n_phones, d)
        for e in (self.src_embed, self.tgt_embed):
            nn.init.normal_(e.weight, std=d ** -0.5)
        self.register_buffer("positions", sinusoidal(max_len + 2, d))
        enc = nn.TransformerEncoderLayer(d, heads, d_ff, dropout=0.0, batch_first=True,
                                         norm_first=True)
        dec = nn.TransformerDecoderLayer(d, heads, d_ff, dropout=0.0, batch_first=True,
                                         norm_first=True)
        self.encoder = nn.TransformerEncoder(enc, layers, norm=nn.LayerNorm(d))
        self.decoder = nn.TransformerDecoder(dec, layers, norm=nn.LayerNorm(d))
        for name, p in self.named_parameters():
            if p.dim() == 2 and "embed" not in name:
                # in_proj_weight is W_q, W_k, W_v stacked [3d, d]: Xavier over the whole gives each
                # 1/sqrt(2) of the bound it gets alone (scalelab's default; --qkv-init separate)
                nn.init.xavier_uniform_(p)
                if qkv_init == "separate" and "in_proj_weight" in name:
                    for block in p.data.chunk(3):
                        nn.init.xavier_uniform_(block)
            elif name.endswith("bias") and "norm" not in name:
                nn.init.zeros_(p)

    def embed(self, table, tokens):
        return table(tokens) * math.sqrt(self.d) + self.positions[: tokens.shape[1]]

    def encode(self, src):
        pad = src == PAD
        return self.encoder(self.embed(self.src_embed, src), src_key_padding_mask=pad), pad

    def decode(self, memory, src_pad, tgt_in):
        t = tgt_in.shape[1]
        causal = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        h = self.decoder(self.embed(self.tgt_embed, tgt_in), memory, tgt_mask=causal,
                         tgt_key_padding_mask=tgt_in == PAD, memory_key_padding_mask=src_pad)
        return h @ self.tgt_embed.weight.t()  # tied output projection

    def forward(self, src, tgt_in):
        memory, src_pad = self.encode(src)
        return self.decode(memory, src_pad, tgt_in)


def make_batch(examples):
    s = max(len(x) for x, _ in examples) + 1
    t = max(len(y) for _, y in examples) + 1
    src = torch.full((len(examples), s), PAD, dtype=torch.long)
    tin = torch.full((len(examples), t), PAD, dtype=torch.long)
    tout = torch.full((len(examples), t), PAD, dtype=torch.long)
    for r, (x, y) in enumerate(examples):
        src[r, : len(x)] = torch.tensor(x)
        src[r, len(x)] = EOS
        tin[r, 0] = BOS
        tin[r, 1 : len(y) + 1] = torch.tensor(y)
        tout[r, : len(y)] = torch.tensor(y)
        tout[r, len(y)] = EOS
    return src, tin, tout


def batches_forever(examples, batch_size, rng, bucket_batches=50):
    while True:
        order = list(range(len(examples)))
        rng.shuffle(order)
        window = batch_size * bucket_batches
        for start in range(0, len(order), window):
            order[start : start + window] = sorted(
                order[start : start + window],
                key=lambda i: len(examples[i][0]) + len(examples[i][1]))
        batches = [order[i : i + batch_size]
                   for i in range(0, len(order) - batch_size + 1, batch_size)]
        rng.shuffle(batches)
        for b in batches:
            yield make_batch([examples[i] for i in b])


def edit_distance(a, b):
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


@torch.no_grad()
def greedy(model, src, max_len=48):
    memory, src_pad = model.encode(src)
    out = torch.full((src.shape[0], 1), BOS, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        logits = model.decode(memory, src_pad, out)[:, -1]
        logits[:, [PAD, BOS, UNK]] = float("-inf")
        nxt = logits.argmax(-1)
        nxt[done] = PAD
        out = torch.cat([out, nxt[:, None]], 1)
        done |= nxt == EOS
        if done.all():
            break
    hyps = []
    for row in out[:, 1:].tolist():
        hyps.append(row[: row.index(EOS)] if EOS in row else row)
    return hyps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="data/cmudict-g014b2b/g014b2b.train")
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1.2e-3)
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--min-lr", type=float, default=1e-5)
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    ap.add_argument("--log-every", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--qkv-init", choices=["fused", "separate"], default="fused",
                    help="Xavier bound of W_q, W_k, W_v: over the fused [3d, d] matrix (PyTorch's "
                         "default) or over each [d, d] block (scalelab's)")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    entries = read_dict(args.data)
    train_words = [w for w in entries if not is_valid_word(w)]
    valid_words = [w for w in entries if is_valid_word(w)]
    letters = Vocab({c for w in train_words for c in w})
    phones = Vocab({p for w in train_words for pr in entries[w] for p in pr})
    train = [(letters.encode(w), phones.encode(pr)) for w in train_words for pr in entries[w]]
    print(f"train words {len(train_words)} examples {len(train)}; valid words {len(valid_words)}",
          flush=True)

    model = G2pTransformer(len(letters.itos), len(phones.itos), qkv_init=args.qkv_init)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)

    def lr_at(step):  # step counts from 1
        if step <= args.warmup:
            return args.lr * step / args.warmup
        progress = (step - args.warmup) / max(1, args.steps - args.warmup)
        return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * progress))

    stream = batches_forever(train, args.batch_size, random.Random(args.seed))
    start, tokens = time.time(), 0
    for step in range(1, args.steps + 1):
        src, tin, tout = next(stream)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        logits = model(src, tin)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1),
                               ignore_index=PAD, label_smoothing=args.label_smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        tokens += int((tout != PAD).sum())
        if step % args.log_every == 0:
            elapsed = time.time() - start
            print(f"step {step} loss {loss.item():.4f} lr {lr_at(step):.2e} "
                  f"{tokens / elapsed:.0f} target tok/s {elapsed:.0f} s", flush=True)

    model.eval()
    total_nll, total_tokens, wrong, edits, ref_len = 0.0, 0, 0, 0, 0
    for i in range(0, len(valid_words), 64):
        words = valid_words[i : i + 64]
        pairs = [(letters.encode(w), phones.encode(pr)) for w in words for pr in entries[w]]
        src, tin, tout = make_batch(pairs)
        with torch.no_grad():
            logits = model(src, tin)
        total_nll += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1),
                                     ignore_index=PAD, reduction="sum").item()
        total_tokens += int((tout != PAD).sum())
        src_only, _, _ = make_batch([(letters.encode(w), []) for w in words])
        for w, hyp in zip(words, greedy(model, src_only)):
            refs = [phones.encode(pr) for pr in entries[w]]
            best = min(refs, key=lambda r: edit_distance(hyp, r))
            d = edit_distance(hyp, best)
            wrong += d > 0
            edits += d
            ref_len += len(best)
    print(f"parameters {n_params}")
    print(f"valid loss {total_nll / total_tokens:.4f} nats/phone (incl. <eos>)")
    print(f"valid greedy WER {100 * wrong / len(valid_words):.2f} % ({wrong} wrong of "
          f"{len(valid_words)}), PER {100 * edits / ref_len:.2f} %")
    print(f"training {time.time() - start:.0f} s, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads")


if __name__ == "__main__":
    sys.exit(main())
