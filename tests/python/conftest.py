# Fixtures of the Python package's tests (docs/python.md). ctest runs each test_*.py with
# PYTHONPATH=<build>/python (the build's module), SCALELAB_BIN (the command line they are compared
# with) and SCALELAB_SOURCE (the repository).
import os
import pathlib
import subprocess

import pytest

SOURCE = pathlib.Path(os.environ.get("SCALELAB_SOURCE", pathlib.Path(__file__).resolve().parents[2]))
BIN = pathlib.Path(os.environ.get("SCALELAB_BIN", SOURCE / "build" / "scalelab"))

# The small copy task of tests/cli/test_bad_input_table.sh ($COPY): seconds per run.
SMALL_COPY = {"model.d_model": 32, "train.threads": 1, "data.train_size": 200, "data.valid_size": 20,
              "train.eval_examples": 0, "train.log_every": 1}


@pytest.fixture(scope="session")
def source() -> pathlib.Path:
    return SOURCE


@pytest.fixture(scope="session")
def cli():
    """Runs the scalelab binary; returns the CompletedProcess (check=True unless told)."""
    assert BIN.is_file(), f"scalelab binary not found at {BIN} (set SCALELAB_BIN)"

    def run(*args, cwd=None, check=True, env=None):
        return subprocess.run([str(BIN), *map(str, args)], cwd=cwd, check=check, capture_output=True,
                              text=True, env=env)
    return run


def set_args(overrides: dict) -> list:
    """--set arguments of the command line for a dict of overrides."""
    out = []
    for key, value in overrides.items():
        out += ["--set", f"{key}={value}"]
    return out


@pytest.fixture
def small_copy(source):
    """The small copy-task Config and its command-line arguments (same config both ways)."""
    import scalelab
    path = source / "configs" / "copy.toml"
    return scalelab.Config(path, set=SMALL_COPY), ["-c", str(path), *set_args(SMALL_COPY)]


def read_safetensors(path) -> dict:
    """Every tensor of a safetensors file as a numpy array (F32 and I32 only), and "__metadata__"."""
    import json
    import struct

    import numpy as np
    raw = pathlib.Path(path).read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {"__metadata__": header.pop("__metadata__", {})}
    for name, t in header.items():
        dtype = {"F32": np.float32, "I32": np.int32}[t["dtype"]]
        begin, end = t["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype=dtype).reshape(t["shape"])
    return out
