"""`make verify` (deployments/verify_metrics.py): a run's metrics files against the committed ones, within a tolerance."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import load_script


@pytest.fixture()
def verify(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "deployments"))  # it imports its sibling metrics_show
    return load_script("deployments/verify_metrics.py")


def _repo(tmp_path: Path, files: dict[str, dict]) -> Path:
    stages = {f"s{i}": {"cmd": "true", "metrics": [{path: {"cache": False}}]} for i, path in enumerate(files)}
    (tmp_path / "dvc.yaml").write_text(json.dumps({"stages": stages}))
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(json.dumps(data, indent=1))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "lock"], check=True)
    return tmp_path


def test_same_within_and_beyond_the_tolerance_are_told_apart(verify, tmp_path, capsys):
    root = _repo(tmp_path, {"a_metrics.json": {"test": {"sr": 0.80, "n": 72}, "label": "demo"},
                            "b/metrics.json": {"sr": 0.50, "pairs": 475, "curve": [0.1, 0.2]},
                            "c.json": {"ssr": 0.25}})
    (root / "a_metrics.json").write_text(json.dumps({"test": {"sr": 0.83, "n": 72}, "label": "demo"}))  # |0.03| <= 0.05 + 0.08
    (root / "b/metrics.json").write_text(json.dumps({"sr": 0.70, "pairs": 475, "curve": [0.1, 0.2], "extra": 1}))
    assert verify.main(["--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "within tolerance  a_metrics.json  (1 numbers differ, max |diff| 0.03)" in out
    assert "DIFFERS           b/metrics.json  (2 of 2 changed values beyond tolerance)" in out
    assert "    sr: committed 0.5, run 0.7" in out and "    extra: committed (absent), run 1" in out
    assert "same              c.json" in out
    assert "3 metrics files against HEAD (atol 0.05, rtol 0.1): 1 same, 1 within tolerance, 1 beyond it or missing" in out
    # a looser tolerance accepts the moved rate, never the new key
    reports = {r.path: r for r in verify.verify(root, atol=0.3)}
    assert [k for k, _, _ in reports["b/metrics.json"].beyond] == ["extra"]


def test_a_string_change_and_a_missing_file_fail(verify, tmp_path, capsys):
    root = _repo(tmp_path, {"a.json": {"scale": "demo", "sr": 1.0}, "b.json": {"sr": 0.5}})
    (root / "a.json").write_text(json.dumps({"scale": "study", "sr": 1.0}))
    (root / "b.json").unlink()
    assert verify.main(["--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert 'scale: committed "demo", run "study"' in out
    assert "MISSING           b.json  (not in the run)" in out


def test_an_unchanged_run_passes(verify, tmp_path, capsys):
    root = _repo(tmp_path, {"a.json": {"sr": 0.5}})
    assert verify.main(["--root", str(root)]) == 0
    assert "1 same, 0 within tolerance, 0 beyond it or missing" in capsys.readouterr().out
