"""bootstrap_actor and rollouts as real Prefect flows on a tiny suite, with a real MLflow registry."""

import json

import pytest

pytest.importorskip("trl")

from embodied_safety.config import BootstrapActorConfig, HouseholdSuiteConfig, RolloutsConfig  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_suite(tmp_path_factory, prefect_harness):
    from flows.household_suite import household_suite

    out = tmp_path_factory.mktemp("suite")
    household_suite(HouseholdSuiteConfig(per_template=4, n_dev=1, n_test=1, behavior_coverage=False), out)
    return out / "splits"


@pytest.fixture(scope="module")
def tiny_actor(tiny_suite, tmp_path_factory):
    from flows.bootstrap_actor import bootstrap_actor

    root = tmp_path_factory.mktemp("actor")
    cfg = BootstrapActorConfig(
        patterns=1, hidden_size=64, intermediate_size=128, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, head_dim=32, sft={"max_steps": 6, "per_device_train_batch_size": 16,
                                                "learning_rate": 1e-3, "logging_steps": 2, "max_length": 512},
        tracking={"tracking_uri": f"sqlite:///{root}/mlflow.db", "artifact_root": str(root / "artifacts")})
    metrics = bootstrap_actor(cfg, tiny_suite, root / "bootstrap_actor", root / "metrics.json")
    return root, cfg, metrics


def test_bootstrap_actor_trains_evaluates_and_registers(tiny_actor):
    import mlflow
    from mlflow import MlflowClient

    root, cfg, metrics = tiny_actor
    assert json.loads((root / "metrics.json").read_text()) == metrics
    for key in ("train/loss", "eval/sr", "eval/ssr", "eval/feedback_following", "checks/sr", "registry/version"):
        assert key in metrics
    out = root / "bootstrap_actor"
    assert (out / "model" / "model.safetensors").is_file() and (out / "training_curve.png").is_file()
    assert (out / "manifest.json").is_file() and (out / "train_log.jsonl").read_text().strip()
    mlflow.set_tracking_uri(cfg.tracking["tracking_uri"])
    version = MlflowClient().search_model_versions("name='actor-base'")[0]
    path = mlflow.artifacts.download_artifacts(f"models:/actor-base/{version.version}")
    from embodied_safety.actors.hf import HFActor

    assert len(HFActor(path).generate(["Your input: - task_instruction: clean"], 0.0)) == 1


def test_rollouts_with_faults_then_retry_failed(tiny_actor, tiny_suite, tmp_path):
    from flows.rollouts import rollouts

    root, _, _ = tiny_actor
    cfg = RolloutsConfig(temperatures=(0.0, 1.0), max_steps=4, chunk_size=32, fault_rate=0.08,
                         actor={"model": str(root / "bootstrap_actor" / "model"), "max_new_tokens": 8})
    out, metrics_path = tmp_path / "rollouts", tmp_path / "rollouts_metrics.json"
    first = rollouts(cfg, tiny_suite, out, metrics_path)
    failed = json.loads(metrics_path.read_text())["failed_shards"]
    assert first["rollouts/shards_failed"] == len(failed) > 0
    total = first["rollouts/shards_total"]
    done_before = {p.name: p.read_text() for p in (out / "shards").glob("*.json")}
    assert len(done_before) == total - len(failed)

    clean = RolloutsConfig(**{**cfg.__dict__, "fault_rate": 0.0})
    second = rollouts(clean, tiny_suite, out, metrics_path, retry_failed=True)
    assert second["rollouts/shards_failed"] == 0
    after = {p.name: p.read_text() for p in (out / "shards").glob("*.json")}
    assert len(after) == total and not list((out / "failed").glob("*.json"))
    assert {k: after[k] for k in done_before} == done_before  # nothing recomputed, nothing duplicated
    assert {f"{f['shard_id']}.json" for f in failed} == set(after) - set(done_before)
    assert second["rollouts/t0.0/n_tasks"] + second["rollouts/t1.0/n_tasks"] == total


def test_rollouts_on_a_local_dask_cluster(tiny_actor, tiny_suite, tmp_path):
    """The distributed runner: chunks run as Prefect tasks on a 2-worker local Dask cluster."""
    pytest.importorskip("prefect_dask")
    from flows.rollouts import _task_runner, rollouts

    root, _, _ = tiny_actor
    cfg = RolloutsConfig(temperatures=(0.0, 0.7), max_steps=3, chunk_size=16, task_runner="dask", dask_workers=2,
                         actor={"model": str(root / "bootstrap_actor" / "model"), "max_new_tokens": 8})
    metrics = rollouts.with_options(task_runner=_task_runner(cfg))(cfg, tiny_suite, tmp_path / "r", tmp_path / "m.json")
    assert metrics["rollouts/shards_failed"] == 0
    assert len(list((tmp_path / "r" / "shards").glob("*.json"))) == metrics["rollouts/shards_total"] > 16


def test_branches_stage_writes_every_intermediate(tiny_actor, tiny_suite, tmp_path):
    """The branches flow end to end on the tiny suite: raw, judged, final, funnel, efficiency."""
    from embodied_safety.config import BranchesConfig
    from flows.branches import branches

    root, _, _ = tiny_actor
    (tmp_path / "rollouts" / "shards").mkdir(parents=True)
    cfg = BranchesConfig(temperatures=(0.0, 1.0), max_steps=6, max_repair_attempts=2,
                         actor={"model": str(root / "bootstrap_actor" / "model"), "max_new_tokens": 8})
    stats = branches(cfg, tiny_suite, tmp_path / "rollouts", tmp_path / "branches")
    out = tmp_path / "branches"
    for f in ("raw/raw.jsonl", "judged/judged.jsonl", "final/pairs.jsonl", "final/pairs_fb.jsonl", "final/sft.jsonl",
              "funnel.json", "funnel.png", "raw/manifest.json"):
        assert (out / f).exists(), f
    raw_lines = (out / "raw" / "raw.jsonl").read_text().splitlines()
    assert stats["data/repairs_attempted"] == len(raw_lines)
    assert stats["data/pairs_final"] == len((out / "final" / "pairs.jsonl").read_text().splitlines())
    assert "efficiency/ratio" in stats
