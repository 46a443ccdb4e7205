"""Stage declarations (flows/_stage.py, flows/stages.py): dvc.yaml is generated from them, they agree with the
flows, and every stage has the one envelope CLI."""

import inspect
from pathlib import Path

import pytest
import yaml

from flows.stages import DVC_YAML, dvc_spec, dvc_yaml, stages

STAGE_NAMES = ["household_suite", "evaluate_scripted", "bootstrap_actor", "rollouts", "branches", "safebranch",
               "baselines", "alfred_port", "report", "smollm2", "agentbench_eval", "shield_demos", "bc_policy",
               "shield_rollouts", "rubric_label", "calibrate", "rtd", "shield_ppo"]


@pytest.fixture(scope="module")
def declared():
    return stages()


def test_committed_dvc_yaml_is_the_generated_one(declared):
    assert DVC_YAML.read_text() == dvc_yaml(declared), "dvc.yaml is stale: run python -m flows.stages --write-dvc-yaml"


def test_every_stage_is_declared_once_with_its_command(declared):
    assert [s.name for s in declared] == STAGE_NAMES
    for s in declared:
        expected = {"shield_ppo": "deployments/run-stage flows.shield_ppo --env ${item}"}.get(
            s.name, f"deployments/run-stage flows.{s.name}")
        assert s.cmd == expected


def test_deps_are_inputs_plus_the_import_closure(declared):
    spec = dvc_spec(declared)["stages"]
    rollouts = spec["rollouts"]["deps"]
    assert rollouts[:2] == ["data/household/splits", "models/bootstrap_actor"]
    assert {"flows/rollouts.py", "tasks/actors.py", "src/embodied_safety/rollout/shards.py",
            "src/embodied_safety/envs/household/world.py", "src/embodied_safety/actors/prompts"} <= set(rollouts)
    assert "src/embodied_safety/evaluation/report.py" not in rollouts  # not imported: editing it re-runs report only
    assert "src/embodied_safety/evaluation/report.py" in spec["report"]["deps"]
    assert spec["shield_ppo"]["foreach"] == "${shield_ppo.envs}"  # the budget picks the envs (params.yaml)
    assert "models/shield/bc/${item}" in spec["shield_ppo"]["do"]["deps"]
    assert spec["rollouts"]["outs"] == [{"data/rollouts": {"persist": True}}]
    report = spec["report"]["deps"]  # report renders ShieldVLA's tables from the env outputs, not from training code
    assert "data/shield/ppo" in report and "src/embodied_safety/shield/rl/report.py" in report
    assert not {"flows/shield_ppo.py", "src/embodied_safety/shield/rl/ppo.py"} & set(report)
    for s in spec.values():  # every dep exists (or is produced by an earlier stage, or lives outside the repo)
        body = s.get("do", s)
        for dep in body["deps"]:
            assert dep.startswith(("data/", "models/", "../")) or (DVC_YAML.parent / dep).exists(), dep


def test_declared_inputs_are_the_flow_defaults(declared):
    """The envelope passes an input to the flow parameter of the same name: it must be that parameter's default,
    so calling the flow directly (tests, notebooks) reads the same paths as the stage."""
    checked = 0
    for s in declared:
        params = inspect.signature(getattr(s.flow, "fn", s.flow)).parameters
        for name, path in s.inputs.items():
            if name in params and "${" not in path:
                assert Path(params[name].default) == Path(path), (s.name, name)
                checked += 1
    assert checked >= 15


def test_every_stage_has_the_envelope_cli(declared, capsys):
    for s in declared:
        with pytest.raises(SystemExit) as exc:
            s.main(["--help"])
        assert exc.value.code == 0
        assert "--params" in capsys.readouterr().out
    shield = next(s for s in declared if s.name == "shield_ppo")
    assert "--env" in {f for a in shield.args for f in a.flags}


def test_params_and_plots_as_declared(declared):
    spec = dvc_spec(declared)
    assert spec["stages"]["branches"]["params"] == ["branches", "rollouts.actor"]
    assert spec["stages"]["safebranch"]["params"] == ["safebranch", "promote"]
    assert "params" not in spec["stages"]["report"]
    assert "models/bootstrap_actor/training_curve.png" in spec["plots"]
    assert yaml.safe_load(DVC_YAML.read_text()) == spec


