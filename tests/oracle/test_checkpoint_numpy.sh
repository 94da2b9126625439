#!/usr/bin/env bash
# Checkpoints are readable with numpy alone (docs/checkpoint.md); scalelab logits == gradients' logits
# ctest entry point; env: SCALELAB_BIN (the binary), SCALELAB_SOURCE (repo root), SCALELAB_TMP (scratch).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${SCALELAB_SOURCE:=$(cd "$here/../.." && pwd)}"
: "${SCALELAB_BIN:=$SCALELAB_SOURCE/build/scalelab}"
: "${SCALELAB_TMP:=${TMPDIR:-/tmp}/scalelab-test-tmp}"
PY=/usr/bin/python3
if [ ! -x "$SCALELAB_BIN" ]; then
  echo "FAIL: scalelab binary not found at $SCALELAB_BIN (set SCALELAB_BIN)" >&2; exit 1
fi
if ! "$PY" -c "import numpy" 2>/dev/null; then
  echo "FAIL: $PY cannot import numpy; install Debian's python3-numpy (scripts/setup.sh does). Not skipping." >&2
  exit 1
fi
mkdir -p "$SCALELAB_TMP"
exec "$PY" "$here/checkpoint_numpy.py" --bin "$SCALELAB_BIN" --source "$SCALELAB_SOURCE" --tmp "$SCALELAB_TMP"
