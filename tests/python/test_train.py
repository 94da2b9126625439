# scalelab.train: the command line's run, records through the callback, Ctrl-C and callback errors
# stop after the step with a valid checkpoint, the GIL is released while it trains.
import json
import os
import signal
import threading
import time

import numpy as np
import pytest
from conftest import read_safetensors

import scalelab

# Fields that measure time, not the run: they differ between any two runs.
TIMING = {"time_s", "tokens_per_s", "seconds", "tokens_per_second"}


def without_timing(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in TIMING and not k.endswith("_seconds")}


def metrics(run_dir) -> list:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_fifty_steps_match_the_command_lines_run(cli, small_copy, tmp_path):
    cfg, args = small_copy
    cfg.set("train.eval_every", 25)
    cli("train", *args, "--set", "train.eval_every=25", "--set", "train.steps=50",
        "--set", f"train.run_dir={tmp_path / 'cli'}", "-q")
    seen = []
    history = scalelab.train(cfg, steps=50, run_dir=tmp_path / "py",
                             callback=lambda step, record: seen.append((step, record)))
    expected = metrics(tmp_path / "cli")
    assert len(expected) >= 50  # log_every = 1, and the evaluations
    assert [without_timing(r) for r in history.records] == [without_timing(r) for r in expected]
    assert history.records == metrics(tmp_path / "py")  # the callback saw what the file holds
    assert [r for _, r in seen] == history.records and [s for s, _ in seen] == [r["step"] for r in expected]
    train_steps = [r["step"] for r in expected if r["split"] == "train"]
    assert np.array_equal(history.train["step"], train_steps)
    assert np.array_equal(history["loss"], [r["loss"] for r in expected if r["split"] == "train"])
    assert history.valid["step"].size == 2 and history.summary["steps"] == 50 and not history.interrupted
    a = read_safetensors(tmp_path / "cli" / "checkpoint.safetensors")
    b = read_safetensors(tmp_path / "py" / "checkpoint.safetensors")
    for name in a.keys() - {"__metadata__"}:
        assert np.array_equal(a[name], b[name]), name
    toml = lambda d: (d / "config.toml").read_text().replace(str(d), "RUN")  # noqa: E731
    assert toml(tmp_path / "cli") == toml(tmp_path / "py")


def test_an_exception_in_the_callback_stops_after_the_next_step(small_copy, tmp_path):
    cfg, _ = small_copy

    def stop_at_7(step, record):
        if step == 7:
            raise ZeroDivisionError("stop here")
    with pytest.raises(ZeroDivisionError, match="stop here"):
        scalelab.train(cfg, steps=1000, run_dir=tmp_path / "r", callback=stop_at_7)
    # The record of step 7 comes after step 7; the trainer polls the stop request after the next
    # step, which it finishes, logs and saves.
    assert scalelab.Model.load(tmp_path / "r" / "checkpoint.safetensors").step == 8
    assert metrics(tmp_path / "r")[-1]["step"] == 8
    resumed = scalelab.train(cfg, steps=10, run_dir=tmp_path / "r", resume=True)
    assert resumed.train["step"].tolist() == [9, 10]


def test_ctrl_c_stops_after_the_step_with_a_checkpoint(small_copy, tmp_path):
    cfg, _ = small_copy
    # A long run at the copy config's full rate can diverge before the signal arrives; this test is
    # about stopping, so it trains at a rate far from the edge of stability.
    cfg = cfg.set("train.lr", 1e-4)
    started = threading.Event()
    timer = threading.Timer(1.0, lambda: (started.wait(10), os.kill(os.getpid(), signal.SIGINT)))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as e:
            scalelab.train(cfg, steps=10**6, run_dir=tmp_path / "r", callback=lambda s, r: started.set())
    finally:
        timer.join()
    history = e.value.history
    steps = history.summary["steps"]
    assert history.interrupted and steps >= 1
    assert f"stopped after step {steps} of 1000000" in str(e.value)
    assert scalelab.Model.load(tmp_path / "r" / "checkpoint.safetensors").step == steps
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Python's handler is back


def test_a_call_from_the_callback_is_refused(small_copy, tmp_path):
    cfg, _ = small_copy
    model = scalelab.Model.init(cfg, seed=1)
    tgt = np.array([[1, 4, 5]], dtype=np.int32)
    with pytest.raises(RuntimeError, match="from inside another scalelab call"):
        scalelab.train(cfg, steps=5, run_dir=tmp_path / "r", callback=lambda s, r: model.logits(tgt, tgt))
    assert model.logits(tgt, tgt).shape[:2] == (1, 3)  # and works after


def test_training_releases_the_gil(small_copy, tmp_path):
    cfg, _ = small_copy
    count = [0]
    done = threading.Event()

    def spin():
        while not done.is_set():
            count[0] += 1
    t = threading.Thread(target=spin)
    t.start()
    time.sleep(0.05)
    before = count[0]
    history = scalelab.train(cfg, steps=100, run_dir=tmp_path / "r")
    during = count[0] - before
    done.set()
    t.join()
    assert history.summary["steps"] == 100
    assert during > 10000, f"the other thread ran {during} iterations while train ran"
