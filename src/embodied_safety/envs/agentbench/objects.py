"""What each iTHOR object type affords, and how a name in a task or a model's plan maps onto a type.

The table is written from the public AI2-THOR object-type documentation (ai2thor.allenai.org, iTHOR
"Object Types" with their actionable properties: Pickupable, Receptacle, Openable, Toggleable,
Sliceable, Breakable, Fillable, Cookable, Dirtyable, UsedUp, heat/cold source). It is hand-written
from that page and general AI2-THOR knowledge, not extracted from the simulator, so a few entries may
differ from a given AI2-THOR release; ``docs/agentbench_world.md`` lists the choices that matter.

Two flags are ours, for safety judgements rather than simulation: ``heatSource`` (things that heat or
burn what is in/on them, or that are a flame: a lit Candle) and ``electrical`` (powered appliances and
electronics, where liquid is a shock/damage hazard).

A type the table does not know (``ToyCar``) gets :data:`DEFAULT_AFFORDANCE`: pickupable and nothing
else, the most conservative guess for "a thing a task mentions" (it can be carried and placed, but it
never holds objects, opens, switches or breaks). Lookups never raise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Affordance:
    """The actionable properties of one object type (AI2-THOR names where AI2-THOR has one)."""

    pickupable: bool = False
    openable: bool = False
    toggleable: bool = False
    sliceable: bool = False
    breakable: bool = False
    canFillWithLiquid: bool = False
    cookable: bool = False
    dirtyable: bool = False
    receptacle: bool = False
    usedUpable: bool = False  # AI2-THOR: canBeUsedUp
    heatSource: bool = False  # AI2-THOR: isHeatSource (a lit Candle included)
    electrical: bool = False  # ours: powered appliance / electronics
    known: bool = True  # False for DEFAULT_AFFORDANCE


def _set(names: str) -> frozenset[str]:
    return frozenset(names.split())


#: every iTHOR object type (the four room types; RoboTHOR-only types left out)
TYPES: frozenset[str] = _set("""
    AlarmClock AluminumFoil Apple AppleSliced ArmChair BaseballBat BasketBall Bathtub BathtubBasin Bed Blinds
    Book Boots Bottle Bowl Box Bread BreadSliced ButterKnife Cabinet Candle CD CellPhone Chair Cloth
    CoffeeMachine CoffeeTable CounterTop CreditCard Cup Curtains Desk DeskLamp Desktop DiningTable DishSponge
    DogBed Drawer Dresser Dumbbell Egg EggCracked Faucet Floor FloorLamp Footstool Fork Fridge GarbageBag
    GarbageCan HandTowel HandTowelHolder HousePlant Kettle KeyChain Knife Ladle Laptop LaundryHamper Lettuce
    LettuceSliced LightSwitch Microwave Mirror Mug Newspaper Ottoman Painting Pan PaperTowelRoll Pen Pencil
    PepperShaker Pillow Plate Plunger Poster Pot Potato PotatoSliced RemoteControl RoomDecor Safe SaltShaker
    ScrubBrush Shelf ShelvingUnit ShowerCurtain ShowerDoor ShowerGlass ShowerHead SideTable Sink SinkBasin
    SoapBar SoapBottle Sofa Spatula Spoon SprayBottle Statue Stool StoveBurner StoveKnob TableTopDecor
    TeddyBear Television TennisRacket TissueBox Toaster Toilet ToiletPaper ToiletPaperHanger Tomato
    TomatoSliced Towel TowelHolder TVStand VacuumCleaner Vase Watch WateringCan Window WineBottle
""")

PICKUPABLE = _set("""
    AlarmClock AluminumFoil Apple AppleSliced BaseballBat BasketBall Book Boots Bottle Bowl Box Bread
    BreadSliced ButterKnife Candle CD CellPhone Cloth CreditCard Cup DishSponge Dumbbell Egg EggCracked Fork
    HandTowel Kettle KeyChain Knife Ladle Laptop Lettuce LettuceSliced Mug Newspaper Pan PaperTowelRoll Pen
    Pencil PepperShaker Pillow Plate Plunger Pot Potato PotatoSliced RemoteControl SaltShaker ScrubBrush
    SoapBar SoapBottle Spatula Spoon SprayBottle Statue TableTopDecor TeddyBear TennisRacket TissueBox
    ToiletPaper Tomato TomatoSliced Towel Vase Watch WateringCan WineBottle
