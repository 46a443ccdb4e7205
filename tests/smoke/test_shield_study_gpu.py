"""benchmarks/shield_study_gpu.py --tiny: the ShieldVLA study's Dubins-VL runs (PPO-Lagrangian, gated HJ with the
rubric-search and the ground-truth critic, one extra δ of the rubric run) at a tiny budget on CPU, from stand-in
inputs the script builds (an untrained policy, a few of its rollouts, fixed Platt scalars), so no DVC output is
needed."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


def test_tiny_study_writes_real_rows_and_a_table(tmp_path):
    import shield_study_gpu as script

    from embodied_safety.shield.rl import report as rep

    out = tmp_path / "out"
    results = script.main(["--tiny", "--build-inputs", "--out", str(out), "--time-budget", "1e9"])
    rows = results["rows"]
    (swept,) = script.TINY["delta_sweep"]
    own = next(r["delta"] for r in rows if r["run"] == script.SWEEP_RUN and r["delta_default"])
    assert own != swept
    assert [(r["run"], r["seed"], r["delta_default"]) for r in rows] == [
        *[(run, 0, True) for run in script.RUNS], (script.SWEEP_RUN, 0, False)]
    assert rows[-1]["delta"] == swept
    assert results["meta"]["device"] == "cpu" and results["meta"]["planned"] == 4
    assert results["meta"]["budget"] == "cpu" and results["meta"]["delta_sweep"] == [swept]
    for r in rows:
        assert r["device"] == "cpu" and r["steps"] == r["target_steps"] == script.TINY["total_steps"]
        assert not r["stopped_by_time_budget"] and r["steps_per_s"] > 0 and r["train_seconds"] > 0
        ev = r["eval"]["in"]
        assert ev["episodes"] == script.TINY["eval_episodes"]
        assert 0.0 <= ev["sr"] <= ev["reach_rate"] <= 1.0 and 0.0 <= ev["violation_rate"] <= 1.0
        assert ev["csc"] >= 0.0 and math.isfinite(ev["mean_return"])
        run_dir = out / "runs" / (f"{r['run']}-seed0" if r["delta_default"] else f"{r['run']}-delta{swept:g}-seed0")
        assert (run_dir / "policy" / "model.safetensors").is_file()
        assert (run_dir / "critic").is_dir() == (r["method"] == "gated")
        stored = json.loads((run_dir / "result.json").read_text())  # the stage's own run format (train_and_store)
        assert stored["history"][-1]["env_steps"] == r["steps"] and stored["eval"] == r["eval"]
        # validated checkpoints after every iteration (--tiny): the chosen one among them, read on the test episodes
        assert [p["iteration"] for p in r["selected"]["curve"]] == [1.0, 2.0]
        assert r["selected"]["eval"]["in"]["episodes"] == script.TINY["eval_episodes"]
    assert {r["margin"] for r in rows} == {"rubric", "gt"}
    # the two distilled critics: rubric-search labels and the simulator's exact action values
    assert sorted(p.name for p in (out / "critics").iterdir()) == ["gt-policy_mean-distill",
                                                                   "rubric-policy_mean-distill"]
    assert json.loads((out / "results.json").read_text()) == results

    table = (out / "table.md").read_text()
    assert "Validated checkpoints" in table
    assert "4 of 4 runs finished" in table and "δ sweep" in table and f"δ={swept:g}" in table
    for run in script.RUNS:
        assert rep.LABELS[run] in table
    assert all(f"| {r['run']} | {r['delta']:g} | 0 | {r['steps']:,} |" in table for r in rows)

    # a re-run with the same settings reuses the stored runs; a time budget of ~0 stops after one iteration
    again = script.main(["--tiny", "--out", str(out), "--time-budget", "1e9", "--runs", "ppo_lag", "--delta-sweep",
                         "--bc", str(out / "inputs" / "bc"), "--rollouts", str(out / "inputs" / "rollouts.npz"),
                         "--calibration", str(out / "inputs" / "calibration")])
    assert again["rows"][0]["train_seconds"] == rows[0]["train_seconds"]
    short = script.main(["--tiny", "--build-inputs", "--out", str(tmp_path / "short"), "--time-budget", "0",
                         "--runs", "ppo_lag", "--delta-sweep", "--num-envs", "2"])
    (row,) = short["rows"]
    assert row["steps"] == 2 * 64 and row["stopped_by_time_budget"] and row["iterations"] == 1
    assert [p["iteration"] for p in row["selected"]["curve"]] == [1.0]  # the iterate the time budget stopped at

    # a warm critic built elsewhere (--critic): used as it is, none built
    warm = out / "critics" / "rubric-policy_mean-distill"
    given = script.main(["--tiny", "--build-inputs", "--out", str(tmp_path / "given"), "--runs", "gated_search",
                         "--delta-sweep", "--critic", f"rubric/policy_mean/distill={warm}"])
    assert [r["run"] for r in given["rows"]] == ["gated_search"] and not (tmp_path / "given" / "critics").exists()
    with pytest.raises(SystemExit, match="no critic.json"):
        script.main(["--tiny", "--build-inputs", "--out", str(tmp_path / "none"), "--critic", f"x/y={tmp_path}"])
