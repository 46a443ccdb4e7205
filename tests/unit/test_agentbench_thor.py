"""AI2-THOR 5.0 / upstream SafeAgentBench behaviours of the symbolic world, on rows written here."""

from __future__ import annotations

import pytest

from embodied_safety.envs.agentbench.actions import parse_step
from embodied_safety.envs.agentbench.goals import match_final_state
from embodied_safety.envs.agentbench.objects import FILLABLE, MUST_BE_OPEN
from embodied_safety.envs.agentbench.start import start_spec
from embodied_safety.envs.agentbench.world import AgentBenchWorld


def run(scene: str, plan: list[str], goal: list[dict], mentioned: tuple[str, ...] = ()) -> tuple[AgentBenchWorld, bool]:
    actions = [parse_step(s) for s in plan]
    names = [a.args[0] for a in actions if a.args] + [e["objectType"] for e in goal] + list(mentioned)
    world = AgentBenchWorld(scene, names, start=start_spec(goal, actions))
    for a in actions:
        world.execute(a)
    return world, match_final_state(world.metadata(), goal).success


def obj(world: AgentBenchWorld, oid: str) -> dict:
    return next(o for o in world.metadata() if o["objectId"] == oid)


@pytest.mark.parametrize("plan", [["find Egg", "break Egg"], ["find Egg", "pick Egg", "drop"],
                                  ["find Egg", "pick Egg", "throw"]])
def test_a_broken_egg_stays_broken_and_spawns_egg_cracked(plan):
    world, ok = run("FloorPlan2", plan, [{"objectType": "Egg", "isBroken": True}])
    assert ok
    cracked = [o for o in world.metadata() if o["objectType"] == "EggCracked"]
    assert len(cracked) == 1 and obj(world, "Egg|1")["isBroken"]
    egg_parents = obj(world, "Egg|1")["parentReceptacles"]
    assert cracked[0]["parentReceptacles"] == egg_parents  # where the Egg was
    assert match_final_state(world.metadata(), [{"objectType": "EggCracked"}]).success
    if plan[-1] != "break Egg":
        assert egg_parents == ["Floor|1"]


def test_a_cracked_egg_in_a_pan_on_a_lit_burner_cooks():
    plan = ["find Pan", "pick Pan", "find StoveBurner", "put StoveBurner", "find Egg", "pick Egg", "find Pan",
            "put Pan", "break Egg", "turn_on StoveKnob"]
    _, ok = run("FloorPlan5", plan, [{"objectType": "EggCracked", "isCooked": True, "parentReceptacles": ["Pan"]}])
    assert ok


@pytest.mark.parametrize("where", [None, [], ["Floor"], "Floor", ["floor"]])
def test_a_dropped_object_on_the_floor_matches_floor_or_null(where):
    world, ok = run("FloorPlan310", ["find Pillow", "pick Pillow", "drop"],
                    [{"objectType": "Pillow", "parentReceptacles": where}])
    assert ok and obj(world, "Pillow|1")["parentReceptacles"] == ["Floor|1"]


def test_null_placement_matches_only_the_floor_not_a_table():
    world = AgentBenchWorld("FloorPlan310", ["Pillow"])
    meta = world.metadata()
    assert not match_final_state(meta, [{"objectType": "Pillow", "parentReceptacles": None}]).success  # on the Bed
    assert not match_final_state(meta, [{"objectType": "Pillow", "parentReceptacles": ["Floor"]}]).success


@pytest.mark.parametrize(("scene", "fixture", "stand"), [
    ("FloorPlan305", "DeskLamp", "Desk"), ("FloorPlan210", "Television", "TVStand"),
    ("FloorPlan8", "Microwave", "CounterTop"), ("FloorPlan8", "CoffeeMachine", "CounterTop"),
    ("FloorPlan8", "Toaster", "CounterTop"), ("FloorPlan405", "Microwave", "CounterTop"),
])
def test_objects_that_cannot_be_picked_up_stand_on_a_receptacle(scene, fixture, stand):
    goal = [{"objectType": fixture, "isToggled": True, "parentReceptacles": [stand]}]
    world, ok = run(scene, [f"find {fixture}", f"turn_on {fixture}"], goal)
    assert ok
    assert obj(world, f"{fixture}|1")["parentReceptacles"][0].startswith(stand)
    assert not world.execute(f"pick {fixture}").success


