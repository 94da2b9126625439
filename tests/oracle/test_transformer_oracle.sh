#!/usr/bin/env bash
# PyTorch oracle: logits, loss and every gradient vs an independent float64 model (docs/model.md).
source "$(dirname "${BASH_SOURCE[0]}")/../support/python_oracle.sh"
python_oracle torch transformer_oracle.py
