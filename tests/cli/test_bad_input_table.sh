#!/usr/bin/env bash
# Table-driven bad input: every case of bad_input_cases.txt must exit with its status,
# print exactly one line on stderr matching its regex, and leave every file of the working
# directory unchanged (sha256 of each before and after; only the case's own run may be added).
set -u
bin="${SCALELAB_BIN:?}"
src="${SCALELAB_SOURCE:?}"
table="$src/tests/cli/bad_input_cases.txt"
work="${SCALELAB_TMP:-/tmp}/bad-input-table-$$"
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
scalelab() { "$bin" "$@"; }
SCALELAB="$bin"  # for commands run through another program (timeout), which cannot call a function
py=/usr/bin/python3
COPY="-c copy.toml --set model.d_model=32 --set train.threads=1 --set data.train_size=200 --set data.valid_size=20 --set train.eval_examples=0 --set train.log_every=1"

# ---- fixtures (all inside $work; the cases must leave them as they are) ----
cd "$work" || exit 1
cp "$src/configs/copy.toml" copy.toml
setup() { "$@" > /dev/null 2> setup.err || { echo "FAIL setup: $*: $(cat setup.err)"; exit 1; }; }
setup scalelab init $COPY --out model.safetensors
setup scalelab init $COPY --set model.encoder_layers=2 --set model.decoder_layers=2 --out twolayers.safetensors
setup scalelab train $COPY --set train.run_dir=run --set train.steps=2 -q
# a run that diverged before its first checkpoint (metrics.jsonl, no checkpoint)
scalelab train $COPY --set train.run_dir=failed --set train.steps=3 --set train.lr=1e300 -q > /dev/null 2>&1
[ -f failed/metrics.jsonl ] && [ ! -e failed/checkpoint.safetensors ] || { echo "FAIL setup: failed/: $(ls failed)"; exit 1; }
cp -r run torn && sed -i '1a {"split":"train", broken' torn/metrics.jsonl
cp -r run badmoment
mkdir adir.safetensors adir.npy dictdir
printf 'cat K AE1 T\ndog D AO1 G\n' > two.dict  # both words hash to the training side
cat > g2p.toml <<'TOML'
[model]
d_model = 32
n_heads = 2
d_ff = 64
encoder_layers = 1
decoder_layers = 1
max_len = 64
[data]
task = "cmudict"
path = "two.dict"
[train]
steps = 2
threads = 1
TOML
cat > kjv.toml <<'TOML'
[model]
arch = "decoder_only"
d_model = 32
n_heads = 2
d_ff = 64
decoder_layers = 1
max_len = 64
[data]
task = "kjv"
program = "/nonexistent/bible"
cache_dir = "kjvcache"
[train]
steps = 2
threads = 1
TOML
mkdir kjvcache
printf 'Ge1:1 In the beginning God created the heaven and the earth.\n' > kjvcache/kjv-bible-f.txt
printf 'Ge1:1 In the beginning God created the heaven and the earth!\n' | sha256sum | cut -d' ' -f1 > kjvcache/kjv-bible-f.txt.sha256
"$py" - <<'PY' || { echo "FAIL setup: python fixtures"; exit 1; }
import json, struct
import numpy as np

def st_read(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n]), b[8 + n:]

def st_write(path, header, data, raw_header=None):
    h = raw_header if raw_header is not None else json.dumps(header)
    h += " " * ((8 - len(h) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h.encode() + data)

def tensors(header):
    return sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][0])

h, d = st_read("model.safetensors")
names = tensors(h)
o = json.loads(json.dumps(h)); o[names[1]]["data_offsets"] = list(o[names[0]]["data_offsets"])
o[names[1]]["shape"] = list(o[names[0]]["shape"]); st_write("overlap.safetensors", o, d)
u = json.loads(json.dumps(h))
for k in names: u[k]["data_offsets"] = [x + 2 for x in u[k]["data_offsets"]]
st_write("unaligned.safetensors", u, b"\0\0" + d)
f = json.loads(json.dumps(h)); f[names[0]]["data_offsets"] = [x + 0.5 for x in f[names[0]]["data_offsets"]]
st_write("floatoffsets.safetensors", f, d)
st_write("trailing.safetensors", h, d + b"\0" * 16)
st_write("array.safetensors", None, b"", raw_header="[1, 2]")
s = json.loads(json.dumps(h)); s["__metadata__"]["step"] = "12x"; st_write("badstep.safetensors", s, d)
# a 2-layer file whose config says 1 layer
t, td = st_read("twolayers.safetensors")
cfg = json.loads(t["__metadata__"]["config"]); cfg["model"]["encoder_layers"] = 1; cfg["model"]["decoder_layers"] = 1
t["__metadata__"]["config"] = json.dumps(cfg); st_write("twolayers.safetensors", t, td)
# a training checkpoint whose Adam moment has the transposed shape (same element count)
m, md = st_read("badmoment/checkpoint.safetensors")
k = next(k for k in tensors(m) if k.startswith("optimizer.v.") and len(m[k]["shape"]) == 2 and m[k]["shape"][0] != m[k]["shape"][1])
m[k]["shape"] = m[k]["shape"][::-1]; st_write("badmoment/checkpoint.safetensors", m, md)

