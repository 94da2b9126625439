# Sourced by the Python oracle tests (tests/oracle/test_*.sh): resolves the binary, the repository
# and a scratch directory from the ctest environment (SCALELAB_BIN, SCALELAB_SOURCE, SCALELAB_TMP,
# each with a default for a run by hand), then
#   python_oracle "torch, numpy" script.py ARGS...
# fails with one line if Debian's python3 cannot import those modules (an oracle is never skipped),
# and otherwise runs /usr/bin/python3 tests/oracle/script.py --bin BIN --tmp TMP ARGS...
set -euo pipefail
oracle_dir="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
: "${SCALELAB_SOURCE:=$(cd "$oracle_dir/../.." && pwd)}"
: "${SCALELAB_BIN:=$SCALELAB_SOURCE/build/scalelab}"
: "${SCALELAB_TMP:=${TMPDIR:-/tmp}/scalelab-test-tmp}"
: "${OMP_WAIT_POLICY:=passive}"
export OMP_WAIT_POLICY

python_oracle() {
  local modules="$1" script="$2"
  shift 2
  local py=/usr/bin/python3
  if [ ! -x "$SCALELAB_BIN" ]; then
    echo "FAIL: scalelab binary not found at $SCALELAB_BIN (set SCALELAB_BIN)" >&2
    exit 1
  fi
  if ! "$py" -c "import $modules" 2>/dev/null; then
    echo "FAIL: $py cannot import $modules; install Debian's python3-torch and python3-numpy" \
         "(scripts/setup.sh does). Not skipping." >&2
    exit 1
  fi
  mkdir -p "$SCALELAB_TMP"
  exec "$py" "$oracle_dir/$script" --bin "$SCALELAB_BIN" --tmp "$SCALELAB_TMP" "$@"
}
