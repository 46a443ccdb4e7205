"""The ShieldVLA part-1 stages as flows on Dubins-VL with tiny budgets: demos -> BC -> rollouts -> rubric labels
-> Platt calibration -> RTD, with shard reuse on a re-run."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sklearn")
pytestmark = pytest.mark.slow


def test_shield_stages_end_to_end_on_dubins(prefect_harness, tmp_path, monkeypatch):
    import tasks.shield
    from embodied_safety.config.bc_policy import BCPolicyConfig
    from embodied_safety.config.calibrate import CalibrateConfig
    from embodied_safety.config.rtd import RTDConfig
    from embodied_safety.config.rubric_label import RubricLabelConfig
    from embodied_safety.config.shield_demos import ShieldDemosConfig
    from embodied_safety.config.shield_rollouts import ShieldRolloutsConfig
    from flows.bc_policy import bc_policy
    from flows.calibrate import calibrate
    from flows.rtd import rtd
    from flows.rubric_label import rubric_label
    from flows.shield_demos import shield_demos
    from flows.shield_rollouts import shield_rollouts

    monkeypatch.setattr(tasks.shield, "STORE", tmp_path / "store")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlruns.db'}")
    envs = ("dubins",)
    d, m = tmp_path / "data", tmp_path / "models"
    demo_cfg = ShieldDemosConfig(envs=envs, episodes={"dubins": 30}, shard_episodes=10)
    demos = shield_demos(demo_cfg, out=d / "demos", metrics_path=d / "demos.json")
    assert demos["demos/dubins/episodes"] == 30 and demos["demos/dubins/success_rate"] > 0.8
    shards = sorted((tmp_path / "store" / "demos").glob("*.npz"))
    assert len(shards) == 3
    stamps = [p.stat().st_mtime_ns for p in shards]
    again = shield_demos(demo_cfg, out=d / "demos", metrics_path=d / "demos.json")  # a re-run loads the shards
    assert again == demos and [p.stat().st_mtime_ns for p in shards] == stamps

    tracking = {"tracking_uri": f"sqlite:///{tmp_path / 'mlruns.db'}", "artifact_root": str(tmp_path / "mlartifacts")}
    bc_cfg = BCPolicyConfig(envs=envs, epochs={"dubins": 2}, eval_episodes={"dubins": 20}, eval_every=1,
                            select_episodes={"dubins": 10}, dagger_rounds={"dubins": 1}, dagger_episodes={"dubins": 8},
                            dagger_epochs={"dubins": 1}, restarts={"dubins": 2}, tracking=tracking)
    bc = bc_policy(bc_cfg, demos=d / "demos", out=m / "bc", metrics_path=m / "bc.json")
    assert 0.0 <= bc["bc/dubins/eval_violation_rate"] <= 1.0 and bc["bc/dubins/dagger_rounds"] == 1
    history = json.loads((m / "bc" / "dubins" / "history.json").read_text())
    # two training seeds on the same selection / held-out episodes; the kept one is the rule's pick among them
    from embodied_safety.shield.policy.bc import pick_checkpoint

    restarts, kept = history["restarts"], history["restart_chosen"]
    assert [r["seed"] for r in restarts] == [0, 1] and bc["bc/dubins/restarts"] == 2
    rule = pick_checkpoint([{**r, "epoch": r["best_epoch"]} for r in restarts], "sr_1se")
    assert kept == rule and bc["bc/dubins/restart_seed"] == restarts[kept]["seed"]
    assert bc["bc/dubins/eval_sr"] == restarts[kept]["eval_sr"]
    assert bc["bc/dubins/restarts_eval_sr_mean"] == pytest.approx(np.mean([r["eval_sr"] for r in restarts]))
    assert (m / "bc" / "dubins" / "restarts.png").stat().st_size > 5_000
    assert [r["round"] for r in history["rounds"]] == [0, 1] and history["rounds"][1]["steps"] > history["rounds"][0]["steps"]
    assert (m / "bc" / "dubins" / "model.safetensors").is_file() and (m / "bc" / "dubins" / "bc_curve.png").is_file()

    ro = shield_rollouts(ShieldRolloutsConfig(envs=envs, episodes={"dubins": 48}, shard_episodes=16),
                         policies=m / "bc", out=d / "rollouts", metrics_path=d / "rollouts.json")
    assert ro["rollouts/dubins/episodes"] == 48 and ro["rollouts/dubins/frames"] > 48

    lab = rubric_label(RubricLabelConfig(envs=envs, batch_frames=500), rollouts=d / "rollouts", out=d / "labels",
                       metrics_path=d / "labels.json")
    assert lab["labels/dubins/failed_frames"] == 0
    scores = np.load(d / "labels" / "dubins" / "scores.npz")
    assert scores["scores"].shape == (int(lab["labels/dubins/frames"]), 5)

    cal = calibrate(CalibrateConfig(envs=envs, tracking=tracking), rollouts=d / "rollouts", labels=d / "labels",
                    out=d / "calibration", metrics_path=d / "calibration.json")
    assert cal["calibrate/dubins/per_frame_auroc"] > 0.7
    platt = json.loads((d / "calibration" / "dubins" / "platt.json").read_text())
    assert platt["a"] > 0  # ℓ̂ = -(aρ + b) falls as the severity rises
    assert (d / "calibration" / "table11.md").read_text().count("| dubins") == 1

    r = rtd(RTDConfig(envs=envs, pose_set=150, tracking=tracking), rollouts=d / "rollouts", labels=d / "labels",
            out=d / "rtd", metrics_path=d / "rtd.json")
    assert r["rtd/dubins/tail_auroc_after"] >= r["rtd/dubins/tail_auroc_before"]
    record = json.loads((d / "rtd" / "dubins" / "rtd.json").read_text())
    assert record["rounds"] and "collapse" in record["round0"]

    # ---- part 2: warm critics, gated PPO + baselines + δ sweep, tables, safe set, registry (tiny budgets)
    import flows.shield_ppo as sp
    from embodied_safety.config.shield_ppo import ShieldPPOConfig

    for name, value in (("STORE", tmp_path / "store"), ("BC", m / "bc"), ("ROLLOUTS", d / "rollouts"),
                        ("CALIBRATION", d / "calibration")):
        monkeypatch.setattr(sp, name, value)
    ppo_cfg = ShieldPPOConfig(
        envs=envs, hyper={"dubins": {"critic_hidden": [32, 32], "critic_batch_size": 64, "delta": 0.2}},
        cpu={"dubins": {"total_steps": 512, "num_envs": 8, "rollout_steps": 32, "critic_tau": 0.05,
                          "critic_steps_per_iter": 8}},
        # the stage's bookkeeping on pixels; every method / safety step trains in tests/unit/test_ppo_loop.py
        runs={"dubins": ["ppo", "ppo_lag", "gated", "gated_gt", "gated_selective_recovery"]}, seeds={"dubins": [0]},
        delta_sweep={"dubins": [0.0, 0.2]}, warmup={"regress": 10, "td": 10}, eval_episodes={"dubins": 16},
        tracking=tracking)
    out = sp.shield_ppo(ppo_cfg, env="dubins", out_root=d / "ppo", models_root=m / "ppo")
    for run in ("ppo", "ppo_lag", "gated", "gated_gt", "gated_selective_recovery"):
        assert 0.0 <= out[f"dubins/{run}/sr"] <= 1.0 and out[f"dubins/{run}/csc"] >= 0.0
    assert {"dubins/delta0/csc", "dubins/delta0.2/csc", "dubins/gated/grad_agreement"} <= set(out)
    tables = (d / "ppo" / "dubins" / "tables.md").read_text()
    assert "Unconstrained PPO" in tables and "δ=0" in tables and "+Color" in tables
    for png in ("curves.png", "bars.png", "safe_set.png"):
        assert (d / "ppo" / "dubins" / png).stat().st_size > 10_000
    rows = json.loads((d / "ppo" / "dubins" / "results.json").read_text())["rows"]
    checks = json.loads((d / "ppo" / "dubins" / "gate_check.json").read_text())  # one per warm critic
    assert set(checks) == {"rubric/policy_mean", "gt/policy_mean", "rubric/best"}
    assert all(0.0 <= c["best_candidate_agreement"] <= 1.0 for c in checks.values())
    # the reference counts exits: replayed states, unsafe now or no escape (shield/rl/viability.py)
    assert all(c["unsafe_frame_rate"] <= c["unrecoverable_frame_rate"] <= 1.0 for c in checks.values())
    assert "Offline gate check" in tables and "dubins/gate_check/rubric/best/infeasible_frac" in out
    # the start on the runs' episodes (stored once), and the do-no-harm form against it (one seed: no interval)
    start = json.loads((d / "ppo" / "dubins" / "results.json").read_text())["start"]
    assert set(start) == {"in", *ppo_cfg.ood} and out["dubins/start/sr"] == start["in"]["sr"]
    assert len(list((tmp_path / "store" / "start_eval").glob("*.json"))) == 1
    assert out["dubins/do_no_harm/seeds"] == 1.0 and out["dubins/do_no_harm/shown"] == 0.0
    # per-episode outcomes on the same 16 episodes: the interval resamples them (one seed: the episodes only)
    assert len(start["in"]["per_episode"]["sr"]) == 16 and out["dubins/do_no_harm/episodes"] == 1.0
    assert all(len(r["eval"]["in"]["per_episode"]["cost"]) == 16 for r in rows)
    assert out["dubins/do_no_harm/sr_minus_start_lo"] <= out["dubins/do_no_harm/sr_minus_start"]
    assert out["dubins/do_no_harm/sr_minus_start"] == pytest.approx(out["dubins/gated/sr"] - start["in"]["sr"])
    assert "## The start and the do-no-harm form" in tables and "one seed is a sample" in tables
    assert len(rows) == 6 and {r["run"] for r in rows if r["eval"].get("color")} == {"ppo_lag", "gated"}
    assert all(len(r["history"]) == 2 for r in rows)  # 512 steps / (8 envs x 32 steps)
    assert (m / "ppo" / "dubins" / "critic" / "critic.safetensors").is_file()
    from mlflow import MlflowClient

    client = MlflowClient(tracking["tracking_uri"])
    assert client.get_model_version_by_alias("shield_policy_dubins", "champion") is not None
    assert client.get_model_version_by_alias("shield_critic_dubins", "champion") is not None
    stored = sorted((tmp_path / "store" / "ppo").glob("*/result.json"))
    stamps = [p.stat().st_mtime_ns for p in stored]
    again = sp.shield_ppo(ppo_cfg, env="dubins", out_root=d / "ppo", models_root=m / "ppo")  # trains nothing
    assert [p.stat().st_mtime_ns for p in stored] == stamps
    assert again == out and "promoted" not in out  # the registry decision is in MLflow, not the hashed metrics

    # validated checkpoints (shield_ppo.select_every): new runs (their key has the selection), each evaluated on
    # validation episodes after every iteration; the chosen iterate read on the test episodes beside the final one
    import dataclasses

    sel_cfg = dataclasses.replace(ppo_cfg, runs={"dubins": ["ppo_lag", "gated"]}, delta_sweep={}, select_every=1,
                                  select_episodes={"dubins": 8})
    sel = sp.shield_ppo(sel_cfg, env="dubins", out_root=d / "ppo_sel", models_root=m / "ppo_sel")
    rows = json.loads((d / "ppo_sel" / "dubins" / "results.json").read_text())["rows"]
    assert len(sorted((tmp_path / "store" / "ppo").glob("*/result.json"))) == len(stored) + 2
    for r in rows:
        chosen = r["selected"]
        assert [p["iteration"] for p in chosen["curve"]] == [1.0, 2.0] and chosen["iteration"] in (1.0, 2.0)
        best = max(chosen["curve"], key=lambda p: (p["sr"], -p["csc"], p["iteration"]))
        assert chosen["iteration"] == best["iteration"] and chosen["val"] == {"sr": best["sr"], "csc": best["csc"]}
        assert len(chosen["eval"]["in"]["per_episode"]["sr"]) == 16  # the test episodes
        if chosen["iteration"] == 2.0:  # the last iterate: its test evaluation is the final one
            assert chosen["eval"]["in"] == r["eval"]["in"]
    assert sel["dubins/selected/gated/sr"] == pytest.approx(rows[-1]["selected"]["eval"]["in"]["sr"])
    tables = (d / "ppo_sel" / "dubins" / "tables.md").read_text()
    assert "## Validated checkpoints" in tables and "validated checkpoints" in tables.split("## Validated")[1]

    # the runs as shard tasks on a local Dask cluster (shield_ppo.task_runner): two at once, each in its own process,
    # into an empty store; the same rows as one after another
    monkeypatch.setattr(sp, "STORE", tmp_path / "store_dask")
    par_cfg = dataclasses.replace(ppo_cfg, task_runner="dask", runner_workers=2)
    par = sp.with_runner(sp.shield_ppo, par_cfg)(par_cfg, env="dubins", out_root=d / "ppo_dask", models_root=m / "ppo_dask")
    assert len(sorted((tmp_path / "store_dask" / "ppo").glob("*/result.json"))) == len(stored)
    assert {k: v for k, v in par.items() if "seconds" not in k} == {k: v for k, v in out.items() if "seconds" not in k}
