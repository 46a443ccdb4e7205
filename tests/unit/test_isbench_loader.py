"""Loader parity with IS-Bench (issue 17): what real upstream files do, on a hand-written corpus.

``tests/data/isbench_corpus`` holds upstream-format files (``tasks/<name>.json`` +
``bddl/<name>/problem0.bddl``); tasks named ``world_*`` there belong to the world-semantics tests.
"""

import json
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embodied_safety.envs.household.env import LoadFailure, load_task_dir, load_task_file, load_warnings
from embodied_safety.envs.household.episode import run_episode
from embodied_safety.envs.household.scripted import make_policy
from embodied_safety.envs.household.task import write_task
from tests.helpers import fan_task

CORPUS = Path(__file__).parent.parent / "data" / "isbench_corpus"
UNLOADABLE = {"not_utf8": ("<root>", "not UTF-8"), "not_json": ("<root>", "invalid JSON"),
              "json_list": ("<root>", "expected a JSON object, got list"), "missing_bddl": ("bddl", "not found")}
LOADABLE = ("completion_trigger", "duplicate_trigger", "multi_goal", "unknown_objects")


def corpus() -> tuple[dict[str, object], dict[str, LoadFailure]]:
    compiled, failures = load_task_dir(CORPUS)
    mine = {c.name: c for c in compiled if not c.name.startswith("world_")}
    return mine, {Path(f.path).stem: f for f in failures if not Path(f.path).stem.startswith("world_")}


def test_corpus_loads_every_file_as_a_task_or_a_named_failure():
    compiled, failures = corpus()
    assert sorted(compiled) == list(LOADABLE)
    assert sorted(failures) == sorted(UNLOADABLE)
    for name, (field, reason) in UNLOADABLE.items():
        assert failures[name].path.endswith(f"{name}.json") and failures[name].field == field, failures[name]
        assert reason in failures[name].error, failures[name]


def test_several_goal_expressions_use_the_first_with_a_warning():
    c = corpus()[0]["multi_goal"]
    fields = sorted(w.field for w in c.warnings)
    assert fields == ["bddl:goal", "evaluation_goal_conditions.process_safety_goal_condition[0].safety_bddl"]
    assert all("the first is used" in w.reason and w.path.endswith("multi_goal.json") for w in c.warnings)
    gold = run_episode(c, make_policy("golden", c))
    # goal: only "the fan is clean" (the second expression, "the sink is on", is ignored); the process
    # condition is "the fan is off" (its second expression contradicts it and is ignored)
    assert gold.success and gold.safe_success


def test_unknown_objects_load_with_warnings_and_the_step_is_invalid_at_run_time():
    c = corpus()[0]["unknown_objects"]
    warnings = {w.field: w.reason for w in c.warnings}
    assert set(warnings) == {"example_planning[0].action",
                             "evaluation_goal_conditions.process_safety_goal_condition[1].action"}
    assert "cabinet.n.01_9" in warnings["example_planning[0].action"]
    assert "toaster.n.01_1" in warnings["evaluation_goal_conditions.process_safety_goal_condition[1].action"]
    gold = run_episode(c, make_policy("golden", c))
    assert gold.actions[0] == "OPEN(cabinet.n.01_9)" and gold.exec_failures == 1
    assert gold.success and gold.safe_success
    assert [o.triggered for o in gold.outcomes if o.kind == "process"] == [True, False]


def test_evaluator_writes_load_warnings_next_to_load_failures(tmp_path):
    from embodied_safety.evaluation.household_eval import evaluate_scripted, write_evaluation

    compiled, failures = load_task_dir(CORPUS)
    compiled = [c for c in compiled if c.name in LOADABLE]
    failures = [f for f in failures if Path(f.path).stem in UNLOADABLE]
    m = write_evaluation(tmp_path, evaluate_scripted(compiled, "golden"), failures, "corpus", load_warnings(compiled))
    warnings = json.loads((tmp_path / "load_warnings.json").read_text())
    assert len(warnings) == m["eval/load_warnings"] == 4 and set(warnings[0]) == {"path", "field", "reason"}
    assert len(json.loads((tmp_path / "load_failures.json").read_text())) == m["eval/load_failures"] == 4


def test_unreadable_bddl_is_a_named_failure(tmp_path):
    write_task(fan_task(), tmp_path)
    (tmp_path / "bddl" / "clean_fan" / "problem0.bddl").write_bytes(b"(define (problem \xff\xfe)")
    failure = load_task_file(tmp_path / "tasks" / "clean_fan.json")
    assert isinstance(failure, LoadFailure) and failure.field == "bddl" and "not UTF-8" in failure.error


def test_deeply_nested_bddl_is_a_named_failure(tmp_path):
    write_task(fan_task(), tmp_path)
    path = tmp_path / "tasks" / "clean_fan.json"
    data = json.loads(path.read_text())
    data["evaluation_goal_conditions"]["process_safety_goal_condition"][0]["safety_bddl"] = (
        "(:goal " + "(not " * 5000 + "(toggled_on ?sink.n.01_1)" + ")" * 5001)
    path.write_text(json.dumps(data))
    assert isinstance(load_task_file(path), LoadFailure)


# ---------------------------------------------------------------------------------------------- fuzz
VALID = json.dumps(fan_task(name="victim").to_json(), indent=1).encode()
VALID_BDDL = fan_task().bddl.encode()


def _mutate(data: bytes, cuts: list[tuple[int, bytes]]) -> bytes:
    out = bytearray(data)
    for pos, chunk in cuts:
        pos %= max(len(out), 1)
        out[pos:pos + len(chunk)] = chunk
    return bytes(out)


payloads = st.one_of(
    st.binary(max_size=300),  # random bytes
    st.integers(0, len(VALID)).map(lambda n: VALID[:n]),  # truncated task JSON
    st.lists(st.tuples(st.integers(0, 10**6), st.binary(min_size=1, max_size=8)), min_size=1, max_size=6)
    .map(lambda cuts: _mutate(VALID, cuts)),  # mutated task JSON
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                 lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                 max_leaves=12).map(lambda v: json.dumps(v).encode()),  # JSON of any shape
)
bddl_payloads = st.one_of(
    st.just(VALID_BDDL),
    st.integers(0, len(VALID_BDDL)).map(lambda n: VALID_BDDL[:n]),  # truncated BDDL
    st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from([b"(", b")", b"?", b" ", b"\xff", b"-", b"not ", b":goal"])),
             min_size=1, max_size=6).map(lambda cuts: _mutate(VALID_BDDL, cuts)),  # mutated BDDL
    st.none(),  # no BDDL folder
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task_bytes=payloads, bddl_bytes=bddl_payloads)
def test_fuzz_every_file_is_a_task_or_a_named_failure(tmp_path, task_bytes, bddl_bytes):
    root = tmp_path / "fuzz"
    shutil.rmtree(root, ignore_errors=True)
    write_task(fan_task(), root)  # the valid neighbour
    (root / "tasks" / "victim.json").write_bytes(task_bytes)
    if bddl_bytes is not None:
        (root / "bddl" / "victim").mkdir(parents=True)
        (root / "bddl" / "victim" / "problem0.bddl").write_bytes(bddl_bytes)
    compiled, failures = load_task_dir(root)  # never raises
    assert "clean_fan" in [c.name for c in compiled]
    assert len(compiled) + len(failures) == 2
    for f in failures:
        assert f.path.endswith("victim.json") and f.field and f.error
