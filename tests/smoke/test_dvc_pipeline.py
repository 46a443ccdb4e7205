"""`dvc repro` on a copy of the repository with tiny params: runs, is a no-op twice, reruns only what changed."""

import shutil
import subprocess

import pytest
import yaml

from tests.helpers import copy_repo

pytestmark = pytest.mark.slow


def run(cmd, cwd, env):
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, f"{' '.join(cmd)} -> {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def test_dvc_repro_fresh_copy(tmp_path, flow_env):
    repo = tmp_path / "repo"
    copy_repo(repo, flow_env, {"household_suite": dict(per_template=4, n_dev=1, n_test=1, behavior_coverage=False),
                               "evaluate_scripted": dict(policies=["golden", "golden_unsafe"],
                                                         splits=["test", "ood_objectshift"])})
    params = yaml.safe_load((repo / "params.yaml").read_text())

    stages = ["household_suite", "evaluate_scripted"]  # the actor stages have their own smoke test
    out = run(["dvc", "repro", *stages], repo, flow_env)
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
    stage_metrics = repo / "data/household/eval_metrics.json"  # `cache: false`: kept in git, not in the DVC remote
    before = metrics_file.read_bytes()
    assert "pushed" in run(["dvc", "push", *stages], repo, flow_env).lower()
    assert any((repo / ".dvc-remote").rglob("*"))
    shutil.rmtree(repo / ".dvc" / "cache")
    shutil.rmtree(repo / "data" / "household" / "eval")
    run(["dvc", "pull", *stages], repo, flow_env)
    assert metrics_file.read_bytes() == before
    ignored = subprocess.run(["git", "check-ignore", "-q", str(stage_metrics)], cwd=repo, env=flow_env)
    assert stage_metrics.is_file() and ignored.returncode == 1  # git tracks it: main shows the lock's numbers
    assert "up to date" in run(["dvc", "status", *stages], repo, flow_env).lower()

    # a sweep point as a DVC experiment: only the stage whose param changed runs
    run(["git", "add", "-A"], repo, flow_env)
    run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "y"], repo, flow_env)
    exp = run(["dvc", "exp", "run", "-S", "evaluate_scripted.extra_steps=7", *stages], repo, flow_env)
    assert "Running stage 'evaluate_scripted'" in exp and "Running stage 'household_suite'" not in exp
    assert "extra_steps" in run(["dvc", "exp", "show", "--no-pager", "--csv"], repo, flow_env)


def test_a_fresh_copy_reproduces_the_committed_lock_for_the_first_stages(tmp_path, flow_env):
    """The committed `dvc.lock` is a fresh clone's `make demo`: re-running its first stages from nothing (the
    committed params, no cache) writes outputs with exactly the hashes the lock records (issue 19; the whole DAG
    was compared from fresh clones, README "Budget and time")."""
    from tests.conftest import ROOT

    repo = tmp_path / "repo"
    copy_repo(repo, flow_env, {})
    shutil.copy2(ROOT / "dvc.lock", repo / "dvc.lock")
    stages = ["household_suite", "evaluate_scripted"]
    out = run(["dvc", "repro", *stages], repo, flow_env)
    assert "Running stage 'household_suite'" in out  # no cache in the copy: it really ran

    def outs(lock, stage):
        return {o["path"]: o["md5"] for o in yaml.safe_load(lock.read_text())["stages"][stage]["outs"]}

    for stage in stages:
        assert outs(repo / "dvc.lock", stage) == outs(ROOT / "dvc.lock", stage), stage
