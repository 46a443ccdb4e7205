"""Primitive preconditions and effects on small hand-built worlds."""

import pytest

from embodied_safety.envs.household.world import (
    INVALID_ACTION,
    PRE_CONDITION_ERROR,
    HouseholdWorld,
    WashRules,
)

AB = {
    "fridge": ("openable", "coldSource", "container", "fixed"),
    "stove": ("toggleable", "heatSource", "fixed"),
    "microwave": ("openable", "toggleable", "heatSource", "container", "fixed"),
    "sink": ("toggleable", "waterSource", "fixed"),
    "washer": ("openable", "toggleable", "washer", "container", "fixed"),
    "counter": ("fixed",),
    "pot": ("fillable", "container"),
    "mug": ("fillable",),
    "chicken": ("cookable", "freezable"),
    "apple": ("sliceable",),
    "knife": ("slicer",),
    "towel": ("cleaningTool", "soakable", "flammable"),
    "duster": ("cleaningTool",),
    "shirt": ("flammable",),
    "bottle": ("container",),
    "water": ("substance",),
    "dust": ("substance",),
    "stain": ("substance",),
    "soap": ("substance",),
}


def world(*facts, rules=None):
    objects = {o: o for o in [*AB, "half__apple_1"]}
    return HouseholdWorld(objects, AB, [*facts, ("insource", "sink", "water"), ("future", "half__apple_1")],
                          wash_rules=WashRules(rules or {}))


def fails(w, action, reason_part):
    r = w.step(action)
    assert not r.ok and r.error == PRE_CONDITION_ERROR, r
    assert reason_part in r.reason, r.reason


def test_open_close_and_already_states():
    w = world()
    assert w.step("OPEN(fridge)").ok and w.holds("open", "fridge")
    fails(w, "OPEN(fridge)", "already open")
    assert w.step("CLOSE(fridge)").ok and not w.holds("open", "fridge")
    fails(w, "CLOSE(fridge)", "already closed")
    fails(w, "OPEN(counter)", "not openable")


def test_items_in_a_closed_container_are_unreachable_and_start_frozen():
    w = world(("inside", "chicken", "fridge"))
    assert w.holds("frozen", "chicken")
    fails(w, "PLACE_ON_TOP(chicken, counter)", "inside closed fridge")
    w.step("OPEN(fridge)")
    assert w.step("PLACE_ON_TOP(chicken, counter)").ok
    assert w.placement("chicken") == ("ontop", "counter")
    w.step("WAIT()")
    assert not w.holds("frozen", "chicken"), "thaws outside the cold"


def test_place_inside_needs_an_open_container_and_replaces_placement():
    w = world(("ontop", "apple", "counter"))
    fails(w, "PLACE_INSIDE(apple, fridge)", "closed")
    w.step("OPEN(fridge)")
    assert w.step("PLACE_INSIDE(apple, fridge)").ok
    assert w.holds("inside", "apple", "fridge") and not w.holds("ontop", "apple", "counter")
    fails(w, "PLACE_ON_TOP(counter, apple)", "cannot be moved")


def test_cooking_needs_a_lit_heat_source_and_cooks_contents():
    w = world(("ontop", "pot", "counter"), ("inside", "chicken", "pot"))
    fails(w, "WAIT_FOR_COOKED(pot)", "heat source")
    w.step("PLACE_ON_TOP(pot, stove)")
    w.step("TOGGLE_ON(stove)")
    assert w.step("WAIT_FOR_COOKED(pot)").ok
    assert w.holds("cooked", "chicken") and w.holds("hot", "chicken")


def test_appliance_door_must_be_closed_before_switching_on():
    w = world()
    w.step("OPEN(microwave)")
    fails(w, "TOGGLE_ON(microwave)", "close it")
    w.step("CLOSE(microwave)")
    assert w.step("TOGGLE_ON(microwave)").ok
    fails(w, "TOGGLE_ON(microwave)", "already on")


def test_flammables_on_a_lit_heat_source_catch_fire():
    w = world(("ontop", "shirt", "stove"), ("ontop", "towel", "counter"), ("nextto", "towel", "stove"))
    w.step("TOGGLE_ON(stove)")
    assert w.holds("on_fire", "shirt") and w.holds("on_fire", "towel")


def test_soaking_needs_running_water_and_wash_rules_decide_what_a_dry_tool_cleans():
    w = world(("covered", "counter", "dust"), ("covered", "counter", "stain"), rules={"dust": "dry"})
    fails(w, "SOAK_UNDER(towel, sink)", "is off")
    r = w.step("WIPE(counter, duster)")
    assert r.ok and not w.holds("covered", "counter", "dust") and w.holds("covered", "counter", "stain")
    fails(w, "WIPE(counter, duster)", "soak it first")
    w.step("TOGGLE_ON(sink)")
    assert w.step("SOAK_UNDER(towel, sink)").ok and w.holds("saturated", "towel", "water")
    assert w.step("WIPE(counter, towel)").ok and not w.holds("covered", "counter", "stain")
    assert w.step("WIPE(counter, towel)").reason == "no dirt on counter"


def test_fill_pour_spill_and_spread():
    w = world(("ontop", "pot", "counter"), ("contains", "bottle", "soap"))
    fails(w, "FILL_WITH(pot, sink)", "is off")
    w.step("TOGGLE_ON(sink)")
    assert w.step("FILL_WITH(pot, sink)").ok and w.holds("filled", "pot", "water")
    assert w.step("POUR_INTO(pot, mug)").ok and w.holds("filled", "mug", "water") and not w.holds("filled", "pot", "water")
    r = w.step("POUR_INTO(mug, counter)")
    assert r.ok and w.holds("covered", "counter", "water") and "spilled" in r.reason
    fails(w, "POUR_INTO(mug, pot)", "empty")
    assert w.step("SPREAD(bottle, counter)").ok and w.holds("covered", "counter", "soap")
    assert w.step("SOAK_INSIDE(towel, bottle)").ok and w.holds("saturated", "towel", "soap")


def test_cut_brings_future_products_into_existence():
    w = world(("ontop", "apple", "counter"), ("ontop", "knife", "counter"))
    assert not w.holds("real", "half__apple_1")
    fails(w, "CUT(apple, towel)", "cutting tool")
    assert w.step("CUT(apple, knife)").ok
    assert w.holds("real", "half__apple_1") and w.holds("ontop", "half__apple_1", "counter")


def test_washer_cleans_its_contents_when_closed_and_on():
    w = world(("covered", "towel", "stain"))
    w.step("OPEN(washer)")
    w.step("PLACE_INSIDE(towel, washer)")
    fails(w, "WAIT_FOR_WASHED(towel)", "closed and on")
    w.step("CLOSE(washer)")
    w.step("TOGGLE_ON(washer)")
    assert w.step("WAIT_FOR_WASHED(towel)").ok and not w.holds("covered", "towel", "stain")


def test_freezing_needs_the_item_inside_a_closed_cold_source():
    w = world(("ontop", "chicken", "counter"))
    fails(w, "WAIT_FOR_FROZEN(chicken, fridge)", "not inside")
    w.step("OPEN(fridge)")
    w.step("PLACE_INSIDE(chicken, fridge)")
    fails(w, "WAIT_FOR_FROZEN(chicken, fridge)", "close it first")
    w.step("CLOSE(fridge)")
    assert w.step("WAIT_FOR_FROZEN(chicken, fridge)").ok and w.holds("frozen", "chicken")


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
