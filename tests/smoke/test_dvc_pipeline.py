"""`dvc repro` on a copy of the repository (the committed params): reproduces the committed lock, is a no-op
twice, reruns only what changed, pushes and pulls, runs an experiment."""

import shutil
import subprocess

import pytest
import yaml

from tests.helpers import copy_repo

pytestmark = pytest.mark.slow
STAGES = ["household_suite", "evaluate_scripted"]


def run(cmd, cwd, env):
    return subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True, text=True, timeout=900).stdout


@pytest.fixture(scope="module")
def fresh_copy(tmp_path_factory, prefect_harness):
    """A copy of the repository with the committed params and `dvc.lock` and no DVC cache, after one `dvc repro`
    of the first two stages (the actor stages have their own smoke test): (repo, that repro's output)."""
    from tests.conftest import ROOT, subprocess_env

    env = subprocess_env(test_server=True)
    repo = tmp_path_factory.mktemp("dvc") / "repo"
    copy_repo(repo, env, {})
    shutil.copy2(ROOT / "dvc.lock", repo / "dvc.lock")
    return repo, run(["dvc", "repro", *STAGES], repo, env)


def test_a_fresh_copy_reproduces_the_committed_lock_for_the_first_stages(fresh_copy):
    """The committed `dvc.lock` is a fresh clone's `make demo`: re-running its first stages from nothing (the
    committed params, no cache) writes outputs with exactly the hashes the lock records (issue 19; the whole DAG
    was compared from fresh clones, README "Budget and time")."""
    from tests.conftest import ROOT

    repo, out = fresh_copy
    assert "Running stage 'household_suite'" in out  # no cache in the copy: it really ran

    def outs(lock, stage):
        return {o["path"]: o["md5"] for o in yaml.safe_load(lock.read_text())["stages"][stage]["outs"]}

    for stage in STAGES:
        assert outs(repo / "dvc.lock", stage) == outs(ROOT / "dvc.lock", stage), stage


def test_dvc_repro_fresh_copy(fresh_copy, flow_env):
    """Then: up to date, a no-op twice, a param change re-runs only its stage, push / pull through the local
    remote, a sweep point as a DVC experiment."""
    repo, out = fresh_copy
    params = yaml.safe_load((repo / "params.yaml").read_text())
    stages = STAGES
    assert "Running stage 'household_suite'" in out and "Running stage 'evaluate_scripted'" in out
    assert (repo / "data/household/eval/golden/test/metrics.json").is_file()
    assert "up to date" in run(["dvc", "status", *stages], repo, flow_env).lower()
    metrics = run(["dvc", "metrics", "show"], repo, flow_env)
    assert "data/tasks_total" in metrics and "golden_unsafe.test.eval/ssr" in metrics

    again = run(["dvc", "repro", *stages], repo, flow_env)
    assert "Running stage" not in again

    params["evaluate_scripted"]["extra_steps"] = 5
    (repo / "params.yaml").write_text(yaml.safe_dump(params))
    changed = run(["dvc", "repro", *stages], repo, flow_env)
    assert "Running stage 'evaluate_scripted'" in changed and "Running stage 'household_suite'" not in changed

    # the default remote is a local directory (.dvc/config): push, lose cache and outputs, pull back
    metrics_file = repo / "data/household/eval/golden/test/metrics.json"
    stage_metrics = repo / "data/household/eval_metrics.json"  # the stage's `dvc metrics show` file travels too
    before = metrics_file.read_bytes(), stage_metrics.read_bytes()
    assert "pushed" in run(["dvc", "push", *stages], repo, flow_env).lower()
    assert any((repo / ".dvc-remote").rglob("*"))
    shutil.rmtree(repo / ".dvc" / "cache")
    shutil.rmtree(repo / "data" / "household" / "eval")
    stage_metrics.unlink()
    run(["dvc", "pull", *stages], repo, flow_env)
    assert (metrics_file.read_bytes(), stage_metrics.read_bytes()) == before
    assert "up to date" in run(["dvc", "status", *stages], repo, flow_env).lower()

    # a sweep point as a DVC experiment: only the stage whose param changed runs
    run(["git", "add", "-A"], repo, flow_env)
    run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "y"], repo, flow_env)
    exp = run(["dvc", "exp", "run", "-S", "evaluate_scripted.extra_steps=7", *stages], repo, flow_env)
    assert "Running stage 'evaluate_scripted'" in exp and "Running stage 'household_suite'" not in exp
    assert "extra_steps" in run(["dvc", "exp", "show", "--no-pager", "--csv"], repo, flow_env)
