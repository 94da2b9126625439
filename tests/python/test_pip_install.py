# Opt-in (it builds the whole engine a second time, minutes on 2 cores; scripts/test.sh does not
# run it): `pip install .` from the repository root into a fresh venv, then import and use it.
#   SCALELAB_TEST_PIP_INSTALL=1 ctest --test-dir build -R python_test_pip_install --output-on-failure
import os
import subprocess
import sys

import pytest
from conftest import SOURCE

pytestmark = pytest.mark.skipif(os.environ.get("SCALELAB_TEST_PIP_INSTALL") != "1",
                                reason="opt-in: set SCALELAB_TEST_PIP_INSTALL=1 (builds the engine again)")


def test_pip_install_into_a_fresh_venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # not the build's module
    subprocess.run([python, "-m", "pip", "install", "-q", str(SOURCE)], check=True, env=env)
    script = (
        "import scalelab, numpy as np\n"
        "m = scalelab.Model.init(scalelab.Config('%s').set({'model.d_model': 32, 'data.train_size': 50,"
        " 'data.valid_size': 10}), seed=1)\n"
        "print(scalelab.__version__, scalelab.__file__, m.logits(np.array([[4, 5]]), np.array([[1, 4]])).shape)\n"
        % (SOURCE / "configs" / "copy.toml"))
    out = subprocess.run([python, "-c", script], check=True, env=env, cwd=tmp_path, capture_output=True,
                         text=True).stdout.split()
    assert out[0] == "0.1.0" and out[1].startswith(str(venv)) and out[2:4] == ["(1,", "2,"], out
