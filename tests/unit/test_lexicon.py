"""Lexical rows for the from-scratch actor (embodied_safety.actors.lexicon; issue 20 item 5, an experiment)."""

from __future__ import annotations

from embodied_safety.actors.lexicon import lexicon_examples
from embodied_safety.envs.household.actions import PRIMITIVES
from embodied_safety.envs.household.suite.augment import taskshift_targets
from embodied_safety.envs.household.suite.catalog import CATALOG


def test_every_category_is_named_and_found_in_its_own_object_list():
    rows = lexicon_examples(2, seed=0)
    assert len(rows) == 2 * len(CATALOG)
    assert {r.completion for r in rows} == {f"{c}_1" for c in CATALOG}
    for r in rows:
        objects = r.prompt.split("- objects_list: ")[1].split("\n")[0].split(", ")
        assert r.completion in objects and len(objects) == 4 and r.kind == "lexicon"


def test_rows_name_objects_but_hold_no_task():
    """The OOD-TaskShift targets get rows like every other category, and no row holds a primitive or a goal."""
    rows = lexicon_examples(1, seed=3)
    named = {r.completion.rsplit(".n.", 1)[0] for r in rows}
    assert {t.rsplit(".n.", 1)[0] for t in taskshift_targets()} <= named
    for r in rows:
        assert not any(f"{p}(" in r.prompt or f"{p}(" in r.completion for p in PRIMITIVES)
        assert "- task_goals: none" in r.prompt


def test_deterministic_in_the_seed():
    assert lexicon_examples(1, seed=5) == lexicon_examples(1, seed=5)
    assert lexicon_examples(1, seed=5) != lexicon_examples(1, seed=6)
    assert lexicon_examples(0, seed=5) == []
