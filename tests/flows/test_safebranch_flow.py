"""The safebranch stage end to end on the tiny suite: every variant trained, tracked, registered and promoted."""

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from embodied_safety.config.rollouts import RolloutsConfig

pytestmark = pytest.mark.slow


def test_safebranch_stage_trains_every_variant_tracks_registers_and_promotes(tiny_actor, small_suite, tmp_path,
                                                                            monkeypatch):
    """rollouts -> branches -> safebranch on the tiny suite. The rollout/branch actor is the scripted
    golden-without-safety-steps policy (it obeys critic cues), so pairs, corrected safe episodes and
    unsafe successes all exist; training uses the tiny bootstrap model for two steps per phase."""
    import tasks.actors
    import tasks.branches
    from embodied_safety.config.branches import BranchesConfig
    from embodied_safety.config.promote import PromoteConfig
    from embodied_safety.config.safebranch import SafeBranchConfig
    from embodied_safety.envs.household.env import load_task_dir
    from flows.branches import branches
    from flows.promote import show
    from flows.rollouts import rollouts
    from flows.safebranch import safebranch
    from tests.helpers import GoldenUnsafeActor

    scripted = GoldenUnsafeActor(load_task_dir(small_suite / "train")[0])
    monkeypatch.setattr(tasks.actors, "cached_actor", lambda cfg: scripted)
    monkeypatch.setattr(tasks.branches, "cached_actor", lambda cfg: scripted)
    root, _, _ = tiny_actor
    model = str(root / "bootstrap_actor" / "model")
    rollouts(RolloutsConfig(temperatures=(0.0,), max_steps=12, actor={"model": model}), small_suite, tmp_path / "rollouts",
             tmp_path / "rollouts_metrics.json")
    stats = branches(BranchesConfig(temperatures=(0.0,), actor={"model": model}), small_suite, tmp_path / "rollouts",
                     tmp_path / "branches")
    assert stats["data/pairs_final"] > 0
    track = {"tracking_uri": f"sqlite:///{tmp_path}/mlflow.db", "artifact_root": str(tmp_path / "artifacts")}
    steps = {"max_steps": 2, "per_device_train_batch_size": 4, "learning_rate": 1e-3, "max_length": 512, "logging_steps": 1}
    cfg = SafeBranchConfig(seeds=(0,), sft=steps, branchpo={**steps, "beta": 0.1}, trajectory_dpo={**steps, "beta": 0.1},
                           peft=None, sweep={"sft": (1e-3, 3e-3), "branchpo": (1e-5,)}, eval_every={"sft": 1, "branchpo": 1, "trajectory_dpo": 1},
                           eval_splits=("test",), tracking=track)
    out = tmp_path / "safebranch"
    metrics = safebranch(cfg, Path(model), tmp_path / "branches" / "final", tmp_path / "rollouts", small_suite, out,
                         tmp_path / "metrics.json", PromoteConfig(tracking=track))
    for variant in cfg.variants:
        assert f"eval/{variant}/test/ssr" in metrics, variant
    assert metrics["lr/sft"] in (1e-3, 3e-3)
    for f in ("results.json", "dev_curves.png", "training_curves.png", "sweep_curves.png", "per_risk_test.png",
              "manifest.json"):
        assert (out / f).is_file(), f
    results = json.loads((out / "results.json").read_text())
    assert len(results["runs"]) == len(cfg.variants) and len(results["sweep"]) == 3
    for run in results["runs"]:
        curve = run["phases"][-1]["curve"]
        assert curve[0]["step"] == 0 and len(curve) == 3  # step 0, 1, 2: every step evaluated on dev
        assert {"sr", "ssr", "srec"} <= set(run["dev"])
    sb = [r for r in results["runs"] if r["variant"] == "safebranch"]
    assert all(r["phases"][0]["kind"] == "sft" and r["phases"][1]["kind"] == "branchpo" for r in sb)
    registry = show(PromoteConfig(tracking=track))
    assert len(registry["versions"]) == len(cfg.variants)  # sweep points are tracked, not registered
    from embodied_safety.evaluation.selection import rank
    from embodied_safety.train.promotion import decide

    best = max(sb, key=lambda r: rank(r["dev"], results["sr_floor"]))
    expected = decide(best["dev"], None, 0.1, results["base_dev"], 0.05)[0]  # no champion: it must beat the base
    # results.json holds no registry versions (a run fact: they count up per workspace); the registry's tags say which
    best_version = next(v for v, t in registry["versions"].items()
                        if t["variant"] == "safebranch" and t["seed"] == str(best["seed"]))
    assert "version" not in best
    assert registry["aliases"]["champion"] == (best_version if expected else None)
    assert results["sr_floor"] == pytest.approx(results["base_dev"]["sr"] - 0.05)
    assert set(results["paired"]) == {"safebranch vs sft_only", "safebranch vs golden_replay_only",
                                      "sft_only vs golden_replay_only"}
    assert "golden_replay_only" in {r["variant"] for r in results["runs"]}
    # the stage writes data; the report stage renders its tables (one renderer, evaluation/render.py)
    from embodied_safety.evaluation.render import render
    from embodied_safety.train.variants import LABELS

    names = render("code", tmp_path / "reports", out, tmp_path / "metrics.json", tmp_path / "none", tmp_path / "none",
                   tmp_path / "none", tmp_path / "none", tmp_path / "none", LABELS)
    assert {"table2.md", "table2_seeds.md", "table16_per_risk.md", "sweep.md", "paired.md", "table15_dynamics.md",
            "fig_dynamics.png", "table16_per_risk_test.png"} <= set(names)
    assert "**(picked)**" in (tmp_path / "reports" / "sweep.md").read_text()
