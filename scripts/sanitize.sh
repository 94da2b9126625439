#!/usr/bin/env bash
# Builds scalelab with AddressSanitizer + UndefinedBehaviorSanitizer (-DSCALELAB_SANITIZE=ON, g++,
# RelWithDebInfo, any UB fatal) in its own build directory and runs ctest there.
#
#   scripts/sanitize.sh [ctest args]     default: the whole suite; scripts/test.sh passes -L unit
#   SCALELAB_SANITIZE_BUILD=dir          build directory (default: build-sanitize)
#
# Every report fails its test: ASan and UBSan abort the process, LeakSanitizer fails it at exit.
# docs/fuzzing.md ("Sanitizers") has the suite's result and the options below.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${SCALELAB_SANITIZE_BUILD:-$here/build-sanitize}"

cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALELAB_SANITIZE=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)"

# halt_on_error / abort: a report is a failure, never a line in a log nobody reads.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
cd "$build_dir"
ctest --output-on-failure -j"$(nproc)" "$@"
