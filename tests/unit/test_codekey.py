"""Code keys from the import closure (embodied_safety.codekey): what is in a closure, and what changes a key."""

import shutil

from embodied_safety.codekey import (
    REPO,
    closure_deps,
    closure_files,
    code_key,
    import_closure,
    imported_modules,
)
from embodied_safety.rollout.collect import ROLLOUT_CODE


def copy_code(dst):
    """The repository's code (src/, flows/, tasks/) in ``dst``, bytes unchanged."""
    for folder in ("src/embodied_safety", "flows", "tasks"):
        shutil.copytree(REPO / folder, dst / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dst


def test_closure_follows_relative_lazy_and_from_imports_with_parent_packages():
    direct = imported_modules("embodied_safety.rollout.shards")
    assert {"embodied_safety.io", "embodied_safety.records", "embodied_safety.rollout.runner"} <= direct  # relative
    closure = import_closure("flows.rubric_label")
    # lazy (function-level) imports count, `from pkg import module` counts the module, parents' __init__ too
    assert {"embodied_safety.shield.costs.metrics", "embodied_safety.shield.costs.rubrics", "embodied_safety.shield",
            "embodied_safety", "flows", "tasks", "tasks.shield"} <= set(closure)
    assert not any(m.startswith(("prefect", "numpy")) for m in closure)  # third-party: not repository files


def test_closure_holds_declared_data_and_leaves_out_what_is_not_imported():
    files = closure_files("flows.rubric_label")
    assert "src/embodied_safety/shield/costs/prompts/dubins_vl_5r.txt" in files  # vlm_scorer reads its prompts
    assert "src/embodied_safety/shield/costs/prompts" in closure_deps("flows.rubric_label")
    report = closure_files("flows.report")
    assert "src/embodied_safety/evaluation/report.py" in report
    # report renders ShieldVLA's tables with shield/rl/report.py alone: no training, scoring or env code
    assert {f for f in report if "/shield/" in f} == {"src/embodied_safety/shield/__init__.py",
                                                      "src/embodied_safety/shield/rl/__init__.py",
                                                      "src/embodied_safety/shield/rl/report.py"}
    assert not any("/agentbench/" in f for f in report)
    assert "flows/report.py" not in closure_files("flows.household_suite")


def test_code_key_is_stable_and_equal_in_a_copy(tmp_path):
    root = copy_code(tmp_path)
    assert code_key("flows.rollouts") == code_key("flows.rollouts") == code_key("flows.rollouts", root=root)
    assert len(code_key("flows.rollouts")) == 20


def test_an_edit_changes_the_key_of_exactly_the_modules_that_import_the_file(tmp_path):
    root = copy_code(tmp_path)
    before = {m: code_key(m, root=root) for m in ("flows.rollouts", "flows.report", "flows.shield_demos")}
    world = root / "src/embodied_safety/envs/household/world.py"
    world.write_text(world.read_text() + "\n# an edit\n")
    after = {m: code_key(m, root=root) for m in before}
    assert after["flows.rollouts"] != before["flows.rollouts"]
    assert after["flows.shield_demos"] == before["flows.shield_demos"]  # the control envs do not import it
    prompt = root / "src/embodied_safety/actors/prompts/actor_compact_v1.txt"
    prompt.write_text(prompt.read_text() + " ")
    assert code_key(*ROLLOUT_CODE, root=root) != code_key(*ROLLOUT_CODE)  # a prompt template is code too


def test_modules_registered_by_string_entry_point_are_in_the_closure():
    """Gymnasium registers the control envs by string (``"embodied_safety.envs.control.franka:FrankaReachEnv"``):
    no import statement names franka.py, yet every stage that makes the env runs it, so a change to it must re-run
    them (dvc.yaml's deps are these closures)."""
    from embodied_safety.codekey import closure_deps, imported_modules
    from embodied_safety.envs.control import ENTRY_POINTS

    modules = {entry.split(":")[0] for entry in ENTRY_POINTS.values()}
    assert modules <= imported_modules("embodied_safety.config.control_envs")  # the records hold the entry points
    files = {f"src/{m.replace('.', '/')}.py" for m in modules}
    for stage in ("flows.shield_demos", "flows.bc_policy", "flows.shield_rollouts", "flows.shield_ppo"):
        assert files <= set(closure_deps(stage)), stage
    assert not files & set(closure_deps("flows.household_suite"))  # not a reason to re-run the household stages
