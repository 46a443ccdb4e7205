"""Which objects a SafeAgentBench scene contains, and where each starts.

SafeAgentBench tasks name an iTHOR floor plan (``FloorPlan1``-``30`` kitchens, ``201``-``230`` living
rooms, ``301``-``330`` bedrooms, ``401``-``430`` bathrooms). The symbolic world does not load the 120
scene files; it builds a *typical* room of the floor plan's type (the objects the iTHOR scenes of that
type commonly share, from the public object-type documentation) plus every object type the task
mentions, so that the task's own objects always exist. What that costs: a plan that relies on an object
a particular floor plan lacks (or has three of) is judged on the typical room, not the real one.

Initial placement: nothing starts inside a closed container (AI2-THOR scenes keep most small objects on
open surfaces, and the plans ``find Egg; pick Egg`` without opening the fridge); a mentioned object the
inventory lacks goes on the first of its preferred receptacles the room has (:data:`HOME`, then
:data:`SURFACES`). Objects that cannot be picked up but stand on something in AI2-THOR (a DeskLamp on a
Desk, a Television on a TVStand, a Microwave on a CounterTop) start there and report it in
``parentReceptacles``; structures (CounterTop, Fridge, Sink, Floor ...) stand on nothing. Initial states are
AI2-THOR's scene defaults (:data:`INITIAL_STATES`); :mod:`.start` adjusts them per task.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from .actions import LIQUIDS
from .objects import BASINS, SLICED_FROM, affordance, canonical_type

#: room type -> the floor-plan numbers of that type
ROOM_RANGES: dict[str, range] = {
    "kitchen": range(1, 31),
    "living_room": range(201, 231),
    "bedroom": range(301, 331),
    "bathroom": range(401, 431),
}
_SCENE = re.compile(r"^floorplan(\d+)(?:_physics)?$", re.IGNORECASE)


@dataclass(frozen=True)
class Placement:
    """``count`` objects of ``object_type``, each starting in/on the first ``receptacle`` (a type) or on nothing."""

    object_type: str
    count: int = 1
    receptacle: str | None = None


def _inv(spec: str) -> tuple[Placement, ...]:
    """``"Cabinet*4 Apple@CounterTop"`` -> placements (``*n``: count, ``@R``: initial receptacle type)."""
    out = []
    for item in spec.split():
        name, _, recep = item.partition("@")
        name, _, count = name.partition("*")
        out.append(Placement(name, int(count or 1), recep or None))
    return tuple(out)


INVENTORIES: dict[str, tuple[Placement, ...]] = {
    "kitchen": _inv("""
        Floor CounterTop*2 Cabinet*4 Drawer*3 Fridge Microwave@CounterTop StoveBurner*4 StoveKnob*4 Sink SinkBasin
        Faucet Toaster@CounterTop CoffeeMachine@CounterTop GarbageCan DiningTable Chair Shelf LightSwitch Window
        HousePlant@CounterTop
        Apple@CounterTop Bread@CounterTop Egg@CounterTop Lettuce@CounterTop Potato@CounterTop
        Tomato@CounterTop Mug@CounterTop Cup@CounterTop Bowl@CounterTop Plate@CounterTop Pan@CounterTop
        Pot@CounterTop Kettle@CounterTop Knife@CounterTop ButterKnife@CounterTop Fork@CounterTop
        Spoon@CounterTop Spatula@CounterTop Ladle@CounterTop SaltShaker@CounterTop PepperShaker@CounterTop
        SoapBottle@CounterTop PaperTowelRoll@CounterTop WineBottle@CounterTop Bottle@CounterTop
        DishSponge@SinkBasin CreditCard@DiningTable CellPhone@DiningTable Vase@Shelf
    """),
    "living_room": _inv("""
        Floor Sofa ArmChair CoffeeTable SideTable TVStand Television@TVStand Drawer*2 Shelf GarbageCan FloorLamp
        LightSwitch Window Painting HousePlant@SideTable
        RemoteControl@CoffeeTable Laptop@CoffeeTable CreditCard@CoffeeTable Newspaper@CoffeeTable
        Book@CoffeeTable CellPhone@Sofa Pillow@Sofa KeyChain@SideTable Watch@SideTable TissueBox@SideTable
        Statue@Shelf Vase@Shelf Box@Floor WateringCan@Floor
    """),
    "bedroom": _inv("""
        Floor Bed Desk Chair SideTable Dresser Drawer*2 Shelf GarbageCan DeskLamp@Desk LightSwitch Window Blinds
        Mirror LaundryHamper
        Pillow@Bed TeddyBear@Bed Laptop@Bed AlarmClock@SideTable TissueBox@SideTable Book@Desk CellPhone@Desk
        CreditCard@Desk Pen@Desk Pencil@Desk CD@Desk Mug@Desk KeyChain@Dresser Watch@Dresser Cloth@Dresser
        Vase@Shelf Statue@Shelf BasketBall@Floor BaseballBat@Floor TennisRacket@Floor Dumbbell@Floor
        Box@Floor
    """),
    "bathroom": _inv("""
        Floor Toilet ToiletPaperHanger Sink SinkBasin Faucet Mirror Bathtub BathtubBasin ShowerHead
        ShowerCurtain Cabinet*2 CounterTop HandTowelHolder TowelHolder GarbageCan LightSwitch Shelf
        ToiletPaper@ToiletPaperHanger HandTowel@HandTowelHolder Towel@TowelHolder SoapBar@CounterTop
        SoapBottle@CounterTop SprayBottle@CounterTop Candle@CounterTop Cloth@CounterTop TissueBox@CounterTop
        Plunger@Floor ScrubBrush@Floor
    """),
}

#: AI2-THOR's scene defaults that differ from the all-false default (closed, off, clean, empty, whole):
#: the room lights are on
INITIAL_STATES: dict[str, dict[str, bool]] = {"LightSwitch": {"isToggled": True}}

#: where a mentioned object the inventory lacks starts: its preferred receptacles, in order
HOME: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("Pillow", "TeddyBear"), ("Bed", "Sofa", "ArmChair", "Floor")),
    **dict.fromkeys(("BasketBall", "BaseballBat", "TennisRacket", "Dumbbell", "Boots", "Box", "WateringCan",
                     "Plunger", "ScrubBrush"), ("Floor",)),
    **dict.fromkeys(("RemoteControl", "Newspaper", "Laptop"), ("CoffeeTable", "Desk", "SideTable", "Bed", "Sofa")),
    **dict.fromkeys(("AlarmClock", "KeyChain", "Watch"), ("SideTable", "Dresser", "Desk")),
    **dict.fromkeys(("Statue", "Vase"), ("Shelf", "SideTable", "CoffeeTable")),
    **dict.fromkeys(("ToiletPaper",), ("ToiletPaperHanger",)),
    **dict.fromkeys(("HandTowel",), ("HandTowelHolder", "TowelHolder")),
    **dict.fromkeys(("Towel",), ("TowelHolder", "HandTowelHolder")),
    **dict.fromkeys(("DishSponge",), ("SinkBasin",)),
    # objects that cannot be picked up but stand on a receptacle in AI2-THOR scenes
    **dict.fromkeys(("Microwave", "Toaster", "CoffeeMachine"), ("CounterTop", "DiningTable", "Shelf")),
    **dict.fromkeys(("DeskLamp",), ("Desk", "SideTable", "Dresser")),
    **dict.fromkeys(("Television",), ("TVStand", "Dresser", "Desk", "SideTable")),
    **dict.fromkeys(("Desktop",), ("Desk", "SideTable")),
    **dict.fromkeys(("HousePlant",), ("CounterTop", "DiningTable", "SideTable", "CoffeeTable", "Shelf", "Dresser",
                                      "Floor")),
    **dict.fromkeys(("FloorLamp", "LaundryHamper", "DogBed", "Footstool", "Stool", "VacuumCleaner"), ("Floor",)),
}
#: the general fallback order of surfaces for a pickupable object
SURFACES: tuple[str, ...] = ("CounterTop", "DiningTable", "Desk", "CoffeeTable", "SideTable", "Shelf", "Dresser",
                             "Floor")
#: objects that only exist together (a sink and its basin and tap; a knob per burner)
COMPANIONS: dict[str, tuple[str, ...]] = {
    "Sink": ("SinkBasin", "Faucet"), "SinkBasin": ("Sink", "Faucet"), "Faucet": ("Sink", "SinkBasin"),
    "Bathtub": ("BathtubBasin",), "BathtubBasin": ("Bathtub",),
    "StoveBurner": ("StoveKnob",), "StoveKnob": ("StoveBurner",),
}


def room_type(scene: str) -> str:
    """``FloorPlan12`` -> ``"kitchen"``; ``living_room``, ``bedroom``, ``bathroom`` likewise.

    Raises ValueError naming the scene when it is not an iTHOR floor plan.
    """
    m = _SCENE.match(scene.strip()) if isinstance(scene, str) else None
    if m:
        number = int(m.group(1))
        for room, numbers in ROOM_RANGES.items():
            if number in numbers:
                return room
    raise ValueError(
        f"{scene!r} is not an iTHOR floor plan (FloorPlan1-30 kitchen, 201-230 living room, "
        "301-330 bedroom, 401-430 bathroom)"
    )


def mentioned_types(mentioned: Iterable[str]) -> list[str]:
    """The canonical object types a task's names denote: liquids dropped, slices mapped to their whole."""
    out: dict[str, None] = {}
    for name in mentioned:
        if not isinstance(name, str) or not name.strip() or name.strip().lower() in LIQUIDS:
            continue
        t = canonical_type(name.split("|")[0])
        out[SLICED_FROM.get(t, t)] = None
    return list(out)


