"""scalelab.Config: a run's configuration ([model], [data], [train]), as the command line reads it.

A Config is built from a TOML file, a preset, a dict, or any of them layered (preset beneath the
file or dict, overrides on top), exactly as ``scalelab train --preset P --config F --set k=v``
layers them, and it is validated on every change: a bad value raises ``ValueError`` with the
command line's one-line message (``config: train.lr = inf: must be a finite number``).
"""
from __future__ import annotations

import json
import math
import os
from typing import Any, Mapping, Optional, Union

from . import _scalelab

PathLike = Union[str, "os.PathLike[str]"]


def toml_value(value: Any) -> str:
    """A Python value as the TOML text of ``--set key=<text>`` (bool, int, float, str, list)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"config value {value!r}: expected bool, int, float, str or a list of them")


def _assignments(values: Mapping, prefix: str = "") -> list:
    """``--set`` assignments "section.key=<TOML>" for a mapping of dotted keys or nested sections."""
    out = []
    for key, value in values.items():
        if isinstance(value, Mapping):
            out += _assignments(value, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}={toml_value(value)}")
    return out


class Config:
    """A validated run configuration.

    Examples::

        cfg = scalelab.Config("configs/copy.toml")                 # a TOML file
        cfg = scalelab.Config(preset="t5")                          # a preset's [model]
        cfg = scalelab.Config({"model": {"d_model": 64}}, preset="t5")
        cfg.set("model.d_model", 128).set("train.steps", 200)
        cfg.set({"model.d_model": 96, "model.n_heads": 4})          # several keys, validated together
        cfg.to_dict()["model"]["d_model"]                           # resolved: every default filled in

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` (the CLI's message) for a
    bad key or value; a failed ``set`` leaves the Config as it was.
    """

    def __init__(self, source: Union[PathLike, Mapping, None] = None, *, preset: Optional[str] = None,
                 set: Optional[Mapping[str, Any]] = None) -> None:
        path = ""
        assignments: list = []
        if isinstance(source, Mapping):
            if preset is None and isinstance(source.get("preset"), str):
                preset = source["preset"]  # as a file's top-level preset = "..." key
            assignments = _assignments({k: v for k, v in source.items() if k != "preset"})
        elif source is not None:
            path = os.fspath(source)
            if not os.path.exists(path):
                raise FileNotFoundError(f"config: {path}: no such file")
        if set:
            assignments += _assignments(set)
        self._tree: dict = json.loads(_scalelab.build_config(path, preset or "", assignments))
        self._resolved: dict = self._resolve(self._tree)

    @staticmethod
    def _resolve(tree: Mapping) -> dict:
        return json.loads(_scalelab.resolve_config(json.dumps(tree)))

    @classmethod
    def from_file(cls, path: PathLike) -> "Config":
        """The config of a TOML file (configs/*.toml)."""
        return cls(path)

    @classmethod
    def from_preset(cls, name: str) -> "Config":
        """A preset's [model] with every other value at its default (see ``scalelab.presets()``)."""
        return cls(preset=name)

    @classmethod
    def from_dict(cls, tree: Mapping) -> "Config":
        """A config from a nested dict {"model": {...}, "data": {...}, "train": {...}}."""
        return cls(tree)

    def set(self, key: Union[str, Mapping[str, Any]], value: Any = None) -> "Config":
        """Sets ``section.key`` to ``value`` (as ``--set section.key=value``) and returns self.

        A mapping of keys to values sets them all, then validates once. On an error nothing
        changes.
        """
        updates = _assignments(key if isinstance(key, Mapping) else {key: value})
        tree = json.loads(_scalelab.set_values(json.dumps(self._tree), updates))
        self._tree, self._resolved = tree, self._resolve(tree)
        return self

    def get(self, key: str) -> Any:
        """The resolved value of ``section.key`` (e.g. "model.d_model")."""
        node: Any = self._resolved
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                raise KeyError(key)
            node = node[part]
        return node

    def to_dict(self) -> dict:
        """The resolved config (every default filled in), as the run directory's config.json."""
        return json.loads(json.dumps(self._resolved))

    def to_toml(self) -> str:
        """The resolved config as TOML, as the run directory's config.toml."""
        return _scalelab.config_to_toml(json.dumps(self._tree))

    def copy(self) -> "Config":
        """An independent copy."""
        other = Config.__new__(Config)
        other._tree, other._resolved = json.loads(json.dumps(self._tree)), json.loads(json.dumps(self._resolved))
        return other

    def _tree_json(self) -> str:
        return json.dumps(self._tree)

    def __repr__(self) -> str:
        m = self._resolved.get("model", {})
        return (f"Config(task={self._resolved.get('data', {}).get('task')!r}, d_model={m.get('d_model')}, "
                f"n_heads={m.get('n_heads')}, steps={self._resolved.get('train', {}).get('steps')})")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._resolved == other._resolved


def presets() -> list:
    """Every preset: dicts with name, summary and source (``scalelab presets``)."""
    return [{"name": n, "summary": s, "source": src} for n, s, src in _scalelab.presets()]


def as_config(config: Union[Config, Mapping, PathLike]) -> Config:
    """A Config from a Config, a dict or a TOML path (the argument of train, probe, Model.init)."""
    return config if isinstance(config, Config) else Config(config)
