"""``deployments/metrics_show.py``: what ``make demo`` prints at the end, every stage's metrics file."""

import json
from pathlib import Path

from tests.helpers import load_script

ROOT = Path(__file__).resolve().parents[2]


def _module():
    return load_script("deployments/metrics_show.py")


def test_foreach_stages_expand_over_a_params_reference(tmp_path, capsys):
    (tmp_path / "params.yaml").write_text("shield_ppo:\n  envs: [dubins, franka]\n")
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n"
        "  suite:\n    cmd: x\n    metrics:\n    - m/suite.json\n"
        "  ppo:\n    foreach: ${shield_ppo.envs}\n    do:\n      cmd: y ${item}\n      metrics:\n      - m/ppo_${item}.json\n"
        "  fixed:\n    foreach: [a]\n    do:\n      cmd: z\n      metrics:\n      - m/fixed_${item}.json:\n          cache: false\n")
    mod = _module()
    assert mod.metrics_files(tmp_path / "dvc.yaml") == [Path("m/suite.json"), Path("m/ppo_dubins.json"),
                                                       Path("m/ppo_franka.json"), Path("m/fixed_a.json")]
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "ppo_dubins.json").write_text(json.dumps({"sr": 0.125, "nested": {"n": 3}, "name": "x"}))
    assert mod.main([str(tmp_path / "dvc.yaml")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "m/ppo_dubins.json  sr  0.125" in out and "m/ppo_dubins.json  nested.n  3" in out
    assert "m/suite.json  (not written yet)" in out


def test_the_repository_pipeline_lists_one_metrics_file_per_shield_env():
    import yaml

    files = _module().metrics_files(ROOT / "dvc.yaml")
    envs = yaml.safe_load((ROOT / "params.yaml").read_text())["shield_ppo"]["envs"]
    assert [f for f in files if f.name.startswith("ppo_metrics_")] == [Path(f"data/shield/ppo_metrics_{e}.json") for e in envs]
