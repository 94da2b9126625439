#!/usr/bin/env bash
# PyTorch oracle for the scale knobs (RoPE, ALiBi, T5 bias, RMSNorm, QK-norm, soft-caps, learned
# temperature, sandwich norm, learned positions, embedding LayerNorm, bias switch, apply_to,
# scale rounding, flash vs naive): logits, loss and every gradient vs an independent float64 model
# written from docs/model.md.
# ctest entry point; env: SCALELAB_BIN (the binary), SCALELAB_SOURCE (repo root), SCALELAB_TMP (scratch).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${SCALELAB_SOURCE:=$(cd "$here/../.." && pwd)}"
: "${SCALELAB_BIN:=$SCALELAB_SOURCE/build/scalelab}"
: "${SCALELAB_TMP:=${TMPDIR:-/tmp}/scalelab-test-tmp}"
: "${OMP_WAIT_POLICY:=passive}"
export OMP_WAIT_POLICY
PY=/usr/bin/python3
if [ ! -x "$SCALELAB_BIN" ]; then
  echo "FAIL: scalelab binary not found at $SCALELAB_BIN (set SCALELAB_BIN)" >&2; exit 1
fi
if ! "$PY" -c "import torch, numpy" 2>/dev/null; then
  echo "FAIL: $PY cannot import torch (and numpy); install Debian's python3-torch (scripts/setup.sh does). Not skipping." >&2
  exit 1
fi
mkdir -p "$SCALELAB_TMP"
exec "$PY" "$here/knobs_oracle.py" --bin "$SCALELAB_BIN" --tmp "$SCALELAB_TMP"
