# The bad-input table of the command line (tests/cli/bad_input_cases.txt) through the Python API:
# every case that applies raises the fitting Python exception with the command line's message
# (its regex, less the "scalelab: error: " prefix; a file name becomes the argument's name where
# the API takes an array instead of a file) and leaves every file of the directory as it was.
# Every case of the table is listed here, as applying or not (with the reason), so that a new
# case cannot be missed.
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest
from conftest import SMALL_COPY, SOURCE

import scalelab

NOT_THROUGH_THE_API = {
    "length-penalty-nan": "eval is not in the API",
    "temperature-nan": "sample is not in the API",
    "sigterm": "SIGINT is test_train.py's Ctrl-C test; SIGTERM ends Python",
    "npy-shape-text": "the API takes arrays, not .npy files",
    "npy-huge-shape": "the API takes arrays, not .npy files",
    "npy-directory": "the API takes arrays, not .npy files",
    "unknown-option": "a command-line option; an unknown config key is test_config.py's",
    "eval-predictions-empty": "eval is not in the API",
    "eval-predictions-symlink": "eval is not in the API",
    "agree-escape-sequence": "agree is not in the API",
    "agree-nul-byte": "agree is not in the API",
    "agree-invalid-utf8": "agree is not in the API",
    "agree-9mb-field": "agree is not in the API",
    "distill-out-empty": "distill is not in the API",
    "check-gnuplot-empty": "a command-line option of check",
    "check-gnuplot-missing": "a command-line option of check",
    "check-gnuplot-false": "a command-line option of check",
    "report-gnuplot-missing": "a command-line option of report",
    "report-gnuplot-directory": "a command-line option of report",
    "report-gnuplot-false": "a command-line option of report",
    "report-gnuplot-empty": "a command-line option of report",
    "report-sigterm-while-drawing": "SIGTERM ends Python",
    # check() and report() call the same run_check / write_report that refuse these; the table
    # tests them through the command line only.
    "check-out-empty": "not repeated through check(); same run_check as the CLI",
    "check-out-is-a-file": "not repeated through check(); same run_check as the CLI",
    "report-empty-dir": "not repeated through report(); same write_report as the CLI",
    "report-dir-empty": "not repeated through report(); same write_report as the CLI",
    "report-html-is-directory": "not repeated through report(); same write_report as the CLI",
    "report-claim-fifo": "not repeated through report(); same write_report as the CLI",
    "report-ledger-fifo": "not repeated through report(); same write_report as the CLI",
    "report-claim-device": "not repeated through report(); same write_report as the CLI",
    "report-escape-in-file": "not repeated through report(); same write_report as the CLI",
}


