# scalelab.probe and scalelab.report: the command line's records and files.
import json

import pytest

import scalelab


def test_probe_records_equal_the_command_lines(cli, small_copy, tmp_path):
    cfg, args = small_copy
    cli("probe", *args, "--seeds", "2", "--out", tmp_path / "p")
    expected = [json.loads(line) for line in (tmp_path / "p" / "probes.jsonl").read_text().splitlines()]
    records = scalelab.probe(cfg, seeds=2)
    assert records == expected
    assert {r["seed"] for r in records} == {1, 2} and {"attn_softmax", "loss"} <= {r["probe"] for r in records}


def test_probe_of_a_model(cli, small_copy, tmp_path):
    cfg, args = small_copy
    cli("train", *args, "--set", "train.steps=2", "--set", f"train.run_dir={tmp_path / 'r'}", "-q")
    ckpt = tmp_path / "r" / "checkpoint.safetensors"
    cli("probe", "--checkpoint", ckpt, "--precision", "f16", "--out", tmp_path / "p")
    expected = [json.loads(line) for line in (tmp_path / "p" / "probes.jsonl").read_text().splitlines()]
    assert scalelab.probe(scalelab.Model.load(ckpt), precision="f16") == expected
    at_init = scalelab.probe(scalelab.Model.init(cfg, seed=5))
    assert at_init == scalelab.probe(scalelab.Config(cfg.to_dict()).set("model.seed", 5), seeds=1)


def test_probe_bad_arguments(small_copy):
    cfg, _ = small_copy
    with pytest.raises(ValueError, match="^seeds = 0: must be in 1..1000$"):
        scalelab.probe(cfg, seeds=0)
    with pytest.raises(ValueError, match="precision = f8"):
        scalelab.probe(cfg, precision="f8")
    with pytest.raises(ValueError, match="split"):
        scalelab.probe(cfg, split="nosuch")


def test_report_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such directory"):
        scalelab.report(tmp_path / "none")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="ledger"):
        scalelab.report(tmp_path / "empty")
