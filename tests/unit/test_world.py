"""Primitive preconditions and effects on small hand-built worlds (upstream IS-Bench ``og_ego_prim`` semantics).

Abilities are given explicitly here; taxonomy-derived behaviour is in ``test_isbench_world.py``.
"""

import pytest

from embodied_safety.envs.household.wash import parse_wash_rules
from embodied_safety.envs.household.world import (
    INVALID_ACTION,
    PRE_CONDITION_ERROR,
    HouseholdWorld,
)

AB = {
    "fridge": ("openable", "coldSource", "fixed"),
    "stove": ("toggleable", "heatSource", "fixed"),
    "microwave": ("openable", "toggleable", "heatSource", "fixed"),
    "sink": ("toggleable", "waterSource", "fixed"),
    "washer": ("openable", "toggleable", "washer", "fixed"),
    "cabinet": ("openable", "fixed"),
    "counter": ("fixed",),
    "pot": ("fillable",),
    "mug": ("fillable",),
    "chicken": ("cookable", "freezable"),
    "apple": ("sliceable",),
    "knife": ("slicer",),
    "towel": ("cleaningTool", "soakable", "flammable"),
    "duster": ("cleaningTool",),
    "shirt": ("flammable", "cloth", "soakable"),
    "bottle": (),
    "water": ("substance", "liquid"),
    "dust": ("substance",),
    "stain": ("substance",),
    "soap": ("substance", "liquid"),
}


def world(*facts, rules=None, hazards=False):
    objects = {o: o for o in [*AB, "half__apple_1"]}
    return HouseholdWorld(objects, AB, [*facts, ("insource", "sink", "water"), ("future", "half__apple_1")],
                          wash_rules=parse_wash_rules(rules), hazards=hazards)


def fails(w, action, reason_part):
    before = w.state_hash()
    r = w.step(action)
    assert not r.ok and r.error == PRE_CONDITION_ERROR, r
    assert reason_part in r.reason, r.reason
    assert w.state_hash() == before, "a failed step changes nothing"


def noop(w, action, reason_part):
    before = w.state_hash()
    r = w.step(action)
    assert r.ok and reason_part in r.reason, r
    assert w.state_hash() == before


def test_open_close_are_idempotent_successes():
    w = world()
    assert w.step("OPEN(fridge)").ok and w.holds("open", "fridge")
    noop(w, "OPEN(fridge)", "already open")
    assert w.step("CLOSE(fridge)").ok and not w.holds("open", "fridge")
    noop(w, "CLOSE(fridge)", "already closed")
    fails(w, "OPEN(counter)", "not openable")


def test_items_in_a_closed_container_are_unreachable_and_not_frozen_by_default():
    w = world(("inside", "chicken", "fridge"))
    assert not w.holds("frozen", "chicken"), "no settle-to-frozen: frozen only if (:init) says so"
    fails(w, "PLACE_ON_TOP(chicken, counter)", "inside closed fridge")
    w.step("OPEN(fridge)")
    assert w.step("PLACE_ON_TOP(chicken, counter)").ok
    assert w.placement("chicken") == ("ontop", "counter")


def test_wait_obj_thaws_outside_the_cold_and_bare_wait_changes_nothing():
    w = world(("ontop", "chicken", "counter"), ("frozen", "chicken"))
    noop(w, "WAIT()", "")
    assert w.holds("frozen", "chicken"), "bare WAIT() is a no-op step, no global clock"
    assert w.step("WAIT(chicken)").ok and not w.holds("frozen", "chicken")


def test_wait_obj_keeps_frozen_inside_a_cold_source():
    w = world(("inside", "chicken", "fridge"), ("frozen", "chicken"))
    assert w.step("WAIT(chicken)").ok and w.holds("frozen", "chicken")


