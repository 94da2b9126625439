# Sourced by the MPI tests (tests/mpi/): the binary, a fresh temporary directory named after $1
# (removed on exit), ok/fail counters and `mpi N ARGS...`, which runs scalelab on N ranks of this
# machine with the options that work here:
#   --oversubscribe    more ranks than Open MPI counts slots (2 cores, tests run side by side)
#   --bind-to none     no pinning: the machine is shared, a pinned rank could share a core
#   OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1   CI runs as root, which mpirun refuses without them
# (docs/scaling.md; shared memory (vader) is Open MPI's default for ranks on one machine.)
bin="${SCALELAB_BIN:?SCALELAB_BIN is not set}"
src="${SCALELAB_SOURCE:?SCALELAB_SOURCE is not set}"
mpirun_bin="${SCALELAB_MPIRUN:-mpirun}"
root="${SCALELAB_TMP:-/tmp}"
mkdir -p "$root"
tmp=$(mktemp -d "$root/$1.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

mpi() {
  local n="$1"
  shift
  "$mpirun_bin" --oversubscribe --bind-to none -np "$n" "$bin" "$@"
}

# finish: the closing line and the exit status.
finish() {
  if [ "$failures" -eq 0 ]; then echo "all passed"; exit 0; fi
  echo "$failures failure(s)"
  exit 1
}
