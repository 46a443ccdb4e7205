"""Text observation of the visible state for the actor prompt.

Two levels (``params.yaml`` ``household.observation``):

* ``full``: every visible state flag of every existing object.
* ``partial``: what a camera at the agent would show: contents of closed containers are hidden,
  and objects in another room than the agent are named without their state.

Never shows hidden ground truth (which conditions are checked, the goal's truth value).
"""

from __future__ import annotations

from typing import Literal

from .world import HouseholdWorld

ObservationLevel = Literal["full", "partial"]


def _describe(world: HouseholdWorld, obj: str, level: ObservationLevel) -> str | None:
    parts: list[str] = []
    place = world.placement(obj)
    if place is not None:
        parts.append(f"{place[0]} {place[1]}")
    for other in world.related("nextto", obj):
        parts.append(f"nextto {other}")
    if world.has(obj, "openable"):
        if world.holds("open", obj):
            parts.append("open")
        else:
            hidden = level == "partial" and bool(world.contents(obj))
            parts.append("closed (contents not visible)" if hidden else "closed")
    if world.has(obj, "toggleable"):
        parts.append("on" if world.holds("toggled_on", obj) else "off")
    for flag, text in (("frozen", "frozen"), ("cooked", "cooked"), ("hot", "hot"), ("on_fire", "on fire"), ("broken", "broken")):
        if world.holds(flag, obj):
            parts.append(text)
    for pred, text in (("covered", "covered with"), ("saturated", "soaked with"), ("filled", "filled with")):
        for other in world.related(pred, obj):
            parts.append(f"{text} {other}")
    return f"{obj}: {'; '.join(parts)}" if parts else f"{obj}: -"


def observe(world: HouseholdWorld, object_list: tuple[str, ...] | list[str], level: ObservationLevel = "full") -> str:
    """One line per visible object of ``object_list``, in list order (deterministic)."""
    lines = []
    for obj in object_list:
        if world.holds("future", obj) or world.has(obj, "substance"):
            continue
        if level == "partial":
            if world.closed_ancestor(obj) is not None:
                continue
            room = world.room_of(obj)
            if world.agent_room and room and room != world.agent_room:
                lines.append(f"{obj}: far away (in {room})")
                continue
        lines.append(_describe(world, obj, level) or obj)
    return "\n".join(lines)
