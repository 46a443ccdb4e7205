"""Two runs of a stage with identical inputs write byte-identical output trees (no git SHA, run id, timestamp or
absolute path in a hashed output), through the stage envelope."""

import json
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

TINY = {"household_suite": {"per_template": 6, "n_dev": 1, "n_test": 1, "behavior_coverage": False}}


def tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run_once(workdir, params, monkeypatch):
    from flows.evaluate_policy import evaluate_policy
    from flows.household_suite import STAGE

    workdir.mkdir()
    monkeypatch.chdir(workdir)
    STAGE.main(["--params", str(params), "--out", "data/household"])
    evaluate_policy(Path("data/household/splits/test"), "golden_unsafe", Path("eval"))
    return tree(workdir)


def test_two_runs_with_identical_inputs_write_identical_bytes(prefect_harness, tmp_path, monkeypatch):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(TINY))
    first = run_once(tmp_path / "a", params, monkeypatch)
    second = run_once(tmp_path / "b", params, monkeypatch)
    assert "data/household/splits/manifest.json" in first and "eval/metrics.json" in first
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []
    manifest = json.loads(first["data/household/splits/manifest.json"])
    assert "git_sha" not in manifest and manifest["code"]["modules"] == ["flows.household_suite"]
    assert len(manifest["code"]["key"]) == 20
    inputs = json.loads(first["eval/manifest.json"])["inputs"]
    assert list(inputs) == ["data/household/splits/test"]  # named relative to the working directory
    assert str(tmp_path) not in b"".join(first.values()).decode(errors="replace")
