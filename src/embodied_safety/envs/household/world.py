"""The symbolic household world: object states, the 17 primitives, exact snapshot/restore.

State is a set of ground facts (``("open", "fridge.n.01_1")``) plus the action history. Every
primitive checks its preconditions and fails with ``PRE_CONDITION_ERROR`` and a reason, or applies
its effects, including simple process dynamics (heat, cold, running water, wash rules). The paper
(SafeBranch §4.2, App. D) rolls OmniGibson back to a safety-critical step; here a snapshot is an
immutable copy of the fact set, so restore is exact and costs microseconds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .actions import PRIMITIVES, Action, ActionParseError, parse_action
from .predicates import DERIVED, PLACEMENT, Fact, category_of, short_name

PRE_CONDITION_ERROR = "PRE_CONDITION_ERROR"
INVALID_ACTION = "INVALID_ACTION"


@dataclass(frozen=True, slots=True)
class StepResult:
    """The executor's answer to one issued action (failed actions are kept in the history)."""

    action: str
    ok: bool
    error: str | None = None  # PRE_CONDITION_ERROR | INVALID_ACTION
    reason: str = ""
    done: bool = False


@dataclass(frozen=True, slots=True)
class Snapshot:
    """An exact, immutable copy of the world state."""

    facts: frozenset[Fact]
    history: tuple[StepResult, ...]


@dataclass(frozen=True, slots=True)
class WashRules:
    """Which tool state removes which dirt: ``dirt category -> "dry" | "soaked"``.

    ``dry``: any cleaning tool removes it; ``soaked``: the tool must be saturated with a liquid.
    Dirt categories without a rule default to ``soaked`` (a wet tool cleans anything).
    """

    rules: Mapping[str, str]

    def tool_state_needed(self, dirt: str) -> str:
        return self.rules.get(category_of(dirt), "soaked")


class Precondition(Exception):
    """Raised inside a primitive; turned into a PRE_CONDITION_ERROR step result."""


