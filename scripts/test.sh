#!/usr/bin/env bash
# Set up (Debian packages, Release build), then run the whole test suite with ctest.
# SCALELAB_SANITIZE_STAGE=1 then runs the C++ unit tests (ctest label "unit") again under
# AddressSanitizer + UBSan (scripts/sanitize.sh, its own build directory build-sanitize).
# The stage is off by default until a run of it on this branch has passed (docs/fuzzing.md,
# "Sanitizers"): an unverified stage must not be able to fail CI.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
cd "$here/build"
ctest --output-on-failure -j"$(nproc)" "$@"
if [ "${SCALELAB_SANITIZE_STAGE:-0}" = 1 ]; then
  echo "test.sh: the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer (scripts/sanitize.sh)"
  "$here/scripts/sanitize.sh" -L unit
fi