def test_no_plot_data_file_is_a_stage_metrics_file(declared):
    """A figure's data file ``<stem>.json`` once overwrote the branches stage's metrics (``funnel.json``); the
    declaration refuses that, and no declared stage does it."""
    from flows._stage import Plot, Stage

    metrics = {s.metrics for s in declared if s.metrics}
    data = {str(Path(p.path).with_suffix(".json")) for s in declared for p in s.plots if p.data}
    assert not metrics & data
    with pytest.raises(ValueError, match="metrics file"):
        Stage("x", declared[0].flow, metrics="out/funnel.json", plots=(Plot("out/funnel.png", "bars"),))


# Issue 19: a flow module is orchestration only, at most 120 lines apart from its ``Stage(...)`` declarations; what
# a stage computes lives in the library and its Prefect tasks in ``tasks/``. Every stage module, and the two
# operations (the pipeline flow, promotion).
from flows.stages import MODULES  # noqa: E402

SHORT_FLOWS = (*MODULES, "evaluate_policy", "pipeline", "promote")


def _flow_lines(path: Path) -> int:
    import ast

    text = path.read_text()
    stage_lines = sum(node.end_lineno - node.lineno + 1 for node in ast.parse(text).body  # type: ignore[operator]
                      if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                      and getattr(node.value.func, "id", None) == "Stage")
    return len(text.splitlines()) - stage_lines


@pytest.mark.parametrize("name", SHORT_FLOWS)
def test_stage_flow_modules_stay_short(name: str) -> None:
    path = Path(__file__).resolve().parents[2] / "flows" / f"{name}.py"
    assert _flow_lines(path) <= 120, f"flows/{name}.py: {_flow_lines(path)} lines besides its Stage declarations"


def test_a_stage_config_module_is_in_its_own_stage_closure_only(declared):
    """One config module per params section (issue 19): editing ``config/<section>.py`` re-runs that stage and
    the few whose library reads the same section's type, never the whole DAG."""
    readers = {"household_suite": {"household_suite", "evaluate_scripted", "bootstrap_actor", "safebranch"},
               "rubric_label": {"rubric_label", "shield_demos", "shield_rollouts", "rtd", "shield_ppo"},
               "rollouts": {"rollouts", "branches", "baselines"},
               "promote": {"safebranch"},  # promote is an operation, not a stage; safebranch reads its rule
               # the control envs' records (not a params section): every ShieldVLA stage, nothing else
               "control_envs": {"shield_demos", "bc_policy", "shield_rollouts", "rubric_label", "calibrate", "rtd",
                                "shield_ppo", "report"}}
    spec = dvc_spec(declared)["stages"]
    config = Path("src/embodied_safety/config")
    sections = sorted(p.stem for p in (DVC_YAML.parent / config).glob("*.py")
                      if p.stem not in ("__init__", "params", "shared"))
    assert len(sections) >= 17
    for section in sections:
        users = {name for name, s in spec.items() if f"{config}/{section}.py" in s.get("do", s)["deps"]}
        assert users == readers.get(section, {section}), section


def foreach_items(stage: dict) -> list[str]:
    """A foreach stage's items, a ``${section.key}`` reference resolved as ``deployments/metrics_show.py`` does."""
    from tests.helpers import ROOT, load_script

    return load_script("deployments/metrics_show.py").foreach_items(stage.get("foreach", []), ROOT / "params.yaml")


def test_every_plot_file_is_a_stage_output(declared):
    """``dvc plots diff`` reads a revision's plot files from the cache: a plot no stage outputs exists only in the
    workspace (the funnel chart was one), so every declared plot must lie in a declared out or metrics file."""
    spec = dvc_spec(declared)
    outs = []
    for s in spec["stages"].values():
        body = s.get("do", s)
        for o in body.get("outs", []) + body.get("metrics", []):
            path = o if isinstance(o, str) else next(iter(o))
            outs += [path.replace("${item}", item) for item in foreach_items(s)] if "${item}" in path else [path]
    for p in spec["plots"]:
        f = p if isinstance(p, str) else next(iter(p))
        assert any(f == o or f.startswith(o.rstrip("/") + "/") for o in outs), f


