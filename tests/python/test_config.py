# scalelab.Config: the command line's config layers and messages.
import math

import pytest

import scalelab


def test_version_matches_the_command_line(cli):
    assert cli("--version").stdout.strip() == f"scalelab {scalelab.__version__}"


def test_file_set_get_and_toml_round_trip(source, tmp_path):
    cfg = scalelab.Config(source / "configs" / "copy.toml")
    assert cfg.get("model.d_model") == 64 and cfg.get("train.steps") == 1500
    assert cfg.set("model.d_model", 128) is cfg
    assert cfg.get("model.d_model") == 128 and cfg.to_dict()["model"]["d_model"] == 128
    cfg.set({"model.d_model": 96, "model.n_heads": 4, "train.lr": 1e-3, "model.norm": "post"})
    (tmp_path / "c.toml").write_text(cfg.to_toml())
    again = scalelab.Config(tmp_path / "c.toml")
    assert again.to_dict() == cfg.to_dict() and again.get("model.norm") == "post"
    assert again.to_dict()["train"]["lr"] == 1e-3


def test_preset_and_dict_layers():
    base = scalelab.Config()
    t5 = scalelab.Config(preset="t5")
    assert t5.to_dict()["model"] != base.to_dict()["model"]
    assert t5.to_dict()["preset"] == "t5"
    layered = scalelab.Config({"model": {"d_model": 96, "n_heads": 4}}, preset="t5")
    expected = dict(t5.to_dict()["model"], d_model=96, n_heads=4)
    assert layered.to_dict()["model"] == expected
    assert {p["name"] for p in scalelab.presets()} >= {"vaswani2017", "t5", "gemma"}


@pytest.mark.parametrize("key, value, message", [
    ("train.lr", math.inf, "config: train.lr = inf: must be a finite number"),
    ("train.lr", math.nan, "config: train.lr = nan: must be a finite number"),
    ("model.d_model", 1e18, "config: model.d_model = 1e+18: expected an integer within +-2^53"),
    ("train.batch_size", 4294967296, "config: train.batch_size = 4294967296: must be <= 1048576"),
])
def test_bad_value_is_the_command_lines_line_and_changes_nothing(small_copy, key, value, message):
    cfg, _ = small_copy
    before = cfg.to_dict()
    with pytest.raises(ValueError) as e:
        cfg.set(key, value)
    assert str(e.value) == message
    assert cfg.to_dict() == before


def test_unknown_key_preset_and_file():
    with pytest.raises(ValueError, match="model.d_modle"):
        scalelab.Config({"model": {"d_modle": 64}})
    with pytest.raises(ValueError, match="nosuchpreset.*vaswani2017"):
        scalelab.Config(preset="nosuchpreset")
    with pytest.raises(FileNotFoundError, match="nosuch.toml: no such file"):
        scalelab.Config("nosuch.toml")
    with pytest.raises(TypeError, match="config value"):
        scalelab.Config().set("model.d_model", object())


def test_info():
    i = scalelab.info()
    assert i["version"] == scalelab.__version__
    assert i["threads"] >= 1 and i["simd_target"] in i["simd_targets"] and i["gemm_backend"]