np.save("ids.npy", np.array([[1, 4, 5, 2]], dtype=np.int32))
np.save("big.npy", np.array([[1, 2**32 + 5, 2]], dtype=np.int64))
def npy(path, header, data):
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
npy("badshape.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2x, 5y), }", b"\0" * 40)
npy("huge.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (1099511627776, 1048576), }", b"\0" * 16)
PY
# Report surfaces: the report's fixture ledger, copies with a FIFO for a claim file and
# for ledger.json, a device for a claim file, a directory for report.html and a terminal escape in
# a verdict, and a gnuplot that never finishes a plot.
cp -r "$src/tests/report/fixtures/ledger" ledger
cp -r ledger fifoledger && rm fifoledger/claims/E6.json && mkfifo fifoledger/claims/E6.json
cp -r ledger fifoledger2 && rm fifoledger2/ledger.json && mkfifo fifoledger2/ledger.json
cp -r ledger htmldir && mkdir htmldir/report.html
mkdir -p devledger/claims && cp ledger/ledger.json devledger/ && ln -s /dev/zero devledger/claims/E4.json
cp -r ledger escledger
"$py" -c 'import json; p = "escledger/claims/E6.json"; j = json.load(open(p)); j["verdict"] = "\x1b[31mred\x07"; json.dump(j, open(p, "w"))'
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "gnuplot 5.4 (hangs)"; exit 0; }\nexec sleep 1000\n' > hang-gnuplot
chmod +x hang-gnuplot
rm -f setup.err

# Every file and directory with its sha256 (directories: their name only), sorted.
snapshot() {
  find . -mindepth 1 -type d -printf 'dir %p\n' | sort
  find . -type f -print0 | sort -z | xargs -0 sha256sum
}

# ---- the cases ----
cases=0
while IFS= read -r row; do
  case "$row" in ''|'#'*) continue ;; esac
  IFS=$'\x1f' read -r finding name want creates regex command <<< "$(sed 's/ | /\x1f/g' <<< "$row")"
  finding=$(xargs <<< "$finding"); name=$(xargs <<< "$name"); want=$(xargs <<< "$want"); creates=$(xargs <<< "$creates")
  cases=$((cases + 1))
  before=$(snapshot)
  eval "$command" < /dev/null > /dev/null 2> "$work.err"
  status=$?
  err=$(cat "$work.err")
  lines=$(grep -c . "$work.err")
  after=$(snapshot)
  if [ "$creates" != "-" ]; then  # the case's own run may appear; it is removed for the next case
    after=$(grep -v -E "(^dir \./$creates(/|$))|( \./$creates/)" <<< "$after")
    rm -rf "./$creates"
  fi
  if [ "$status" -ne "$want" ]; then fail "[$finding] $name: exit status $status, expected $want: $err"
  elif [ "$lines" -ne 1 ]; then fail "[$finding] $name: expected one line on stderr, got $lines: $err"
  elif ! grep -q -E -- "$regex" "$work.err"; then fail "[$finding] $name: '$err' does not match /$regex/"
  elif [ "$before" != "$after" ]; then
    fail "[$finding] $name: the working directory changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -3 | tr '\n' ' ')"
  else echo "ok   [$finding] $name ($status): $err"
  fi
done < "$table"
rm -f "$work.err"

[ "$cases" -ge 30 ] || fail "only $cases cases read from $table"
[ "$failures" -eq 0 ] || { echo "$failures of $cases case(s) failed"; exit 1; }
echo "bad input table: all $cases cases passed"
