"""Editing a module that is reached only through a string entry point (the control envs' Gymnasium registrations)
makes `dvc status` report every stage that makes the env, and no other."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.conftest import ROOT
from tests.helpers import copy_repo

pytestmark = pytest.mark.slow

SHIELD = ("shield_demos", "bc_policy", "shield_rollouts", "shield_ppo@dubins")


@pytest.mark.parametrize("module", ["franka", "turtlebot"])
def test_editing_a_registered_env_marks_the_stages_that_make_it(tmp_path, venv_env, module):
    repo = tmp_path / "repo"
    copy_repo(repo, venv_env, {})
    shutil.copy2(ROOT / "dvc.lock", repo / "dvc.lock")
    path = repo / "src" / "embodied_safety" / "envs" / "control" / f"{module}.py"
    path.write_text(path.read_text() + "\n# an edit\n")
    out = subprocess.run(["dvc", "status", "--json", *SHIELD, "household_suite", "agentbench_eval"], cwd=repo,
                         env=venv_env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    changed = f"src/embodied_safety/envs/control/{module}.py"
    for stage in SHIELD:
        deps = [d for entry in status.get(stage, []) if isinstance(entry, dict)
                for d in entry.get("changed deps", {})]
        assert changed in deps, (stage, status.get(stage))
    for stage in ("household_suite", "agentbench_eval"):
        assert not any(changed in entry.get("changed deps", {}) for entry in status.get(stage, [])
                       if isinstance(entry, dict)), stage
