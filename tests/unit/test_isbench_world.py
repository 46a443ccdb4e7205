"""The household world on upstream IS-Bench semantics (issue 17, items 1-9), plus a corpus of
hand-written upstream-format tasks (``tests/data/isbench_corpus/tasks/world_*.json``) whose golden
plans succeed and whose key steps matter.

Worlds here are built from BDDL synsets with ``taxonomy.object_profiles`` (the BEHAVIOR taxonomy),
as ``CompiledTask.new_world`` builds them.
"""

from pathlib import Path

import pytest

from embodied_safety.envs.household.actions import Action, parse_action
from embodied_safety.envs.household.env import CompiledTask, compile_task, load_task_dir
from embodied_safety.envs.household.episode import run_episode
from embodied_safety.envs.household.predicates import category_of
from embodied_safety.envs.household.scripted import golden_policy, golden_unsafe_policy
from embodied_safety.envs.household.task import read_task
from embodied_safety.envs.household.taxonomy import (
    category_profile,
    cooked_derivative,
    object_profiles,
    remover_conditions,
    source_substances,
)
from embodied_safety.envs.household.wash import WashRuleError, parse_wash_rules
from embodied_safety.envs.household.world import PRE_CONDITION_ERROR, HouseholdWorld

CORPUS = Path(__file__).parent.parent / "data" / "isbench_corpus"


def tworld(instances, *facts, declared=None, rules=None, hazards=False):
    """A world whose abilities come from the taxonomy (plus ``declared``), as a compiled task's do."""
    objects = {i: category_of(i) for i in instances}
    return HouseholdWorld(objects, {}, facts, wash_rules=parse_wash_rules(rules),
                          profiles=object_profiles(objects, declared or {}), hazards=hazards)


def ok(w, action):
    r = w.step(action)
    assert r.ok, r
    return r


def fails(w, action, reason_part=""):
    before = w.state_hash()
    r = w.step(action)
    assert not r.ok and r.error == PRE_CONDITION_ERROR, r
    assert reason_part in r.reason, r.reason
    assert w.state_hash() == before
    return r


# ------------------------------------------------------------------ 1. abilities from the taxonomy
def test_particle_remover_is_a_soakable_cleaning_tool_with_remover_conditions():
    sponge = category_profile("sponge.n.01")
    assert sponge.from_taxonomy and {"cleaningTool", "soakable"} <= sponge.abilities
    assert remover_conditions(sponge, "dust.n.01") == []  # works dry
    stain = remover_conditions(sponge, "stain.n.01")
    assert ["saturated", "detergent.n.02"] in stain and ["saturated", "water.n.06"] not in stain


def test_heat_source_parameters():
    stove, toaster = category_profile("stove.n.01"), category_profile("toaster.n.02")
    assert {"heatSource", "toggleable"} <= stove.abilities and {"heatSource", "toggleable"} <= toaster.abilities
    assert stove.param("heatSource", "requires_inside") == 0
    assert toaster.param("heatSource", "requires_inside") == 1
    assert stove.param("heatSource", "requires_toggled_on") == 1


def test_fluid_source_cold_source_cookable_cloth_substance_sliceable_washer():
    sink = category_profile("sink.n.01")
    assert "waterSource" in sink.abilities and source_substances(sink) == ["water.n.06"]
    assert "coldSource" in category_profile("electric_refrigerator.n.01").abilities
    assert {"cookable", "freezable", "sliceable"} <= category_profile("apple.n.01").abilities
    assert {"cloth", "soakable", "cleaningTool"} <= category_profile("towel.n.01").abilities
    assert {"liquid", "substance", "cookable"} <= category_profile("water.n.06").abilities
    assert "fillable" in category_profile("saucepot.n.01").abilities
    assert cooked_derivative("water.n.06") == "cooked__water.n.01"
    assert "washer" in category_profile("washer.n.03").abilities
    assert "washer" in category_profile("dishwasher.n.01").abilities


def test_declared_abilities_merge_and_unknown_synsets_keep_only_declared():
    objects = {"stove.n.01_1": "stove.n.01", "gizmo.n.01_1": "gizmo.n.01", "gizmo.n.01_2": "gizmo.n.01"}
    profiles = object_profiles(objects, {"stove.n.01_1": ["openable"], "gizmo.n.01_1": ["toggleable"],
                                         "gizmo.n.01": ["fillable"]})
    assert {"heatSource", "toggleable", "openable"} <= profiles["stove.n.01_1"].abilities
    assert not profiles["gizmo.n.01_1"].from_taxonomy
    assert profiles["gizmo.n.01_1"].abilities == {"toggleable", "fillable"}
    assert profiles["gizmo.n.01_2"].abilities == {"fillable"}  # a category key applies to every instance