def test_a_failed_or_killed_run_leaves_no_scratch_folder_beside_its_outputs(tmp_path, monkeypatch):
    """Issue 19: a stage's scratch folders (``.<out>.tmp-*``) sit beside its outputs, inside folders another stage may
    hash; the envelope removes a killed run's before running and a failed run's after."""
    from embodied_safety.io import replace_dir, scratch_dir, write_json
    from flows._stage import Out, Stage

    monkeypatch.chdir(tmp_path)
    stale = tmp_path / "data" / ".out.tmp-killed"
    (stale / "part").mkdir(parents=True)
    seen: list[bool] = []

    def ok(out: Path = Path("data/out")) -> None:
        seen.append(stale.exists())  # already gone when the flow starts
        tmp = scratch_dir(out)
        write_json(tmp / "x.json", {"a": 1})
        replace_dir(tmp, out)
        write_json(Path("data/metrics.json"), {"a": 1})

    def fails(out: Path = Path("data/out")) -> None:
        write_json(scratch_dir(out) / "half.json", {"a": 1})
        raise RuntimeError("boom")

    stage = Stage("ok", ok, inputs={"out": "data/out"}, outs=(Out("data/out"),), metrics="data/metrics.json")
    stage.main([])
    assert seen == [False] and (tmp_path / "data" / "out" / "x.json").is_file()
    with pytest.raises(RuntimeError, match="boom"):
        Stage("fails", fails, inputs={"out": "data/out"}, outs=("data/out",)).main([])
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["metrics.json", "out"]


def test_out_paths_resolve_the_foreach_item(declared):
    import argparse

    ppo = next(s for s in declared if s.name == "shield_ppo")
    paths = {str(p) for p in ppo.out_paths(argparse.Namespace(env="dubins"))}
    assert {"data/shield/ppo/dubins", "models/shield/ppo/dubins", "data/shield/ppo_metrics_dubins.json"} <= paths
    assert not any("${item}" in p for p in map(str, ppo.out_paths()))



TINY_STAGE = """
import atexit, os, threading, time
from pathlib import Path
from embodied_safety.io import write_json
from flows._stage import Stage

class Teardown:
    def __del__(self):  # runs when the interpreter frees this module's objects at exit
        Path("teardown.txt").write_text("ran")

KEPT = Teardown()

def tiny(out: Path = Path("data/out.json")) -> None:
    if os.environ.get("TINY_FAIL"):
        raise RuntimeError("boom")
    write_json(out, {"a": 1})
    threading.Thread(target=lambda: (time.sleep(0.3), Path("thread.txt").write_text("joined"))).start()
    atexit.register(lambda: Path("atexit.txt").write_text("ran"))
    print("buffered line")

STAGE = Stage("tiny", tiny, inputs={"out": "data/out.json"}, outs=("data/out.json",))
if __name__ == "__main__":
    STAGE.main()
"""


def test_a_stage_process_ends_without_teardown_after_threads_and_exit_handlers(tmp_path):
    """``python -m <stage>`` skips the interpreter's teardown (1.35 s per stage process) but still joins non-daemon
    threads, runs ``atexit`` handlers and flushes stdout; a failing stage still exits non-zero."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    (tmp_path / "tinystage.py").write_text(TINY_STAGE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(repo), str(repo / "src")])}

    def run(**extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "tinystage"], cwd=tmp_path, env={**env, **extra},
                              capture_output=True, text=True, timeout=120)

    done = run()
    assert done.returncode == 0, done.stderr
    assert "buffered line" in done.stdout  # a pipe: block-buffered, flushed before os._exit
    assert (tmp_path / "data" / "out.json").is_file()
    assert (tmp_path / "thread.txt").read_text() == "joined" and (tmp_path / "atexit.txt").read_text() == "ran"
    assert not (tmp_path / "teardown.txt").exists()  # the teardown was skipped
    failed = run(TINY_FAIL="1")
    assert failed.returncode != 0 and "boom" in failed.stderr
    assert (tmp_path / "teardown.txt").exists()  # a failure takes the interpreter's normal way out