def table():
    rows = {}
    for line in (SOURCE / "tests" / "cli" / "bad_input_cases.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            finding, name, status, creates, regex, command = [f.strip() for f in line.split(" | ", 5)]
            rows[name] = regex
    return rows


def cfg(*pairs, base="copy"):
    """The small copy task (the table's $COPY) or a fixture config, with overrides."""
    c = scalelab.Config(SOURCE / "configs" / "copy.toml", set=SMALL_COPY) if base == "copy" else scalelab.Config(base)
    return c.set(dict(zip(pairs[::2], pairs[1::2])))  # validated together, as --set options are


def train(*pairs, steps=None, resume=False, base="copy"):
    return lambda: scalelab.train(cfg(*pairs, base=base), steps=steps, resume=resume)


def logits(checkpoint, tgt=None):
    ids = np.array([[1, 4, 5, 2]], dtype=np.int32)
    return lambda: scalelab.Model.load(checkpoint).logits(ids, ids if tgt is None else tgt)


# name: (call, exception class, regex replacing the table's, or None for the table's own)
CASES = {
    "resume-below-checkpoint": (train("train.run_dir", "run", steps=1, resume=True), ValueError, None),
    "run-dir-taken": (train("train.run_dir", "run", steps=4), FileExistsError, None),
    "resume-other-model": (train("train.run_dir", "run", "model.d_model", 64, steps=4, resume=True), ValueError, None),
    "init-out-exists": (lambda: scalelab.Model.init(cfg()).save("model.safetensors"), FileExistsError, None),
    "out-is-a-directory": (lambda: scalelab.Model.load("model.safetensors").save("adir.npy", force=True),
                           FileExistsError, None),
    "divergence": (train("train.run_dir", "diverge", "train.lr", 1e300, steps=3), RuntimeError, None),
    "resume-without-checkpoint": (train("train.run_dir", "failed", steps=3, resume=True), ValueError, None),
    "metrics-broken-record": (train("train.run_dir", "torn", steps=4, resume=True), ValueError, None),
    "lr-inf": (train("train.run_dir", "fresh", "train.lr", float("inf")), ValueError, None),
    "lr-nan": (train("train.run_dir", "fresh", "train.lr", float("nan")), ValueError, None),
    "min-lr-nan": (train("train.run_dir", "fresh", "train.min_lr", float("nan")), ValueError, None),
    "weight-decay-inf": (train("train.run_dir", "fresh", "train.weight_decay", float("inf")), ValueError, None),
    "clip-norm-inf": (train("train.run_dir", "fresh", "train.clip_norm", float("inf")), ValueError, None),
    "embedding-scale-nan": (train("train.run_dir", "fresh", "model.embedding.scale", float("nan")), ValueError, None),
    "d-model-1e18": (train("train.run_dir", "fresh", "model.d_model", 1e18), ValueError, None),
    "d-model-1e9": (train("train.run_dir", "fresh", "model.d_model", 1e9), ValueError, None),
    "model-beyond-memory": (lambda: scalelab.Model.init(cfg("model.d_model", 65536, "model.d_ff", 1048576,
                                                            "model.encoder_layers", 1024, "model.decoder_layers", 1024)),
                            ValueError, None),
    "batch-size-absurd": (train("train.run_dir", "fresh", "train.batch_size", 4294967296), ValueError, None),
    "simd-env-unknown": ("subprocess", ValueError, None),
    "st-overlap": (logits("overlap.safetensors"), ValueError, None),
    "st-unaligned": (logits("unaligned.safetensors"), ValueError, None),
    "st-float-offsets": (logits("floatoffsets.safetensors"), ValueError, None),
    "st-trailing-bytes": (logits("trailing.safetensors"), ValueError, None),
    "st-unused-layer": (logits("twolayers.safetensors"), ValueError, None),
    "st-moment-shape": (train("train.run_dir", "badmoment", steps=4, resume=True), ValueError, None),
    "st-header-array": (logits("array.safetensors"), ValueError, None),
    "st-step-not-integer": (logits("badstep.safetensors"), ValueError, None),
    "st-directory": (logits("adir.safetensors"), ValueError, None),
    "npy-int64-wraps": (logits("model.safetensors", np.array([[1, 2**32 + 5, 2]])), ValueError,
                        r"^tgt: element 1 = 4294967301 does not fit in int32"),
    "empty-valid-split": (train("train.run_dir", "fresh", base="g2p.toml"), ValueError, None),
    "kjv-cache-corrupted": (train("train.run_dir", "fresh", base="kjv.toml"), ValueError, None),
    "dictionary-is-directory": (train("train.run_dir", "fresh", "data.path", "dictdir", base="g2p.toml"),
                                ValueError, None),
}


def test_every_case_of_the_table_is_listed():
    assert set(CASES) | set(NOT_THROUGH_THE_API) == set(table())
    assert not set(CASES) & set(NOT_THROUGH_THE_API)


def st_read(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n]), b[8 + n:]