def test_taxonomy_abilities_drive_primitives_when_the_file_declares_nothing():
    insts = ["countertop.n.01_1", "sponge.n.01_1", "sink.n.01_1", "water.n.06_1", "dust.n.01_1", "stain.n.01_1",
             "detergent.n.02_1", "bottle__of__detergent.n.01_1"]
    facts = [("covered", "countertop.n.01_1", "dust.n.01_1"), ("covered", "countertop.n.01_1", "stain.n.01_1"),
             ("contains", "bottle__of__detergent.n.01_1", "detergent.n.02_1")]
    w = tworld(insts, *facts)
    r = ok(w, "WIPE(countertop.n.01_1, sponge.n.01_1)")  # a dry sponge removes dust, not the stain
    assert "dust.n.01_1" in r.reason and w.holds("covered", "countertop.n.01_1", "stain.n.01_1")
    ok(w, "TOGGLE_ON(sink.n.01_1)")  # no (insource ...) fact: the taxonomy says a sink gives water
    ok(w, "SOAK_UNDER(sponge.n.01_1, sink.n.01_1)")
    assert w.holds("saturated", "sponge.n.01_1", "water.n.06_1")
    fails(w, "WIPE(countertop.n.01_1, sponge.n.01_1)", "cannot remove stain")  # water is not on the list
    ok(w, "SOAK_INSIDE(sponge.n.01_1, bottle__of__detergent.n.01_1)")
    ok(w, "WIPE(countertop.n.01_1, sponge.n.01_1)")
    assert not w.holds("covered", "countertop.n.01_1", "stain.n.01_1")
    # without the taxonomy the same sponge is no cleaning tool at all
    plain = HouseholdWorld({i: category_of(i) for i in insts}, {}, facts)
    fails(plain, "WIPE(countertop.n.01_1, sponge.n.01_1)", "not a cleaning tool")


def test_a_sink_filled_from_the_taxonomy_gives_its_water():
    w = tworld(["sink.n.01_1", "water.n.06_1", "saucepot.n.01_1"])
    fails(w, "FILL_WITH(saucepot.n.01_1, sink.n.01_1)", "is off")
    ok(w, "TOGGLE_ON(sink.n.01_1)")
    ok(w, "FILL_WITH(saucepot.n.01_1, sink.n.01_1)")
    assert w.holds("filled", "saucepot.n.01_1", "water.n.06_1")


def test_toaster_heats_only_what_is_inside_it():
    w = tworld(["toaster.n.02_1", "bagel.n.01_1", "countertop.n.01_1"], ("ontop", "toaster.n.02_1", "countertop.n.01_1"),
               ("ontop", "bagel.n.01_1", "countertop.n.01_1"))
    ok(w, "TOGGLE_ON(toaster.n.02_1)")
    ok(w, "PLACE_ON_TOP(bagel.n.01_1, toaster.n.02_1)")
    fails(w, "WAIT_FOR_COOKED(bagel.n.01_1)", "heat source")  # requires_inside: on top does not cook
    ok(w, "PLACE_INSIDE(bagel.n.01_1, toaster.n.02_1)")
    ok(w, "WAIT_FOR_COOKED(bagel.n.01_1)")
    assert w.holds("cooked", "bagel.n.01_1") and w.holds("hot", "bagel.n.01_1")


# ------------------------------------------------------------------ 2. WAIT(obj)
def test_wait_obj_relaxes_only_that_object():
    w = tworld(["frying_pan.n.01_1", "apple.n.01_1", "countertop.n.01_1"],
               ("ontop", "frying_pan.n.01_1", "countertop.n.01_1"), ("hot", "frying_pan.n.01_1"),
               ("ontop", "apple.n.01_1", "countertop.n.01_1"), ("frozen", "apple.n.01_1"))
    ok(w, "WAIT(frying_pan.n.01_1)")
    assert not w.holds("hot", "frying_pan.n.01_1") and w.holds("frozen", "apple.n.01_1"), "no global clock"
    ok(w, "WAIT(apple.n.01_1)")
    assert not w.holds("frozen", "apple.n.01_1")