def test_place_inside_checks_only_open_target_and_replaces_placement():
    w = world(("ontop", "apple", "counter"))
    fails(w, "PLACE_INSIDE(apple, fridge)", "closed")
    w.step("OPEN(fridge)")
    assert w.step("PLACE_INSIDE(apple, fridge)").ok
    assert w.holds("inside", "apple", "fridge") and not w.holds("ontop", "apple", "counter")
    assert w.step("PLACE_INSIDE(apple, bottle)").ok, "no container-ability check"
    assert w.placement("apple") == ("inside", "bottle")
    fails(w, "PLACE_ON_TOP(counter, apple)", "cannot be moved")
    fails(w, "PLACE_INSIDE(apple, apple)", "itself")


def test_place_on_top_of_an_open_topped_receptacle_also_puts_it_inside():
    w = world(("ontop", "apple", "counter"))
    assert w.step("PLACE_ON_TOP(apple, pot)").ok
    assert w.holds("ontop", "apple", "pot") and w.holds("inside", "apple", "pot")
    assert w.step("PLACE_ON_TOP(apple, cabinet)").ok
    assert w.holds("ontop", "apple", "cabinet") and not w.holds("inside", "apple", "cabinet"), "openable: not open-topped"


def test_cooking_needs_a_lit_heat_source_and_cooks_contents():
    w = world(("ontop", "pot", "counter"), ("inside", "chicken", "pot"))
    fails(w, "WAIT_FOR_COOKED(pot)", "heat source")
    w.step("PLACE_ON_TOP(pot, stove)")
    fails(w, "WAIT_FOR_COOKED(pot)", "heat source")
    w.step("TOGGLE_ON(stove)")
    assert w.step("WAIT_FOR_COOKED(pot)").ok
    assert w.holds("cooked", "chicken") and w.holds("hot", "chicken")


def test_cooking_inside_a_closed_microwave_needs_no_reach():
    w = world(("inside", "chicken", "microwave"), ("toggled_on", "microwave"))
    assert w.step("WAIT_FOR_COOKED(chicken)").ok and w.holds("cooked", "chicken")


def test_appliance_door_and_power_interlock():
    w = world()
    w.step("OPEN(microwave)")
    fails(w, "TOGGLE_ON(microwave)", "close it")
    w.step("CLOSE(microwave)")
    assert w.step("TOGGLE_ON(microwave)").ok
    noop(w, "TOGGLE_ON(microwave)", "already on")
    fails(w, "OPEN(microwave)", "turn it off")
    assert w.step("TOGGLE_OFF(microwave)").ok
    noop(w, "TOGGLE_OFF(microwave)", "already off")
    assert w.step("OPEN(microwave)").ok


@pytest.mark.parametrize("hazards", [False, True])
def test_flammables_on_a_lit_heat_source_catch_fire_only_with_hazards(hazards):
    w = world(("ontop", "shirt", "stove"), ("ontop", "towel", "counter"), ("nextto", "towel", "stove"), hazards=hazards)
    assert w.step("TOGGLE_ON(stove)").ok
    assert w.holds("on_fire", "shirt") is hazards and w.holds("on_fire", "towel") is hazards


def test_heat_spreads_on_bare_wait_only_with_hazards():
    for hazards in (False, True):
        w = world(("ontop", "pot", "stove"), ("toggled_on", "stove"), hazards=hazards)
        w.step("WAIT()")
        assert w.holds("hot", "pot") is hazards
        # WAIT(obj) relaxes that object in either mode: on a lit stove it heats
        w.step("WAIT(pot)")
        assert w.holds("hot", "pot")


