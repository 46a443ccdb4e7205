"""bootstrap_actor and rollouts as real Prefect flows on a tiny suite, with a real MLflow registry."""

import json

import pytest

pytest.importorskip("trl")

from embodied_safety.config.rollouts import RolloutsConfig

pytestmark = pytest.mark.slow


def test_bootstrap_actor_trains_evaluates_and_registers(tiny_actor):
    import mlflow
    from mlflow import MlflowClient

    root, cfg, metrics = tiny_actor
    assert json.loads((root / "metrics.json").read_text()) == metrics
    for key in ("train/loss", "eval/sr", "eval/ssr", "eval/feedback_following", "checks/sr", "registry/version",
                "ood_taskshift/sr", "ood_taskshift/plain_sr"):  # OOD with and without proxy names
        assert key in metrics
    out = root / "bootstrap_actor"
    assert (out / "model" / "model.safetensors").is_file() and (out / "training_curve.png").is_file()
    assert (out / "manifest.json").is_file() and (out / "train_log.jsonl").read_text().strip()
    mlflow.set_tracking_uri(cfg.tracking["tracking_uri"])
    version = MlflowClient().search_model_versions("name='actor-base'")[0]
    path = mlflow.artifacts.download_artifacts(f"models:/actor-base/{version.version}")
    from embodied_safety.actors.hf import HFActor

    assert len(HFActor(path).generate(["Your input: - task_instruction: clean"], 0.0)) == 1
    assert HFActor(path).lexicon is not None  # the registered dir carries the proxy-name lexicon in its profile


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


