#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang-14, -fsanitize=fuzzer,address,undefined) in their own
# build directory and either fuzzes each target for a while or replays the saved inputs once.
#
#   scripts/fuzz.sh [options] [target ...]        targets: safetensors npy cmudict g014b2b kjv config report
#     --seconds N     fuzz each target for N seconds of wall time (default 600)
#     --replay        run every seed (fuzz/corpus/<t>/) and regression (fuzz/regressions/<t>/) input
#                     once and fail if any of them crashes (seconds; ctest's fuzz_replay)
#     --build-dir D   default: build-fuzz
#     --out D         fuzzing output (default: <build-dir>/fuzz-out): <t>/corpus (the growing
#                     corpus, seeded from fuzz/corpus/<t>), <t>/crashes, <t>/log
#     --no-build      use the targets already built in the build dir
#     --allow-foreign a non-scalelab exception counts as a rejection, not a finding
#                     (SCALELAB_FUZZ_ALLOW_FOREIGN=1, fuzz/feed.hpp): for long runs past a reader's
#                     known raw-exception findings, to reach memory errors and UB
#
# Fuzzing uses libFuzzer's fork mode with -ignore_crashes, so one finding does not end a target's
# run: every crashing, leaking, too slow or too hungry input is saved to <t>/crashes. Per target it
# prints executions, exec/s, coverage (libFuzzer's cov: edges), corpus size and the saved findings.
# docs/fuzzing.md: what each target feeds, how to minimise a finding and turn it into a regression.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
all_targets=(safetensors npy cmudict g014b2b kjv config report)
seconds=600
replay=0
build=1
build_dir="$here/build-fuzz"
out=""
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --replay) replay=1; shift ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --allow-foreign) export SCALELAB_FUZZ_ALLOW_FOREIGN=1; shift ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *)
      [[ " ${all_targets[*]} " == *" $1 "* ]] || { echo "fuzz.sh: unknown target $1 (known: ${all_targets[*]})" >&2; exit 2; }
      targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || { echo "fuzz.sh: --seconds $seconds: expected a positive integer" >&2; exit 2; }
out="${out:-$build_dir/fuzz-out}"

if ((build)); then
  command -v clang++-14 >/dev/null || { echo "fuzz.sh: clang++-14 is missing (scripts/setup.sh installs clang-14 and libclang-rt-14-dev)" >&2; exit 1; }
  cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++-14 -DSCALELAB_FUZZ=ON >/dev/null
  cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"
fi

# Leaks are findings; a reader's result must never take minutes or gigabytes.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
limits=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024)

dict_args() {
  local d="$here/fuzz/dict/$1.dict"
  [[ -f "$d" ]] && echo "-dict=$d"
}

if ((replay)); then
  failed=0
  for t in "${targets[@]}"; do
    inputs=()
    for d in "$here/fuzz/corpus/$t" "$here/fuzz/regressions/$t"; do
      [[ -d "$d" ]] && inputs+=("$d")
    done
    n=$(find "${inputs[@]}" -type f | wc -l)
    if "$build_dir/fuzz/fuzz_$t" -runs=0 "${limits[@]}" "${inputs[@]}" >"$build_dir/fuzz-replay-$t.log" 2>&1; then
      echo "fuzz replay $t: $n inputs, no finding"
    else
      echo "fuzz replay $t: FAILED (log: $build_dir/fuzz-replay-$t.log)"; tail -n 30 "$build_dir/fuzz-replay-$t.log"
      failed=1
    fi
  done
  exit "$failed"
fi

printf '%-12s %12s %7s %9s %6s %6s %9s\n' target executions seconds exec/s cov corpus findings
for t in "${targets[@]}"; do
  dir="$out/$t"
  mkdir -p "$dir/corpus" "$dir/crashes"
  cp -n "$here/fuzz/corpus/$t"/* "$dir/corpus/" 2>/dev/null || true
  # fork=1: the fuzzing runs in a child that is restarted after a finding (-ignore_*).
  "$build_dir/fuzz/fuzz_$t" "$dir/corpus" $(dict_args "$t") "${limits[@]}" \
    -max_total_time="$seconds" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
    -artifact_prefix="$dir/crashes/" >"$dir/log" 2>&1 || true
  # The last status line: "#<execs>: cov: C ft: F corp: N exec/s R oom/timeout/crash: a/b/c time: Ts ..."
  status=$(grep -E '^#[0-9]+: cov:' "$dir/log" | tail -n 1 || true)
  execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$status")
  cov=$(sed -E 's/.* cov: ([0-9]+).*/\1/' <<<"$status")
  corp=$(sed -E 's/.* corp: ([0-9]+).*/\1/' <<<"$status")
  secs=$(sed -E 's/.* time: ([0-9]+)s.*/\1/' <<<"$status")
  rate=$([[ -n "$execs" && -n "$secs" && "$secs" -gt 0 ]] && echo $((execs / secs)) || echo "")  # mean over the run
  findings=$(find "$dir/crashes" -type f | wc -l)
  printf '%-12s %12s %7s %9s %6s %6s %9s\n' "$t" "${execs:-?}" "${secs:-?}" "${rate:-?}" "${cov:-?}" "${corp:-?}" "$findings"
done
echo "fuzz.sh: findings (crash-*, leak-*, oom-*, timeout-*) under $out/<target>/crashes; logs in $out/<target>/log"
