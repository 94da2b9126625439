#!/usr/bin/env bash
# The layering rule of README's "Layout": a layer includes only itself and the layers it sits on.
#
#   core → kernels, data → nn → model → train → probes → ledger → report → cli (apps/)
#
#   core     core                      nn      core, kernels
#   kernels  core (not data)           model   core, kernels, nn
#   data     core (not kernels)        train   model, data and below
#   probes   train and below           ledger  probes and below
#   report   core only (it reads JSON) apps    anything (not checked)
#
# Every `#include "scalelab/<layer>/..."` (or <...>) in a file under src/scalelab/<layer>/ is
# checked; a forbidden one is printed as file:line with the rule, and the check fails. A folder of
# src/scalelab that is not a known layer fails too (add it to the rules below).
#
#   test_layering.sh ROOT   check the tree at ROOT only (exit 1 on a violation)
#   test_layering.sh        check SCALELAB_SOURCE (or this checkout), then show that the checker
#                           rejects fake trees with a forbidden include and accepts a clean one
set -u

# Layers each layer may include, itself included.
declare -A allowed=(
  [core]="core"
  [kernels]="core kernels"
  [data]="core data"
  [nn]="core kernels nn"
  [model]="core kernels nn model"
  [train]="core kernels nn model data train"
  [probes]="core kernels nn model data train probes"
  [ledger]="core kernels nn model data train probes ledger"
  [report]="core report"
)

# check_tree ROOT: prints each violation, returns 1 if any (or if nothing could be checked).
check_tree() {
  local root="$1" src="$1/src/scalelab"
  if [ ! -d "$src" ]; then
    echo "layering: $src: no such directory"
    return 1
  fi
  local violations=0 includes=0 dir layer file line target text
  for dir in "$src"/*/; do
    dir=${dir%/}
    layer=$(basename "$dir")
    if [ -z "${allowed[$layer]+set}" ]; then
      echo "layering: src/scalelab/$layer is not a known layer (known: ${!allowed[*]}); add its rule to $0"
      violations=$((violations + 1))
      continue
    fi
    # file:line:text of every include of a scalelab header in this layer's folder.
    while IFS= read -r hit; do
      file=${hit%%:*}
      text=${hit#*:}
      line=${text%%:*}
      text=${text#*:}
      target=$(printf '%s' "$text" | sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]scalelab\/([^/">]+).*/\1/')
      includes=$((includes + 1))
      if [[ " ${allowed[$layer]} " != *" $target "* ]]; then
        echo "${file#"$root"/}:$line: layer $layer may not include scalelab/$target/ (the rule: $layer includes only ${allowed[$layer]// /, }): $(printf '%s' "$text" | sed -E 's/^[[:space:]]+//')"
        violations=$((violations + 1))
      fi
    done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]scalelab/[^/">]+/' "$dir" | sort -t: -k1,1 -k2,2n)
  done
  if [ "$includes" -eq 0 ]; then
    echo "layering: no scalelab include found under $src (wrong root?)"
    return 1
  fi
  if [ "$violations" -gt 0 ]; then
    echo "layering: $violations violation(s) in $includes scalelab include(s) (README.md, Layout)"
    return 1
  fi
  echo "layering: ok, $includes scalelab include(s) follow the rule"
  return 0
}

