"""The default suite meets the issue's targets and its invariants hold on every split."""

from collections import Counter

import pytest

from embodied_safety.envs.household.env import compile_task
from embodied_safety.envs.household.suite.generate import ID_SPLITS, OOD_SPLITS, generate_suite
from embodied_safety.envs.household.suite.templates import TEMPLATES
from embodied_safety.envs.household.task import RISK_TYPES
from embodied_safety.evaluation.household_eval import evaluate_scripted
from embodied_safety.evaluation.household_metrics import household_metrics


@pytest.fixture(scope="module")
def suite():
    return generate_suite()


@pytest.fixture(scope="module")
def compiled(suite):
    return {split: [compile_task(t) for t in tasks] for split, tasks in suite.items()}


def all_tasks(suite):
    return [t for tasks in suite.values() for t in tasks]


def test_size_rooms_and_templates(suite):
    assert len(TEMPLATES) >= 30
    assert {t.room for t in TEMPLATES} == {"kitchen", "living_room", "utility_room", "garden", "bathroom"}
    assert sum(len(suite[s]) for s in ID_SPLITS) >= 300
    assert len(suite["dev"]) >= 32
    assert all(len(suite[s]) > 0 for s in (*ID_SPLITS, *OOD_SPLITS))


def test_risk_coverage_and_condition_kinds(suite):
    tasks = all_tasks(suite)
    per_risk = Counter(c.risk_type for t in tasks for c in t.conditions)
    assert set(per_risk) == set(RISK_TYPES)
    assert min(per_risk.values()) >= 20, per_risk
    assert sum(len(t.process_conditions) for t in tasks) >= 60
    triggers = {("always" if c.action is None else "completion" if c.action == "completion" else "action")
                for t in tasks for c in t.termination_conditions}
    assert triggers == {"always", "completion", "action"}


def test_contrast_tasks_exist_for_many_templates(suite):
    contrast = [t for t in all_tasks(suite) if t.task_info.get("contrast")]
    assert len({t.task_info["template"] for t in contrast}) >= 20
    assert all(any(s.is_safety_step for s in t.example_planning) for t in contrast)


def test_test_tasks_are_unseen_combinations_of_seen_categories(suite):
    train = {(t.task_info["template"], tuple(sorted(t.task_info["slots"].items()))) for t in suite["train"]}
    seen = {(t.task_info["template"], k, v) for t in suite["train"] for k, v in t.task_info["slots"].items()}
    for t in suite["test"] + suite["dev"]:
        key = (t.task_info["template"], tuple(sorted(t.task_info["slots"].items())))
        assert key not in train, t.name
        assert all((key[0], k, v) in seen for k, v in key[1]), t.name


def test_taskshift_targets_never_targets_in_train(suite):
    by_name = {t.name: t for t in TEMPLATES}
    train_targets = {t.task_info["slots"][by_name[t.task_info["template"]].target_slot] for t in suite["train"]}
    for t in suite["ood_taskshift"]:
        target = t.task_info["slots"][by_name[t.task_info["template"]].target_slot]
        assert target not in train_targets, t.name


def test_objectshift_injects_one_object_and_keeps_goal_and_conditions(suite):
    base = {t.name: t for t in suite["test"]}
    for t in suite["ood_objectshift"]:
        source = base[t.name.split("__objshift_")[0]]
        assert t.execution_goal == source.execution_goal and t.conditions == source.conditions
        assert len(t.object_list) == len(source.object_list) + 1
    roles = Counter(t.task_info["injected"]["role"] for t in suite["ood_objectshift"])
    assert roles["neutral"] == len(suite["test"]) and len(roles) >= 4


@pytest.mark.parametrize("split", [*ID_SPLITS, *OOD_SPLITS])
def test_golden_is_perfect_and_golden_unsafe_succeeds_unsafely(compiled, split):
    gold = household_metrics(evaluate_scripted(compiled[split], "golden"))
    assert gold["eval/sr"] == gold["eval/ssr"] == gold["eval/srec"] == 1.0
    unsafe = household_metrics(evaluate_scripted(compiled[split], "golden_unsafe"))
    assert unsafe["eval/sr"] >= 0.9 and unsafe["eval/ssr"] <= 0.1


def test_task_names_are_unique_across_splits(suite):
    names = [t.name for t in all_tasks(suite)]
    assert len(names) == len(set(names))


def test_generation_is_deterministic(suite):
    again = generate_suite()
    assert [t.to_json() for t in all_tasks(again)] == [t.to_json() for t in all_tasks(suite)]
