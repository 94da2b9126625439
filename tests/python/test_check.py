# scalelab.check: the claims ledger from Python equals the command line's (timing aside).
import json

import pytest

import scalelab


def without_timing(value):
    """The record with every field that measures time removed (at any depth)."""
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items()
                if k not in ("seconds", "elapsed", "date", "finished", "started") and not k.endswith("_seconds")}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def test_quick_e3_a4_equals_the_command_lines_claims(cli, tmp_path):
    cli("check", "--quick", "--only", "E3,A4", "--out", tmp_path / "cli", "--jobs", "2", "--no-report", "-q")
    lines = []
    result = scalelab.check(quick=True, only=["E3", "a4"], out=tmp_path / "py", jobs=2, progress=lines.append,
                            report=True)
    assert [c["id"] for c in result.claims] == ["E3", "A4"]
    for claim in result.claims:
        expected = json.loads((tmp_path / "cli" / "claims" / f"{claim['id']}.json").read_text())
        assert without_timing(claim) == without_timing(expected), claim["id"]
        assert claim["provisional"] is True and claim["verdict"]
    assert result.runs > 0 and result.cached_runs == 0
    assert any(line.startswith("[check] ") for line in lines)
    assert result.report_html.endswith("report.html") and (tmp_path / "py" / "report.html").is_file()
    assert set(result.verdicts()) == {"E3", "A4"} and result["e3"]["id"] == "E3"
    again = scalelab.check(quick=True, only=["E3", "A4"], out=tmp_path / "py", progress=False, report=False)
    assert again.cached_runs == again.runs and [without_timing(c) for c in again] == [
        without_timing(c) for c in result]
    r = scalelab.report(tmp_path / "py")
    assert r["claims"] == 2 and r["html_path"].endswith("report.html")


@pytest.mark.parametrize("only, message", [(["Z9"], "Z9"), ([], "")])
def test_bad_claim_ids(tmp_path, only, message):
    with pytest.raises(ValueError, match=message):
        scalelab.check(quick=True, only=only, out=tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()