def test_wait_obj_keeps_hot_on_a_lit_heat_source_and_frozen_in_a_cold_source():
    w = tworld(["frying_pan.n.01_1", "stove.n.01_1", "apple.n.01_1", "electric_refrigerator.n.01_1"],
               ("ontop", "frying_pan.n.01_1", "stove.n.01_1"), ("toggled_on", "stove.n.01_1"),
               ("inside", "apple.n.01_1", "electric_refrigerator.n.01_1"), ("frozen", "apple.n.01_1"))
    ok(w, "WAIT(frying_pan.n.01_1)")
    assert w.holds("hot", "frying_pan.n.01_1"), "a lit stove heats what is on it"
    ok(w, "WAIT(apple.n.01_1)")
    assert w.holds("frozen", "apple.n.01_1")
    ok(w, "TOGGLE_OFF(stove.n.01_1)")
    ok(w, "WAIT(frying_pan.n.01_1)")
    assert not w.holds("hot", "frying_pan.n.01_1")


def test_bare_wait_is_a_no_op_success_step():
    assert parse_action("WAIT()") == Action("WAIT") and parse_action("wait") == Action("WAIT")
    w = tworld(["frying_pan.n.01_1", "stove.n.01_1"], ("ontop", "frying_pan.n.01_1", "stove.n.01_1"),
               ("toggled_on", "stove.n.01_1"), ("hot", "frying_pan.n.01_1"))
    before = w.state_hash()
    r = ok(w, "WAIT()")
    assert w.state_hash() == before and w.history[-1] is r


# ------------------------------------------------------------------ 3. wash rules
RAG = ["table.n.02_1", "rag.n.01_1", "sink.n.01_1", "water.n.06_1", "stain.n.01_1", "dust.n.01_1"]


def test_list_rules_parse_and_no_conditions_means_dry():
    rules = parse_wash_rules([{"cleaning_tool": "rag.n.01", "support_system": ["stain.n.01", "dust"]}])
    assert len(rules.rules) == 1 and rules.rules[0].conditions == () and rules.rules[0].support_system == ("stain.n.01", "dust")
    w = tworld(RAG, ("covered", "table.n.02_1", "stain.n.01_1"), rules=rules.to_json())
    ok(w, "WIPE(table.n.02_1, rag.n.01_1)")  # the taxonomy alone would want detergent: the file's rule wins
    assert not w.holds("covered", "table.n.02_1", "stain.n.01_1")


def test_saturated_rule_needs_the_named_liquid():
    rules = [{"cleaning_tool": "rag.n.01_1", "support_system": "stain.n.01",
              "conditions": [{"type": "saturated", "value": True, "source": "water.n.06"}]}]
    w = tworld(RAG, ("covered", "table.n.02_1", "stain.n.01_1"), ("toggled_on", "sink.n.01_1"), rules=rules)
    fails(w, "WIPE(table.n.02_1, rag.n.01_1)", "cannot remove")
    ok(w, "SOAK_UNDER(rag.n.01_1, sink.n.01_1)")
    ok(w, "WIPE(table.n.02_1, rag.n.01_1)")


def test_toggled_on_conditions_and_types_combine():
    rules = [{"cleaning_tool": "vacuum.n.04", "support_system": "dust.n.01",
              "conditions": [{"type": "toggled_on", "value": True}]}]
    w = tworld(["vacuum.n.04_1", "floor.n.01_1", "dust.n.01_1"], ("covered", "floor.n.01_1", "dust.n.01_1"),
               declared={"vacuum.n.04_1": ["toggleable", "cleaningTool"]}, rules=rules)
    fails(w, "WIPE(floor.n.01_1, vacuum.n.04_1)", "cannot remove")
    ok(w, "TOGGLE_ON(vacuum.n.04_1)")
    ok(w, "WIPE(floor.n.01_1, vacuum.n.04_1)")
    # different types must all hold
    both = [{"cleaning_tool": "rag", "support_system": "stain",
             "conditions": [{"type": "saturated", "value": True, "source": "water.n.06"},
                            {"type": "toggled_on", "value": True, "source": "sink.n.01_1"}]}]
    w = tworld(RAG, ("covered", "table.n.02_1", "stain.n.01_1"), ("toggled_on", "sink.n.01_1"), rules=both)
    ok(w, "SOAK_UNDER(rag.n.01_1, sink.n.01_1)")
    ok(w, "TOGGLE_OFF(sink.n.01_1)")
    fails(w, "WIPE(table.n.02_1, rag.n.01_1)", "cannot remove")
    ok(w, "TOGGLE_ON(sink.n.01_1)")
    ok(w, "WIPE(table.n.02_1, rag.n.01_1)")


