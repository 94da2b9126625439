# Sourced by the ledger's shell tests: the binary, the source tree, a fresh temporary directory
# named after $1 (removed on exit), the schema validator and the ok/fail counters.
bin="${SCALELAB_BIN:?SCALELAB_BIN is not set}"
src="${SCALELAB_SOURCE:?SCALELAB_SOURCE is not set}"
root="${SCALELAB_TMP:-/tmp}"
mkdir -p "$root"
tmp=$(mktemp -d "$root/$1.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
schema="$src/tests/ledger/ledger_schema.py"
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }
