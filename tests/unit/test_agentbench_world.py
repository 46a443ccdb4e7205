"""The SafeAgentBench symbolic world: parsing, each action's effects and failures, goals, and fidelity
to the dataset's own (plan, final_state) pairs."""

from __future__ import annotations

import random
import time

import pytest

from embodied_safety.envs.agentbench.actions import ACTIONS, LIQUIDS, Action, StepParseError, parse_step
from embodied_safety.envs.agentbench.goals import GoalMatch, match_final_state
from embodied_safety.envs.agentbench.objects import (
    BREAKABLE,
    DEFAULT_AFFORDANCE,
    PICKUPABLE,
    RECEPTACLES,
    TYPES,
    affordance,
    canonical_type,
)
from embodied_safety.envs.agentbench.scenes import room_type, scene_objects
from embodied_safety.envs.agentbench.world import AgentBenchWorld, StepResult
from tests.conftest import ROOT

DATA = ROOT / "data" / "safeagentbench"  # the rows the repository ships


# ---------------------------------------------------------------------------------------------- parsing
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("find Mug", "find Mug"),
        ("Open Fridge", "open Fridge"),
        ("turn on Candle", "turn_on Candle"),
        ("turn_on Candle", "turn_on Candle"),
        ("turnon Candle", "turn_on Candle"),
        ("Toggle On candle.", "turn_on candle"),
        ("turn off stoveknob", "turn_off stoveknob"),
        ("TURN_OFF Faucet", "turn_off Faucet"),
        ("fillLiquid Mug wine", "fillLiquid Mug wine"),
        ("fill Mug coffee", "fillLiquid Mug coffee"),
        ("fill_liquid watering can Water", "fillLiquid watering can water"),
        ("fill the mug with wine", "fillLiquid mug wine"),
        ("fillLiquid Mug", "fillLiquid Mug water"),
        ("emptyLiquid Mug", "emptyLiquid Mug"),
        ("empty the Pot", "emptyLiquid Pot"),
        ("pick up the Apple", "pick Apple"),
        ("pickup Apple", "pick Apple"),
        ("put in Fridge", "put Fridge"),
        ("put on the CounterTop.", "put CounterTop"),
        ("put Mug in Sink", "put Sink"),
        ("put down dining table", "put dining table"),
        ("1. find Mug", "find Mug"),
        ("Step 2: pick mug;", "pick mug"),
        ("- find alarm clock", "find alarm clock"),
        ('"slice Apple"', "slice Apple"),
        ('1. "find Mug."', "find Mug"),
        ("3) turn off the TV!", "turn_off TV"),
        ("pour the coffee into the Mug", "pour Mug"),
        ("drop", "drop"),
        ("throw", "throw"),
        ("drop the Plate on the floor", "drop Plate"),
        ("pour", "pour"),
        ("pour into HousePlant", "pour HousePlant"),
        ("pour water", "pour"),
        ("break Vase!", "break Vase"),
        ("cook Potato", "cook Potato"),
        ("dirty Cloth", "dirty Cloth"),
        ("clean Mirror", "clean Mirror"),
        ("close Microwave", "close Microwave"),
    ],
)
def test_parse_step_normalises_the_noisy_forms(text, expected):
    action = parse_step(text)
    assert str(action) == expected
    assert action.name in ACTIONS
    assert parse_step(str(action)) == action  # the canonical text parses to itself


def test_action_text_and_fields():
    a = Action("fillLiquid", ("Mug", "wine"))
    assert str(a) == "fillLiquid Mug wine" and str(Action("pour")) == "pour"
    assert parse_step("turn on alarm clock") == Action("turn_on", ("alarm clock",))
    assert set(LIQUIDS) == {"water", "coffee", "wine"} and len(ACTIONS) == 17


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("go to Kitchen", "'go'"),
        ("wave hand", "'wave'"),
        ("", "empty"),
        ("   ", "empty"),
        ("find", "needs an object"),
        ("put", "receptacle"),
        ("fillLiquid Mug milk", "milk"),
        ("fill the mug with oil", "oil"),
        ("fillLiquid", "fillLiquid needs"),
    ],
)
def test_parse_step_errors_say_what_is_wrong(text, needle):
    with pytest.raises(StepParseError) as err:
        parse_step(text)
    assert needle in str(err.value)
    assert isinstance(err.value, ValueError)


# ---------------------------------------------------------------------------------------------- objects / scenes
def test_canonical_type_aliases_and_unknowns():
    cases = {
        "garbage can": "GarbageCan", "garbagecan": "GarbageCan", "Refrigerator": "Fridge", "TV": "Television",
        "AppleSliced": "AppleSliced", "appleSliced": "AppleSliced", "sliced bread": "BreadSliced",
        "potato slice": "PotatoSliced", "TomatoSliced": "TomatoSliced", "EggCracked": "EggCracked",
        "Cellphone": "CellPhone", "alarm clock": "AlarmClock", "sink basin": "SinkBasin", "stove": "StoveBurner",
        "apples": "Apple", "toy car": "ToyCar",
    }
    for name, expected in cases.items():
        assert canonical_type(name) == expected, name


def test_affordance_table_is_consistent_and_unknowns_get_the_default():
    assert len(TYPES) >= 115
    assert PICKUPABLE <= TYPES and RECEPTACLES <= TYPES and BREAKABLE <= TYPES
    assert affordance("Fridge").openable and affordance("fridge").receptacle and not affordance("Fridge").pickupable
    assert affordance("Microwave").heatSource and affordance("Microwave").electrical
    assert affordance("HousePlant").canFillWithLiquid and affordance("Egg").sliceable and affordance("Egg").breakable
    for weird in ("ToyCar", "", "???", "a b c", "Mug|1"):
        aff = affordance(weird)
        assert aff == DEFAULT_AFFORDANCE or aff.known
    assert affordance("ToyCar") == DEFAULT_AFFORDANCE and DEFAULT_AFFORDANCE.pickupable
    assert not DEFAULT_AFFORDANCE.receptacle and not DEFAULT_AFFORDANCE.known


def test_room_type_ranges_and_error():
    assert [room_type(s) for s in ("FloorPlan1", "FloorPlan30", "FloorPlan201", "FloorPlan330", "FloorPlan415",
                                   "floorplan7_physics")] == [
        "kitchen", "kitchen", "living_room", "bedroom", "bathroom", "kitchen"]
    for bad in ("FloorPlan99", "FloorPlan0", "Kitchen", "FloorPlan431", ""):
        with pytest.raises(ValueError, match=repr(bad)):
            room_type(bad)


def test_scene_objects_inventory_plus_mentions():
    objs = scene_objects("FloorPlan203", ["Microwave", "credit card", "water", "AppleSliced", "CreditCard", "ToyCar"])
    assert len(objs) == len(set(objs))
    assert {"Sofa", "Television", "Microwave", "CreditCard", "Apple", "ToyCar"} <= set(objs)
    assert "AppleSliced" not in objs and "Water" not in objs  # slices appear by slicing; liquids are not objects
    kitchen = scene_objects("FloorPlan5", ["Sink"])
    assert {"Sink", "SinkBasin", "Faucet", "StoveBurner", "StoveKnob", "Fridge"} <= set(kitchen)


# ---------------------------------------------------------------------------------------------- world helpers
def run(world: AgentBenchWorld, *steps: str) -> list[StepResult]:
    return [world.execute(parse_step(s)) for s in steps]


def ok(world: AgentBenchWorld, *steps: str) -> None:
    for step, result in zip(steps, run(world, *steps), strict=True):
        assert result.success, f"{step}: {result.message}"


def fails(world: AgentBenchWorld, step: str, needle: str) -> None:
    before = world.metadata()
    result = world.execute(parse_step(step))
    assert not result.success, result
    assert needle in result.message, result.message
    assert world.metadata() == before  # a failed action changes nothing


def obj(world: AgentBenchWorld, object_id: str) -> dict:
    return next(o for o in world.metadata() if o["objectId"] == object_id)


def kitchen(*mentioned: str) -> AgentBenchWorld:
    return AgentBenchWorld("FloorPlan1", mentioned)


# ---------------------------------------------------------------------------------------------- actions
def test_find_moves_to_an_object_and_fails_for_absent_types():
    w = kitchen()
    assert w.room_type == "kitchen" and w.scene == "FloorPlan1"
    ok(w, "find Mug")
    assert w.at == "Mug|1"
    fails(w, "find Unicorn", "no Unicorn in FloorPlan1")
    fails(w, "find AppleSliced", "slice a Apple first")


def test_pick_and_its_preconditions():
    w = kitchen()
    fails(w, "pick CounterTop", "not pickupable")
    ok(w, "find Mug", "pick Mug")
    assert w.holding == "Mug|1"
    m = obj(w, "Mug|1")
    assert m["isPickedUp"] and m["parentReceptacles"] is None
    assert "Mug|1" not in obj(w, "CounterTop|1")["receptacleObjectIds"]
    fails(w, "pick Apple", "hand is full")
    fails(w, "pick Mug", "already holding")


def test_nothing_inside_a_closed_container_can_be_touched():
    w = kitchen()
    ok(w, "find Apple", "pick Apple", "find Fridge")
    fails(w, "put Fridge", "closed; open it first")
    ok(w, "open Fridge", "put Fridge", "close Fridge")
    fails(w, "pick Apple", "inside closed Fridge|1")
    fails(w, "slice Apple", "inside closed Fridge|1")
    ok(w, "open Fridge", "pick Apple")


def test_put_updates_both_directions_and_isPickedUp():
    w = kitchen()
    fails(w, "put CounterTop", "not holding anything")
    ok(w, "find Apple", "pick Apple")
    fails(w, "put Knife", "not a receptacle")
    ok(w, "find Fridge", "open Fridge", "put Fridge")
    apple, fridge = obj(w, "Apple|1"), obj(w, "Fridge|1")
    assert apple["parentReceptacles"] == ["Fridge|1"] and not apple["isPickedUp"]
    assert fridge["receptacleObjectIds"] == ["Apple|1"] and w.holding is None


def test_put_into_a_sink_uses_its_basin_and_the_sink_reports_it():
    w = kitchen()
    ok(w, "find Mug", "pick Mug", "find Sink", "put Sink")
    assert obj(w, "Mug|1")["parentReceptacles"] == ["Sink|1|SinkBasin"]
    assert "Mug|1" in obj(w, "Sink|1")["receptacleObjectIds"]
    assert match_final_state(w.metadata(), [{"objectType": "Mug", "parentReceptacles": ["Sink"]},
                                            {"objectType": "Sink", "receptacleObjectIds": ["Mug"]}]).success


def test_contents_travel_with_their_container():
    w = kitchen()
    ok(w, "find Egg", "pick Egg", "find Bowl", "put Bowl", "pick Bowl", "find Microwave", "open Microwave",
       "put Microwave")
    assert obj(w, "Egg|1")["parentReceptacles"] == ["Bowl|1", "Microwave|1", "CounterTop|1"]  # the oven stands on it
    fails(w, "put Bowl", "not holding")
    ok(w, "pick Bowl")
    fails(w, "put Bowl", "into itself")


def test_open_close_preconditions():
    w = kitchen()
    fails(w, "open CounterTop", "not openable")
    fails(w, "close Fridge", "already closed")
    ok(w, "find Fridge", "open Fridge")
    assert obj(w, "Fridge|1")["isOpen"]
    fails(w, "open Fridge", "already open")


def test_slice_creates_pieces_and_keeps_the_whole_marked_sliced():
    w = kitchen()
    ok(w, "find Apple", "pick Apple")
    fails(w, "slice Apple", "put Apple|1 down before slicing")
    ok(w, "put CounterTop", "slice Apple")
    assert obj(w, "Apple|1")["isSliced"]
    pieces = [o for o in w.metadata() if o["objectType"] == "AppleSliced"]
    assert len(pieces) == 3 and all(p["parentReceptacles"] == ["CounterTop|1"] for p in pieces)
    assert "AppleSliced" in w.object_types()
    fails(w, "slice Apple", "already sliced")
    fails(w, "pick Apple", "has been sliced")
    fails(w, "slice Mug", "not sliceable")
    ok(w, "pick AppleSliced")
    assert w.holding == "Apple|1|AppleSliced_1"
    ok(w, "find Egg", "put CounterTop", "slice Egg")
    assert [o["objectId"] for o in w.metadata() if o["objectType"] == "EggCracked"] == ["Egg|1|EggCracked_1"]


def test_toggles_knobs_and_cooking():
    w = kitchen()
    fails(w, "turn_on Mug", "cannot be turned on")
    ok(w, "find Potato", "pick Potato", "find Pan", "put Pan", "pick Pan", "find StoveBurner", "put StoveBurner",
       "find StoveKnob")
    assert w.at == "StoveKnob|1"  # the knob of the burner the agent stands at
    assert not obj(w, "Potato|1")["isCooked"]
    result = w.execute(parse_step("turn_on StoveKnob"))
    assert result.success and "Potato|1 is cooked" in result.message
    assert obj(w, "StoveBurner|1")["isToggled"] and obj(w, "StoveKnob|1")["isToggled"]
    fails(w, "turn_on StoveKnob", "already on")
    ok(w, "turn_off StoveBurner")  # read as its knob
    assert not obj(w, "StoveKnob|1")["isToggled"] and not obj(w, "StoveBurner|1")["isToggled"]
    fails(w, "turn_off StoveKnob", "already off")


def test_microwave_cooks_and_coffee_machine_fills():
    w = kitchen()
    ok(w, "find Bread", "slice Bread", "pick BreadSliced", "find Microwave", "open Microwave", "put Microwave",
       "close Microwave", "turn_on Microwave")
    assert obj(w, "Bread|1|BreadSliced_1")["isCooked"] and not obj(w, "Bread|1|BreadSliced_2")["isCooked"]
    ok(w, "find CoffeeMachine", "turn_on CoffeeMachine", "find Mug", "pick Mug", "find CoffeeMachine",
       "put CoffeeMachine")
    assert obj(w, "Mug|1")["fillLiquid"] == "coffee"


def test_running_faucet_fills_and_washes_what_is_in_the_basin():
    w = kitchen()
    ok(w, "find Cup", "dirty Cup", "pick Cup", "find Sink", "put Sink", "find Faucet", "turn_on Faucet")
    cup = obj(w, "Cup|1")
    assert cup["isFilledWithLiquid"] and cup["fillLiquid"] == "water" and not cup["isDirty"]


def test_drop_and_throw_land_on_the_floor_and_break_what_is_fragile():
    w = AgentBenchWorld("FloorPlan203")
    fails(w, "drop", "not holding anything")
    ok(w, "find CellPhone", "pick CellPhone", "drop")
    phone = obj(w, "CellPhone|1")
    assert phone["parentReceptacles"] == ["Floor|1"] and not phone["isBroken"] and not phone["isPickedUp"]
    ok(w, "pick CellPhone", "throw")
    assert obj(w, "CellPhone|1")["isBroken"]
    ok(w, "find Vase", "pick Vase")
    fails(w, "drop Statue", "holding Vase|1, not Statue")
    ok(w, "drop Vase")
    assert obj(w, "Vase|1")["isBroken"]
    ok(w, "find Pillow", "pick Pillow", "throw")
    assert not obj(w, "Pillow|1")["isBroken"]


def test_break_and_its_preconditions():
    w = kitchen()
    fails(w, "break CounterTop", "not breakable")
    ok(w, "find Mug", "fillLiquid Mug wine", "break Mug")
    mug = obj(w, "Mug|1")
    assert mug["isBroken"] and not mug["isFilledWithLiquid"]
    fails(w, "break Mug", "already broken")
    fails(w, "fillLiquid Mug water", "broken")
    ok(w, "find Egg", "break Egg")
    assert obj(w, "Egg|1")["isBroken"] and obj(w, "Egg|1")["objectType"] == "Egg"


def test_broken_appliances_do_not_turn_on():
    w = AgentBenchWorld("FloorPlan202")
    ok(w, "find Television", "break Television")
    fails(w, "turn_on Television", "broken")


def test_cook_dirty_clean_are_idempotent_state_changes():
    w = kitchen()
    fails(w, "cook Mug", "not cookable")
    fails(w, "dirty Apple", "not dirtyable")
    ok(w, "find Potato", "cook Potato", "cook Potato", "find Plate", "dirty Plate")
    assert obj(w, "Potato|1")["isCooked"] and obj(w, "Plate|1")["isDirty"]
    ok(w, "clean Plate", "clean Plate")
    assert not obj(w, "Plate|1")["isDirty"]


def test_fill_and_empty_liquid():
    w = kitchen()
    fails(w, "fillLiquid Apple water", "cannot be filled")
    ok(w, "find Mug", "fillLiquid Mug wine")
    assert obj(w, "Mug|1")["fillLiquid"] == "wine" and obj(w, "Mug|1")["isFilledWithLiquid"]
    ok(w, "fillLiquid Mug coffee")
    assert obj(w, "Mug|1")["fillLiquid"] == "coffee"
    ok(w, "emptyLiquid Mug", "emptyLiquid Mug")
    assert obj(w, "Mug|1")["fillLiquid"] is None
    fails(w, "emptyLiquid Apple", "cannot hold liquid")
    assert not w.execute(Action("fillLiquid", ("Mug", "milk"))).success


def test_pour_targets():
    w = AgentBenchWorld("FloorPlan204")
    fails(w, "pour", "not holding anything")
    ok(w, "find WateringCan", "pick WateringCan")
    fails(w, "pour", "is empty")
    ok(w, "fillLiquid WateringCan water", "find HousePlant", "pour")
    assert obj(w, "HousePlant|1")["isFilledWithLiquid"] and not obj(w, "WateringCan|1")["isFilledWithLiquid"]
    ok(w, "fillLiquid WateringCan wine", "pour into Pillow")  # not fillable, not dirtyable: just wet
    ok(w, "fillLiquid WateringCan coffee", "pour")  # the agent is at the Pillow on the Sofa
    w2 = AgentBenchWorld("FloorPlan21")
    ok(w2, "find Cup", "fillLiquid Cup water", "pick Cup", "find SinkBasin", "pour")
    assert not obj(w2, "Sink|1|SinkBasin")["isFilledWithLiquid"]  # not fillable in AI2-THOR: it only gets wet
    ok(w2, "fillLiquid Cup coffee", "find Plate", "pour")
    assert obj(w2, "Plate|1")["isDirty"]
    w3 = AgentBenchWorld("FloorPlan402")
    ok(w3, "find Cloth", "pick Cloth")
    fails(w3, "pour", "cannot hold liquid")


def test_pour_without_a_found_target_wets_where_the_agent_stands():
    w = kitchen()
    ok(w, "pick Mug", "fillLiquid Mug water")  # picked without finding: walked to the CounterTop
    result = w.execute(parse_step("pour"))
    assert result.success and "over CounterTop|1" in result.message
    assert w.implicit_moves == ["step 1: pick Mug|1 without finding it first"]


def test_implicit_navigation_is_lenient_but_recorded():
    w = AgentBenchWorld("FloorPlan220")
    ok(w, "find Drawer", "open Drawer", "find TissueBox", "pick TissueBox", "put Drawer")
    assert obj(w, "TissueBox|1")["parentReceptacles"] == ["Drawer|1"]
    assert w.implicit_moves == ["step 5: put Drawer|1 without finding it first"]
    w2 = kitchen()
    ok(w2, "find Bread", "pick Bread", "find StoveBurner", "put StoveBurner", "turn_on StoveKnob")
    assert w2.implicit_moves == []  # a knob is next to its burner


def test_object_ids_address_one_instance_and_put_falls_back_to_an_open_one():
    w = AgentBenchWorld("FloorPlan401")
    ok(w, "find Cabinet", "find Cabinet")
    assert w.at == "Cabinet|1"  # find does not wander: the same instance
    ok(w, "find Cabinet|2", "open Cabinet", "find Candle", "pick Candle", "find Cabinet")
    assert w.at == "Cabinet|2" and obj(w, "Cabinet|2")["isOpen"]  # the one used last
    ok(w, "find Cabinet|1", "put Cabinet")  # Cabinet|1 is closed; the open Cabinet|2 takes it
    assert obj(w, "Candle|1")["parentReceptacles"] == ["Cabinet|2"]


def test_ai2thor_adapter_names_the_extra_when_ai2thor_is_missing():
    import importlib.util

    if importlib.util.find_spec("ai2thor") is not None:
        pytest.skip("ai2thor is installed")
    from embodied_safety.envs.agentbench.ai2thor_adapter import AI2ThorWorld

    with pytest.raises(ImportError, match=r"embodied-safety\[ai2thor\]"):
        AI2ThorWorld("FloorPlan1")


def test_unknown_objects_and_malformed_actions_never_raise():
    w = AgentBenchWorld("FloorPlan301", mentioned=["ToyCar", "Unicorn horn", "water", ""])
    ok(w, "find ToyCar", "pick ToyCar", "find Desk", "put Desk")
    assert obj(w, "ToyCar|1")["parentReceptacles"] == ["Desk|1"] and not obj(w, "ToyCar|1")["knownType"]
    for action in (Action("dance", ("Bed",)), Action("find"), Action("find", ("a", "b")), Action("pour", ("a", "b")),
                   Action("fillLiquid", ()), Action("put", ("Nothing",)), Action("open", ("Spaceship",)),
                   Action("fillLiquid", ("Mug", "lava")), Action("drop", ("Mug",)), Action("find", (None,))):
        result = w.execute(action)
        assert isinstance(result, StepResult) and not result.success and result.message
    assert not w.execute("go to bed").success  # strings are parsed; a parse error is a failed step
    assert w.execute("find Bed").success
    assert len(w.history) == 4 + 10 + 2


def test_random_action_sequences_never_raise_and_keep_the_state_consistent():
    rng = random.Random(0)
    names = ["Mug", "Apple", "AppleSliced", "Fridge", "Microwave", "StoveKnob", "StoveBurner", "Sink", "Faucet",
             "CounterTop", "Bowl", "Egg", "Plate", "Cabinet", "Drawer", "Floor", "Pot", "Potato", "ToyCar", "Nope"]
    for scene in ("FloorPlan1", "FloorPlan210", "FloorPlan310", "FloorPlan410"):
        w = AgentBenchWorld(scene, mentioned=names)
        for _ in range(400):
            name = rng.choice(ACTIONS)
            if name == "fillLiquid":
                args = (rng.choice(names), rng.choice([*LIQUIDS, "milk"]))
            elif name in ("drop", "throw", "pour"):
                args = rng.choice([(), (rng.choice(names),)])
            else:
                args = (rng.choice(names),)
            assert isinstance(w.execute(Action(name, args)), StepResult)
            meta = {o["objectId"]: o for o in w.metadata()}
            for oid, o in meta.items():
                for parent in o["parentReceptacles"] or ():
                    assert parent in meta and parent != oid
                if o["parentReceptacles"]:
                    direct = meta[o["parentReceptacles"][0]]
                    assert oid in (direct["receptacleObjectIds"] or ())
            if w.holding is not None:
                assert meta[w.holding]["isPickedUp"] and meta[w.holding]["parentReceptacles"] is None
            assert sum(o["isPickedUp"] for o in meta.values()) == (w.holding is not None)


def test_snapshot_restore_is_exact_and_cheap():
    w = kitchen()
    ok(w, "find Apple", "pick Apple")
    snap, before, holding = w.snapshot(), w.metadata(), w.holding
    ok(w, "find CounterTop", "put CounterTop", "slice Apple", "find Fridge", "open Fridge")
    assert w.metadata() != before
    w.restore(snap)
    assert w.metadata() == before and w.holding == holding and "AppleSliced" not in w.object_types()
    assert len(w.history) == 2
    ok(w, "find Fridge", "open Fridge", "put Fridge")
    w.restore(snap)  # a snapshot survives a restore and later steps
    assert w.metadata() == before
    start = time.perf_counter()
    for _ in range(1000):
        w.restore(w.snapshot())
    assert time.perf_counter() - start < 1.0


def test_metadata_fields_and_describe():
    w = kitchen()
    required = {"objectId", "objectType", "isToggled", "isBroken", "isFilledWithLiquid", "fillLiquid", "isDirty",
                "isUsedUp", "isCooked", "isSliced", "isOpen", "isPickedUp", "parentReceptacles",
                "receptacleObjectIds", "pickupable", "openable", "toggleable", "sliceable", "breakable",
                "canFillWithLiquid", "cookable", "dirtyable", "receptacle", "usedUpable"}
    meta = w.metadata()
    assert all(required <= set(o) for o in meta)
    assert len({o["objectId"] for o in meta}) == len(meta)
    assert obj(w, "Mug|1")["receptacleObjectIds"] == [] and obj(w, "Apple|1")["receptacleObjectIds"] is None
    assert w.object_types() == sorted(set(w.object_types()))
    ok(w, "find Mug", "fillLiquid Mug water", "pick Mug", "find Fridge")
    text = w.describe()
    assert "FloorPlan1 (kitchen)" in text and "holding Mug|1 (full of water)" in text
    assert "at Fridge|1 (closed)" in text and "Objects in the room:" in text


# ---------------------------------------------------------------------------------------------- goals
META = [
    {"objectId": "Book|1", "objectType": "Book", "isOpen": False, "isPickedUp": False,
     "parentReceptacles": ["GarbageCan|1"], "receptacleObjectIds": None},
    {"objectId": "Book|2", "objectType": "Book", "isOpen": True, "isPickedUp": False,
     "parentReceptacles": ["Desk|1"], "receptacleObjectIds": None},
    {"objectId": "Desk|1", "objectType": "Desk", "isOpen": False, "parentReceptacles": None,
     "receptacleObjectIds": ["Book|2", "CellPhone|1"]},
    {"objectId": "Mug|1", "objectType": "Mug", "isFilledWithLiquid": True, "fillLiquid": "Wine",
     "parentReceptacles": None, "receptacleObjectIds": []},
]


def test_goal_matching_semantics():
    m = match_final_state(META, [{"objectType": "Book", "parentReceptacles": ["GarbageCan"]}])
    assert m == GoalMatch(True, (1.0,), ())
    assert match_final_state(META, [{"objectType": "book", "parentReceptacles": "garbagecan"}]).success
    # best object, not the first: Book|2 is open, Book|1 is in the can; neither has both
    m = match_final_state(META, [{"objectType": "Book", "isOpen": True, "parentReceptacles": ["GarbageCan"]}])
    assert m.entries == (0.5,) and not m.success
    m = match_final_state(META, [{"objectType": "Desk", "receptacleObjectIds": ["CellPhone", "Book"]},
                                 {"objectType": "Laptop", "isOpen": False}])
    assert m.entries == (1.0, 0.0) and not m.success and m.mean == 0.5
    assert not match_final_state(META, [{"objectType": "Mug", "parentReceptacles": ["Desk"]}]).success
    assert match_final_state(META, [{"objectType": "Mug", "parentReceptacles": []}]).success  # None is empty
    assert match_final_state(META, [{"objectType": "Mug", "fillLiquid": "wine", "isFilledWithLiquid": True}]).success
    m = match_final_state(META, [{"objectType": "Mug", "isFilledWithLiquid": True, "isWet": True}])
    assert m.entries == (0.5,) and m.unknown_keys == ("isWet",)
    assert match_final_state(META, [{"objectType": "Desk"}]).entries == (1.0,)
    assert match_final_state(META, []).success
    # a key the object lacks is a mismatch, not an error
    assert match_final_state(META, [{"objectType": "Mug", "isBroken": False}]).entries == (0.0,)


# ---------------------------------------------------------------------------------------------- fidelity
def test_reference_plans_reach_their_goal_on_every_row_the_audit_passes():
    """Fidelity on the shared rows, with no line numbers: the audit names every row whose plan cannot reach its
    own goal (with the failing step or the unmet conjunct), and every other row with a goal reaches it."""
    from embodied_safety.agentbench.audit import audit_summary, audit_tasks
    from embodied_safety.envs.agentbench.dataset import load_tasks

    if not DATA.is_dir():
        pytest.skip(f"shared data missing: {DATA}")
    tasks, _ = load_tasks(DATA)
    start = time.perf_counter()
    audits = audit_tasks(tasks)
    elapsed = time.perf_counter() - start
    summary = audit_summary(audits)
    for a in audits:
        if a.goal_success is False:
            print(a.source, [f"{f.kind}: {f.detail}" for f in a.findings])
            assert any(f.kind == "plan_cannot_reach_goal" for f in a.findings)
    assert all(a.goal_success for a in audits if a.passes and a.goal_success is not None)
    for task_type in ("safe_detailed", "unsafe_detailed", "abstract"):
        entry = summary["by_type"][task_type]
        print(task_type, entry)
        assert entry["goal_rate_passing"] == 1.0
    assert summary["by_type"]["safe_detailed"]["goal_rate_all"] >= 0.9
    assert elapsed < 20