def test_list_wash_rules_decide_dry_and_soaked_cleaning():
    rules = [{"cleaning_tool": "duster", "support_system": "dust", "conditions": []},
             {"cleaning_tool": "towel", "support_system": ["stain", "dust"],
              "conditions": [{"type": "saturated", "value": True, "source": "water"}]}]
    w = world(("covered", "counter", "dust"), ("covered", "counter", "stain"), rules=rules)
    fails(w, "SOAK_UNDER(towel, sink)", "is off")
    r = w.step("WIPE(counter, duster)")
    assert r.ok and not w.holds("covered", "counter", "dust") and w.holds("covered", "counter", "stain")
    fails(w, "WIPE(counter, duster)", "cannot remove stain")  # no rule names (duster, stain), not soaked
    fails(w, "WIPE(counter, towel)", "cannot remove stain")  # dry towel
    w.step("TOGGLE_ON(sink)")
    assert w.step("SOAK_UNDER(towel, sink)").ok and w.holds("saturated", "towel", "water")
    assert w.step("WIPE(counter, towel)").ok and not w.holds("covered", "counter", "stain")
    fails(w, "WIPE(counter, towel)", "already clean")


def test_a_rule_naming_the_wrong_liquid_is_not_met():
    rules = [{"cleaning_tool": "towel", "support_system": "stain",
              "conditions": [{"type": "saturated", "value": True, "source": "soap"}]}]
    w = world(("covered", "counter", "stain"), ("toggled_on", "sink"), ("contains", "bottle", "soap"), rules=rules)
    w.step("SOAK_UNDER(towel, sink)")
    fails(w, "WIPE(counter, towel)", "cannot remove")
    assert w.step("SOAK_INSIDE(towel, bottle)").ok and w.holds("saturated", "towel", "soap")
    assert w.step("WIPE(counter, towel)").ok


def test_legacy_dict_wash_rules_are_still_read():
    w = world(("covered", "counter", "dust"), ("covered", "counter", "stain"), rules={"dust": "dry"})
    assert w.step("WIPE(counter, duster)").ok and not w.holds("covered", "counter", "dust")
    fails(w, "WIPE(counter, duster)", "soaked")


def test_no_rules_and_no_taxonomy_a_soaked_tool_removes_anything():
    w = world(("covered", "counter", "stain"), ("toggled_on", "sink"))
    fails(w, "WIPE(counter, towel)", "cannot remove")
    w.step("SOAK_UNDER(towel, sink)")
    assert w.step("WIPE(counter, towel)").ok


def test_soaking_rinses_off_what_explicit_rules_let_the_source_remove():
    rules = [{"cleaning_tool": "sink", "support_system": "stain", "conditions": [{"type": "toggled_on", "value": True}]}]
    w = world(("covered", "towel", "stain"), ("covered", "towel", "dust"), ("toggled_on", "sink"), rules=rules)
    r = w.step("SOAK_UNDER(towel, sink)")
    assert r.ok and not w.holds("covered", "towel", "stain") and w.holds("covered", "towel", "dust")
    assert w.holds("saturated", "towel", "water")


def test_fill_needs_a_running_fluid_source_and_pour_keeps_the_source_full():
    w = world(("ontop", "pot", "counter"), ("contains", "bottle", "soap"))
    fails(w, "FILL_WITH(pot, sink)", "is off")
    fails(w, "FILL_WITH(pot, counter)", "fluid source")
    w.step("TOGGLE_ON(sink)")
    fails(w, "FILL_WITH(counter, sink)", "not fillable")
    assert w.step("FILL_WITH(pot, sink)").ok and w.holds("filled", "pot", "water")
    assert w.step("POUR_INTO(pot, mug)").ok and w.holds("filled", "mug", "water")
    assert w.holds("filled", "pot", "water"), "POUR_INTO keeps the source full"
    fails(w, "POUR_INTO(mug, counter)", "not fillable")
    assert not w.holds("covered", "counter", "water"), "no spill"
    fails(w, "POUR_INTO(bottle, counter)", "not fillable")
    fails(w, "POUR_INTO(apple, mug)", "empty")


def test_spread_covers_a_surface_but_saturates_a_cloth():
    w = world(("contains", "bottle", "soap"))
    assert w.step("SPREAD(bottle, counter)").ok and w.holds("covered", "counter", "soap")
    r = w.step("SPREAD(bottle, shirt)")
    assert r.ok and w.holds("saturated", "shirt", "soap") and not w.holds("covered", "shirt", "soap")
    assert w.step("SOAK_INSIDE(towel, bottle)").ok and w.holds("saturated", "towel", "soap")
    fails(w, "SOAK_INSIDE(towel, mug)", "no liquid")


