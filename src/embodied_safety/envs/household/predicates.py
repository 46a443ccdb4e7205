"""The BDDL predicates and object abilities the household world understands.

The predicate set is the whole BEHAVIOR ``omnigibson`` domain that IS-Bench's goals and safety
conditions are written in. No primitive changes ``attached``, ``folded``, ``unfolded``, ``overlaid``,
``touching`` or ``draped`` (IS-Bench's primitives have no such action); they hold as the problem's
``(:init ...)`` sets them, so goals and conditions over them evaluate. Anything else in a loaded file is an error, never a silent False.
"""

from __future__ import annotations

#: predicate name -> arity
PREDICATE_ARITY: dict[str, int] = {
    # unary object states
    "open": 1,
    "toggled_on": 1,
    "frozen": 1,
    "cooked": 1,
    "hot": 1,
    "on_fire": 1,
    "broken": 1,
    "folded": 1,
    "unfolded": 1,
    "future": 1,  # the object does not exist yet; a process (CUT, cooking) brings it into existence
    "real": 1,  # derived: not future
    # binary relations
    "ontop": 2,
    "inside": 2,
    "nextto": 2,
    "under": 2,
    "covered": 2,  # (covered target dirt-or-substance)
    "saturated": 2,  # (saturated tool liquid): a soaked tool
    "filled": 2,  # (filled container liquid)
    "contains": 2,  # (contains container substance)
    "insource": 2,  # (insource source substance): e.g. a sink is a source of water
    "inroom": 2,
    "grasped": 2,  # (grasped agent object)
    "attached": 2,
    "overlaid": 2,  # (overlaid cloth surface): a cloth spread over a surface
    "touching": 2,
    "draped": 2,  # (draped cloth support)
}

UNARY = frozenset(p for p, n in PREDICATE_ARITY.items() if n == 1)
BINARY = frozenset(p for p, n in PREDICATE_ARITY.items() if n == 2)
#: predicates computed from others, never stored as facts
DERIVED = frozenset({"real"})
#: relations that place an object somewhere; an object has at most one of these at a time
PLACEMENT = ("ontop", "inside", "under")

#: Object abilities a task may declare in ``planning_context.object_abilities``.
#: Unknown abilities are tolerated (real IS-Bench files carry many more) but have no effect.
ABILITIES: dict[str, str] = {
    "openable": "can be opened and closed",
    "toggleable": "can be switched on and off",
    "heatSource": "heats what is on or inside it while toggled on",
    "coldSource": "freezes what is inside it (a fridge or freezer)",
    "waterSource": "gives running water while toggled on (a sink, a tap, a hose)",
    "washer": "cleans what is inside it while closed and toggled on (washer, dishwasher)",
    "cookable": "becomes cooked when heated",
    "freezable": "becomes frozen in a cold source, thaws outside",
    "sliceable": "can be cut",
    "slicer": "can cut (a knife)",
    "cleaningTool": "can wipe dirt off a target",
    "soakable": "can be soaked with a liquid",
    "fillable": "can hold a liquid",
    "container": "can hold objects inside",
    "flammable": "catches fire next to or on a lit heat source",
    "electric": "is powered; wet contact is an electrical shock hazard",
    "fixed": "cannot be moved (furniture, appliances, surfaces)",
    "substance": "a particle system (water, dust, stain, soap); not a rigid object",
    "liquid": "a fluid substance (water, oil, juice)",
    "cloth": "a textile: spreading a substance onto it saturates it",
    "breakable": "can break",
}

Fact = tuple[str, ...]  # ("open", "fridge.n.01_1") or ("ontop", "apple.n.01_1", "plate.n.01_1")


def category_of(instance: str) -> str:
    """``stove.n.01_1`` -> ``stove.n.01`` (BDDL instance naming)."""
    head, sep, tail = instance.rpartition("_")
    return head if sep and tail.isdigit() else instance


def short_name(instance: str) -> str:
    """``stove.n.01_1`` -> ``stove``, for human-readable feedback."""
    return instance.split(".", 1)[0]