if [ $# -ge 1 ]; then
  check_tree "$1"
  exit $?
fi

source_root="${SCALELAB_SOURCE:-$(cd "$(dirname "$0")/../.." && pwd)}"
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# 1. The real tree.
check_tree "$source_root" || fail "the source tree breaks the layering rule (above)"

# 2. The checker itself, on fake trees: a clean one passes, each forbidden include is caught with
# its file and line.
tmp=$(mktemp -d "${SCALELAB_TMP:-/tmp}/layering-XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fake_tree DIR: a small tree that follows the rule.
fake_tree() {
  local d="$1/src/scalelab"
  mkdir -p "$d"/{core,kernels,data,nn,model,train,probes,ledger,report}
  printf '#pragma once\n' > "$d/core/tensor.hpp"
  printf '#pragma once\n#include "scalelab/core/tensor.hpp"\n' > "$d/kernels/gemm.hpp"
  printf '#include "scalelab/kernels/gemm.hpp"\n#include <vector>\n' > "$d/kernels/gemm.cpp"
  printf '#pragma once\n#include "scalelab/core/tensor.hpp"\n' > "$d/data/batch.hpp"
  printf '#pragma once\n#include "scalelab/kernels/gemm.hpp"\n' > "$d/nn/linear.hpp"
  printf '#pragma once\n#include "scalelab/nn/linear.hpp"\n' > "$d/model/transformer.hpp"
  printf '#pragma once\n#include "scalelab/model/transformer.hpp"\n#include "scalelab/data/batch.hpp"\n' \
    > "$d/train/trainer.hpp"
  printf '#pragma once\n#include "scalelab/train/trainer.hpp"\n' > "$d/probes/probe.hpp"
  printf '#pragma once\n#include "scalelab/probes/probe.hpp"\n' > "$d/ledger/ledger.hpp"
  # A commented-out include is not an include.
  printf '#pragma once\n#include "scalelab/core/tensor.hpp"\n// #include "scalelab/probes/probe.hpp"\n' \
    > "$d/report/report.hpp"
}

fake_tree "$tmp/clean"
if out=$(check_tree "$tmp/clean"); then
  echo "ok   clean fake tree accepted"
else
  fail "a clean fake tree was rejected: $out"
fi

# expect_violation NAME FILE LINE_TEXT WANT: a clean tree plus LINE_TEXT appended to FILE (a path
# under src/scalelab) must be rejected, naming FILE:line and WANT.
expect_violation() {
  local name="$1" file="$2" text="$3" want="$4" dir="$tmp/$1" out status line
  fake_tree "$dir"
  printf '%s\n' "$text" >> "$dir/src/scalelab/$file"
  line=$(wc -l < "$dir/src/scalelab/$file")
  out=$(check_tree "$dir")
  status=$?
  if [ "$status" -eq 0 ] || ! printf '%s' "$out" | grep -qF "src/scalelab/$file:$line: $want"; then
    fail "$name: status $status, output: $out"
  else
    echo "ok   $name: $(printf '%s\n' "$out" | head -1)"
  fi
}
expect_violation kernels-data kernels/gemm.cpp '#include "scalelab/data/batch.hpp"' \
  "layer kernels may not include scalelab/data/"
expect_violation data-kernels data/batch.hpp '#include "scalelab/kernels/gemm.hpp"' \
  "layer data may not include scalelab/kernels/"
expect_violation core-upward core/tensor.hpp '#include "scalelab/nn/linear.hpp"' \
  "layer core may not include scalelab/nn/"
expect_violation nn-model nn/linear.hpp '  #  include <scalelab/model/transformer.hpp>' \
  "layer nn may not include scalelab/model/"
expect_violation model-data model/transformer.hpp '#include "scalelab/data/batch.hpp"' \
  "layer model may not include scalelab/data/"
expect_violation train-probes train/trainer.hpp '#include "scalelab/probes/probe.hpp"' \
  "layer train may not include scalelab/probes/"
expect_violation probes-ledger probes/probe.hpp '#include "scalelab/ledger/ledger.hpp"' \
  "layer probes may not include scalelab/ledger/"
expect_violation report-probes report/report.hpp '#include "scalelab/probes/probe.hpp"' \
  "layer report may not include scalelab/probes/"
expect_violation ledger-report ledger/ledger.hpp '#include "scalelab/report/report.hpp"' \
  "layer ledger may not include scalelab/report/"

# An unknown layer folder and a missing tree are failures, not silent passes.
fake_tree "$tmp/unknown"
mkdir -p "$tmp/unknown/src/scalelab/extra"
printf '#include "scalelab/core/tensor.hpp"\n' > "$tmp/unknown/src/scalelab/extra/x.cpp"
if out=$(check_tree "$tmp/unknown"); then
  fail "an unknown layer folder was accepted: $out"
else
  echo "ok   unknown layer rejected"
fi
if out=$(check_tree "$tmp/nothing"); then
  fail "a missing tree was accepted: $out"
else
  echo "ok   missing tree rejected"
fi

# The command-line form (what a developer runs) agrees: exit 1 on a violation.
if bash "$0" "$tmp/kernels-data" > /dev/null; then
  fail "test_layering.sh ROOT accepted a violation"
else
  echo "ok   test_layering.sh ROOT exits non-zero on a violation"
fi
bash "$0" "$tmp/clean" > /dev/null || fail "test_layering.sh ROOT rejected a clean tree"

[ "$failures" -eq 0 ] && echo "all layering checks passed"
exit "$failures"