def test_legacy_dict_form_and_malformed_rules():
    legacy = parse_wash_rules({"stain.n.01": "dry"})
    assert legacy.legacy == {"stain.n.01": "dry"} and legacy.to_json() == {"stain.n.01": "dry"}
    w = tworld(RAG, ("covered", "table.n.02_1", "stain.n.01_1"), rules={"stain.n.01": "dry"})
    ok(w, "WIPE(table.n.02_1, rag.n.01_1)")
    with pytest.raises(WashRuleError, match=r"\[0\].support_system"):
        parse_wash_rules([{"cleaning_tool": "rag"}])
    with pytest.raises(WashRuleError, match="conditions"):
        parse_wash_rules([{"cleaning_tool": "rag", "support_system": "stain", "conditions": [{"type": "wet"}]}])


def test_fallbacks_taxonomy_then_soaked_removes_anything():
    # taxonomy: a rag removes dust dry but not a stain with water
    w = tworld(RAG, ("covered", "table.n.02_1", "dust.n.01_1"), ("covered", "table.n.02_1", "stain.n.01_1"),
               ("toggled_on", "sink.n.01_1"))
    ok(w, "WIPE(table.n.02_1, rag.n.01_1)")
    assert not w.holds("covered", "table.n.02_1", "dust.n.01_1")
    ok(w, "SOAK_UNDER(rag.n.01_1, sink.n.01_1)")
    fails(w, "WIPE(table.n.02_1, rag.n.01_1)", "cannot remove")
    # a tool the taxonomy says nothing about: soaked removes anything
    w = tworld(["gizmo.n.01_1", "table.n.02_1", "sink.n.01_1", "water.n.06_1", "stain.n.01_1"],
               ("covered", "table.n.02_1", "stain.n.01_1"), ("toggled_on", "sink.n.01_1"),
               declared={"gizmo.n.01_1": ["cleaningTool", "soakable"]})
    fails(w, "WIPE(table.n.02_1, gizmo.n.01_1)", "cannot remove")
    ok(w, "SOAK_UNDER(gizmo.n.01_1, sink.n.01_1)")
    ok(w, "WIPE(table.n.02_1, gizmo.n.01_1)")


def test_soak_rinses_off_only_what_explicit_rules_let_the_source_remove():
    rules = [{"cleaning_tool": "sink.n.01", "support_system": "stain.n.01",
              "conditions": [{"type": "toggled_on", "value": True}]}]
    w = tworld(RAG, ("covered", "rag.n.01_1", "stain.n.01_1"), ("covered", "rag.n.01_1", "dust.n.01_1"),
               ("toggled_on", "sink.n.01_1"), rules=rules)
    r = ok(w, "SOAK_UNDER(rag.n.01_1, sink.n.01_1)")
    assert "stain.n.01_1" in r.reason and not w.holds("covered", "rag.n.01_1", "stain.n.01_1")
    assert w.holds("covered", "rag.n.01_1", "dust.n.01_1"), "no rule: the taxonomy does not rinse"
    assert w.holds("saturated", "rag.n.01_1", "water.n.06_1")
    w = tworld(RAG, ("covered", "rag.n.01_1", "stain.n.01_1"), ("toggled_on", "sink.n.01_1"))
    ok(w, "SOAK_UNDER(rag.n.01_1, sink.n.01_1)")
    assert w.holds("covered", "rag.n.01_1", "stain.n.01_1")


# ------------------------------------------------------------------ 4. PLACE_INSIDE
def test_place_inside_has_no_container_ability_check():
    w = tworld(["notebook.n.01_1", "shelf.n.01_1", "cabinet.n.01_1", "countertop.n.01_1"],
               ("ontop", "notebook.n.01_1", "countertop.n.01_1"))
    assert not w.abilities["shelf.n.01_1"]
    ok(w, "PLACE_INSIDE(notebook.n.01_1, shelf.n.01_1)")
    assert w.placement("notebook.n.01_1") == ("inside", "shelf.n.01_1")
    fails(w, "PLACE_INSIDE(notebook.n.01_1, cabinet.n.01_1)", "closed")  # an openable target must be open
    ok(w, "OPEN(cabinet.n.01_1)")
    ok(w, "PLACE_INSIDE(notebook.n.01_1, cabinet.n.01_1)")
    ok(w, "CLOSE(cabinet.n.01_1)")
    fails(w, "PLACE_INSIDE(notebook.n.01_1, shelf.n.01_1)", "inside closed cabinet")


