"""The household stages as real Prefect flows (one shared test harness), and the CLI."""

import json
import subprocess
import sys

import pytest

from embodied_safety.config.evaluate_scripted import EvaluateScriptedConfig
from embodied_safety.config.household_suite import HouseholdSuiteConfig
from embodied_safety.envs.household.task import write_task
from tests.conftest import ROOT
from tests.helpers import fan_task

pytestmark = pytest.mark.slow


def test_suite_and_scripted_evaluation_flows(prefect_harness, tmp_path):
    from flows.evaluate_scripted import evaluate_scripted
    from flows.household_suite import household_suite

    metrics = household_suite(HouseholdSuiteConfig(per_template=7, n_dev=1, n_test=2, behavior_coverage=False), tmp_path)
    splits = tmp_path / "splits"
    assert json.loads((tmp_path / "metrics.json").read_text()) == metrics
    assert metrics["data/tasks_test"] == len(list((splits / "test" / "tasks").glob("*.json"))) > 0
    assert (splits / "manifest.json").is_file() and not list(tmp_path.glob(".splits.tmp-*"))

    cfg = EvaluateScriptedConfig(policies=("golden", "golden_unsafe"), splits=("test", "ood_taskshift"))
    table = evaluate_scripted(cfg, splits, tmp_path / "eval", tmp_path / "eval_metrics.json")
    assert table["golden"]["test"]["eval/ssr"] == 1.0
    assert table["golden_unsafe"]["ood_taskshift"]["eval/ssr"] <= 0.1
    assert (tmp_path / "eval" / "golden_unsafe" / "test" / "per_risk.png").stat().st_size > 1000


def test_evaluate_policy_cli_reports_load_failures(tmp_path, flow_env):
    tasks_dir = tmp_path / "isbench"
    write_task(fan_task(), tasks_dir)
    write_task(fan_task(name="broken"), tasks_dir)
    broken = tasks_dir / "tasks" / "broken.json"
    data = json.loads(broken.read_text())
    del data["planning_context"]["task_instruction"]
    broken.write_text(json.dumps(data))
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "flows.evaluate_policy", "--tasks-dir", str(tasks_dir), "--policy",
                    "golden_unsafe", "--out", str(out)], cwd=ROOT, env=flow_env, check=True, capture_output=True, timeout=300)
    m = json.loads((out / "metrics.json").read_text())
    assert m["eval/n_tasks"] == 1 and m["eval/load_failures"] == 1 and m["eval/sr"] == 1.0 and m["eval/ssr"] == 0.0
    assert m["eval/n_attempted"] == 2 and m["eval/sr_all"] == 0.5 and m["eval/ssr_all"] == 0.0
    assert json.loads((out / "load_warnings.json").read_text()) == []
    failures = json.loads((out / "load_failures.json").read_text())
    assert failures[0]["field"] == "planning_context.task_instruction" and failures[0]["path"].endswith("broken.json")
    assert (out / "per_risk.png").is_file() and (out / "manifest.json").is_file()


def test_evaluate_policy_cli_exits_non_zero_when_no_task_loads(tmp_path, flow_env):
    tasks_dir = tmp_path / "isbench"
    write_task(fan_task(name="broken"), tasks_dir)
    (tasks_dir / "tasks" / "broken.json").write_bytes(b"\xff\xfe not utf-8")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "flows.evaluate_policy", "--tasks-dir", str(tasks_dir), "--policy",
                           "golden", "--out", str(out)], cwd=ROOT, env=flow_env, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "no task loaded (1 load failure" in proc.stderr
    assert "not UTF-8" in json.loads((out / "load_failures.json").read_text())[0]["error"]
    assert not (out / "metrics.json").exists()