""")
OPENABLE = _set("""
    Blinds Book Box Cabinet Drawer Fridge Kettle LaundryHamper Laptop Microwave Safe ShowerCurtain ShowerDoor Toilet
""")
TOGGLEABLE = _set("""
    Candle CellPhone CoffeeMachine DeskLamp Desktop Faucet FloorLamp Laptop LightSwitch Microwave ShowerHead
    StoveBurner StoveKnob Television Toaster
""")
SLICEABLE = _set("Apple Bread Egg Lettuce Potato Tomato")
BREAKABLE = _set("""
    Bottle Bowl CellPhone Cup Egg Laptop Mirror Mug Plate ShowerDoor ShowerGlass Statue Television Vase Window
    WineBottle
""")
FILLABLE = _set("Bottle Bowl Cup HousePlant Kettle Mug Pot WateringCan WineBottle")
COOKABLE = _set("BreadSliced EggCracked Potato PotatoSliced")
DIRTYABLE = _set("Bed Bowl Cloth Cup Mirror Mug Pan Plate Pot")
USED_UPABLE = _set("PaperTowelRoll SoapBottle TissueBox ToiletPaper")
RECEPTACLES = _set("""
    ArmChair BathtubBasin Bed Bowl Box Cabinet Chair CoffeeMachine CoffeeTable CounterTop Cup Desk DiningTable
    DogBed Drawer Dresser Floor Footstool Fridge GarbageCan HandTowelHolder LaundryHamper Microwave Mug
    Ottoman Pan Plate Pot Safe Shelf ShelvingUnit SideTable SinkBasin Sofa Stool StoveBurner Toaster Toilet
    ToiletPaperHanger TowelHolder TVStand
""")
HEAT_SOURCES = _set("Candle CoffeeMachine Microwave StoveBurner Toaster")
ELECTRICAL = _set("""
    AlarmClock CellPhone CoffeeMachine DeskLamp Desktop FloorLamp Fridge Laptop LightSwitch Microwave
    Television Toaster VacuumCleaner
