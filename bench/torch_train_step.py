#!/usr/bin/python3
"""PyTorch 1.13 peer of bench/train_step_bench.cpp: the same training steps, in target tokens/s.

Forward, label-smoothed cross-entropy (0.1), backward, clipping (1.0) and an Adam step on a fixed
random batch, dropout 0.1, Post-LN (torch.nn.Transformer's default, as scalelab's default).
Prints one JSON line per configuration with the median over --repeats timed steps.
Run it as installed and with OPENBLAS_CORETYPE=Cooperlake (Debian's OpenBLAS misdetects the CPU).
"""
import argparse
import json
import os
import statistics
import sys
import time


def thread_count_from_argv(default=1):
    """The BLAS pool must be sized before torch (and OpenBLAS) load: OpenBLAS starts its own
    pthreads, which torch.set_num_threads does not govern."""
    for i, arg in enumerate(sys.argv):
        if arg == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if arg.startswith("--threads="):
            return arg.split("=", 1)[1]
    return str(default)


os.environ["OPENBLAS_NUM_THREADS"] = thread_count_from_argv()
os.environ["OMP_NUM_THREADS"] = thread_count_from_argv()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402


class EncoderDecoder(nn.Module):
    def __init__(self, vocab, d=256, heads=8, layers=3, ff=1024):
        super().__init__()
        self.src_embed = nn.Embedding(vocab, d)
        self.tgt_embed = nn.Embedding(vocab, d)
        self.core = nn.Transformer(d, heads, layers, layers, ff, dropout=0.1, batch_first=True)
        self.out = nn.Linear(d, vocab, bias=False)
        self.d = d

    def forward(self, src, tgt):
        mask = self.core.generate_square_subsequent_mask(tgt.shape[1])
        h = self.core(self.src_embed(src) * self.d ** 0.5, self.tgt_embed(tgt) * self.d ** 0.5, tgt_mask=mask)
        return self.out(h)


class DecoderOnly(nn.Module):
    def __init__(self, vocab, d=256, heads=8, layers=6, ff=1024):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.1, batch_first=True)
        self.stack = nn.TransformerEncoder(layer, layers)
        self.out = nn.Linear(d, vocab, bias=False)
        self.d = d

    def forward(self, tgt):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        return self.out(self.stack(self.embed(tgt) * self.d ** 0.5, mask=mask))


def measure(name, model, inputs, target, vocab, warmup, repeats, bf16=False):
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
    times, cpu_times = [], []
    for i in range(warmup + repeats):
        t0 = time.perf_counter()
        c0 = time.process_time()
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = model(*inputs)
            loss = loss_fn(logits.float().reshape(-1, vocab), target.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
            cpu_times.append(time.process_time() - c0)
    tokens = target.numel()
    med = statistics.median(times)
    return {"config": name, "threads": torch.get_num_threads(),
            "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "(as installed)"),
            "autocast": "bf16" if bf16 else "off",
            "median_step_s": med, "tokens_per_s": tokens / med, "repeats": repeats,
            # CPU seconds of the whole process per step: on one thread, a throughput that a loaded
            # machine does not distort (tokens per CPU-second).
            "median_step_cpu_s": statistics.median(cpu_times),
            "tokens_per_cpu_s": tokens / statistics.median(cpu_times)}


# The shapes of bench/train_step_bench.cpp (source and target length are equal where both exist).
CONFIGS = {
    "encoder_decoder": dict(arch="encoder_decoder", d=256, heads=8, layers=3, ff=1024, batch=64, len=32, vocab=64),
    "decoder_only": dict(arch="decoder_only", d=256, heads=8, layers=6, ff=1024, batch=16, len=128, vocab=512),
    "large_decoder": dict(arch="decoder_only", d=512, heads=8, layers=8, ff=2048, batch=8, len=256, vocab=512),
    "small": dict(arch="encoder_decoder", d=64, heads=4, layers=2, ff=256, batch=64, len=16, vocab=64),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--config", action="append", choices=CONFIGS,
                    help="configurations to run (repeatable; default: all)")
    ap.add_argument("--bf16", action="store_true",
                    help="CPU autocast to bfloat16 (the peer of train.matmul_precision = bf16)")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    g = torch.Generator().manual_seed(1)
    for name in args.config or CONFIGS:
        c = CONFIGS[name]
        v = c["vocab"]
        if c["arch"] == "encoder_decoder":
            model = EncoderDecoder(v, c["d"], c["heads"], c["layers"], c["ff"])
            src, tgt, y = (torch.randint(4, v, (c["batch"], c["len"]), generator=g) for _ in range(3))
            inputs = (src, tgt)
        else:
            model = DecoderOnly(v, c["d"], c["heads"], c["layers"], c["ff"])
            tgt, y = (torch.randint(4, v, (c["batch"], c["len"]), generator=g) for _ in range(2))
            inputs = (tgt,)
        print(json.dumps(measure(name, model.train(), inputs, y, v, args.warmup, args.repeats,
                                 args.bf16)), flush=True)

if __name__ == "__main__":
    main()