def test_a_start_rule_never_moves_an_object_that_cannot_be_picked_up():
    # the goal places the DeskLamp where it stands; the plan (wrongly) tries to pick it: it stays put
    goal = [{"objectType": "DeskLamp", "parentReceptacles": ["Desk"]}]
    actions = [parse_step(s) for s in ("find DeskLamp", "pick DeskLamp", "find Desk", "put Desk")]
    assert start_spec(goal, actions).avoid == {}
    world = AgentBenchWorld("FloorPlan301", ["DeskLamp", "Desk"], start=start_spec(goal, actions))
    assert obj(world, "DeskLamp|1")["parentReceptacles"] == ["Desk|1"]


@pytest.mark.parametrize("spelling", ["Mug|+00.17|+00.90|-01.92", "mug", "MUG", "Mug"])
def test_goal_object_ids_and_types_match_by_type_case_insensitively(spelling):
    plan = ["find Mug", "pick Mug", "find Sink", "put Sink"]
    goal = [{"objectType": spelling, "parentReceptacles": ["Sink|-01.99|+00.90|-00.50|SinkBasin"]}]
    _, ok = run("FloorPlan11", plan, goal)
    assert ok
    world = AgentBenchWorld("FloorPlan11", ["Mug"])
    assert world.execute("find Mug|+00.17|+00.90|-01.92").success  # a plan may name a full id too


@pytest.mark.parametrize("box", sorted(MUST_BE_OPEN))
def test_placing_into_a_closed_receptacle_fails(box):
    scene = {"LaundryHamper": "FloorPlan320", "Safe": "FloorPlan320", "Box": "FloorPlan220"}.get(box, "FloorPlan9")
    world = AgentBenchWorld(scene, ["Book", box])
    assert world.execute("find Book").success and world.execute("pick Book").success
    result = world.execute(f"put {box}")
    assert not result.success and "closed" in result.message
    assert world.execute(f"open {box}").success and world.execute(f"put {box}").success


def test_laundry_hamper_opens_and_must_be_open():
    assert "LaundryHamper" in MUST_BE_OPEN


def test_fillable_objects_are_ai2thors_list():
    assert {"Bottle", "Bowl", "Cup", "HousePlant", "Kettle", "Mug", "Pot", "WateringCan", "WineBottle"} == FILLABLE
    world, ok = run("FloorPlan12", ["find Pot", "fillLiquid Pot water", "pick Pot", "find Sink", "pour"],
                    [{"objectType": "SinkBasin", "isFilledWithLiquid": True}])
    assert not ok  # a basin is not fillable: only the Pot's liquid leaves it
    for name in ("Pan", "GarbageCan", "Plate"):
        assert not AgentBenchWorld("FloorPlan12", [name]).execute(f"fillLiquid {name} water").success


def test_light_switches_start_on_as_in_ai2thor_scenes():
    world = AgentBenchWorld("FloorPlan201")
    assert obj(world, "LightSwitch|1")["isToggled"]
    assert world.execute("turn_off LightSwitch").success
    # a goal the plan changes never holds at the start, whichever way the plan switches
    _, ok = run("FloorPlan201", ["find LightSwitch", "turn_on LightSwitch"],
                [{"objectType": "LightSwitch", "isToggled": True}])
    assert ok
    world = AgentBenchWorld("FloorPlan201", ["LightSwitch"],
                            start=start_spec([{"objectType": "LightSwitch", "isToggled": True}],
                                             [parse_step("turn_on LightSwitch")]))
    assert not obj(world, "LightSwitch|1")["isToggled"]


def test_a_conjunct_the_plan_only_restores_holds_at_the_start():
    # open ... close: Fridge.isOpen=False is where the plan's first action starts from, as in AI2-THOR
    plan = ["find Fridge", "open Fridge", "find Apple", "pick Apple", "find Fridge", "put Fridge", "close Fridge"]
    goal = [{"objectType": "Apple", "parentReceptacles": ["Fridge"]}, {"objectType": "Fridge", "isOpen": False}]
    world, ok = run("FloorPlan3", plan, goal)
    assert ok
    start = AgentBenchWorld("FloorPlan3", ["Apple", "Fridge"], start=start_spec(goal, [parse_step(s) for s in plan]))
    assert not obj(start, "Fridge|1")["isOpen"]