def test_crashed_chunks_are_retried_by_prefect_and_a_rerun_runs_only_what_failed(tiny_actor, tiny_suite, tmp_path):
    """Chunk attempts that die are retried by Prefect (seen through the API); chunks that fail every
    retry fail the flow run after the others finished, and a re-run completes only their shards."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    from flows.rollouts import rollouts
    from tasks.runners import ShardsFailed

    root, _, _ = tiny_actor
    base = dict(temperatures=(0.0, 1.0), max_steps=3, chunk_size=16,
                actor={"model": str(root / "bootstrap_actor" / "model"), "max_new_tokens": 8})
    out, metrics_path = tmp_path / "retried", tmp_path / "m.json"
    state = rollouts(RolloutsConfig(**base, worker_fault_rate=0.3, chunk_retries=5), tiny_suite, out, metrics_path,
                     return_state=True)
    assert state.is_completed()
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id])))
    chunk_runs = [t for t in runs if t.name.startswith("rollout-chunk")]
    assert chunk_runs and all(t.state.is_completed() for t in chunk_runs)
    assert any(t.run_count > 1 for t in chunk_runs), "some chunk should have been retried"
    reference = {p.name: p.read_text() for p in (out / "shards").glob("*.json")}
    total = json.loads(metrics_path.read_text())["rollouts/shards_total"]
    assert len(reference) == total

    out = tmp_path / "failed_then_rerun"
    with pytest.raises(ShardsFailed, match="rollout-chunk"):
        rollouts(RolloutsConfig(**base, worker_fault_rate=0.3, chunk_retries=0), tiny_suite, out, metrics_path)
    partial = {p.name: p.read_text() for p in (out / "shards").glob("*.json")}
    assert 0 < len(partial) < total  # the chunks that survived kept their shards
    rollouts(RolloutsConfig(**base), tiny_suite, out, metrics_path)
    after = {p.name: p.read_text() for p in (out / "shards").glob("*.json")}
    assert set(after) == set(reference) and {k: after[k] for k in partial} == partial
    greedy = [k for k, v in reference.items() if json.loads(v)["temperature"] == 0.0]
    assert greedy and all(after[k] == reference[k] for k in greedy)  # T = 0 shards are chunk-independent


def test_branches_stage_writes_every_intermediate(tiny_actor, tiny_suite, tmp_path):
    """The branches flow end to end on the tiny suite: raw, judged, final, funnel, efficiency."""
    from embodied_safety.config.branches import BranchesConfig
    from flows.branches import branches

    root, _, _ = tiny_actor
    (tmp_path / "rollouts" / "shards").mkdir(parents=True)
    cfg = BranchesConfig(temperatures=(0.0, 1.0), max_steps=6, max_repair_attempts=2,
                         actor={"model": str(root / "bootstrap_actor" / "model"), "max_new_tokens": 8})
    stats = branches(cfg, tiny_suite, tmp_path / "rollouts", tmp_path / "branches")
    out = tmp_path / "branches"
    for f in ("raw/raw.jsonl", "judged/judged.jsonl", "final/pairs.jsonl", "final/pairs_fb.jsonl", "final/sft.jsonl",
              "funnel.json", "funnel_chart.png", "funnel_chart.json", "raw/manifest.json"):
        assert (out / f).exists(), f
    raw_lines = (out / "raw" / "raw.jsonl").read_text().splitlines()
    assert stats["data/repairs_attempted"] == len(raw_lines)
    assert stats["data/pairs_final"] == len((out / "final" / "pairs.jsonl").read_text().splitlines())
    assert "efficiency/ratio" in stats
    assert json.loads((out / "funnel.json").read_text()) == stats  # the metrics file, not a figure's data


def _rollouts_process(cwd, env, params):
    """``python -m flows.rollouts`` as its own process in ``cwd`` (data/household/splits -> the tiny suite)."""
    import subprocess
    import sys

    (cwd / "params.yaml").write_text(json.dumps({"rollouts": params}))  # JSON is YAML
    return subprocess.Popen([sys.executable, "-m", "flows.rollouts", "--params", "params.yaml"], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def test_sigkilled_rollouts_resume_without_duplicates_and_concurrent_runs_do_not_corrupt(tiny_actor, small_suite,
                                                                                        tmp_path, venv_env):
    """SIGKILL the rollout stage mid-way, rerun: every shard exactly once, nothing written before the
    kill recomputed. Then two runs at once on one output folder: both finish, every file intact."""
    import os
    import signal
    import time

    from prefect.settings import PREFECT_API_URL

    from tests.conftest import ROOT

    root, _, _ = tiny_actor
    (tmp_path / "data" / "household").mkdir(parents=True)
    (tmp_path / "data" / "household" / "splits").symlink_to(small_suite)
    env = {**venv_env, "PYTHONPATH": f"{ROOT}{os.pathsep}{venv_env.get('PYTHONPATH', '')}",
           # the session's test server: a temporary server per process costs ~20 s of start-up and migration each
           "PREFECT_API_URL": str(PREFECT_API_URL.value())}
    # one 12-task split at T = 1 (12 shards, 3 chunks): four runs (kill, resume, two concurrent); the tiny suite's
    # 18-task split took about 7 min on 2 cores, two temperatures over this split 200 s
    params = {"splits": ["ood_objectshift"], "temperatures": [1.0], "max_steps": 8, "chunk_size": 4,
              "actor": {"model": str(root / "bootstrap_actor" / "model"), "max_new_tokens": 8}}
    shards = tmp_path / "data" / "rollouts" / "shards"
    proc = _rollouts_process(tmp_path, env, params)
    deadline = time.time() + 300
    while time.time() < deadline and len(list(shards.glob("*.json"))) < 4 and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None, proc.stdout.read()  # still running: the kill lands mid-stage
    os.killpg(proc.pid, signal.SIGKILL)  # the whole job
    proc.wait()
    before = {p.name: p.read_bytes() for p in shards.glob("*.json")}
    assert before
    for p in before:  # every file on disk is a whole trajectory (atomic writes)
        json.loads(before[p])

    again = _rollouts_process(tmp_path, env, params)
    out, _ = again.communicate(timeout=900)
    assert again.returncode == 0, out
    metrics = json.loads((tmp_path / "data" / "rollouts_metrics.json").read_text())
    after = {p.name: p.read_bytes() for p in shards.glob("*.json")}
    assert len(after) == metrics["rollouts/shards_total"] and metrics["rollouts/shards_failed"] == 0
    assert {k: after[k] for k in before} == before  # resumed, not recomputed
    assert f"{len(before)} already done" in out or "already done" in out

    # two concurrent runs of a fresh stage into one folder
    for p in shards.glob("*.json"):
        p.unlink()
    a, b = _rollouts_process(tmp_path, env, params), _rollouts_process(tmp_path, env, params)
    for proc in (a, b):
        out, _ = proc.communicate(timeout=900)
        assert proc.returncode == 0, out
    final = {p.name: json.loads(p.read_bytes()) for p in shards.glob("*.json")}  # none torn
    assert set(final) == set(after)  # the same content-hashed shards, each once
    assert all(final[k]["shard_id"] == k.removesuffix(".json") for k in final)


def test_baselines_stage_writes_every_method_with_costs(tiny_actor, tiny_suite, tmp_path):
    """The three inference-time baselines on the tiny suite's test split, with the trained tiny actor."""
    from embodied_safety.config.baselines import BaselinesConfig
    from flows.baselines import baselines

    root, _, _ = tiny_actor
    cfg = BaselinesConfig(splits=("test",), retries=1, actor={"model": str(root / "bootstrap_actor" / "model"),
                                                             "max_new_tokens": 8})
    out = tmp_path / "baselines"
    metrics = baselines(cfg, tiny_suite, out, tmp_path / "m.json")
    for method in ("base", "self_verification", "lookahead", "full_critic"):
        assert 0.0 <= metrics[f"baselines/{method}/test/ssr"] <= metrics[f"baselines/{method}/test/sr"] <= 1.0
    for method in ("self_verification", "lookahead", "full_critic"):
        m = json.loads((out / method / "test" / "metrics.json").read_text())
        # a barely trained actor emits mostly unparseable text, which no module is asked about;
        # tests/unit/test_inference_time.py checks the exact counts with scripted actors
        assert m["eval/cost/actor_calls"] >= m["eval/n_tasks"] and m["eval/cost/module_calls"] >= 0
        assert (out / method / "test" / "episodes.jsonl").is_file() and (out / method / "test" / "per_risk.png").is_file()
    lookahead = json.loads((out / "lookahead" / "test" / "metrics.json").read_text())
    assert lookahead["eval/cost/actor_calls"] % 2 == 0  # k = 2 candidates per step
    assert lookahead["eval/cost/sim_steps"] <= lookahead["eval/cost/actor_calls"]  # unparseable candidates are not simulated
    table = (out / "table14.md").read_text()
    assert all(label in table for label in ("Self-Verification", "Lookahead", "Runtime full-critic", "critic-free"))
    assert (out / "manifest.json").is_file()


