#!/usr/bin/env bash
# Data-parallel training: 2 ranks with global batch B train as 1 process with batch B (copy task,
# dropout 0). From the same state and batch, one step on 2 ranks gives the loss and gradient norm of
# one step on 1 process within float reordering (at the start and from checkpoints at steps 20 and
# 40); whole runs agree within the looser tolerance of docs/scaling.md; two 2-rank runs are
# bit-identical; only rank 0 writes and prints. A run resumed on 2 ranks from a 1-process
# checkpoint continues it (and back).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../support/mpi_common.sh" mpi-train
cmp="$src/tests/mpi/compare_metrics.py"
# constant lr: a resumed run with a larger train.steps has the same schedule as one run.
common=(--config "$src/configs/copy.toml" --set train.steps=60 --set train.log_every=5
        --set train.eval_every=20 --set train.checkpoint_every=20 --set data.train_size=2000
        --set data.valid_size=128 --set train.eval_examples=64 --set train.threads=1
        --set train.batch_size=32 --set train.schedule=constant --set train.lr=1e-3
        --set model.dropout=0 --quiet)

"$bin" train "${common[@]}" --set train.run_dir="$tmp/one" >"$tmp/one.out" 2>"$tmp/one.err" \
  || { fail "1-process run failed"; cat "$tmp/one.err"; }
for run in two two-again; do
  mpi 2 train "${common[@]}" --set train.run_dir="$tmp/$run" >"$tmp/$run.out" 2>"$tmp/$run.err" \
    || { fail "2-rank run $run failed"; cat "$tmp/$run.err"; }
done

# Two comparisons (docs/scaling.md, "Equivalence and its tolerance"). The float32 gradient sums
# differ in order (two partial sums added by MPI_Allreduce vs one sum over the batch), about 1e-7
# relative. From the same state, one step on each gives the same loss and gradient norm within
# 1e-5. Along a whole run the difference stays there until a discrete event (a ReLU input or an
# attention tie within that difference of its threshold, or Adam turning the rounding noise of the
# key bias's gradient, which is zero in exact arithmetic, into steps of the learning rate's size)
# sends the runs apart at 1e-4..1e-3; where such an event falls depends on the engine's rounding.
# So whole runs are compared on their losses within 1e-2 and their accuracies within 3 of the 64
# validation examples.
whole=(--fields loss,nll,token_accuracy,exact_match --rtol 1e-2 --accuracy-atol 0.05)
for n in 1 2; do  # the first step, from the initialisation
  if [ $n = 1 ]; then "$bin" train "${common[@]}" --set train.steps=1 --set train.run_dir="$tmp/first1"
  else mpi 2 train "${common[@]}" --set train.steps=1 --set train.run_dir="$tmp/first2"; fi \
    >/dev/null 2>"$tmp/first$n.err" || { fail "a 1-step run on $n rank(s) failed"; cat "$tmp/first$n.err"; }
done
if out=$(python3 "$cmp" "$tmp/first1/metrics.jsonl" "$tmp/first2/metrics.jsonl" --split train \
           --fields loss,grad_norm --rtol 1e-5); then
  ok "same state, same batch: step 1 on 2 ranks = on 1 process: $out"
else
  fail "same state, same batch: step 1 on 2 ranks differs from 1 process: $out"
fi
if out=$(python3 "$cmp" "$tmp/one/metrics.jsonl" "$tmp/two/metrics.jsonl" "${whole[@]}"); then
  ok "2 ranks = 1 process with the same global batch, all 60 steps: $out"
else
  fail "2 ranks differ from 1 process: $out"
fi
if out=$(python3 "$cmp" "$tmp/two/metrics.jsonl" "$tmp/two-again/metrics.jsonl" --exact); then
  ok "two 2-rank runs: $out"
else
  fail "two 2-rank runs are not bit-identical: $out"
fi
if [ "$(grep -c '^trained 60 steps' "$tmp/two.out")" = 1 ] && grep -q 'on 2 ranks' "$tmp/two.out"; then
  ok "one 'trained' line, from rank 0: $(cat "$tmp/two.out")"
else
  fail "stdout of the 2-rank run: $(cat "$tmp/two.out")"
fi
if python3 -c "import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if s['ranks']==2 else 1)" "$tmp/two/summary.json"; then
  ok "summary.json records ranks = 2"
else
  fail "summary.json: $(cat "$tmp/two/summary.json")"
fi

# One step from the same checkpoint (1 process to step S) on 1 process and on 2 ranks: the loss and
# gradient norm of step S + 1 agree within float reordering.
"$bin" train "${common[@]}" --set train.steps=20 --set train.run_dir="$tmp/at20" >/dev/null 2>"$tmp/at20.err" \
  || { fail "1-process run to step 20 failed"; cat "$tmp/at20.err"; }
one_step_from() {  # $1: a run directory whose checkpoint is at step $2
  local next=$(($2 + 1))
  rm -rf "$tmp/next1-$2" "$tmp/next2-$2"
  cp -r "$1" "$tmp/next1-$2" && cp -r "$1" "$tmp/next2-$2"
  "$bin" train "${common[@]}" --set train.steps=$next --set train.run_dir="$tmp/next1-$2" --resume \
    >/dev/null 2>"$tmp/next-$2.err" \
    && mpi 2 train "${common[@]}" --set train.steps=$next --set train.run_dir="$tmp/next2-$2" --resume \
      >/dev/null 2>>"$tmp/next-$2.err" \
    || { fail "one step from the checkpoint at step $2 failed"; cat "$tmp/next-$2.err"; return; }
  if out=$(python3 "$cmp" "$tmp/next1-$2/metrics.jsonl" "$tmp/next2-$2/metrics.jsonl" --split train \
             --from $next --fields loss,grad_norm --rtol 1e-5); then
    ok "same state, same batch: step $next on 2 ranks = on 1 process: $out"
  else
    fail "same state, same batch: step $next on 2 ranks differs from 1 process: $out"
  fi
}

# Resume across rank counts: 1 process to step 40, then 2 ranks to 60; and 2 ranks to 40, then 1
# process to 60: both continue the uninterrupted 1-process run. The 1-process state at step 40 also
# serves the one-step comparison.
"$bin" train "${common[@]}" --set train.steps=40 --set train.run_dir="$tmp/r12" >/dev/null 2>"$tmp/r12.err" \
  && cp -r "$tmp/r12" "$tmp/at40" \
  && mpi 2 train "${common[@]}" --set train.run_dir="$tmp/r12" --resume >/dev/null 2>>"$tmp/r12.err" \
  || { fail "1 -> 2 ranks resume failed"; cat "$tmp/r12.err"; }
mpi 2 train "${common[@]}" --set train.steps=40 --set train.run_dir="$tmp/r21" >/dev/null 2>"$tmp/r21.err" \
  && "$bin" train "${common[@]}" --set train.run_dir="$tmp/r21" --resume >/dev/null 2>>"$tmp/r21.err" \
  || { fail "2 -> 1 ranks resume failed"; cat "$tmp/r21.err"; }
one_step_from "$tmp/at20" 20
one_step_from "$tmp/at40" 40
for r in r12 r21; do
  if out=$(python3 "$cmp" "$tmp/one/metrics.jsonl" "$tmp/$r/metrics.jsonl" "${whole[@]}"); then
    ok "resume $r continues the 1-process run: $out"
  else
    fail "resume $r: $out"
  fi
done
finish
