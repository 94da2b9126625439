#!/usr/bin/env bash
# PyTorch oracle for the scale knobs (RoPE, ALiBi, T5 bias, RMSNorm, QK-norm, soft-caps, learned
# temperature, sandwich norm, learned positions, embedding LayerNorm, bias switch, apply_to,
# scale rounding, flash vs naive): logits, loss and every gradient vs an independent float64 model
# written from docs/model.md.
source "$(dirname "${BASH_SOURCE[0]}")/../support/python_oracle.sh"
python_oracle "torch, numpy" knobs_oracle.py
