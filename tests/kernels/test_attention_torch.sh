#!/bin/bash
# PyTorch oracle for flash attention: attention_flash_test writes the cases (inputs and the
# kernel's outputs and gradients as .npy), attention_torch_oracle.py recomputes them with PyTorch
# 1.13 autograd in float64 and checks max relative error <= 1e-5 per tensor.
set -euo pipefail
: "${SCALELAB_SOURCE:?}" "${SCALELAB_TMP:?}" "${SCALELAB_BIN:?}"
build="$(dirname "$SCALELAB_BIN")"
dir="$SCALELAB_TMP/attention_torch"
rm -rf "$dir"
mkdir -p "$dir"
SCALELAB_ORACLE_DIR="$dir" "$build/tests/attention_flash_test" \
  --gtest_filter='AttentionFlashOracle.*' --gtest_brief=1
test -s "$dir/cases.json"
/usr/bin/python3 "$SCALELAB_SOURCE/tests/kernels/attention_torch_oracle.py" "$dir"
