#!/usr/bin/env bash
# scalelab check --claims FILE (docs/claims-file.md) from the command line, on the quick copy task:
#   (a) a training claim true at one swept learning rate only: "holds only if train.lr = 0.003";
#   (b) --dry-run prints the number of runs the check then does, and runs and writes nothing;
#   (c) a user claim whose arm is a built-in's arm (A1's model at init) shares its runs: the
#       check of both does the distinct runs once;
#   (d) a bad file: one "scalelab: error:" line naming the file, the claim and the key, a
#       non-zero exit and no output directory;
#   (e) the example claim files in examples/claims/ load (--dry-run);
#   (f) the report puts the user claim in its own "Your claims" section, with its plot, and not
#       among the built-in claims;
#   (g) a coord_check claim (untuned, one run per arm, width and seed): --dry-run plans exactly the
#       runs the check does.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/check_test_common.sh" claims-cli

# runs_line NAME: "R C" from stdout's "R run(s) (C from the cache)".
runs_line() { sed -nE 's/.* ([0-9]+) run\(s\) \(([0-9]+) from the cache\).*/\1 \2/p' "$tmp/$1.out" | head -1; }
check() {
  local name="$1"
  shift
  if "$bin" check --quick --no-report -j 2 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"; then return 0; fi
  fail "$name: check $* exited non-zero"
  tail -5 "$tmp/$name.err" | sed 's/^/    /'
  return 1
}

# Untuned (the learning rate is swept, so it is the subject): the run count is known exactly.
# 150 steps beat 10 by far at lr 3e-3; at lr 1e-6 neither run learns much (a gap below 0.5 nats).
cat >"$tmp/train.toml" <<'EOF'
[[claim]]
id = "steps-matter"
statement = "150 training steps end at least 0.5 nats below 10 steps on the copy task."
seeds = 3
base.set = ["data.task=copy"]
arms = [ { name = "150 steps" }, { name = "10 steps", set = ["train.steps=10"] } ]
sweep = { key = "train.lr", values = [1e-6, 3e-3] }
measure = "final_valid_loss"
criterion = { kind = "better", arm = "150 steps", than = "10 steps", margin = 0.5 }
EOF

# (b) dry run first: nothing written
if "$bin" check --quick --claims "$tmp/train.toml" --only steps-matter --dry-run --out "$tmp/a" >"$tmp/dry.out" 2>"$tmp/dry.err"; then
  planned=$(sed -nE 's/.*: ([0-9]+) run\(s\) in all.*/\1/p' "$tmp/dry.out")
  [ "$planned" = 12 ] && ok "b: --dry-run plans 12 runs (2 arms x 2 rates x 3 seeds)" || fail "b: --dry-run plans '$planned' runs: $(tail -3 "$tmp/dry.out")"
  [ ! -e "$tmp/a" ] && ok "b: --dry-run wrote nothing" || fail "b: --dry-run created $tmp/a"
else
  fail "b: --dry-run exited non-zero: $(cat "$tmp/dry.err")"
fi

# (a) the check itself
if check a --claims "$tmp/train.toml" --only steps-matter --out "$tmp/a"; then
  read -r total cached _ <<<"$(runs_line a) x x"
  [ "$total" = "${planned:-none}" ] && ok "b: the check did the $total runs --dry-run planned" || fail "b: ran $total, planned ${planned:-?}"
  line=$(grep -E '^  steps-matter ' "$tmp/a.out" || true)
  case "$line" in
    *"holds only if train.lr = 0.003"*) ok "a: $line" ;;
    *) fail "a: expected 'holds only if train.lr = 0.003', got '$line'" ;;
  esac
  python3 - "$tmp/a/claims/steps-matter.json" <<'EOF' && ok "a: the record names the cases and plots the measure per arm" || fail "a: record"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["cases"]["held_on"] == ["train.lr = 0.003"], r["cases"]