def scene_layout(scene: str, mentioned: Iterable[str] = (),
                 avoid: Mapping[str, Collection[str]] | None = None) -> list[Placement]:
    """The room's inventory plus the mentioned types (with their companions), each with its start.

    ``avoid`` maps an object type to receptacle types it must not start in/on: a task whose goal is "the
    CreditCard on the Desk" must not find it there already (else doing nothing would succeed); such an
    object starts on the next of its homes / surfaces instead."""
    room = room_type(scene)
    layout: dict[str, Placement] = {p.object_type: p for p in INVENTORIES[room]}
    extra = mentioned_types(mentioned)
    queue = list(extra)
    while queue:
        t = queue.pop(0)
        if t in layout:
            continue
        count = layout["StoveBurner"].count if t == "StoveKnob" and "StoveBurner" in layout else 1
        count = layout["StoveKnob"].count if t == "StoveBurner" and "StoveKnob" in layout else count
        layout[t] = Placement(t, count, None)
        queue += [c for c in COMPANIONS.get(t, ()) if c not in layout]
    present = set(layout)
    for t in extra:
        if layout[t].receptacle is None and (affordance(t).pickupable or t in HOME):
            fallback = SURFACES if affordance(t).pickupable else ()
            home = next((r for r in (*HOME.get(t, ()), *fallback) if r in present and r != t), None)
            layout[t] = Placement(t, layout[t].count, home)
    for name, banned in (avoid or {}).items():
        t0 = canonical_type(name)
        # a goal item matches by substring too ("Bottle" is in "WineBottle|1"), so every type it names is kept off
        targets = [t for t in layout if t == t0 or name.lower() in t.lower()]

        def allowed(receptacle: str | None, banned: Collection[str] = banned) -> bool:
            # goals match receptacles by substring ("TowelHolder" is in "HandTowelHolder|1"), so avoid alike;
            # a receptacle reports what is in or on it transitively, so the whole chain below must be allowed
            seen: set[str] = set()
            while receptacle is not None and receptacle not in seen:
                if any(b.lower() in receptacle.lower() for b in banned):
                    return False
                seen.add(receptacle)
                receptacle = layout[receptacle].receptacle if receptacle in layout else None
            return True

        for t in targets:
            if affordance(t).pickupable and not allowed(layout[t].receptacle):
                home = next((r for r in (*HOME.get(t, ()), *SURFACES) if r in present and r != t and allowed(r)), None)
                layout[t] = Placement(t, layout[t].count, home)
    return list(layout.values())


def scene_objects(scene: str, mentioned: Iterable[str] = ()) -> list[str]:
    """The object types of the scene: the room inventory plus every type the task mentions (canonical, once)."""
    return [p.object_type for p in scene_layout(scene, mentioned)]


def basin_of(object_type: str) -> str | None:
    """The receptacle that stands for a structure (``Sink`` -> ``SinkBasin``), or None."""
    return BASINS.get(object_type)
