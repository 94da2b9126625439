#!/usr/bin/env bash
# The repository speaks of its runs by date and configuration, never by the stretch of work that
# made them, the tracker entry that asked for it, or people who do not exist. This check greps the
# user-facing tree (README.md, CMakeLists.txt, docs/, configs/, src/, apps/, bench/, scripts/,
# tests/, fuzz/) for such labels, case-insensitive:
#
#   "session" followed by a number, "sessions" followed by a number (a range such as 16–17 too),
#   "this" + " session", "other" + " engineers", "working" + " period",
#   "issue" followed by a number (with or without "#")
#
# and prints each as file:line: text; any hit fails the check. (The phrases are split above and in
# the patterns below so that this file does not match itself.)
#
#   test_no_diary_labels.sh ROOT   check the tree at ROOT only (exit 1 on a label)
#   test_no_diary_labels.sh        check SCALELAB_SOURCE (or this checkout), then show that the
#                                  checker finds each kind of label in a fake tree, names its file
#                                  and line, and accepts a clean one
set -u

# The labels, as extended regular expressions. Bracketing one letter keeps this file's own text
# from matching; the en dash is an alternative, not a bracket member, so it works in any locale.
patterns=(
  'sessio[n] [0-9]'
  'sessions [0-9]'
  'sessions? [0-9]+(-|–)[0-9]+'
  'thi[s] session'
  'other enginee[r]s'
  'workin[g] period'
  'issu[e] #?[0-9]'
)
paths=(README.md CMakeLists.txt docs configs src apps bench scripts tests fuzz)

# check_tree ROOT: prints each label as file:line: text, returns 1 if any (or if nothing was found
# to check).
check_tree() {
  local root="$1" args=() targets=() p hits count
  for p in "${patterns[@]}"; do args+=(-e "$p"); done
  for p in "${paths[@]}"; do [ -e "$root/$p" ] && targets+=("$p"); done
  if [ "${#targets[@]}" -eq 0 ]; then
    echo "diary labels: nothing to check under $root (wrong root?)"
    return 1
  fi
  # -I skips binary files; paths are printed relative to ROOT.
  hits=$(cd "$root" && grep -rnIiE "${args[@]}" -- "${targets[@]}" | sort -t: -k1,1 -k2,2n)
  if [ -n "$hits" ]; then
    count=$(printf '%s\n' "$hits" | wc -l)
    printf '%s\n' "$hits"
    echo "diary labels: $count line(s) label work by when it was done or by people; use the date and the configuration instead"
    return 1
  fi
  echo "diary labels: ok, none in ${targets[*]}"
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
check_tree "$source_root" || fail "the source tree holds labels of work periods or people (above)"

# 2. The checker itself, on fake trees.
tmp=$(mktemp -d "${SCALELAB_TMP:-/tmp}/diary-labels-XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fake_tree DIR: a small clean tree, with words that must not count as labels.
fake_tree() {
  local d="$1"
  mkdir -p "$d/docs" "$d/src/scalelab/train" "$d/configs"
  printf '# Results\n\nMeasured 2026-12-03 on Zen 5 (2+1 layers, 86,500 steps).\n' > "$d/docs/results.md"
  printf '// A worker rank asks for work; the session of an MPI job is one mpirun.\n' \
    > "$d/src/scalelab/train/trainer.cpp"
  printf '[train]\nsteps = 36000  # 60 minutes on 2 threads\n' > "$d/configs/g2p.toml"
  printf '# scalelab\n' > "$d/README.md"
}

fake_tree "$tmp/clean"
if out=$(check_tree "$tmp/clean"); then
  echo "ok   clean fake tree accepted"
else
  fail "a clean fake tree was rejected: $out"
fi

# expect_label NAME FILE TEXT: a clean tree plus TEXT appended to FILE must be rejected, naming
# FILE:line.
expect_label() {
  local name="$1" file="$2" text="$3" dir="$tmp/$1" out status line
  fake_tree "$dir"
  mkdir -p "$(dirname "$dir/$file")"
  printf '%s\n' "$text" >> "$dir/$file"
  line=$(wc -l < "$dir/$file")
  out=$(check_tree "$dir")
  status=$?
  if [ "$status" -eq 0 ] || ! printf '%s' "$out" | grep -qF "$file:$line:"; then
    fail "$name: status $status, output: $out"
  else
    echo "ok   $name: $(printf '%s\n' "$out" | head -1)"
  fi
}
s="sess""ion"
expect_label numbered docs/results.md "### ${s^} 18: two more members"
expect_label range docs/performance.md "levers of ${s}s 16–17 measured"
expect_label range-hyphen configs/g2p.toml "# ${s}s 13-14 confirmed it"
expect_label plural-list README.md "see ${s}s 13 and 14"
expect_label this src/scalelab/train/trainer.cpp "// this ${s}'s steps"
expect_label this-upper apps/scalelab/cmd_eval.cpp "// THIS ${s^^} added it"
expect_label people docs/fuzzing.md "shared with other engi""neers' builds"
expect_label period bench/notes.md "in the last work""ing period"
expect_label script scripts/run.sh "# measured in ${s} 4"
expect_label test tests/train/x_test.cpp "// ${s} 9 found this"
expect_label fuzz-seed fuzz/corpus/config/kjv.toml "# (${s} 3, docs/results.md)"
i="iss""ue"
expect_label issue docs/robustness.md "how it is tested (${i} 13)"
expect_label issue-hash src/scalelab/kernels/attention.hpp "// added by the flash work (${i} #4)"
expect_label issue-upper tests/cli/bad_input_cases.txt "# ${i^} 33, report surfaces."

if [ "$failures" -gt 0 ]; then
  echo "diary labels: $failures check(s) failed"
  exit 1
fi
echo "diary labels: all checks passed"
