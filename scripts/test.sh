#!/usr/bin/env bash
# Set up (Debian packages, Release build), then run the whole test suite with ctest.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
cd "$here/build"
ctest --output-on-failure -j"$(nproc)" "$@"