""")

#: openable receptacles that must be open to place something in them (AI2-THOR refuses PutObject into
#: them while closed, ``forceAction`` or not); a closed Toilet or Laptop is a surface one can still put on
MUST_BE_OPEN = _set("Box Cabinet Drawer Fridge LaundryHamper Microwave Safe")
#: heat sources that cook what is in/on them while on (a lit Candle is a flame but holds nothing)
COOKERS = _set("CoffeeMachine Microwave StoveBurner Toaster")
#: pickupable breakables that break when dropped (glass, ceramic, an egg); ``throw`` breaks every
#: pickupable breakable (CellPhone and Laptop survive a drop, not a throw)
FRAGILE = _set("Bottle Bowl Cup Egg Mug Plate Statue Vase WineBottle")
#: structures whose receptacle is a separate basin object (AI2-THOR: ``Sink|..|SinkBasin``)
BASINS: dict[str, str] = {"Sink": "SinkBasin", "Bathtub": "BathtubBasin"}
#: what slicing produces (AI2-THOR: slicing an Egg cracks it)
SLICE_RESULT: dict[str, str] = {
    "Apple": "AppleSliced", "Bread": "BreadSliced", "Egg": "EggCracked", "Lettuce": "LettuceSliced",
    "Potato": "PotatoSliced", "Tomato": "TomatoSliced",
}
SLICED_FROM: dict[str, str] = {v: k for k, v in SLICE_RESULT.items()}

DEFAULT_AFFORDANCE = Affordance(pickupable=True, known=False)

#: names people and models use for a type (keys: lower case, no spaces/underscores/hyphens)
ALIASES: dict[str, str] = {
    "refrigerator": "Fridge", "freezer": "Fridge",
    "tv": "Television", "telly": "Television",
    "garbage": "GarbageCan", "trash": "GarbageCan", "trashcan": "GarbageCan", "trashbin": "GarbageCan",
    "garbagebin": "GarbageCan", "bin": "GarbageCan", "wastebasket": "GarbageCan", "dustbin": "GarbageCan",
    "rubbishbin": "GarbageCan",
    "stove": "StoveBurner", "burner": "StoveBurner", "stovetop": "StoveBurner", "cooktop": "StoveBurner",
    "hob": "StoveBurner", "knob": "StoveKnob",
    "phone": "CellPhone", "smartphone": "CellPhone", "mobilephone": "CellPhone",
    "remote": "RemoteControl", "tvremote": "RemoteControl",
    "couch": "Sofa", "counter": "CounterTop", "kitchencounter": "CounterTop", "worktop": "CounterTop",
    "table": "DiningTable", "kitchentable": "DiningTable", "nightstand": "SideTable", "endtable": "SideTable",
    "lamp": "DeskLamp", "plant": "HousePlant", "pottedplant": "HousePlant", "sponge": "DishSponge",
    "soap": "SoapBar", "key": "KeyChain", "keys": "KeyChain", "computer": "Laptop", "wine": "WineBottle",
    "coffeemaker": "CoffeeMachine", "tap": "Faucet", "shower": "ShowerHead", "cupboard": "Cabinet",
    "tub": "Bathtub", "towelrack": "TowelHolder", "papertowel": "PaperTowelRoll",
    "light": "LightSwitch", "switch": "LightSwitch", "teddy": "TeddyBear", "knives": "Knife",
    "crackedegg": "EggCracked", "bathtubbasin": "BathtubBasin", "tvstand": "TVStand", "cd": "CD",
}
_BY_KEY: dict[str, str] = {t.lower(): t for t in TYPES}
_SEPARATORS = re.compile(r"[\s_\-]+")


def _key(name: str) -> str:
    return _SEPARATORS.sub("", name.strip()).lower()


@cache
def canonical_type(name: str) -> str:
    """The iTHOR type a name means: case, spaces, aliases, plurals and "sliced"/"slice" forms.

    ``"garbage can"`` -> ``GarbageCan``, ``"Refrigerator"`` -> ``Fridge``, ``"sliced apple"`` ->
    ``AppleSliced``. An unknown name keeps its words, capitalised and joined (``"toy car"`` ->
    ``ToyCar``), so the same unknown object gets the same type wherever it is mentioned.
    """
    found = _lookup(_key(name))
    if found:
        return found
    words = [w for w in _SEPARATORS.split(name.strip()) if w]
    return "".join(w[:1].upper() + w[1:] for w in words) or name


def _lookup(key: str) -> str | None:
    if key in _BY_KEY:
        return _BY_KEY[key]
    if key in ALIASES:
        return ALIASES[key]
    for affix in ("sliced", "slices", "slice"):
        for base in (key.removesuffix(affix), key.removeprefix(affix)):
            if base != key and base:
                whole = _lookup_plain(base)
                if whole in SLICE_RESULT:
                    return SLICE_RESULT[whole]
    for plural in ("es", "s"):
        if key.endswith(plural) and len(key) > len(plural) + 1:
            single = _lookup_plain(key[: -len(plural)])
            if single:
                return single
    return None


def _lookup_plain(key: str) -> str | None:
    return _BY_KEY.get(key) or ALIASES.get(key)


def is_known_type(name: str) -> bool:
    """Does the name resolve to a type of the table (directly or by alias)?"""
    return _lookup(_key(name)) is not None


@cache
def affordance(name: str) -> Affordance:
    """The affordances of a type name (resolved first); unknown types get :data:`DEFAULT_AFFORDANCE`."""
    t = canonical_type(name)
    if t not in TYPES:
        return DEFAULT_AFFORDANCE
    return Affordance(
        pickupable=t in PICKUPABLE, openable=t in OPENABLE, toggleable=t in TOGGLEABLE, sliceable=t in SLICEABLE,
        breakable=t in BREAKABLE, canFillWithLiquid=t in FILLABLE, cookable=t in COOKABLE,
        dirtyable=t in DIRTYABLE, receptacle=t in RECEPTACLES, usedUpable=t in USED_UPABLE,
        heatSource=t in HEAT_SOURCES, electrical=t in ELECTRICAL,
    )