# ------------------------------------------------------------------ 5. cooking
BOIL = ["saucepot.n.01_1", "stove.n.01_1", "water.n.06_1", "cooked__water.n.01_1", "countertop.n.01_1"]


def boil_world(*extra):
    return tworld(BOIL, ("ontop", "saucepot.n.01_1", "stove.n.01_1"), ("filled", "saucepot.n.01_1", "water.n.06_1"),
                  ("contains", "saucepot.n.01_1", "water.n.06_1"), ("future", "cooked__water.n.01_1"), *extra)


def test_cooking_a_vessel_turns_its_water_into_cooked_water():
    w = boil_world()
    assert not w.holds("real", "cooked__water.n.01_1")
    fails(w, "WAIT_FOR_COOKED(saucepot.n.01_1)", "heat source")  # the stove is off
    ok(w, "TOGGLE_ON(stove.n.01_1)")
    ok(w, "WAIT_FOR_COOKED(saucepot.n.01_1)")
    assert w.holds("real", "cooked__water.n.01_1")
    assert w.holds("filled", "saucepot.n.01_1", "cooked__water.n.01_1")
    assert not w.holds("filled", "saucepot.n.01_1", "water.n.06_1")
    assert w.holds("hot", "cooked__water.n.01_1")


def test_a_substance_target_is_cooked_through_its_container():
    w = boil_world(("toggled_on", "stove.n.01_1"))
    r = ok(w, "WAIT_FOR_COOKED(water.n.06_1)")
    assert "cooked__water.n.01_1" in r.reason and w.holds("filled", "saucepot.n.01_1", "cooked__water.n.01_1")
    loose = tworld(BOIL, ("toggled_on", "stove.n.01_1"))
    fails(loose, "WAIT_FOR_COOKED(water.n.06_1)", "no container")


def test_heat_from_anywhere_below_and_around_when_required_inside():
    w = tworld(["stove.n.01_1", "frying_pan.n.01_1", "chicken.n.01_1", "oven.n.01_1", "apple.n.01_1"],
               ("ontop", "frying_pan.n.01_1", "stove.n.01_1"), ("ontop", "chicken.n.01_1", "frying_pan.n.01_1"),
               ("toggled_on", "stove.n.01_1"), ("ontop", "apple.n.01_1", "oven.n.01_1"),
               ("toggled_on", "oven.n.01_1"), ("open", "oven.n.01_1"))
    ok(w, "WAIT_FOR_COOKED(chicken.n.01_1)")  # pan on stove, chicken on pan
    assert w.holds("cooked", "chicken.n.01_1") and w.holds("hot", "chicken.n.01_1")
    fails(w, "WAIT_FOR_COOKED(apple.n.01_1)", "heat source")  # an oven requires inside
    ok(w, "PLACE_INSIDE(apple.n.01_1, oven.n.01_1)")
    ok(w, "WAIT_FOR_COOKED(apple.n.01_1)")  # no closed door needed
    assert w.holds("cooked", "apple.n.01_1")


def test_cooking_without_a_derivative_in_the_scene_just_heats_the_fluid():
    w = tworld(["saucepot.n.01_1", "stove.n.01_1", "water.n.06_1"], ("ontop", "saucepot.n.01_1", "stove.n.01_1"),
               ("filled", "saucepot.n.01_1", "water.n.06_1"), ("toggled_on", "stove.n.01_1"))
    ok(w, "WAIT_FOR_COOKED(saucepot.n.01_1)")
    assert w.holds("filled", "saucepot.n.01_1", "water.n.06_1") and w.holds("hot", "water.n.06_1")


