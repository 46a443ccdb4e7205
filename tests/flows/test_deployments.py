"""The nightly deployment end to end against a real Prefect server on loopback: deploy
deployments/prefect.yaml, trigger a run through the API, let a process worker execute it, and check
through the API that every DVC stage ran as a child flow run of the pipeline's dvc-repro task, and
that rollout chunks whose worker died were retried by Prefect."""

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import copy_repo, stop_process_group

pytestmark = pytest.mark.slow
STAGES = ["household_suite", "bootstrap_actor", "rollouts"]
TINY = {"household_suite": dict(per_template=4, n_dev=1, n_test=1, behavior_coverage=False),
        "bootstrap_actor": dict(patterns=1, hidden_size=64, intermediate_size=128, num_hidden_layers=1, head_dim=32,
                                sft={"max_steps": 6, "per_device_train_batch_size": 16, "learning_rate": 1e-3,
                                     "logging_steps": 2, "max_length": 512}),
        # 30 % of chunk attempts die (injected worker crash, reproducible per attempt); Prefect retries them
        "rollouts": dict(temperatures=[0.0], max_steps=3, chunk_size=4, worker_fault_rate=0.3, chunk_retries=5)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _api(url: str, body: dict | None = None, attempts: int = 6) -> object:
    """One REST call; a 503 / 429 (the SQLite store is busy, e.g. while the scheduler writes the cron schedule's runs)
    is retried with backoff, as Prefect's own client does (PREFECT_CLIENT_MAX_RETRIES)."""
    req = urllib.request.Request(url, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"}, method="POST" if body is not None else "GET")
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            if e.code not in (429, 503) or attempt == attempts - 1:
                raise
            time.sleep(2 ** attempt)
    raise AssertionError("unreachable")


@pytest.fixture
def server(tmp_path, venv_env):
    port = _free_port()
    env = {**venv_env, "PREFECT_HOME": str(tmp_path / "prefect-home"), "PREFECT_API_URL": f"http://127.0.0.1:{port}/api"}
    env.pop("PREFECT__FLOW_RUN_ID", None)
    bin_dir = Path(sys.executable).parent
    proc = subprocess.Popen([str(bin_dir / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{env['PREFECT_API_URL']}/health", timeout=2)
                break
            except OSError:
                time.sleep(1)
        else:
            pytest.fail("Prefect server did not become healthy in 120 s")
        yield env
    finally:
        stop_process_group(proc)


def test_nightly_deployment_runs_dvc_stages_as_linked_subflows(tmp_path, server):
    env = server
    api = env["PREFECT_API_URL"]
    prefect = str(Path(sys.executable).parent / "prefect")
    repo = tmp_path / "repo"
    copy_repo(repo, env, TINY)

    def cli(*args: str) -> str:
        out = subprocess.run([prefect, "--no-prompt", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    cli("work-pool", "create", "cpu", "--type", "process")
    cli("deploy", "--prefect-file", "deployments/prefect.yaml", "--name", "nightly")
    deployment = _api(f"{api}/deployments/name/pipeline/nightly")
    assert deployment["schedules"] and deployment["schedules"][0]["schedule"]["cron"] == "0 3 * * *"
    run = _api(f"{api}/deployments/{deployment['id']}/create_flow_run",
               {"parameters": {"stages": STAGES, "push": True}})
    worker = subprocess.Popen([prefect, "worker", "start", "--pool", "cpu"], cwd=repo, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert _wait(api, run["id"]) == "COMPLETED"
        _check_run(api, repo, run)
        # the UI's Retry / `prefect flow-run retry`: the same run again; dvc repro finds nothing stale
        stage_runs = len(_api(f"{api}/flow_runs/filter", {}))
        cli("flow-run", "retry", run["id"])
        assert _wait(api, run["id"]) == "COMPLETED"
        assert _api(f"{api}/flow_runs/{run['id']}")["run_count"] == 2
        assert len(_api(f"{api}/flow_runs/filter", {})) == stage_runs  # no stage ran again
    finally:
        stop_process_group(worker)


def _wait(api: str, run_id: str, timeout: float = 600) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        state = _api(f"{api}/flow_runs/{run_id}")["state"]["type"]
        if state in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
            return state
        time.sleep(2)
    return "TIMEOUT"


def _check_run(api: str, repo: Path, run: dict) -> None:
    parent_tasks = _api(f"{api}/task_runs/filter", {"flow_runs": {"id": {"any_": [run["id"]]}}})
    assert {t["name"].rsplit("-", 1)[0] for t in parent_tasks} >= {"dvc-repro", "dvc-push"}
    repro_task = next(t for t in parent_tasks if t["name"].startswith("dvc-repro"))
    children = _api(f"{api}/flow_runs/filter", {"flow_runs": {"parent_task_run_id": {"any_": [repro_task["id"]]}}})
    assert sorted(c["name"] for c in children) and len(children) == len(STAGES)
    flows = {f["id"]: f["name"] for f in _api(f"{api}/flows/filter", {})}
    assert sorted(flows[c["flow_id"]] for c in children) == sorted(STAGES)
    child_tasks = {}
    for c in children:
        assert c["state"]["type"] == "COMPLETED" and f"parent-flow-run:{run['id']}" in c["tags"]
        child_tasks[flows[c["flow_id"]]] = _api(f"{api}/task_runs/filter", {"flow_runs": {"id": {"any_": [c["id"]]}}})
        assert child_tasks[flows[c["flow_id"]]] and all(t["state"]["type"] == "COMPLETED"
                                                        for t in child_tasks[flows[c["flow_id"]]])
    chunks = [t for t in child_tasks["rollouts"] if t["name"].startswith("rollout-chunk")]
    assert chunks and any(t["run_count"] > 1 for t in chunks), "a crashed chunk should have been retried"
    metrics = json.loads((repo / "data/rollouts_metrics.json").read_text())
    assert metrics["rollouts/shards_failed"] == 0
    assert len(list((repo / "data/rollouts/shards").glob("*.json"))) == metrics["rollouts/shards_total"]
    assert any((repo / ".dvc-remote").rglob("*"))  # dvc push ran
