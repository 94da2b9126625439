"""scalelab.check, scalelab.report and scalelab.probe: the claims ledger, its report and the probes.

``check`` is ``scalelab check`` (docs/ledger.md): it runs the selected claims' experiments (from
the cache in ``out/cache`` when possible), writes ``out/ledger.json``, ``out/claims/<ID>.json``,
``out/summary.md`` and, unless ``report=False``, ``out/report.html``, and returns the claim
records. ``probe`` is ``scalelab probe`` (docs/probes.md) returning its records.
"""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import _scalelab
from .config import Config, PathLike, as_config
from .model import Model


class CheckResult:
    """What ``check`` returns.

    ``claims``: the full claim records (the content of ``out/claims/<ID>.json``: id, verdict,
    condition, criterion, measurements, ...) in ledger order. ``ledger``: the content of
    ``out/ledger.json``. ``runs`` / ``cached_runs``: runs needed and taken from the cache;
    ``seconds``; ``out``; ``report_html``: the report's path ("" with report=False).
    """

    def __init__(self, ledger: Dict[str, Any], claims: List[Dict[str, Any]], runs: int, cached_runs: int,
                 seconds: float, out: str, report_html: str) -> None:
        self.ledger, self.claims = ledger, claims
        self.runs, self.cached_runs, self.seconds = runs, cached_runs, seconds
        self.out, self.report_html = out, report_html

    def verdicts(self) -> Dict[str, str]:
        """{claim ID: verdict (with its condition)}."""
        return {c["id"]: (c["verdict"] + (" " + c["condition"] if c.get("condition") else ""))
                for c in self.claims}

    def __getitem__(self, claim_id: str) -> Dict[str, Any]:
        for c in self.claims:
            if c["id"] == claim_id.upper():
                return c
        raise KeyError(claim_id)

    def __iter__(self):
        return iter(self.claims)

    def __len__(self) -> int:
        return len(self.claims)

    def __repr__(self) -> str:
        return f"CheckResult({', '.join(f'{k}: {v}' for k, v in self.verdicts().items())})"


_RUN_LINE = re.compile(r"^\[check\] .*: run (\d+) of (\d+),")


def _progress_handler(progress: Union[bool, Callable[[str], Any]]) -> Optional[Callable[[str], Any]]:
    """None (silent), the caller's line handler, a tqdm bar (when tqdm is installed) or lines to
    sys.stderr (which a notebook shows)."""
    if not progress:
        return None
    if callable(progress):
        return progress
    try:
        from tqdm.auto import tqdm  # optional
    except ImportError:
        return lambda line: print(line, file=sys.stderr, flush=True)
    bar: List[Any] = []

    def on_line(line: str) -> None:
        m = _RUN_LINE.match(line)
        if not m:
            (bar[0].write(line) if bar else print(line, file=sys.stderr, flush=True))
            return
        done, total = int(m.group(1)), int(m.group(2))
        if not bar:
            bar.append(tqdm(total=total, desc="scalelab check", unit="run"))
        bar[0].update(done - bar[0].n)
        bar[0].set_postfix_str(line.split("] ", 1)[1].split(":")[0])
        if done == total:
            bar[0].close()
    return on_line


def check(quick: bool = False, only: Optional[Sequence[str]] = None, out: PathLike = "scalelab-report",
          jobs: int = 0, seeds: int = 0, progress: Union[bool, Callable[[str], Any]] = True, *,
          report: bool = True, gnuplot: str = "gnuplot") -> CheckResult:
    """Runs the claims ledger, as ``scalelab check [--quick] [--only ...] --out OUT``.

    ``only``: claim IDs, e.g. ["E3", "A4"] (None: all 29); ``jobs``: runs side by side (0: one per
    core); ``seeds``: training seeds (0: 3). ``progress``: True shows a tqdm bar when tqdm is
    installed, else the progress lines on sys.stderr; False is silent; a callable gets each line.
    ``report=False`` skips report.html (as ``--no-report``). Raises ``ValueError`` for an unknown
    claim ID or a bad option, ``FileExistsError`` when ``out`` holds something other than a ledger.
    """
    if isinstance(only, str):
        only = [only]
    out = os.fspath(out)
    ledger_json, runs, cached, seconds, html = _scalelab.check(
        bool(quick), None if only is None else [str(i) for i in only], out, int(jobs), int(seeds),
        _progress_handler(progress), bool(report), gnuplot)
    ledger = json.loads(ledger_json)
    claims = []
    for summary in ledger["claims"]:
        with open(os.path.join(out, "claims", summary["id"] + ".json"), encoding="utf-8") as f:
            claims.append(json.load(f))
    return CheckResult(ledger, claims, runs, cached, seconds, out, html)


def report(dir: PathLike, gnuplot: str = "gnuplot") -> Dict[str, Any]:
    """Writes DIR/report.html and DIR/report.md from a ``check`` directory (``scalelab report``).

    Returns html_path, markdown_path, claims, plots_drawn, plots_failed, gnuplot_found."""
    dir = os.fspath(dir)
    if not os.path.isdir(dir):
        raise FileNotFoundError(f"{dir}: no such directory (expected the out directory of a check)")
    return _scalelab.report(dir, gnuplot)


def probe(source: Union[Config, Model, dict, PathLike], seeds: int = 3, precision: Optional[str] = None, *,
          batches: int = 2, batch_size: int = 0, split: str = "valid", per_head: bool = True,
          optimizer_step: bool = True, as_frame: bool = False):
    """The probe records of ``scalelab probe`` (docs/probes.md): models at initialisation with
    model.seed, model.seed + 1, ... (``seeds`` of them) run on the first ``batches`` batches of
    ``split``, every probe observing, one optimiser step for the update/parameter ratio.

    ``source``: a Config (or dict, or TOML path), or a Model: a loaded Model is probed at its
    checkpoint's step (one model), an initialised one as its config at its seed (one model, the
    same weights). ``precision``: "f16" or "bf16" also replays each op in that format and counts
    overflows. Returns a list of dicts (probe, stack, layer, site, head, seed, step, values, ...),
    or with ``as_frame=True`` a pandas DataFrame with one column per value ("values.<name>").
    """
    checkpoint = ""
    if isinstance(source, Model):
        if source.path:
            checkpoint, tree_json, seeds = source.path, "", 1
        else:
            tree_json, seeds = source.config._tree_json(), 1
    else:
        tree_json = as_config(source)._tree_json()
    records = json.loads(_scalelab.probe(tree_json, checkpoint, int(seeds), int(batches), int(batch_size),
                                         split, precision or "", bool(per_head), bool(optimizer_step)))
    if not as_frame:
        return records
    try:
        import pandas as pd
    except ImportError as e:
        raise ImportError("probe(as_frame=True) needs pandas (pip install pandas); "
                          "without it probe returns a list of dicts") from e
    return pd.json_normalize(records)