# ------------------------------------------------------------------ 6. washer
def test_wait_for_washed_takes_the_washer_from_the_taxonomy():
    w = tworld(["washer.n.03_1", "sweater.n.01_1", "jersey.n.03_1", "stain.n.01_1", "dust.n.01_1", "floor.n.01_1"],
               ("covered", "sweater.n.01_1", "stain.n.01_1"), ("covered", "jersey.n.03_1", "dust.n.01_1"),
               ("ontop", "sweater.n.01_1", "floor.n.01_1"), ("ontop", "jersey.n.03_1", "floor.n.01_1"))
    fails(w, "WAIT_FOR_WASHED(sweater.n.01_1)", "not a washer")
    ok(w, "OPEN(washer.n.03_1)")
    fails(w, "WAIT_FOR_WASHED(washer.n.03_1)", "closed and on")
    ok(w, "PLACE_INSIDE(sweater.n.01_1, washer.n.03_1)")
    ok(w, "PLACE_INSIDE(jersey.n.03_1, washer.n.03_1)")
    fails(w, "TOGGLE_ON(washer.n.03_1)", "close it")
    ok(w, "CLOSE(washer.n.03_1)")
    fails(w, "WAIT_FOR_WASHED(washer.n.03_1)", "closed and on")
    ok(w, "TOGGLE_ON(washer.n.03_1)")
    ok(w, "WAIT_FOR_WASHED(washer.n.03_1)")
    assert not w.holds("covered", "sweater.n.01_1", "stain.n.01_1")
    assert not w.holds("covered", "jersey.n.03_1", "dust.n.01_1")


def test_empty_washer_cannot_wash():
    w = tworld(["dishwasher.n.01_1"], ("toggled_on", "dishwasher.n.01_1"))
    fails(w, "WAIT_FOR_WASHED(dishwasher.n.01_1)", "empty")


# ------------------------------------------------------------------ 7. SPREAD onto cloth
def test_spread_onto_a_cloth_saturates_it_and_onto_a_surface_covers_it():
    insts = ["bottle__of__detergent.n.01_1", "detergent.n.02_1", "towel.n.01_1", "countertop.n.01_1", "stain.n.01_1"]
    w = tworld(insts, ("contains", "bottle__of__detergent.n.01_1", "detergent.n.02_1"),
               ("covered", "countertop.n.01_1", "stain.n.01_1"))
    r = ok(w, "SPREAD(bottle__of__detergent.n.01_1, towel.n.01_1)")
    assert "soaked" in r.reason and w.holds("saturated", "towel.n.01_1", "detergent.n.02_1")
    assert not w.holds("covered", "towel.n.01_1", "detergent.n.02_1")
    ok(w, "WIPE(countertop.n.01_1, towel.n.01_1)")  # taxonomy: a detergent-soaked towel removes a stain
    ok(w, "SPREAD(bottle__of__detergent.n.01_1, countertop.n.01_1)")
    assert w.holds("covered", "countertop.n.01_1", "detergent.n.02_1")


# ------------------------------------------------------------------ 8. idempotent toggles and other details
def test_state_changes_already_done_succeed_without_change():
    w = tworld(["oven.n.01_1", "microwave.n.02_1"], ("toggled_on", "oven.n.01_1"))
    for action in ("TOGGLE_ON(oven.n.01_1)", "CLOSE(oven.n.01_1)", "TOGGLE_OFF(microwave.n.02_1)",
                   "CLOSE(microwave.n.02_1)"):
        before = w.state_hash()
        assert w.step(action).ok and w.state_hash() == before
    fails(w, "OPEN(oven.n.01_1)", "turn it off")
    ok(w, "OPEN(microwave.n.02_1)")
    fails(w, "TOGGLE_ON(microwave.n.02_1)", "close it")


def test_frozen_needs_no_closed_door_and_pour_keeps_source():
    w = tworld(["electric_refrigerator.n.01_1", "apple.n.01_1", "countertop.n.01_1", "saucepot.n.01_1",
                "bowl.n.01_1", "water.n.06_1", "shelf.n.01_1"],
               ("ontop", "apple.n.01_1", "countertop.n.01_1"), ("filled", "saucepot.n.01_1", "water.n.06_1"))
    ok(w, "OPEN(electric_refrigerator.n.01_1)")
    ok(w, "PLACE_INSIDE(apple.n.01_1, electric_refrigerator.n.01_1)")
    ok(w, "WAIT_FOR_FROZEN(apple.n.01_1, electric_refrigerator.n.01_1)")
    assert w.holds("frozen", "apple.n.01_1") and w.holds("open", "electric_refrigerator.n.01_1")
    ok(w, "POUR_INTO(saucepot.n.01_1, bowl.n.01_1)")
    assert w.holds("filled", "bowl.n.01_1", "water.n.06_1") and w.holds("filled", "saucepot.n.01_1", "water.n.06_1")
    fails(w, "POUR_INTO(saucepot.n.01_1, shelf.n.01_1)", "not fillable")
    fails(w, "FILL_WITH(bowl.n.01_1, saucepot.n.01_1)", "fluid source")


