"""deployments/parallel_repro.py on a small DVC repository written here: two independent chains and a joining
stage. The relocatable chain runs in a worktree lane, the closing repro takes its outputs from the run-cache,
and the lock is the one a plain `dvc repro` writes; uncommitted and untracked edits travel to the lane."""

import shutil
import subprocess
import sys
import textwrap

import pytest
import yaml

from embodied_safety.threads import STAGE_THREADS
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

SCRIPT = ROOT / "deployments" / "parallel_repro.py"
# each stage writes the sha256 of its inputs: deterministic, and a wrong input shows in the output
CMD = "python -c \"import hashlib,sys; o=sys.argv[1]; d=b''.join(open(p,'rb').read() for p in sys.argv[2:]); " \
      "open(o,'w').write(hashlib.sha256(d).hexdigest())\""
DVC_YAML = {"stages": {
    "a1": {"cmd": f"{CMD} out/a1 src_a.txt", "deps": ["src_a.txt"], "outs": ["out/a1"]},
    "a2": {"cmd": f"{CMD} out/a2 out/a1 extra.txt", "deps": ["out/a1", "extra.txt"], "outs": ["out/a2"]},
    "b1": {"cmd": f"{CMD} out/b1 src_b.txt", "deps": ["src_b.txt"], "outs": ["out/b1"]},
    "b2": {"cmd": f"{CMD} out/b2 out/b1 && mkdir -p store && touch store/x", "deps": ["out/b1"],
           "outs": ["out/b2", {"store": {"persist": True}}]},
    "join": {"cmd": f"{CMD} out/join out/a2 out/b2", "deps": ["out/a2", "out/b2"], "outs": ["out/join"]},
}}


def sh(cmd, cwd, env):
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"{cmd} -> {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout + out.stderr


def make_repo(path, env):
    path.mkdir()
    sh(["git", "init", "-q"], path, env)
    sh(["dvc", "init", "-q"], path, env)
    sh(["dvc", "config", "core.analytics", "false"], path, env)
    (path / "out").mkdir()
    (path / "src_a.txt").write_text("a\n")
    (path / "src_b.txt").write_text("b\n")
    (path / "dvc.yaml").write_text(yaml.safe_dump(DVC_YAML, sort_keys=False))
    (path / ".gitignore").write_text("/out/\n/store/\n")
    sh(["git", "add", "-A"], path, env)
    sh(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"], path, env)
    # after the commit: an edit and an untracked file the worktree lane must see
    (path / "src_a.txt").write_text("a, edited\n")
    (path / "extra.txt").write_text(textwrap.dedent("untracked\n"))


def test_parts_run_side_by_side_and_the_lock_is_a_plain_repro_s(tmp_path, venv_env):
    env = {**venv_env, "DVC_NO_ANALYTICS": "1"}
    repo, plain = tmp_path / "repo", tmp_path / "plain"
    make_repo(repo, env)
    shutil.copytree(repo, plain, symlinks=True)

    out = sh([sys.executable, str(SCRIPT), "--lanes", "2"], repo, env)
    # the b chain keeps a persistent output: it stays here; the a chain goes to a lane; `join` closes
    assert "plan: here: b1 b2 (stays here: b2 keeps a persistent output (store))" in out
    assert "plan: lane 1: a1 a2" in out
    assert "[lane 1] done" in out
    assert "Stage 'a1' is cached - skipping run" in out and "Stage 'a2' is cached - skipping run" in out
    assert "Running stage 'join'" in out
    assert "Running stage 'a1'" not in out.split("closing repro")[1]  # the lane's run was reused, not redone
    assert not (repo / ".dvc/tmp/lanes/1").exists()
    assert "up to date" in sh(["dvc", "status"], repo, env).lower()

    sh(["dvc", "repro"], plain, env)
    # the same entries (a new lock lists them in the order they ran; an existing one keeps its order)
    assert yaml.safe_load((repo / "dvc.lock").read_text()) == yaml.safe_load((plain / "dvc.lock").read_text())
    for name in ("a1", "a2", "b1", "b2", "join"):
        assert (repo / "out" / name).read_text() == (plain / "out" / name).read_text()

    # nothing to do: no lane, the closing repro only checks
    again = sh([sys.executable, str(SCRIPT), "--lanes", "2"], repo, env)
    assert "plan:" not in again and "Running stage" not in again


def test_a_failing_lane_s_stages_run_here(tmp_path, venv_env):
    env = {**venv_env, "DVC_NO_ANALYTICS": "1"}
    repo = tmp_path / "repo"
    make_repo(repo, env)
    # a2 fails in a lane's worktree only (an uncommitted edit: the lane sees it too)
    spec = yaml.safe_load((repo / "dvc.yaml").read_text())
    spec["stages"]["a2"]["cmd"] = "case $PWD in */lanes/*) false;; esac && " + spec["stages"]["a2"]["cmd"]
    (repo / "dvc.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    proc = subprocess.run([sys.executable, str(SCRIPT), "--lanes", "2"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[lane 1] FAILED" in proc.stdout
    assert "Running stage 'a2'" in proc.stdout.split("closing repro")[1]
    assert "up to date" in sh(["dvc", "status"], repo, env).lower()


def test_one_lane_is_a_plain_repro_with_pinned_threads(tmp_path, venv_env):
    env = {**venv_env, "DVC_NO_ANALYTICS": "1"}
    env.pop("OMP_NUM_THREADS", None)
    repo = tmp_path / "repo"
    make_repo(repo, env)
    spec = yaml.safe_load((repo / "dvc.yaml").read_text())  # a1 records the thread count its process saw
    spec["stages"]["a1"]["cmd"] = "echo $OMP_NUM_THREADS > threads.txt && " + spec["stages"]["a1"]["cmd"]
    (repo / "dvc.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    out = sh([sys.executable, str(SCRIPT), "--lanes", "1"], repo, env)
    assert "one lane" in out and "Running stage 'a1'" in out and "[lane" not in out
    assert (repo / "threads.txt").read_text().strip() == str(STAGE_THREADS)
    assert "up to date" in sh(["dvc", "status"], repo, env).lower()


def test_a_shared_root_stage_runs_in_each_part_that_reads_it(tmp_path, venv_env):
    """A root stage (it reads no other stage's outputs; cheap and deterministic, like household_suite) does not tie
    the parts reading it together: each part carries it, so the part without a persistent output can move."""
    env = {**venv_env, "DVC_NO_ANALYTICS": "1"}
    repo = tmp_path / "repo"
    make_repo(repo, env)
    spec = yaml.safe_load((repo / "dvc.yaml").read_text())
    spec["stages"]["b1"]["deps"] = ["src_b.txt", "out/a1"]  # a1 now feeds both chains
    spec["stages"]["b1"]["cmd"] = f"{CMD} out/b1 src_b.txt out/a1"
    (repo / "dvc.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    out = sh([sys.executable, str(SCRIPT), "--lanes", "2", "--dry-run"], repo, env)
    assert "plan: here: a1 b1 b2 (stays here: b2 keeps a persistent output (store))" in out
    assert "plan: lane 1: a1 a2" in out
