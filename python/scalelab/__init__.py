"""scalelab from Python: the engine, the probes and the claims ledger (docs/python.md).

    import scalelab
    cfg = scalelab.Config("configs/copy.toml").set("model.d_model", 64)
    history = scalelab.train(cfg, steps=200, callback=lambda step, rec: print(step, rec.get("loss")))
    model = scalelab.Model.load(history.run_dir + "/checkpoint.safetensors")
    ledger = scalelab.check(quick=True, only=["E3", "A4"], out="my-ledger")

Errors are the command line's one-line messages, raised as ValueError (bad config or argument),
FileNotFoundError, FileExistsError or RuntimeError (training diverged; a call from inside a
train() callback).
"""
from . import _scalelab
from .config import Config, presets
from .ledger import CheckResult, check, probe, report
from .model import Gradients, Model
from .training import History, train

__version__: str = _scalelab.__version__


def info() -> dict:
    """Version, CPU model and features, SIMD target, GEMM backend, threads, MPI (``scalelab info``)."""
    return _scalelab.info()


__all__ = ["Config", "presets", "Model", "Gradients", "train", "History", "check", "CheckResult", "probe",
           "report", "info", "__version__"]
