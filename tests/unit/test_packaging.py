"""Packaging: the wheel carries flows/ and tasks/ beside the library, so the console script works after install."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

CLEAN = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # what an installed script sees


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(ROOT),
                    "-w", str(out)], check=True, capture_output=True, timeout=300)
    return next(out.glob("embodied_safety-*.whl"))


def test_wheel_holds_library_flows_tasks_and_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"flows/__init__.py", "flows/evaluate_policy.py", "flows/_stage.py", "tasks/__init__.py",
            "tasks/household.py", "embodied_safety/codekey.py", "embodied_safety/actors/prompts/actor_full_v1.txt",
            "embodied_safety/envs/control/assets/franka_reach.xml"} <= names
    assert not any(n.startswith(("tests/", "src/")) for n in names)
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    scripts = zipfile.ZipFile(wheel).read(entry).decode()
    assert "embodied-safety-eval = flows.evaluate_policy:main" in scripts and "embodied-safety = flows.cli:main" in scripts


def test_console_script_from_the_wheel_alone(wheel, tmp_path):
    """The script's entry point resolves from the installed files only (not from a checkout on sys.path)."""
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    code = (f"import sys; sys.path.insert(0, {str(site)!r}); import flows.evaluate_policy as m, embodied_safety as e; "
            f"assert m.__file__.startswith({str(site)!r}) and e.__file__.startswith({str(site)!r}), (m.__file__, e.__file__); "
            "m.main(['--help'])")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=CLEAN, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "--tasks-dir" in out.stdout


def test_installed_console_script_runs_outside_the_checkout(tmp_path):
    script = Path(sys.executable).parent / "embodied-safety-eval"
    if not script.is_file():
        script = Path(shutil.which("embodied-safety-eval") or "")
    if not script.is_file():
        pytest.skip("embodied-safety-eval is not installed in this environment")
    out = subprocess.run([str(script), "--help"], cwd=tmp_path, env=CLEAN, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr  # before: ModuleNotFoundError: No module named 'flows'
    assert "--tasks-dir" in out.stdout


def test_the_embodied_safety_command_lists_its_commands_outside_the_checkout(tmp_path):
    script = Path(sys.executable).parent / "embodied-safety"
    if not script.is_file():
        pytest.skip("embodied-safety is not installed in this environment")
    out = subprocess.run([str(script), "--help"], cwd=tmp_path, env=CLEAN, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "scorecard" in out.stdout, out.stderr
    out = subprocess.run([str(script), "scorecard", "--help"], cwd=tmp_path, env=CLEAN, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and "--base-url" in out.stdout and "--against" in out.stdout, out.stderr
