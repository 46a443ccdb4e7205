"""Text observations: full shows every visible flag; partial hides closed contents and far objects."""

from embodied_safety.envs.household.observation import observe
from embodied_safety.envs.household.world import HouseholdWorld

AB = {"fridge": ("openable", "coldSource", "container", "fixed"), "stove": ("toggleable", "heatSource", "fixed"),
      "counter": ("fixed",), "milk": ("freezable",), "plate": ("container",), "hose": ("toggleable",),
      "lawn": ("fixed",), "stain": ("substance",)}


def world():
    return HouseholdWorld({o: o for o in AB}, AB, [
        ("inside", "milk", "fridge"), ("frozen", "milk"), ("ontop", "plate", "counter"), ("covered", "plate", "stain"),
        ("inroom", "fridge", "kitchen"), ("inroom", "counter", "kitchen"), ("inroom", "stove", "kitchen"),
        ("ontop", "hose", "lawn"), ("inroom", "lawn", "garden"), ("toggled_on", "hose")], agent_room="kitchen")


OBJS = ("fridge", "stove", "counter", "milk", "plate", "hose", "lawn")


def test_full_shows_every_visible_flag():
    text = observe(world(), OBJS, "full")
    assert "milk: inside fridge; frozen" in text
    assert "plate: ontop counter; covered with stain" in text
    assert "fridge: closed" in text and "stove: off" in text and "hose: ontop lawn; on" in text
    assert "stain" not in [line.split(":")[0] for line in text.splitlines()]  # substances are not objects


def test_partial_hides_closed_contents_and_far_objects():
    w = world()
    text = observe(w, OBJS, "partial")
    assert "milk" not in text and "fridge: closed (contents not visible)" in text
    assert "hose: far away (in garden)" in text and "hose: ontop" not in text
    w.step("OPEN(fridge)")
    assert "milk: inside fridge; frozen" in observe(w, OBJS, "partial")


def test_observation_never_shows_conditions_or_goal():
    text = observe(world(), OBJS, "full")
    assert "goal" not in text and "safety" not in text and "?" not in text
