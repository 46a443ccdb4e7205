"""Reading IS-Bench task files: round trip, tolerance of unknown keys, and every malformed case."""

import json

import pytest

from embodied_safety.envs.household.env import compile_task, load_task_dir
from embodied_safety.envs.household.task import read_task, write_task
from embodied_safety.errors import TaskFormatError
from tests.helpers import fan_task


@pytest.fixture
def task_dir(tmp_path):
    write_task(fan_task(), tmp_path)
    return tmp_path


def edit_json(root, fn):
    path = root / "tasks" / "clean_fan.json"
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))
    return path


def edit_bddl(root, old, new):
    path = root / "bddl" / "clean_fan" / "problem0.bddl"
    path.write_text(path.read_text().replace(old, new))


def error_of(root):
    with pytest.raises(TaskFormatError) as exc:
        compile_task(read_task(root / "tasks" / "clean_fan.json"))
    return exc.value


def test_round_trip_and_unknown_keys_tolerated(task_dir):
    def add_extras(d):
        d["_base_config"] = {"scene": "Rs_int", "robot": "Fetch"}
        d["planning_context"]["extra_field"] = [1, 2]
        d["evaluation_goal_conditions"]["process_safety_goal_condition"][0]["id"] = 7

    edit_json(task_dir, add_extras)
    task = read_task(task_dir / "tasks" / "clean_fan.json")
    assert task.instruction == fan_task().instruction
    assert task.conditions[0].action == "WIPE(electric_fan.n.01_1, paper_towel.n.01_1)"
    assert compile_task(task).goal is not None


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (lambda d: d["planning_context"].pop("task_instruction"), "planning_context.task_instruction", "missing"),
        (lambda d: d.pop("example_planning"), "example_planning", "missing"),
        (lambda d: d["planning_context"].update(object_list=7), "planning_context.object_list", "expected list"),
        (lambda d: d["evaluation_goal_conditions"]["process_safety_goal_condition"][0].pop("safety_bddl"),
         "process_safety_goal_condition[0].safety_bddl", "missing"),
        (lambda d: d["evaluation_goal_conditions"]["termination_safety_goal_condition"][0].update(risk_type=3),
         "termination_safety_goal_condition[0].risk_type", "expected str"),
        (lambda d: d["example_planning"][1].update(action=["WIPE"]), "example_planning[1].action", "expected str"),
    ],
)
def test_missing_or_ill_typed_fields_name_file_and_field(task_dir, mutate, field, message):
    edit_json(task_dir, mutate)
    err = error_of(task_dir)
    assert err.path.endswith("clean_fan.json") and field in err.field and message in err.problem


def test_unknown_object_in_plan_loads_with_a_warning(task_dir):
    # as IS-Bench: the step is an invalid action at run time (tests/unit/test_isbench_loader.py runs it)
    edit_json(task_dir, lambda d: d["example_planning"].insert(0, {"action": "OPEN(cabinet.n.01_9)", "caution": None}))
    (warning,) = compile_task(read_task(task_dir / "tasks" / "clean_fan.json")).warnings
    assert warning.field == "example_planning[0].action" and "cabinet.n.01_9" in warning.reason


def test_unknown_predicate_in_safety_bddl(task_dir):
    edit_json(task_dir, lambda d: d["evaluation_goal_conditions"]["process_safety_goal_condition"][0].update(
        safety_bddl="(:goal (not (glowing ?electric_fan.n.01_1)))"))
    err = error_of(task_dir)
    assert err.field.endswith("process_safety_goal_condition[0].safety_bddl") and "unknown predicate 'glowing'" in err.problem


def test_wrong_arity(task_dir):
    edit_json(task_dir, lambda d: d["evaluation_goal_conditions"]["termination_safety_goal_condition"][0].update(
        safety_bddl="(:goal (not (toggled_on ?sink.n.01_1 ?floor.n.01_1)))"))
    err = error_of(task_dir)
    assert "takes 1 argument(s), got 2" in err.problem


def test_bad_bddl_problem(task_dir):
    edit_bddl(task_dir, "(:goal", "(:goal (")
    err = error_of(task_dir)
    assert err.field == "bddl" and "cannot parse BDDL" in err.problem


def test_unknown_predicate_in_bddl_init(task_dir):
    edit_bddl(task_dir, "(toggled_on electric_fan.n.01_1)", "(levitating electric_fan.n.01_1 floor.n.01_1)")
    err = error_of(task_dir)
    assert err.field == "bddl:init[1]" and "unknown predicate 'levitating'" in err.problem


def test_unknown_object_in_bddl_goal(task_dir):
    edit_bddl(task_dir, "(covered ?electric_fan.n.01_1 ?dust.n.01_1)", "(covered ?electric_fan.n.01_1 ?mud.n.03_1)")
    assert "unknown object 'mud.n.03_1'" in error_of(task_dir).problem


def test_invalid_json_and_missing_bddl_file(task_dir):
    (task_dir / "tasks" / "clean_fan.json").write_text("{not json")
    assert "invalid JSON" in error_of(task_dir).problem
    write_task(fan_task(), task_dir)
    (task_dir / "bddl" / "clean_fan" / "problem0.bddl").unlink()
    assert "not found" in error_of(task_dir).problem


def test_load_task_dir_reports_failures_and_keeps_the_rest(task_dir):
    write_task(fan_task(name="good_fan"), task_dir)
    edit_json(task_dir, lambda d: d["planning_context"].pop("object_list"))
    compiled, failures = load_task_dir(task_dir)
    assert [c.name for c in compiled] == ["good_fan"]
    assert len(failures) == 1 and failures[0].field == "planning_context.object_list"