def test_place_on_top_of_a_pot_puts_it_inside_and_wipe_on_clean_fails():
    w = tworld(["saucepot.n.01_1", "apple.n.01_1", "countertop.n.01_1", "sponge.n.01_1"],
               ("ontop", "apple.n.01_1", "countertop.n.01_1"))
    ok(w, "PLACE_ON_TOP(apple.n.01_1, saucepot.n.01_1)")
    assert w.holds("inside", "apple.n.01_1", "saucepot.n.01_1") and w.holds("ontop", "apple.n.01_1", "saucepot.n.01_1")
    fails(w, "WIPE(countertop.n.01_1, sponge.n.01_1)", "already clean")


def test_only_manipulated_objects_are_checked_for_closed_containers():
    w = tworld(["cabinet.n.01_1", "sponge.n.01_1", "plate.n.04_1", "dust.n.01_1"],
               ("inside", "plate.n.04_1", "cabinet.n.01_1"), ("covered", "plate.n.04_1", "dust.n.01_1"),
               ("inside", "sponge.n.01_1", "cabinet.n.01_1"))
    fails(w, "WIPE(plate.n.04_1, sponge.n.01_1)", "inside closed cabinet")  # the tool is manipulated
    ok(w, "OPEN(cabinet.n.01_1)")
    ok(w, "PLACE_ON_TOP(sponge.n.01_1, cabinet.n.01_1)")
    ok(w, "CLOSE(cabinet.n.01_1)")
    ok(w, "WIPE(plate.n.04_1, sponge.n.01_1)")  # the wiped target is not


# ------------------------------------------------------------------ 9. our hazard physics off by default
@pytest.mark.parametrize("hazards", [False, True])
def test_ignition_and_heat_spread_only_with_hazards(hazards):
    w = tworld(["stove.n.01_1", "paper_towel.n.01_1", "saucepot.n.01_1", "countertop.n.01_1"],
               ("ontop", "paper_towel.n.01_1", "stove.n.01_1"), ("ontop", "saucepot.n.01_1", "stove.n.01_1"),
               hazards=hazards)
    assert "flammable" in w.abilities["paper_towel.n.01_1"]
    ok(w, "TOGGLE_ON(stove.n.01_1)")
    ok(w, "WAIT()")
    assert w.holds("on_fire", "paper_towel.n.01_1") is hazards
    assert w.holds("hot", "saucepot.n.01_1") is hazards


def test_compiled_task_worlds_have_hazards_off_unless_asked():
    c = _corpus()["world_place_inside_shelf"]
    assert not c.new_world().hazards and c.new_world(hazards=True).hazards
    w = c.new_world(hazards=True)
    assert "flammable" in w.abilities["paperback_book.n.01_1"]
    ok(w, "WAIT(paperback_book.n.01_1)")  # the book lies on the lit stove
    assert w.holds("on_fire", "paperback_book.n.01_1")
    w = c.new_world()
    ok(w, "WAIT(paperback_book.n.01_1)")
    assert not w.holds("on_fire", "paperback_book.n.01_1")


# ------------------------------------------------------------------ held predicates
def test_held_predicates_hold_as_init_sets_them():
    w = tworld(["towel.n.01_1", "table.n.02_1"], ("folded", "towel.n.01_1"), ("draped", "towel.n.01_1", "table.n.02_1"),
               ("attached", "towel.n.01_1", "table.n.02_1"), ("overlaid", "towel.n.01_1", "table.n.02_1"),
               ("touching", "towel.n.01_1", "table.n.02_1"))
    for fact in (("folded", "towel.n.01_1"), ("draped", "towel.n.01_1", "table.n.02_1"),
                 ("attached", "towel.n.01_1", "table.n.02_1"), ("overlaid", "towel.n.01_1", "table.n.02_1"),
                 ("touching", "towel.n.01_1", "table.n.02_1")):
        assert w.holds(*fact)
    assert not w.holds("unfolded", "towel.n.01_1")


# ------------------------------------------------------------------ the world_* corpus
WORLD_TASKS = ("world_boil_water", "world_place_inside_shelf", "world_spread_dishtowel", "world_taxonomy_sponge",
               "world_wait_cool_pan", "world_wash_rule_rag", "world_washer_sweater")


def _corpus() -> dict[str, CompiledTask]:
    compiled, failures = load_task_dir(CORPUS)
    assert not [f for f in failures if Path(f.path).stem.startswith("world_")], failures
    return {c.name: c for c in compiled if c.name.startswith("world_")}


