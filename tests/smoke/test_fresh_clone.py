"""A fresh clone anywhere: the stages read nothing outside the repository and run the project's interpreter
whatever PATH says (`dvc.yaml`'s commands are `deployments/run-stage flows.<stage>`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import copy_repo

pytestmark = pytest.mark.slow

BARE_PATH = "/usr/bin:/bin"  # no .venv/bin: `python` there, if any, is not the project's


def run(cmd, cwd, env, ok=True):
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if ok:
        assert out.returncode == 0, f"{' '.join(map(str, cmd))} -> {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.fixture()
def clone(tmp_path, flow_env):
    """A copy of the repository in a folder with no sibling ``shared/``, its ``.venv`` the one this suite runs in
    (what ``make setup`` makes in a fresh clone)."""
    repo = tmp_path / "clone"
    copy_repo(repo, flow_env, {"household_suite": dict(per_template=4, n_dev=1, n_test=1, behavior_coverage=False)})
    assert not (tmp_path / "shared").exists() and not (repo.parent.parent / "shared").exists()
    (repo / ".venv").symlink_to(Path(sys.executable).parent.parent)
    return repo


def test_dvc_repro_runs_with_a_path_that_lacks_the_venv(clone, flow_env):
    env = {**flow_env, "PATH": BARE_PATH}
    out = run([str(clone / ".venv/bin/dvc"), "repro", "household_suite"], clone, env).stdout
    assert "> deployments/run-stage flows.household_suite" in out
    assert json.loads((clone / "data/household/metrics.json").read_text())["data/tasks_total"] > 0


def test_the_safeagentbench_stage_reads_the_shipped_rows(clone, flow_env):
    """``agentbench_eval`` on its default ``data_dir`` (``data/safeagentbench`` in the repository), started by its
    stage command from a bare PATH."""
    env = {**flow_env, "PATH": BARE_PATH}
    run([str(clone / "deployments/run-stage"), "flows.agentbench_eval"], clone, env)
    report = json.loads((clone / "data/agentbench/load_report.json").read_text())
    assert set(report["tasks"]) >= {"safe_detailed", "unsafe_detailed", "abstract", "long_horizon"}
    assert all((clone / f).resolve().is_relative_to(clone.resolve()) for f in report["files"].values())
    assert json.loads((clone / "data/agentbench_metrics.json").read_text())


def test_without_an_environment_the_stage_command_names_the_fix(tmp_path, flow_env):
    repo = tmp_path / "bare"
    copy_repo(repo, flow_env, {})  # no .venv anywhere above it
    probe = subprocess.run(["python3", "-c", "import embodied_safety, prefect"], env={"PATH": BARE_PATH},
                           capture_output=True)
    if probe.returncode == 0:
        pytest.skip("the system python3 has the project installed: run-stage would use it")
    env = {k: v for k, v in flow_env.items() if k != "EMBODIED_SAFETY_PYTHON"} | {"PATH": BARE_PATH}
    out = run([str(repo / "deployments/run-stage"), "flows.household_suite"], repo, env, ok=False)
    assert out.returncode == 127
    assert "make setup" in out.stderr and "EMBODIED_SAFETY_PYTHON" in out.stderr
    assert not (repo / "data/household/splits").exists()
    assert os.environ.get("PATH")  # the suite's own PATH untouched