def test_only_manipulated_objects_are_checked_for_a_closed_container():
    w = world(("inside", "pot", "cabinet"), ("inside", "mug", "fridge"), ("covered", "mug", "dust"),
              ("toggled_on", "sink"), rules=[{"cleaning_tool": "duster", "support_system": "dust"}])
    fails(w, "FILL_WITH(pot, sink)", "inside closed cabinet")  # the filled vessel is manipulated
    assert w.step("WIPE(mug, duster)").ok, "the wiped target is not checked"
    w.step("OPEN(cabinet)")
    assert w.step("FILL_WITH(pot, sink)").ok
    assert w.step("POUR_INTO(pot, mug)").ok, "the poured-into target is not checked"


def test_cut_brings_future_products_into_existence():
    w = world(("ontop", "apple", "counter"), ("ontop", "knife", "counter"))
    assert not w.holds("real", "half__apple_1")
    fails(w, "CUT(apple, towel)", "cutting tool")
    assert w.step("CUT(apple, knife)").ok
    assert w.holds("real", "half__apple_1") and w.holds("ontop", "half__apple_1", "counter")


def test_washer_cleans_its_contents_when_closed_and_on():
    w = world(("covered", "towel", "stain"), ("covered", "shirt", "dust"))
    fails(w, "WAIT_FOR_WASHED(towel)", "not a washer")
    w.step("OPEN(washer)")
    w.step("PLACE_INSIDE(towel, washer)")
    w.step("PLACE_INSIDE(shirt, washer)")
    fails(w, "WAIT_FOR_WASHED(washer)", "closed and on")
    w.step("CLOSE(washer)")
    fails(w, "WAIT_FOR_WASHED(washer)", "closed and on")
    w.step("TOGGLE_ON(washer)")
    assert w.step("WAIT_FOR_WASHED(washer)").ok
    assert not w.holds("covered", "towel", "stain") and not w.holds("covered", "shirt", "dust")


def test_empty_washer_fails():
    w = world(("toggled_on", "washer"))
    fails(w, "WAIT_FOR_WASHED(washer)", "empty")


def test_freezing_needs_the_item_inside_a_cold_source_but_no_closed_door():
    w = world(("ontop", "chicken", "counter"))
    fails(w, "WAIT_FOR_FROZEN(chicken, fridge)", "not inside")
    w.step("OPEN(fridge)")
    w.step("PLACE_INSIDE(chicken, fridge)")
    assert w.step("WAIT_FOR_FROZEN(chicken, fridge)").ok and w.holds("frozen", "chicken")
    w.step("PLACE_INSIDE(apple, fridge)")
    fails(w, "WAIT_FOR_FROZEN(apple, fridge)", "cannot be frozen")
    fails(w, "WAIT_FOR_FROZEN(chicken, stove)", "fridge or freezer")


@pytest.mark.parametrize(("action", "reason"), [("OPEN(unicorn)", "unknown object unicorn"),
                                                 ("OPEN(fridge, stove)", "takes 1 argument"),
                                                 ("please open the fridge", "no known primitive")])
def test_invalid_actions_are_recorded_not_raised(action, reason):
    w = world()
    r = w.step(action)
    assert not r.ok and r.error == INVALID_ACTION and reason in r.reason
    assert w.history[-1] is r


def test_done_marks_the_result():
    assert world().step("DONE()").done


def test_snapshot_restore_is_exact():
    w = world(("ontop", "pot", "counter"))
    snap = w.snapshot()
    w.step("PLACE_ON_TOP(pot, stove)")
    w.step("TOGGLE_ON(stove)")
    w.restore(snap)
    assert w.state_bytes() == world(("ontop", "pot", "counter")).state_bytes()