assert r["cases"]["failed_on"] == ["train.lr = 1e-06"], r["cases"]
assert len(r["plots"][0]["series"]) == 2
EOF
fi

# (c) a user claim sharing A1's probe arm (the quick model at init, 8 seeds)
cat >"$tmp/probe.toml" <<'EOF'
[[claim]]
id = "no-scale-larger-logits"
statement = "Without the 1/sqrt(d_k) scale the attention logits at init are larger."
seeds = 8
arms = [ { name = "scaled" }, { name = "none", set = ["model.attention.scale=none"] } ]
measure = { name = "probe", probe = "attn_logits", field = "max_abs" }
criterion = { kind = "worse", arm = "none", than = "scaled" }
EOF
if check c1 --claims "$tmp/probe.toml" --only A1 --out "$tmp/c1" && check c2 --claims "$tmp/probe.toml" --only no-scale-larger-logits --out "$tmp/c2" &&
   check c3 --claims "$tmp/probe.toml" --only A1,no-scale-larger-logits --out "$tmp/c3"; then
  read -r r1 _ <<<"$(runs_line c1)"
  read -r r2 _ <<<"$(runs_line c2)"
  read -r r3 _ <<<"$(runs_line c3)"
  [ "$r1" = 8 ] && [ "$r2" = 16 ] && [ "$r3" = 16 ] && ok "c: A1 8 runs, the user claim 16, both together 16 (the shared 8 once)" ||
    fail "c: runs A1 $r1, user claim $r2, both $r3 (expected 8, 16, 16)"
  grep -qE '^  no-scale-larger-logits  holds' "$tmp/c3.out" && ok "c: the user claim holds" || fail "c: $(grep no-scale "$tmp/c3.out")"
  # and from the cache: the user claim after A1 in one directory finds A1's runs there
  check c4 --claims "$tmp/probe.toml" --only no-scale-larger-logits --out "$tmp/c1" &&
    { read -r r4 c4 <<<"$(runs_line c4)"; [ "$c4" = 8 ] && ok "c: after A1, 8 of its $r4 runs come from the cache" || fail "c: $c4 of $r4 from the cache (expected 8)"; }
fi

# (d) bad files
bad() {
  local name="$1" expect="$2"
  if "$bin" check --quick --claims "$tmp/$name.toml" --out "$tmp/bad-$name" >"$tmp/bad-$name.out" 2>"$tmp/bad-$name.err"; then
    fail "d $name: exit status 0"
    return
  fi
  local lines
  lines=$(wc -l <"$tmp/bad-$name.err")
  if [ "$lines" = 1 ] && grep -q "^scalelab: error: $tmp/$name.toml: .*$expect" "$tmp/bad-$name.err"; then ok "d $name: $(cat "$tmp/bad-$name.err")"
  else fail "d $name: expected one line with '$expect', got: $(cat "$tmp/bad-$name.err")"; fi
  [ ! -e "$tmp/bad-$name" ] && ok "d $name: nothing written" || fail "d $name: $tmp/bad-$name was created"
}
sed 's/^seeds = 8/seeds = 8\nsteeps = 4/' "$tmp/probe.toml" >"$tmp/unknown_key.toml"
bad unknown_key 'claim "no-scale-larger-logits": steeps: unknown key; allowed:'
sed 's/"probe", probe/"prob", probe/' "$tmp/probe.toml" >"$tmp/unknown_measure.toml"
bad unknown_measure 'measure: "prob": unknown measure; allowed:'
sed 's/than = "scaled"/than = "scale"/' "$tmp/probe.toml" >"$tmp/missing_arm.toml"
bad missing_arm 'criterion.than: "scale": no such arm; allowed: scaled, none'
sed 's/^measure =/sweep = { key = "model.widht", values = [32] }\nmeasure =/' "$tmp/probe.toml" >"$tmp/sweep_key.toml"
bad sweep_key 'sweep.key: "model.widht": not a config key'
cat "$tmp/probe.toml" "$tmp/probe.toml" >"$tmp/duplicate.toml"
bad duplicate 'id: "no-scale-larger-logits": duplicate'
sed 's/^id = .*/id = "A3"/' "$tmp/probe.toml" >"$tmp/builtin.toml"
bad builtin 'id: "A3": E, A or B followed by digits'

