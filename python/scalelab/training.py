"""scalelab.train: the training loop of ``scalelab train``, from Python.

The run is the command line's: the same config gives the same run directory (config, metrics.jsonl,
checkpoint, summary.json) and the same losses. It runs in the library with the GIL released;
``callback(step, record)`` is called on the calling thread's behalf for every metrics record
(every train.log_every steps, and every evaluation), so a notebook can plot while it trains.
"""
from __future__ import annotations

import json
import math
import os
import signal
import threading
from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np

from . import _scalelab
from .config import Config, PathLike, as_config

Callback = Callable[[int, Dict[str, Any]], Any]


def _flat_numbers(record: Dict[str, Any], prefix: str = "") -> Dict[str, float]:
    out: Dict[str, float] = {}
    for key, value in record.items():
        name = prefix + key
        if isinstance(value, dict):
            out.update(_flat_numbers(value, name + "."))
        elif isinstance(value, bool):
            out[name] = float(value)
        elif isinstance(value, (int, float)):
            out[name] = float(value)
        elif value is None:
            out[name] = math.nan  # non-finite numbers are written as null
    return out


def _columns(records: List[Dict[str, Any]]) -> Dict[str, np.ndarray]:
    rows = [_flat_numbers(r) for r in records]
    names: List[str] = []
    for row in rows:
        names.extend(n for n in row if n not in names)
    return {n: np.array([row.get(n, math.nan) for row in rows], dtype=np.float64) for n in names}


class History:
    """The records of a run.

    ``records``: every metrics record as a dict (the lines of metrics.jsonl, in order).
    ``train`` / ``valid``: one float64 numpy array per numeric field of that split's records
    (nested fields as "a.b"; a field missing from a record is NaN), e.g. ``h.train["loss"]``
    against ``h.train["step"]``. ``h["loss"]`` is ``h.train["loss"]``.
    ``summary``: steps, final_train_loss, valid (loss, nll, token_accuracy, exact_match), seconds,
    tokens_per_second, parameters, interrupted. ``run_dir``: where the run was written.
    """

    def __init__(self, records: List[Dict[str, Any]], summary: Dict[str, Any], run_dir: str) -> None:
        self.records = records
        self.summary = summary
        self.run_dir = run_dir
        self.train = _columns([r for r in records if r.get("split") == "train"])
        self.valid = _columns([r for r in records if r.get("split") == "valid"])

    @property
    def interrupted(self) -> bool:
        return bool(self.summary.get("interrupted"))

    def __getitem__(self, metric: str) -> np.ndarray:
        return self.train[metric]

    def __repr__(self) -> str:
        return (f"History(steps={self.summary.get('steps')}, train records={len(self.train.get('step', []))}, "
                f"valid records={len(self.valid.get('step', []))}, run_dir={self.run_dir!r})")


def train(config: Union[Config, dict, PathLike], steps: Optional[int] = None,
          callback: Optional[Callback] = None, *, resume: bool = False, run_dir: Optional[PathLike] = None,
          progress: bool = False) -> History:
    """Trains a model as ``scalelab train`` does and returns its History.

    ``steps`` and ``run_dir`` override train.steps and train.run_dir. ``callback(step, record)``
    gets every metrics record (``record["split"]`` is "train" or "valid"); an exception in it
    stops the run after the next step (the record comes after its step; the trainer finishes the
    following one, logs it and writes the checkpoint) and is then re-raised.
    ``resume=True`` continues from the run directory's checkpoint (``--resume``). ``progress``
    prints the command line's progress lines to the process's stderr.

    Ctrl-C (SIGINT, when called from the main thread with Python's default SIGINT handler) at any
    moment raises ``KeyboardInterrupt`` whose ``history`` attribute holds the run so far: during
    training it stops after the step in progress and writes the checkpoint, as the command line
    does; before the first step (loading the data, building the model) nothing is written; after
    the last step the run is complete. A Ctrl-C that arrives after ``train`` has returned to
    Python is Python's ordinary KeyboardInterrupt. Errors: ``ValueError`` for a bad config,
    ``FileExistsError`` for a run directory that already holds a run (without resume),
    ``FileNotFoundError`` for missing data, ``RuntimeError`` when training diverges.
    """
    cfg = as_config(config).copy()
    overrides: Dict[str, Any] = {}
    if steps is not None:
        overrides["train.steps"] = int(steps)
    if run_dir is not None:
        overrides["train.run_dir"] = os.fspath(run_dir)
    if overrides:
        cfg.set(overrides)
    records: List[Dict[str, Any]] = []
    failure: List[BaseException] = []

    def on_record(text: str) -> bool:
        record = json.loads(text)
        records.append(record)
        if callback is None or failure:
            return bool(failure)
        try:
            callback(int(record.get("step", 0)), record)
        except BaseException as e:  # noqa: B902 - KeyboardInterrupt in a callback stops the run too
            failure.append(e)
            return True
        return False

    # Ctrl-C is the trainer's to handle when Python would raise KeyboardInterrupt for it: a call
    # from the main thread while SIGINT has Python's default handler (a handler of the caller's
    # own keeps it; an ignored SIGINT stays ignored).
    handle_sigint = (threading.current_thread() is threading.main_thread()
                     and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    summary = json.loads(_scalelab.train(cfg._tree_json(), bool(resume), on_record, handle_sigint, bool(progress)))
    run_dir_path = cfg.get("train.run_dir")
    history = History(records, summary, run_dir_path)
    if failure:
        raise failure[0]
    if summary.get("stopped_by_signal"):
        path = os.path.join(run_dir_path, "checkpoint.safetensors")
        if not summary.get("started"):
            message = f"SIGINT before the first step: nothing was written to {run_dir_path}"
        elif summary.get("interrupted"):
            message = (f"SIGINT: stopped after step {summary['steps']} of {cfg.get('train.steps')}, checkpoint "
                       f"written to {path} (continue with resume=True)")
        else:
            message = (f"SIGINT after the last step: the run is complete ({summary['steps']} steps), checkpoint "
                       f"written to {path}")
        interrupt = KeyboardInterrupt(message)
        interrupt.history = history  # type: ignore[attr-defined]
        raise interrupt
    return history