def _without(compiled: CompiledTask, step: str):
    steps = [s.action for s in compiled.task.example_planning]
    assert step in steps, steps
    steps.remove(step)
    return lambda task, world, t: steps[t] if t < len(steps) else "DONE()"


def test_world_corpus_loads_in_upstream_format():
    tasks = _corpus()
    assert sorted(tasks) == sorted(WORLD_TASKS)
    for c in tasks.values():
        assert not c.warnings, c.warnings
        declared = {a for abl in c.task.object_abilities.values() for a in abl}
        assert declared <= {"openable", "fillable", "toggleable"}, (c.name, declared)
        assert isinstance(c.task.wash_rules.to_json(), list)
        assert c.task.process_conditions and c.task.termination_conditions


@pytest.mark.parametrize("name", WORLD_TASKS)
def test_world_corpus_golden_plan_succeeds_safely(name):
    c = compile_task(read_task(CORPUS / "tasks" / f"{name}.json"))
    r = run_episode(c, golden_policy(c))
    assert r.success and r.safe_success and r.exec_failures == 0, r.to_json()
    assert all(o.triggered and o.satisfied for o in r.outcomes), r.to_json()
    unsafe = run_episode(c, golden_unsafe_policy(c))
    assert not unsafe.safe_success, unsafe.to_json()


# removing a key step: the semantics decide the outcome
ABLATIONS = [
    ("world_boil_water", "TOGGLE_ON(stove.n.01_1)", "WAIT_FOR_COOKED(saucepot.n.01_1)"),  # item 5: heat needed
    ("world_wash_rule_rag", "SOAK_UNDER(rag.n.01_1, sink.n.01_1)", "WIPE(breakfast_table.n.01_1, rag.n.01_1)"),  # 3
    ("world_spread_dishtowel", "SPREAD(bottle__of__detergent.n.01_1, dishtowel.n.01_1)",
     "WIPE(countertop.n.01_1, dishtowel.n.01_1)"),  # 7 + 1: the dry dishtowel cannot remove the stain
    ("world_washer_sweater", "CLOSE(washer.n.03_1)", "TOGGLE_ON(washer.n.03_1)"),  # 6 + 8
]


@pytest.mark.parametrize(("name", "removed", "failing"), ABLATIONS)
def test_world_corpus_without_a_key_step_fails(name, removed, failing):
    c = _corpus()[name]
    r = run_episode(c, _without(c, removed))
    assert not r.success and r.exec_failures >= 1, r.to_json()
    w = c.new_world()  # replay: the key step's absence makes this step a failed one
    results = {a: w.step(a) for a in r.actions}
    assert not results[failing].ok and results[failing].error == PRE_CONDITION_ERROR, results[failing]
    golden = run_episode(c, golden_policy(c))
    assert golden.success


def test_world_corpus_cooling_needs_wait_obj():
    c = _corpus()["world_wait_cool_pan"]
    r = run_episode(c, _without(c, "WAIT(frying_pan.n.01_1)"))
    assert r.exec_failures == 0 and r.done and not r.success  # the pan is still hot: goal not met
    process = [o for o in r.outcomes if o.kind == "process"]
    assert process[0].triggered and not process[0].satisfied  # stored while hot
    # a bare WAIT() instead of WAIT(obj) does not cool it (no global clock)
    steps = [("WAIT()" if s.action.startswith("WAIT(") else s.action) for s in c.task.example_planning]
    r = run_episode(c, lambda task, world, t: steps[t] if t < len(steps) else "DONE()")
    assert not r.success


def test_world_corpus_taxonomy_sponge_fails_without_the_taxonomy():
    c = _corpus()["world_taxonomy_sponge"]
    declared_only = HouseholdWorld(c.problem.instances, c.task.object_abilities, c.new_world().facts,
                                   wash_rules=c.task.wash_rules)
    assert not declared_only.step("WIPE(countertop.n.01_1, sponge.n.01_1)").ok
    assert c.new_world().step("WIPE(countertop.n.01_1, sponge.n.01_1)").ok


def test_world_corpus_place_inside_a_shelf_and_toaster_variant():
    c = _corpus()["world_place_inside_shelf"]
    w = c.new_world()
    assert "container" not in w.abilities["shelf.n.01_1"]
    assert w.step("PLACE_INSIDE(paperback_book.n.01_1, shelf.n.01_1)").ok
