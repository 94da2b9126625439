# examples/why_sqrt_d.ipynb executes (nbclient, the venv's ipykernel) in under 2 minutes.
import os
import time

import nbformat
from conftest import SOURCE
from nbclient import NotebookClient


def test_the_notebook_executes_in_under_two_minutes(tmp_path):
    nb = nbformat.read(SOURCE / "examples" / "why_sqrt_d.ipynb", as_version=4)
    start = time.monotonic()
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    seconds = time.monotonic() - start
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 2  # the two plots
    text = "".join(o.get("text", "") for o in outputs)
    for claim in ("E3:", "E4:", "A4:"):
        assert claim in text
    assert (tmp_path / "why-sqrt-d-ledger" / "claims" / "A4.json").is_file()
    assert seconds < 120, f"the notebook took {seconds:.0f} s"
    print(f"executed in {seconds:.1f} s")
