#!/usr/bin/env bash
# The main job: set up (Debian packages, Release build), then train the copy task and print the
# result. Until the claims ledger exists (`scalelab check`), this is the demonstration run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
run_dir="$here/runs/quickstart-$(date +%Y%m%d-%H%M%S)"
"$here/build/scalelab" info
"$here/build/scalelab" train --config "$here/configs/copy.toml" --set train.run_dir="$run_dir"
echo "run directory: $run_dir (config.toml, metrics.jsonl, checkpoint.safetensors, summary.json)"
