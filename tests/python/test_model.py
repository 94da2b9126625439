# scalelab.Model: logits, gradients and init equal to the command line's, bit for bit; arrays
# refused by name; views, copies and saving.
import threading

import numpy as np
import pytest
from conftest import read_safetensors

import scalelab

SRC = np.array([[4, 5, 6, 7, 0, 0], [5, 9, 4, 0, 0, 0], [6, 6, 6, 6, 6, 6]], dtype=np.int32)
TGT = np.array([[1, 4, 5, 6, 7], [1, 5, 9, 4, 2], [1, 6, 6, 6, 6]], dtype=np.int32)
TARGET = np.array([[4, 5, 6, 7, 2], [5, 9, 4, 2, 0], [6, 6, 6, 6, 6]], dtype=np.int32)


@pytest.fixture(scope="module")
def trained(cli, tmp_path_factory):
    """A checkpoint the command line trained for 3 steps, and the ids as .npy files."""
    from conftest import SMALL_COPY, SOURCE, set_args
    d = tmp_path_factory.mktemp("trained")
    cli("train", "-c", SOURCE / "configs" / "copy.toml", *set_args(SMALL_COPY), "--set", "train.steps=3",
        "--set", f"train.run_dir={d / 'run'}", "-q")
    for name, a in {"src": SRC, "tgt": TGT, "target": TARGET}.items():
        np.save(d / f"{name}.npy", a)
    return d


def test_logits_equal_the_command_lines_bit_for_bit(cli, trained):
    ckpt = trained / "run" / "checkpoint.safetensors"
    cli("logits", "--checkpoint", ckpt, "--source", trained / "src.npy", "--input", trained / "tgt.npy",
        "--out", trained / "logits.npy", "--force")
    expected = np.load(trained / "logits.npy")
    model = scalelab.Model.load(ckpt)
    assert model.step == 3 and model.path == str(ckpt)
    got = model.logits(SRC, TGT)
    assert got.dtype == np.float32 and got.shape == expected.shape == (3, 5, model.config.get("model.tgt_vocab"))
    assert np.array_equal(got, expected)
    assert np.array_equal(model.logits(SRC.astype(np.int64), TGT.astype(np.int64)), expected)


def test_gradients_equal_the_command_lines_bit_for_bit(cli, trained):
    ckpt = trained / "run" / "checkpoint.safetensors"
    out = trained / "grads.safetensors"
    cli("gradients", "--checkpoint", ckpt, "--source", trained / "src.npy", "--input", trained / "tgt.npy",
        "--target", trained / "target.npy", "--label-smoothing", "0.1", "--out", out, "--force")
    expected = read_safetensors(out)
    g = scalelab.Model.load(ckpt).gradients(SRC, TGT, TARGET, label_smoothing=0.1)
    assert np.array_equal(g.logits, expected["logits"])
    assert np.float32(g.loss) == expected["loss"][0]
    assert set("grad." + n for n in g.grads) == {k for k in expected if k.startswith("grad.")}
    for name, grad in g.grads.items():
        assert np.array_equal(grad, expected["grad." + name]), name
    assert any(np.abs(grad).max() > 0 for grad in g.grads.values())


def test_init_equals_the_command_lines_init(cli, small_copy, tmp_path):
    cfg, args = small_copy
    cli("init", *args, "--set", "model.seed=7", "--out", tmp_path / "init.safetensors")
    expected = read_safetensors(tmp_path / "init.safetensors")
    model = scalelab.Model.init(cfg, seed=7)
    assert model.step == 0 and model.path is None
    assert model.config.to_dict() == scalelab.Model.load(tmp_path / "init.safetensors").config.to_dict()
    weights = model.state_dict()
    assert set(weights) == {k for k in expected if k != "__metadata__"}
    for name, w in weights.items():
        assert np.array_equal(w, expected[name]), name
    other = scalelab.Model.init(cfg, seed=8).state_dict()
    assert any(not np.array_equal(other[n], weights[n]) for n in weights)  # the seed is used


def test_state_dict_views_copies_and_save(small_copy, tmp_path):
    cfg, _ = small_copy
    model = scalelab.Model.init(cfg, seed=3)
    views = model.state_dict()
    copies = model.state_dict(copy=True)
    name = next(iter(views))
    assert not views[name].flags.writeable and copies[name].flags.writeable
    with pytest.raises(ValueError):
        views[name][...] = 0
    copies[name][...] = 0  # a copy is the caller's
    assert not np.array_equal(views[name], copies[name])
    before = views[name].copy()
    model.save(tmp_path / "m.safetensors")
    del model  # the views keep the model alive
    assert np.array_equal(views[name], before)
    loaded = scalelab.Model.load(tmp_path / "m.safetensors")
    for n, w in loaded.state_dict().items():
        assert np.array_equal(w, views[n]), n
    with pytest.raises(FileExistsError, match=r"m.safetensors: file exists \(pass force=True"):
        loaded.save(tmp_path / "m.safetensors")
    loaded.save(tmp_path / "m.safetensors", force=True)
    with pytest.raises(FileNotFoundError, match="no directory"):
        loaded.save(tmp_path / "nodir" / "m.safetensors")


@pytest.mark.parametrize("args, error, message", [
    ((SRC, TGT.astype(np.float32)), TypeError, r"^tgt: dtype float32; expected int32 or int64"),
    ((SRC, TGT[0]), ValueError, r"^tgt: expected a 2-D array \[batch, length\], got shape \(5,\)"),
    ((np.asfortranarray(SRC), TGT), ValueError, r"^src: not C-contiguous"),
    ((SRC[:, ::2], TGT), ValueError, r"^src: not C-contiguous"),
    ((SRC, TGT[:0]), ValueError, r"^tgt: shape \(0, 5\) is empty"),
    ((SRC, np.array([[1, 2**32 + 5, 2]])), ValueError, r"^tgt: element 1 = 4294967301 does not fit in int32$"),
    ((None, TGT), ValueError, r"^src is required for an encoder-decoder model"),
    ((SRC[:2], TGT), ValueError, r"^src: expected shape \[3, length\]"),
    ((SRC, TGT + 1000), ValueError, r"token id 1001"),
    (("ids", TGT), TypeError, r"^src: expected a numpy array of token ids, got str"),
])
def test_bad_arrays_are_refused_naming_the_argument(small_copy, args, error, message):
    model = scalelab.Model.init(small_copy[0], seed=1)
    with pytest.raises(error, match=message):
        model.logits(*args)


def test_two_threads_at_once_get_the_serial_results(small_copy):
    model = scalelab.Model.init(small_copy[0], seed=1)
    expected = model.logits(SRC, TGT)
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append(model.logits(SRC, TGT))
        except BaseException as e:  # collected: an exception in a thread would pass unseen
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 40
    assert all(np.array_equal(r, expected) for r in results)
