#!/usr/bin/env bash
# The peers of bench/compare_train_step.py: a virtual environment with the newest PyTorch 2 (CPU)
# and JAX (jaxlib, CPU) from PyPI. Not a dependency of the build or the tests (the oracle tests use
# Debian's python3-torch). Idempotent: an existing environment is upgraded in place.
#
# PyPI's Linux torch wheel is built against CUDA: torch/_C loads libcufile, libcudart, cuDNN, NCCL
# ... at import, even on a machine without a GPU, so installing it without its dependencies
# (`pip install --no-deps torch`) gives a torch that cannot be imported (tried: torch 2.15.0,
# "libcufile.so.0: cannot open shared object file"). The CPU-only wheels are not on PyPI
# (download.pytorch.org), so torch is installed with its CUDA runtime packages (nvidia-*,
# cuda-toolkit, triton: several GB, loaded but never used on a CPU). `import torch`, a small
# torch.compile'd function and a jax.jit'd one are checked before the script says it is done.
#
# Usage: bench/peers/setup.sh [venv-dir]        (default: build/peers-venv)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
usage="usage: bench/peers/setup.sh [venv-dir]   (default: build/peers-venv)"
if [[ "${1:-}" == --help || "${1:-}" == -h ]]; then
  echo "$usage"
  exit 0
fi
if [[ $# -gt 1 || "${1:-}" == -* ]]; then
  echo "setup.sh: \"$*\" is not allowed: $usage" >&2
  exit 2
fi
venv="${1:-$here/build/peers-venv}"
python=/usr/bin/python3
# torch.compile builds C++ extension modules against the interpreter's headers.
if [[ ! -f "$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" ]]; then
  echo "setup.sh: Python.h of $python is missing (torch.compile needs it): apt-get install python3-dev" >&2
  exit 1
fi

if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input)
"${pip[@]}" install --quiet --upgrade pip
"${pip[@]}" install --quiet --upgrade torch numpy
"${pip[@]}" install --quiet --upgrade "jax[cpu]"

"$venv/bin/python" - <<'PY'
import jax, jax.numpy as jnp, torch
f = torch.compile(lambda x: (x * 2).sum())
assert float(f(torch.ones(4))) == 8.0
assert float(jax.jit(lambda x: (x * 2).sum())(jnp.ones(4))) == 8.0
print(f"peers ready: torch {torch.__version__} (cuda: {torch.version.cuda}), jax {jax.__version__}")
PY