def st_write(path, header, data, raw_header=None):
    h = raw_header if raw_header is not None else json.dumps(header)
    h += " " * ((8 - len(h) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h.encode() + data)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """The table's fixtures (tests/cli/test_bad_input_table.sh), made through the API."""
    d = tmp_path_factory.mktemp("bad-input")
    old = os.getcwd()
    os.chdir(d)
    shutil.copy(SOURCE / "configs" / "copy.toml", "copy.toml")
    scalelab.Model.init(cfg()).save("model.safetensors")
    scalelab.Model.init(cfg("model.encoder_layers", 2, "model.decoder_layers", 2)).save("twolayers.safetensors")
    scalelab.train(cfg("train.run_dir", "run"), steps=2)
    with pytest.raises(RuntimeError):
        scalelab.train(cfg("train.run_dir", "failed", "train.lr", 1e300), steps=3)
    assert os.path.isfile("failed/metrics.jsonl") and not os.path.exists("failed/checkpoint.safetensors")
    shutil.copytree("run", "torn")
    lines = open("torn/metrics.jsonl").read().splitlines(True)
    open("torn/metrics.jsonl", "w").write("".join(lines[:1] + ['{"split":"train", broken\n'] + lines[1:]))
    shutil.copytree("run", "badmoment")
    for name in ("adir.safetensors", "adir.npy", "dictdir", "kjvcache"):
        os.mkdir(name)
    open("two.dict", "w").write("cat K AE1 T\ndog D AO1 G\n")
    model_lines = "[model]\nd_model = 32\nn_heads = 2\nd_ff = 64\nencoder_layers = 1\ndecoder_layers = 1\nmax_len = 64\n"
    open("g2p.toml", "w").write(model_lines + '[data]\ntask = "cmudict"\npath = "two.dict"\n[train]\nsteps = 2\nthreads = 1\n')
    open("kjv.toml", "w").write(model_lines.replace("[model]\n", '[model]\narch = "decoder_only"\n')
                                .replace("encoder_layers = 1\n", "") +
                                '[data]\ntask = "kjv"\nprogram = "/nonexistent/bible"\ncache_dir = "kjvcache"\n'
                                '[train]\nsteps = 2\nthreads = 1\n')
    open("kjvcache/kjv-bible-f.txt", "w").write("Ge1:1 In the beginning God created the heaven and the earth.\n")
    open("kjvcache/kjv-bible-f.txt.sha256", "w").write(hashlib.sha256(
        b"Ge1:1 In the beginning God created the heaven and the earth!\n").hexdigest() + "\n")
    h, data = st_read("model.safetensors")
    names = sorted((k for k in h if k != "__metadata__"), key=lambda k: h[k]["data_offsets"][0])
    o = json.loads(json.dumps(h))
    o[names[1]]["data_offsets"] = list(o[names[0]]["data_offsets"])
    o[names[1]]["shape"] = list(o[names[0]]["shape"])
    st_write("overlap.safetensors", o, data)
    u = json.loads(json.dumps(h))
    for k in names:
        u[k]["data_offsets"] = [x + 2 for x in u[k]["data_offsets"]]
    st_write("unaligned.safetensors", u, b"\0\0" + data)
    f = json.loads(json.dumps(h))
    f[names[0]]["data_offsets"] = [x + 0.5 for x in f[names[0]]["data_offsets"]]
    st_write("floatoffsets.safetensors", f, data)
    st_write("trailing.safetensors", h, data + b"\0" * 16)
    st_write("array.safetensors", None, b"", raw_header="[1, 2]")
    s = json.loads(json.dumps(h))
    s["__metadata__"]["step"] = "12x"
    st_write("badstep.safetensors", s, data)
    t, td = st_read("twolayers.safetensors")
    c = json.loads(t["__metadata__"]["config"])
    c["model"]["encoder_layers"] = c["model"]["decoder_layers"] = 1
    t["__metadata__"]["config"] = json.dumps(c)
    st_write("twolayers.safetensors", t, td)
    m, md = st_read("badmoment/checkpoint.safetensors")
    k = next(k for k in sorted(m) if k.startswith("optimizer.v.") and len(m[k]["shape"]) == 2
             and m[k]["shape"][0] != m[k]["shape"][1])
    m[k]["shape"] = m[k]["shape"][::-1]
    st_write("badmoment/checkpoint.safetensors", m, md)
    yield d
    os.chdir(old)


def snapshot(d):
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs:
            out[os.path.relpath(os.path.join(root, n), d)] = "dir"
        for n in files:
            p = os.path.join(root, n)
            out[os.path.relpath(p, d)] = hashlib.sha256(open(p, "rb").read()).hexdigest()
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(workdir, name):
    call, error, regex = CASES[name]
    if regex is None:
        regex = "^" + table()[name].removeprefix("^scalelab: error: ")
    before = snapshot(workdir)
    if call == "subprocess":  # the environment is read at start-up: a process of its own
        r = subprocess.run([sys.executable, "-c", "import scalelab\ntry:\n scalelab.info()\n"
                            "except ValueError as e:\n print(e)\n raise SystemExit(3)"],
                           env=dict(os.environ, SCALELAB_SIMD="AVX9000"), capture_output=True, text=True)
        assert r.returncode == 3, r.stderr
        message = r.stdout.strip()
    else:
        with pytest.raises(Exception) as e:
            call()
        assert type(e.value) is error, f"{type(e.value).__name__}: {e.value}"
        message = str(e.value)
    assert "\n" not in message
    assert re.search(regex, message), f"{message!r} does not match /{regex}/"
    after = snapshot(workdir)
    for created in ("diverge",):
        after = {k: v for k, v in after.items() if k != created and not k.startswith(created + "/")}
        shutil.rmtree(os.path.join(workdir, created), ignore_errors=True)
    assert after == before
