#!/usr/bin/env bash
# Set up (Debian packages, Release build), then run the whole test suite with ctest; then the C++
# unit tests (ctest label "unit") again under AddressSanitizer + UBSan (scripts/sanitize.sh, its own
# build directory build-sanitize). SCALELAB_NO_SANITIZE=1 skips that second stage.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
cd "$here/build"
ctest --output-on-failure -j"$(nproc)" "$@"
if [ "${SCALELAB_NO_SANITIZE:-0}" != 1 ]; then
  echo "test.sh: the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer (scripts/sanitize.sh)"
  "$here/scripts/sanitize.sh" -L unit
fi