def test_alfred_port_stage_end_to_end_on_a_recorded_corpus(tiny_suite, tmp_path):
    """The SafetyALFRED port on a corpus recorded from the tiny suite: corpus files in the real
    format, a base actor, gold-gated pairs, SFT -> BranchPO, Table 3 and its figure."""
    from embodied_safety.alfred.corpus import load_corpus
    from embodied_safety.config.alfred_port import AlfredPortConfig
    from flows.alfred_port import alfred_port

    tiny = {"max_length": 512, "per_device_train_batch_size": 16, "logging_steps": 2}
    cfg = AlfredPortConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=1, head_dim=32,
                           record={"train": "train", "dev": "dev", "test": "test"},
                           base_sft={**tiny, "max_steps": 40, "learning_rate": 3e-3},
                           sft={**tiny, "max_steps": 4, "learning_rate": 1e-3},
                           branchpo={**tiny, "max_steps": 2, "learning_rate": 1e-4, "beta": 0.1},
                           eval_every={"sft": 2, "branchpo": 1},
                           tracking={"tracking_uri": f"sqlite:///{tmp_path}/mlflow.db", "artifact_root": str(tmp_path / "art")})
    data, models = tmp_path / "alfred", tmp_path / "models"
    metrics = alfred_port(cfg, tiny_suite, data, models, tmp_path / "m.json")
    train, errors = load_corpus(data / "corpus" / "train.json")
    assert train and not errors and metrics["alfred/hazard_turns"] == sum(t.hazard is not None for t in train)
    assert metrics["alfred/pairs_judged"] <= metrics["alfred/pairs_gated"] <= metrics["alfred/hazard_turns"]
    for method in ("base", "base_hint", "sft"):
        assert 0.0 <= metrics[f"alfred/{method}/hazard_acc"] <= 1.0
    table = (data / "table3.md").read_text()
    assert "appliance_misuse" in table and "Base actor" in table and "test turns" in table
    assert (data / "per_category.png").is_file() and (models / "base" / "config.json").is_file()
    assert (data / "manifest.json").is_file() and (models / "manifest.json").is_file()