# (e) the examples load and plan
for f in "$src"/examples/claims/*.toml; do
  grep -q '^\[\[claim\]\]' "$f" || continue  # a run config the claims use as their base
  if "$bin" check --claims "$f" --only "$(sed -nE 's/^id = "(.*)"/\1/p' "$f" | paste -sd,)" --dry-run >"$tmp/ex.out" 2>"$tmp/ex.err"; then
    ok "e: $(basename "$f"): $(grep -E '^total' "$tmp/ex.out")"
  else
    fail "e: $(basename "$f"): $(cat "$tmp/ex.err")"
  fi
done

# (f) the report of c3 (A1 and the user claim); plots drawn if gnuplot is there, else listed
if [ -d "$tmp/c3" ] && "$bin" report "$tmp/c3" >"$tmp/report.out" 2>"$tmp/report.err"; then
  md="$tmp/c3/report.md"
  your=$(sed -n '/^## Your claims/,/^## [^Y]/p' "$md")
  builtin=$(sed -n '/^## The claims, one by one/,/^## [^T]/p' "$md")
  printf '%s' "$your" | grep -q 'no-scale-larger-logits' && ok "f: report.md has a Your claims section with the user claim" ||
    fail "f: no Your claims section naming no-scale-larger-logits in report.md"
  printf '%s' "$your" | grep -q 'no-scale-larger-logits-measure' && ok "f: the section shows the plot of the measure per arm" ||
    fail "f: the Your claims section lacks the plot no-scale-larger-logits-measure"
  if printf '%s' "$builtin" | grep -q 'no-scale-larger-logits'; then fail "f: the user claim is also among the built-in claims"
  else ok "f: the user claim is not among the built-in claims"; fi
  grep -q 'id="your-claims"' "$tmp/c3/report.html" && ok "f: report.html has the section" || fail "f: report.html lacks id=your-claims"
else
  fail "f: scalelab report $tmp/c3 failed: $(cat "$tmp/report.err" 2>/dev/null)"
fi

# (g) coord_check: 2 arms x 2 widths x 2 seeds, 3 steps each, at fixed rates
cat >"$tmp/coord.toml" <<'EOF'
[[claim]]
id = "coord-rate"
statement = "At Adam rate 0.05 the layer outputs grow with width over the first steps more than at 1e-9."
seeds = 2
base.set = ["train.schedule=constant", "train.warmup=0", "model.n_heads=2"]
arms = [ { name = "lr 0.05", set = ["train.lr=0.05"] }, { name = "lr 1e-9", set = ["train.lr=1e-9"] } ]
measure = { name = "coord_check", widths = [16, 32], steps = 3 }
criterion = { kind = "worse", arm = "lr 0.05", than = "lr 1e-9" }
EOF
if "$bin" check --quick --claims "$tmp/coord.toml" --only coord-rate --dry-run >"$tmp/gdry.out" 2>"$tmp/gdry.err"; then
  gplanned=$(sed -nE 's/.*: ([0-9]+) run\(s\) in all.*/\1/p' "$tmp/gdry.out")
  if check g --claims "$tmp/coord.toml" --only coord-rate --out "$tmp/g"; then
    read -r gtotal _ <<<"$(runs_line g) x"
    [ "$gplanned" = 8 ] && [ "$gtotal" = 8 ] && ok "g: coord_check planned 8 runs and did 8" || fail "g: planned '$gplanned', did '$gtotal' (expected 8, 8)"
  fi
else
  fail "g: --dry-run exited non-zero: $(cat "$tmp/gdry.err")"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
