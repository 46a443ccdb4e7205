"""The start state of a task's world: AI2-THOR's scene defaults, except where the task's plan changes its goal.

The world starts from the room's defaults (:mod:`.scenes`: inventory placements, light switches on,
everything else off, closed, clean, empty, whole). One general rule then keeps a goal from holding before
the first step, so that a planner that does nothing cannot succeed:

    no goal conjunct that the plan changes holds before the first step.

A conjunct (:class:`.goals.Conjunct`) is *changed by the plan* when the plan's first action that affects
that (type, key) sets the conjunct's value: ``turn_off LightSwitch`` for ``LightSwitch.isToggled=False``,
``clean Mirror`` for ``Mirror.isDirty=False``, ``pick Book`` for ``Book.parentReceptacles=[Shelf]`` and for
``Shelf.receptacleObjectIds=[Book]``. Such a conjunct starts false: a state key gets the opposite value at
the start (:attr:`StartSpec.states`, on every instance of the type, since goals score the best instance); a
placement gets a start receptacle that does not match (:attr:`StartSpec.avoid`; ``"Floor"`` when the goal
says ``null``, the dataset's spelling of "on the floor"). A conjunct whose first change goes the other way
(``open Fridge ... close Fridge`` for ``Fridge.isOpen=False``) already holds at the start, as the plan's own
first action presumes. Objects that cannot be picked up are never moved by this rule.

Nothing here reads the dataset: the rule is a function of the goal and the plan, checked by a property
test over generated rows (``tests/unit/test_agentbench_start.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .actions import DEFAULT_LIQUID, Action
from .goals import FLOOR, Conjunct, as_items, conjuncts, goal_type, item_names
from .objects import FRAGILE, affordance

#: state keys a start can set either way (the others start false and no action undoes them)
REVERSIBLE: tuple[str, ...] = ("isToggled", "isOpen", "isDirty", "isFilledWithLiquid", "fillLiquid")
PLACEMENT = "placement"  # the pseudo key "where the object is", changed by picking it up
#: objects switched together (a burner is on iff its knob is)
PAIRED: dict[str, str] = {"StoveBurner": "StoveKnob", "StoveKnob": "StoveBurner"}


@dataclass(frozen=True)
class StartSpec:
    """What the start rule asks of the world: placements to avoid and state overrides, per object type."""

    avoid: Mapping[str, frozenset[str]] = field(default_factory=dict)  # type -> receptacle types
    states: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # type -> ObjectState field values

    def to_json(self) -> dict[str, Any]:
        return {"avoid": {t: sorted(r) for t, r in self.avoid.items()},
                "states": {t: dict(s) for t, s in self.states.items()}}


def plan_changes(actions: Sequence[Action]) -> dict[tuple[str, str], Any]:
    """(object type, key) -> the value the plan's *first* action affecting it sets (keys as in goals, plus
    :data:`PLACEMENT`). Only what an action certainly does is recorded; effects that depend on the world
    (a cooker cooking, a faucet filling) are not."""
    first: dict[tuple[str, str], Any] = {}
    held: str | None = None
    near: str | None = None

    def note(t: str | None, key: str, value: Any) -> None:
        if t:
            for k in (t, PAIRED.get(t)) if key == "isToggled" else (t,):
                if k:
                    first.setdefault((k, key), value)

    for a in actions:
        t = goal_type(a.args[0]) if a.args else None
        name = a.name
        if name == "find":
            near = t
        elif name == "pick":
            note(t, PLACEMENT, True)
            note(t, "isPickedUp", True)
            held = t
        elif name in ("put", "drop", "throw"):
            note(held, "isPickedUp", False)
            if held and (name == "throw" and affordance(held).breakable or name == "drop" and held in FRAGILE):
                note(held, "isBroken", True)
            held = None
        elif name in ("open", "close"):
            note(t, "isOpen", name == "open")
        elif name in ("turn_on", "turn_off"):
            note(t, "isToggled", name == "turn_on")
        elif name in ("dirty", "clean"):
            note(t, "isDirty", name == "dirty")
        elif name in ("break", "slice", "cook"):
            note(t, {"break": "isBroken", "slice": "isSliced", "cook": "isCooked"}[name], True)
        elif name == "fillLiquid":
            note(t, "isFilledWithLiquid", True)
            note(t, "fillLiquid", a.args[1] if len(a.args) > 1 else DEFAULT_LIQUID)
        elif name == "emptyLiquid":
            note(t, "isFilledWithLiquid", False)
            note(t, "fillLiquid", None)
        elif name == "pour":
            note(held, "isFilledWithLiquid", False)
            note(held, "fillLiquid", None)
            target = goal_type(a.args[0]) if a.args else near
            if target and affordance(target).canFillWithLiquid:
                note(target, "isFilledWithLiquid", True)
    return first


def changed_conjuncts(final_state: Iterable[Mapping[str, Any]] | None, actions: Sequence[Action]) -> list[Conjunct]:
    """The goal's conjuncts the plan changes (see the module docstring)."""
    first = plan_changes(actions)
    out = []
    for c in conjuncts(final_state):
        if c.key == "parentReceptacles":
            hit = (c.object_type, PLACEMENT) in first
        elif c.key == "receptacleObjectIds":
            hit = any((item, PLACEMENT) in first for item in as_items(c.value))
        else:
            hit = (c.object_type, c.key) in first and first[(c.object_type, c.key)] == c.value
        if hit:
            out.append(c)
    return out


def start_spec(final_state: Iterable[Mapping[str, Any]] | None, actions: Sequence[Action]) -> StartSpec:
    """The placements and states the world must start with so that no changed conjunct holds."""
    avoid: dict[str, set[str]] = {}
    states: dict[str, dict[str, Any]] = {}
    for c in changed_conjuncts(final_state, actions):
        if c.key == "parentReceptacles":
            if affordance(c.object_type).pickupable:
                avoid.setdefault(c.object_type, set()).update(item_names(c.value) or [FLOOR.capitalize()])
        elif c.key == "receptacleObjectIds":
            for item in as_items(c.value):
                if affordance(item).pickupable:
                    avoid.setdefault(item, set()).add(c.object_type)
        elif c.key in REVERSIBLE:
            for t in (c.object_type, PAIRED.get(c.object_type)) if c.key == "isToggled" else (c.object_type,):
                if t:
                    states.setdefault(t, {}).update(_opposite(c))
    return StartSpec({t: frozenset(r) for t, r in avoid.items()}, states)


def _opposite(c: Conjunct) -> dict[str, Any]:
    """ObjectState fields under which the conjunct does not hold."""
    if c.key == "isFilledWithLiquid":
        return {"fillLiquid": None if c.value else DEFAULT_LIQUID}
    if c.key == "fillLiquid":
        return {"fillLiquid": None if c.value is not None else DEFAULT_LIQUID}
    return {c.key: not c.value}
