#!/usr/bin/env bash
# Checkpoints are readable with numpy alone (docs/checkpoint.md); scalelab logits == gradients' logits.
source "$(dirname "${BASH_SOURCE[0]}")/../support/python_oracle.sh"
python_oracle numpy checkpoint_numpy.py --source "$SCALELAB_SOURCE"
