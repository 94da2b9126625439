#!/usr/bin/env bash
# Set up (Debian packages, Release build), then run the whole test suite with ctest.
# Then the C++ unit tests (ctest label "unit") run again under AddressSanitizer + UBSan
# (scripts/sanitize.sh, its own build directory build-sanitize; docs/fuzzing.md, "Sanitizers").
# SCALELAB_SANITIZE_STAGE=0 skips that stage (e.g. for a quick local run).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
cd "$here/build"
ctest --output-on-failure -j"$(nproc)" "$@"
if [ "${SCALELAB_SANITIZE_STAGE:-1}" = 1 ]; then
  echo "test.sh: the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer (scripts/sanitize.sh)"
  "$here/scripts/sanitize.sh" --unit
fi
