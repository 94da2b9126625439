#!/usr/bin/env bash
# The benchmark programs' command lines (bench/gemm_table, train_step_loop, train_step_check):
# --help prints the usage on stdout and exits 0; each bad argument is one line on stderr naming the
# flag and its value (or the unknown argument), nothing on stdout, exit 2, before anything is
# measured. Then the scripts around them (bench/op_breakdown.py, compare_train_step.py, their .sh
# wrappers, peers/setup.sh): one line naming the problem, a non-zero exit, nothing measured or
# installed, no file overwritten.
set -uo pipefail
bin="${SCALELAB_BIN:?SCALELAB_BIN is not set}"
bench_dir="$(dirname "$bin")/bench"
tmp=$(mktemp -d "${SCALELAB_TMP:-/tmp}/bench-args.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0

for program in gemm_table train_step_loop train_step_check; do
  if [[ ! -x "$bench_dir/$program" ]]; then
    echo "FAIL $program: $bench_dir/$program was not built"
    failures=$((failures + 1))
  fi
done
((failures == 0)) || exit 1

# help PROGRAM ARGS...: exit 0, a usage line on stdout naming the program.
help() {
  local program=$1; shift
  "$bench_dir/$program" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [[ $rc -eq 0 ]] && grep -q "^usage: $program" "$tmp/out"; then
    echo "ok   $program $*: usage, exit 0"
  else
    echo "FAIL $program $*: exit $rc, stdout: $(head -c 300 "$tmp/out")"
    failures=$((failures + 1))
  fi
}

# rejects PROGRAM 'EXPECTED TEXT' ARGS...: exit 2, one stderr line starting with the program's
# name and holding the expected text, stdout empty.
rejects() {
  local program=$1 expected=$2; shift 2
  timeout 60 "$bench_dir/$program" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$? lines
  lines=$(wc -l <"$tmp/err")
  if [[ $rc -eq 2 && $lines -eq 1 && ! -s "$tmp/out" ]] && grep -q "^$program: " "$tmp/err" &&
     grep -qF -- "$expected" "$tmp/err"; then
    echo "ok   $program $*: $(cat "$tmp/err")"
  else
    echo "FAIL $program $*: exit $rc, $lines stderr line(s): $(head -c 400 "$tmp/err"), stdout: $(head -c 200 "$tmp/out")"
    failures=$((failures + 1))
  fi
}

help gemm_table --help
help gemm_table -h
rejects gemm_table '--seconds needs a value' --seconds
rejects gemm_table '--seconds = "x" is not allowed' --seconds x
rejects gemm_table '--seconds = "0" is not allowed: use a number from 0.01 to 3600' --seconds 0
rejects gemm_table '--sweeps = "0" is not allowed' --sweeps 0
rejects gemm_table '--sweeps = "2.5" is not allowed: use a whole number' --sweeps 2.5
rejects gemm_table '--threads = "0" is not allowed' --threads 0
rejects gemm_table '--threads = "x" is not allowed' --threads 1,x
rejects gemm_table '--threads = "," is not allowed' --threads ,
rejects gemm_table '--libraries = "," is not allowed' --libraries ,
rejects gemm_table '--libraries = "nope" matched no library here' --libraries nope
rejects gemm_table 'unknown argument "--bogus"' --bogus

help train_step_loop --help
rejects train_step_loop '--threads = "0" is not allowed' small --threads 0
rejects train_step_loop '--precision = "f16" is not allowed: use f32 or bf16' small --precision f16
rejects train_step_loop '--seconds = "-1" is not allowed' small --seconds -1
rejects train_step_loop '--threads = "2.5" is not allowed: use a whole number from 1 to 1024' small --threads 2.5
rejects train_step_loop '--warmup = "0" is not allowed' small --warmup 0
rejects train_step_loop 'unknown argument "--bogus"' small --bogus

help train_step_check --help
rejects train_step_check 'usage: train_step_check' small
rejects train_step_check 'steps = "3x" is not allowed: use a whole number from 1 to 100' small "$tmp/c.safetensors" 3x
rejects train_step_check 'steps = "0" is not allowed' small "$tmp/c.safetensors" 0

# script_rejects 'EXPECTED TEXT' COMMAND...: a non-zero exit, exactly one line on stderr holding the
# text, nothing on stdout.
script_rejects() {
  local expected=$1; shift
  timeout 120 "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$? lines
  lines=$(wc -l <"$tmp/err")
  if [[ $rc -ne 0 && $rc -ne 124 && $lines -eq 1 && ! -s "$tmp/out" ]] && grep -qF -- "$expected" "$tmp/err"; then
    echo "ok   ${*##*/}: exit $rc: $(cat "$tmp/err")"
  else
    echo "FAIL $*: exit $rc, $lines stderr line(s): $(head -c 400 "$tmp/err"), stdout: $(head -c 200 "$tmp/out")"
    failures=$((failures + 1))
  fi
}

src="${SCALELAB_SOURCE:?SCALELAB_SOURCE is not set}"
build=$(dirname "$bin")
py=/usr/bin/python3
breakdown=("$py" "$src/bench/op_breakdown.py" --build "$build")
script_rejects "argument --config: invalid choice: 'nope'" "${breakdown[@]}" --config nope
script_rejects "argument --threads: invalid choice: 3" "${breakdown[@]}" --threads 3
script_rejects 'argument --seconds: "-1" is not allowed: use a number from 0.01 to 3600' "${breakdown[@]}" --seconds -1
script_rejects 'argument --top: "2.5" is not allowed: use a whole number' "${breakdown[@]}" --top 2.5
script_rejects "$tmp/nobuild/bench/train_step_loop is missing: cmake --build $tmp/nobuild --target" \
  "$py" "$src/bench/op_breakdown.py" --build "$tmp/nobuild"
mkdir -p "$tmp/empty-path"
script_rejects "perf is not installed" env PATH="$tmp/empty-path" "$py" "$src/bench/op_breakdown.py" --build "$build"

# compare_train_step: a stand-in peers' environment, so that the checks after it are reached.
mkdir -p "$tmp/venv/bin" && touch "$tmp/venv/bin/python"
compare=("$py" "$src/bench/compare_train_step.py" --build "$build" --venv "$tmp/venv")
script_rejects "argument --threads: invalid choice: 3 (choose from 1, 2)" "${compare[@]}" --threads 3
script_rejects "the directory of $tmp/no-such-dir/rows.json does not exist" "${compare[@]}" --json "$tmp/no-such-dir/rows.json"
echo "the user's results" >"$tmp/rows.json"
script_rejects "$tmp/rows.json exists: give a new file name" "${compare[@]}" --json "$tmp/rows.json"
if [[ "$(cat "$tmp/rows.json")" == "the user's results" ]]; then
  echo "ok   an existing --json file is left as it was"
else
  echo "FAIL an existing --json file was changed"
  failures=$((failures + 1))
fi
script_rejects "$tmp/nobuild/scalelab is missing: cmake --build $tmp/nobuild --target scalelab" \
  "$py" "$src/bench/compare_train_step.py" --build "$tmp/nobuild" --venv "$tmp/venv"
# The wrapper: a first argument starting with "-" is the script's, the build directory build/.
script_rejects "argument --threads: invalid choice: 3" bash "$src/bench/compare_train_step.sh" --threads 3

# gemm_table.sh checks gemm_table's arguments before it makes or fills its environment.
script_rejects '--sweeps = "0" is not allowed' bash "$src/bench/gemm_table.sh" "$build" --sweeps 0
script_rejects "$tmp/nobuild/bench/gemm_table is missing" bash "$src/bench/gemm_table.sh" "$tmp/nobuild" --sweeps 1
if bash "$src/bench/gemm_table.sh" "$build" --help >"$tmp/out" 2>"$tmp/err" && grep -q "^usage: gemm_table" "$tmp/out"; then
  echo "ok   gemm_table.sh --help: its usage and gemm_table's, exit 0"
else
  echo "FAIL gemm_table.sh --help: $(head -c 300 "$tmp/out") $(head -c 300 "$tmp/err")"
  failures=$((failures + 1))
fi

# The peers' setup takes one directory, never an option as one (it would make a venv named "--x").
script_rejects '"--bogus" is not allowed: usage: bench/peers/setup.sh' bash "$src/bench/peers/setup.sh" --bogus
script_rejects '"a b" is not allowed' bash "$src/bench/peers/setup.sh" a b
if bash "$src/bench/peers/setup.sh" --help >"$tmp/out" 2>&1 && grep -q "^usage: bench/peers/setup.sh" "$tmp/out"; then
  echo "ok   peers/setup.sh --help: usage, exit 0"
else
  echo "FAIL peers/setup.sh --help: $(head -c 300 "$tmp/out")"
  failures=$((failures + 1))
fi
[[ ! -e "$src/--bogus" && ! -e ./--bogus && ! -e ./--help ]] || { echo "FAIL a venv was made for an option"; failures=$((failures + 1)); }

if ((failures > 0)); then
  echo "$failures case(s) failed"
  exit 1
fi
echo "bench arguments: all cases passed"