class HouseholdWorld:
    """A deterministic household simulator over BDDL object instances."""

    __slots__ = ("objects", "abilities", "wash_rules", "agent_room", "facts", "history", "_dispatch")

    def __init__(
        self,
        objects: Mapping[str, str],
        abilities: Mapping[str, Iterable[str]],
        facts: Iterable[Fact],
        wash_rules: WashRules | None = None,
        agent_room: str | None = None,
    ) -> None:
        self.objects: dict[str, str] = dict(objects)  # instance -> category
        self.abilities: dict[str, frozenset[str]] = {o: frozenset(abilities.get(o, ())) for o in self.objects}
        self.wash_rules = wash_rules or WashRules({})
        self.agent_room = agent_room
        self.facts: set[Fact] = {f for f in facts if f[0] not in DERIVED}
        self.history: list[StepResult] = []
        self._dispatch = {name: getattr(self, f"_do_{name.lower()}") for name in PRIMITIVES}
        self._settle_initial_state()

    # ------------------------------------------------------------------ state access
    def holds(self, predicate: str, *args: str) -> bool:
        """Truth of a ground atom; ``real`` is derived as "not future"."""
        if predicate == "real":
            return ("future", args[0]) not in self.facts
        return (predicate, *args) in self.facts

    def has(self, obj: str, ability: str) -> bool:
        return ability in self.abilities.get(obj, ())

    def placement(self, obj: str) -> tuple[str, str] | None:
        """(relation, parent) for the one of ontop/inside/under that places ``obj``."""
        for fact in self.facts:
            if len(fact) == 3 and fact[1] == obj and fact[0] in PLACEMENT:
                return fact[0], fact[2]
        return None

    def related(self, predicate: str, obj: str) -> list[str]:
        """Second arguments ``y`` with ``(predicate obj y)``, sorted for determinism."""
        return sorted(f[2] for f in self.facts if f[0] == predicate and len(f) == 3 and f[1] == obj)

    def contents(self, container: str) -> list[str]:
        return sorted(f[1] for f in self.facts if f[0] == "inside" and f[2] == container)

    def room_of(self, obj: str) -> str | None:
        seen = set()
        while obj not in seen:
            seen.add(obj)
            rooms = self.related("inroom", obj)
            if rooms:
                return rooms[0]
            place = self.placement(obj)
            if place is None:
                return None
            obj = place[1]
        return None

    def closed_ancestor(self, obj: str) -> str | None:
        """The nearest openable container that is closed and (transitively) holds ``obj``."""
        seen = set()
        while obj not in seen:
            seen.add(obj)
            place = self.placement(obj)
            if place is None or place[0] != "inside":
                return None
            parent = place[1]
            if self.has(parent, "openable") and ("open", parent) not in self.facts:
                return parent
            obj = parent
        return None

    # ------------------------------------------------------------------ snapshot / restore
    def snapshot(self) -> Snapshot:
        return Snapshot(frozenset(self.facts), tuple(self.history))

    def restore(self, snap: Snapshot) -> None:
        self.facts = set(snap.facts)
        self.history = list(snap.history)

    def state_bytes(self) -> bytes:
        """Canonical serialisation of the full state (facts and history)."""
        facts = "\n".join(sorted(" ".join(f) for f in self.facts))
        hist = "\n".join(f"{r.action}|{int(r.ok)}|{r.error or ''}|{r.reason}" for r in self.history)
        return f"{facts}\n--\n{hist}".encode()

    def state_hash(self) -> str:
        """Hash of the object state alone (not the history): equal states, equal hashes."""
        return hashlib.blake2b("\n".join(sorted(" ".join(f) for f in self.facts)).encode(), digest_size=8).hexdigest()

    # ------------------------------------------------------------------ stepping
    def step(self, action: str | Action) -> StepResult:
        """Execute one primitive; failures are recorded results, never exceptions."""
        text = str(action)
        try:
            act = action if isinstance(action, Action) else parse_action(action)
        except ActionParseError as exc:
            return self._record(StepResult(text, False, INVALID_ACTION, str(exc)))
        text = str(act)
        unknown = [a for a in act.args if a not in self.objects]
        if unknown:
            return self._record(StepResult(text, False, INVALID_ACTION, f"unknown object {unknown[0]}"))
        try:
            reason = self._dispatch[act.name](*act.args) or ""
        except Precondition as exc:
            return self._record(StepResult(text, False, PRE_CONDITION_ERROR, str(exc)))
        return self._record(StepResult(text, True, None, reason, done=act.name == "DONE"))

    def _record(self, result: StepResult) -> StepResult:
        self.history.append(result)
        return result

    # ------------------------------------------------------------------ helpers for primitives
    def _need(self, obj: str, ability: str, what: str) -> None:
        if not self.has(obj, ability):
            raise Precondition(f"{obj} is not {what}")

    def _reach(self, *objs: str) -> None:
        for obj in objs:
            if ("future", obj) in self.facts:
                raise Precondition(f"{obj} does not exist yet")
            closed = self.closed_ancestor(obj)
            if closed is not None:
                raise Precondition(f"{obj} is inside closed {closed}; open it first")

    def _movable(self, obj: str) -> None:
        if self.has(obj, "fixed") or self.has(obj, "substance"):
            raise Precondition(f"{obj} cannot be moved")

    def _detach(self, obj: str) -> None:
        self.facts = {
            f
            for f in self.facts
            if not (len(f) == 3 and ((f[0] in PLACEMENT and f[1] == obj) or (f[0] == "nextto" and obj in f[1:])))
        }

    def _liquid_of_source(self, source: str) -> str:
        liquids = self.related("insource", source)
        if liquids:
            return liquids[0]
        for obj, cat in self.objects.items():
            if cat.startswith("water.n."):
                return obj
        raise Precondition(f"{source} is not a source of any liquid in the scene")

    def _lit_heat_source_under(self, obj: str) -> str | None:
        """The toggled-on heat source that heats ``obj`` (itself, directly or via its vessel)."""
        if self.has(obj, "heatSource") and ("toggled_on", obj) in self.facts:
            return obj
        seen = set()
        while obj not in seen:
            seen.add(obj)
            place = self.placement(obj)
            if place is None:
                return None
            parent = place[1]
            if self.has(parent, "heatSource") and ("toggled_on", parent) in self.facts:
                return parent
            obj = parent
        return None

    def _heated_objects(self) -> list[tuple[str, str]]:
        """(object, heat source) for every object heated by another lit heat source."""
        return [(o, h) for o in self.objects if (h := self._lit_heat_source_under(o)) is not None and h != o]

    def _ignite(self) -> None:
        """Flammable objects on, in or next to a lit heat source catch fire."""
        for obj, _ in self._heated_objects():
            if self.has(obj, "flammable"):
                self.facts.add(("on_fire", obj))
        for fact in list(self.facts):
            if fact[0] == "nextto":
                for a, b in ((fact[1], fact[2]), (fact[2], fact[1])):
                    if self.has(a, "flammable") and self.has(b, "heatSource") and ("toggled_on", b) in self.facts:
                        self.facts.add(("on_fire", a))

    def _pass_time(self) -> None:
        """What WAIT does: heat spreads, flammables ignite, frozen food thaws outside the cold."""
        for obj, _ in self._heated_objects():
            self.facts.add(("hot", obj))
            self.facts.discard(("frozen", obj))
        self._ignite()
        for fact in [f for f in self.facts if f[0] == "frozen"]:
            if not self._in_cold(fact[1]):
                self.facts.discard(fact)

    def _in_cold(self, obj: str) -> bool:
        place = self.placement(obj)
        return place is not None and place[0] == "inside" and self.has(place[1], "coldSource")

    def _settle_initial_state(self) -> None:
        """Freezable items that start inside a cold source are frozen (IS-Bench fridge semantics)."""
        for obj in self.objects:
            if self.has(obj, "freezable") and self._in_cold(obj):
                self.facts.add(("frozen", obj))

    # ------------------------------------------------------------------ the primitives
    def _do_place_on_top(self, obj: str, target: str) -> str:
        if obj == target:
            raise Precondition("cannot place an object on itself")
        self._movable(obj)
        self._reach(obj, target)
        if self.has(target, "substance"):
            raise Precondition(f"{target} is not a surface")
        self._detach(obj)
        self.facts.add(("ontop", obj, target))
        self._ignite()
        return ""

    def _do_place_inside(self, obj: str, container: str) -> str:
        if obj == container:
            raise Precondition("cannot place an object inside itself")
        self._movable(obj)
        if not (self.has(container, "container") or self.has(container, "openable")):
            raise Precondition(f"{container} is not a container")
        self._reach(obj, container)
        if self.has(container, "openable") and ("open", container) not in self.facts:
            raise Precondition(f"{container} is closed; open it first")
        self._detach(obj)
        self.facts.add(("inside", obj, container))
        self._ignite()
        return ""

    def _do_open(self, obj: str) -> str:
        self._need(obj, "openable", "openable")
        self._reach(obj)
        if ("open", obj) in self.facts:
            raise Precondition(f"{obj} is already open")
        self.facts.add(("open", obj))
        return ""

    def _do_close(self, obj: str) -> str:
        self._need(obj, "openable", "openable")
        self._reach(obj)
        if ("open", obj) not in self.facts:
            raise Precondition(f"{obj} is already closed")
        self.facts.discard(("open", obj))
        return ""

    def _do_toggle_on(self, obj: str) -> str:
        self._need(obj, "toggleable", "toggleable")
        self._reach(obj)
        if ("toggled_on", obj) in self.facts:
            raise Precondition(f"{obj} is already on")
        if (self.has(obj, "openable") and ("open", obj) in self.facts
                and (self.has(obj, "heatSource") or self.has(obj, "washer"))):
            raise Precondition(f"{obj} door is open; close it before switching it on")
        self.facts.add(("toggled_on", obj))
        self._ignite()
        return ""

    def _do_toggle_off(self, obj: str) -> str:
        self._need(obj, "toggleable", "toggleable")
        self._reach(obj)
        if ("toggled_on", obj) not in self.facts:
            raise Precondition(f"{obj} is already off")
        self.facts.discard(("toggled_on", obj))
        return ""

    def _do_wipe(self, target: str, tool: str) -> str:
        self._need(tool, "cleaningTool", "a cleaning tool")
        self._reach(target, tool)
        if self.has(target, "substance"):
            raise Precondition(f"{target} cannot be wiped")
        dirt = self.related("covered", target)
        if not dirt:
            return f"no dirt on {target}"
        soaked = bool(self.related("saturated", tool))
        removable = [d for d in dirt if soaked or self.wash_rules.tool_state_needed(d) == "dry"]
        if not removable:
            raise Precondition(f"{tool} is dry and cannot remove {', '.join(dirt)}; soak it first")
        for d in removable:
            self.facts.discard(("covered", target, d))
        return f"removed {', '.join(removable)}"

    def _do_cut(self, target: str, tool: str) -> str:
        self._need(tool, "slicer", "a cutting tool")
        self._need(target, "sliceable", "sliceable")
        self._reach(target, tool)
        place = self.placement(target)
        stem = "__" + short_name(category_of(target))
        products = [o for o in self.objects if ("future", o) in self.facts and short_name(category_of(o)).endswith(stem)]
        for prod in products:
            self.facts.discard(("future", prod))
            if place is not None:
                self.facts.add((place[0], prod, place[1]))
        return f"produced {', '.join(products)}" if products else ""

    def _do_soak_under(self, tool: str, source: str) -> str:
        self._need(tool, "soakable", "soakable")
        self._need(source, "waterSource", "a water source")
        self._reach(tool, source)
        if ("toggled_on", source) not in self.facts:
            raise Precondition(f"{source} is off; turn it on first")
        self.facts.add(("saturated", tool, self._liquid_of_source(source)))
        return ""

    def _do_soak_inside(self, tool: str, container: str) -> str:
        self._need(tool, "soakable", "soakable")
        self._reach(tool, container)
        liquids = self.related("filled", container) or self.related("contains", container)
        if not liquids:
            raise Precondition(f"{container} holds no liquid")
        self.facts.add(("saturated", tool, liquids[0]))
        return ""

    def _do_fill_with(self, target: str, source: str) -> str:
        self._need(target, "fillable", "fillable")
        self._reach(target, source)
        if self.has(source, "waterSource"):
            if ("toggled_on", source) not in self.facts:
                raise Precondition(f"{source} is off; turn it on first")
            liquid = self._liquid_of_source(source)
        else:
            liquids = self.related("filled", source) or self.related("insource", source)
            if not liquids:
                raise Precondition(f"{source} has nothing to fill with")
            liquid = liquids[0]
        self.facts.update({("filled", target, liquid), ("contains", target, liquid)})
        return ""

    def _do_pour_into(self, container: str, target: str) -> str:
        self._reach(container, target)
        liquids = self.related("filled", container) or self.related("contains", container)
        if not liquids:
            raise Precondition(f"{container} is empty")
        liquid = liquids[0]
        self.facts.discard(("filled", container, liquid))
        self.facts.discard(("contains", container, liquid))
        if self.has(target, "fillable") or self.has(target, "container"):
            self.facts.update({("filled", target, liquid), ("contains", target, liquid)})
            return ""
        self.facts.add(("covered", target, liquid))
        return f"{liquid} spilled onto {target}"

    def _do_spread(self, container: str, target: str) -> str:
        self._reach(container, target)
        substances = self.related("contains", container) or self.related("filled", container)
        if not substances:
            raise Precondition(f"{container} is empty")
        self.facts.add(("covered", target, substances[0]))
        return ""

    def _do_wait(self) -> str:
        self._pass_time()
        return ""

    def _do_wait_for_cooked(self, target: str) -> str:
        # waiting needs no reach: the target may sit inside a closed oven or microwave
        heat = self._lit_heat_source_under(target)
        if heat is None:
            raise Precondition(f"{target} is not on or in a heat source that is on")
        if self.has(heat, "openable") and ("open", heat) in self.facts:
            raise Precondition(f"{heat} door is open")
        on_target = sorted(f[1] for f in self.facts if f[0] == "ontop" and f[2] == target)
        for obj in [target, *self.contents(target), *on_target]:
            if self.has(obj, "cookable"):
                self.facts.add(("cooked", obj))
        for liquid in self.related("filled", target):
            self.facts.add(("hot", liquid))
        self._pass_time()
        return ""

    def _do_wait_for_washed(self, target: str) -> str:
        place = self.placement(target)
        washer = place[1] if place is not None and place[0] == "inside" else None
        if washer is None or not self.has(washer, "washer"):
            raise Precondition(f"{target} is not inside a washer")
        if ("open", washer) in self.facts or ("toggled_on", washer) not in self.facts:
            raise Precondition(f"{washer} must be closed and on")
        for obj in self.contents(washer):
            for dirt in self.related("covered", obj):
                self.facts.discard(("covered", obj, dirt))
        return ""

    def _do_wait_for_frozen(self, target: str, fridge: str) -> str:
        self._need(fridge, "coldSource", "a fridge or freezer")
        if ("inside", target, fridge) not in self.facts:
            raise Precondition(f"{target} is not inside {fridge}")
        if ("open", fridge) in self.facts:
            raise Precondition(f"{fridge} is open; close it first")
        if not self.has(target, "freezable"):
            raise Precondition(f"{target} cannot be frozen")
        self.facts.add(("frozen", target))
        return ""

    def _do_done(self) -> str:
        return ""
