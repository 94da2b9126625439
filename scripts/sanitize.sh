#!/usr/bin/env bash
# Builds scalelab with AddressSanitizer + UndefinedBehaviorSanitizer (-DSCALELAB_SANITIZE=ON, g++,
# RelWithDebInfo at -O1 -g1, any UB fatal) in its own build directory and runs ctest there.
#
#   scripts/sanitize.sh [ctest args]     builds everything; default: the whole suite
#   scripts/sanitize.sh --unit [args]    builds the C++ test executables only (target unit_tests)
#                                        and runs ctest -L unit [args]: what scripts/test.sh runs
#   SCALELAB_SANITIZE_BUILD=dir          build directory (default: build-sanitize)
#
# -O1 is what ASan's documentation advises (its checks are the same at any level); -g1 keeps the
# line tables a report's stack needs; the files compile in 0.6 of their -O2 -g time in all.
# Every report fails its test: ASan and UBSan abort the process, LeakSanitizer fails it at exit.
# docs/fuzzing.md ("Sanitizers") has the suite's result and the options below.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${SCALELAB_SANITIZE_BUILD:-$here/build-sanitize}"

targets=(all)
ctest_args=()
if [ "${1:-}" = --unit ]; then
  shift
  targets=(unit_tests)
  ctest_args=(-L unit)
fi

cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DSCALELAB_SANITIZE=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}"

# halt_on_error / abort: a report is a failure, never a line in a log nobody reads.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
cd "$build_dir"
ctest --output-on-failure -j"$(nproc)" "${ctest_args[@]}" "$@"
