"""scalelab.Model: a Transformer in memory, what ``scalelab logits``, ``gradients`` and ``init`` compute.

Arrays
------
Token ids (``src``, ``tgt``, ``target``) are 2-D ``[batch, length]`` arrays of int32, or of int64
whose values fit in int32 (converted, as the command line converts .npy files), C-contiguous.
Anything else is refused with a ``TypeError`` (dtype) or ``ValueError`` (shape, contiguity)
naming the argument; nothing is silently converted from floats or copied from a strided view.

Logits and gradients are returned as new arrays (copies): the model reuses its buffers on the
next call. ``state_dict()`` returns read-only zero-copy views of the weights that keep the model
alive; the weights of a Model never change after it is made, so a view stays valid.
``state_dict(copy=True)`` returns writable copies.
"""
from __future__ import annotations

import json
import os
from typing import Dict, NamedTuple, Optional, Union

import numpy as np

from . import _scalelab
from .config import Config, PathLike, as_config


def token_ids(name: str, value) -> np.ndarray:
    """``value`` as int32 C-contiguous [batch, length] token ids, or an error naming ``name``."""
    if isinstance(value, (list, tuple)):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name}: expected a numpy array of token ids, got {type(value).__name__}")
    if value.dtype not in (np.int32, np.int64):
        raise TypeError(f"{name}: dtype {value.dtype}; expected int32 or int64 token ids")
    if value.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array [batch, length], got shape {value.shape}")
    if value.shape[0] < 1 or value.shape[1] < 1:
        raise ValueError(f"{name}: shape {value.shape} is empty; expected [batch >= 1, length >= 1]")
    if not value.flags.c_contiguous:
        raise ValueError(f"{name}: not C-contiguous (a transposed or strided view); "
                         f"pass np.ascontiguousarray({name})")
    if value.dtype == np.int64:
        outside = np.flatnonzero((value < np.iinfo(np.int32).min) | (value > np.iinfo(np.int32).max))
        if outside.size:
            i = int(outside[0])
            raise ValueError(f"{name}: element {i} = {int(value.flat[i])} does not fit in int32")
        value = value.astype(np.int32)
    return value


def check_output_path(path: str, force: bool) -> None:
    """Refuses a non-regular file, an existing file (unless force) and a missing directory."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise FileExistsError(f"{path}: exists and is not a regular file")
    if os.path.exists(path) and not force:
        raise FileExistsError(f"{path}: file exists (pass force=True to overwrite)")
    directory = os.path.dirname(path)
    if directory and not os.path.isdir(directory):
        raise FileNotFoundError(f"{path}: no directory '{directory}' to write it in")


class Gradients(NamedTuple):
    """What ``Model.gradients`` returns: logits [batch, tgt_len, vocab], the loss (mean over
    non-pad target tokens) and every parameter's gradient by checkpoint name."""
    logits: np.ndarray
    loss: float
    grads: Dict[str, np.ndarray]


class Model:
    """A scalelab Transformer. Make one with ``Model.load(path)`` or ``Model.init(config, seed)``."""

    def __init__(self, native: "_scalelab.Model") -> None:
        self._native = native

    @classmethod
    def load(cls, path: PathLike) -> "Model":
        """Reads a checkpoint written by ``scalelab train``, ``init`` or ``Model.save``."""
        return cls(_scalelab.Model.load(os.fspath(path)))

    @classmethod
    def init(cls, config: Union[Config, dict, PathLike], seed: Optional[int] = None) -> "Model":
        """The model at initialisation, as ``scalelab init`` builds it; ``seed`` sets model.seed.

        Vocabulary sizes left at 0 are taken from the config's task (its data are loaded)."""
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise TypeError(f"seed: expected an int, got {type(seed).__name__}")
        return cls(_scalelab.Model.init(as_config(config)._tree_json(),
                                        None if seed is None else int(seed)))

    @property
    def config(self) -> Config:
        """The run config the model was made with (from the checkpoint's metadata)."""
        return Config(json.loads(self._native.run_config_json))

    @property
    def step(self) -> int:
        """The training step of the weights (0 at initialisation)."""
        return self._native.step

    @property
    def path(self) -> Optional[str]:
        """The checkpoint it was loaded from, or None."""
        return self._native.path or None

    @property
    def parameter_count(self) -> int:
        return self._native.parameter_count

    def logits(self, src, tgt) -> np.ndarray:
        """Logits [batch, tgt_len, tgt_vocab] (float32, a copy) for decoder inputs ``tgt``
        (starting with <bos> = 1) and, for an encoder-decoder model, sources ``src`` (0 = <pad>;
        None for a decoder-only model). Equal bit for bit to ``scalelab logits``."""
        tgt = token_ids("tgt", tgt)
        src = None if src is None else token_ids("src", src)
        return self._native.logits(src, tgt)

    def gradients(self, src, tgt, target, label_smoothing: float = 0.0) -> Gradients:
        """Logits, the label-smoothed cross-entropy against ``target`` (0 = <pad>, ignored) and
        every parameter's gradient, as ``scalelab gradients`` (no dropout). Copies."""
        tgt = token_ids("tgt", tgt)
        target = token_ids("target", target)
        src = None if src is None else token_ids("src", src)
        logits, loss, grads = self._native.gradients(src, tgt, target, float(label_smoothing))
        return Gradients(logits, loss, grads)

    def state_dict(self, copy: bool = False) -> Dict[str, np.ndarray]:
        """Every parameter by checkpoint name (docs/checkpoint.md): read-only views (default)
        or copies."""
        return self._native.state_dict(copy)

    def save(self, path: PathLike, force: bool = False) -> None:
        """Writes the weights, config and step as a checkpoint (.safetensors, written atomically).
        An existing file is replaced only with ``force=True``."""
        path = os.fspath(path)
        check_output_path(path, force)
        self._native.save(path)

    def __repr__(self) -> str:
        m = self.config.to_dict()["model"]
        return (f"Model(arch={m['arch']!r}, d_model={m['d_model']}, parameters={self.parameter_count}, "
                f"step={self.step}" + (f", path={self.path!r})" if self.path else ")"))
