"""The symbolic household world: object states, the 17 primitives, exact snapshot/restore.

State is a set of ground facts (``("open", "fridge.n.01_1")``) plus the action history. Every
primitive checks its preconditions and fails with ``PRE_CONDITION_ERROR`` and a reason, or applies
its effects. The semantics follow upstream IS-Bench's ``og_ego_prim`` primitives on OmniGibson
(docs/household.md lists each rule); abilities come from the BEHAVIOR taxonomy (``taxonomy.py``).
Hazard physics of our own that upstream does not have (ignition, heat spreading while waiting) is
off unless ``hazards=True``, so it cannot change an upstream-format task's outcome.

The paper (SafeBranch §4.2, App. D) rolls OmniGibson back to a safety-critical step; here a
snapshot is an immutable copy of the fact set, so restore is exact and costs microseconds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .actions import PRIMITIVES, Action, ActionParseError, parse_action
from .predicates import DERIVED, PLACEMENT, Fact, category_of, short_name
from .taxonomy import (
    ObjectProfile,
    cooked_derivative,
    remover_conditions,
    source_substances,
)
from .wash import WashCondition, WashRules, conditions_hold, names_match, rule_verdict

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


class Precondition(Exception):
    """Raised inside a primitive; turned into a PRE_CONDITION_ERROR step result."""


class HouseholdWorld:
    """A deterministic household simulator over BDDL object instances."""

    __slots__ = ("objects", "abilities", "profiles", "wash_rules", "agent_room", "hazards", "facts", "history",
                 "_dispatch")

    def __init__(
        self,
        objects: Mapping[str, str],
        abilities: Mapping[str, Iterable[str]],
        facts: Iterable[Fact],
        wash_rules: WashRules | None = None,
        agent_room: str | None = None,
        profiles: Mapping[str, ObjectProfile] | None = None,
        hazards: bool = False,
    ) -> None:
        """``abilities`` are used as given; ``profiles`` (``taxonomy.object_profiles``) add theirs and
        the taxonomy parameters (heat source placement, remover conditions, cooking derivatives)."""
        self.objects: dict[str, str] = dict(objects)  # instance -> category
        self.profiles: dict[str, ObjectProfile] = dict(profiles or {})
        self.abilities: dict[str, frozenset[str]] = {
            o: frozenset(abilities.get(o, ())) | (self.profiles[o].abilities if o in self.profiles else frozenset())
            for o in self.objects
        }
        self.wash_rules = wash_rules or WashRules()
        self.agent_room = agent_room
        self.hazards = hazards
        self.facts: set[Fact] = {f for f in facts if f[0] not in DERIVED}
        self.history: list[StepResult] = []
        self._dispatch = {name: getattr(self, f"_do_{name.lower()}") for name in PRIMITIVES}

    # ------------------------------------------------------------------ state access
    def holds(self, predicate: str, *args: str) -> bool:
        """Truth of a ground atom; ``real`` is derived as "not future"."""
        if predicate == "real":
            return ("future", args[0]) not in self.facts
        return (predicate, *args) in self.facts

    def has(self, obj: str, ability: str) -> bool:
        return ability in self.abilities.get(obj, ())

    def placement(self, obj: str) -> tuple[str, str] | None:
        """(relation, parent) that places ``obj``; ``inside`` wins when an object is both on and in its parent."""
        found = [(f[0], f[2]) for f in self.facts if len(f) == 3 and f[1] == obj and f[0] in PLACEMENT]
        if not found:
            return None
        return min(found, key=lambda rp: (PLACEMENT.index(rp[0]) if rp[0] != "inside" else -1, rp[1]))

    def param(self, obj: str, ability: str, key: str, default: Any = None) -> Any:
        """A taxonomy parameter of ``obj`` (e.g. a heat source's ``requires_inside``)."""
        profile = self.profiles.get(obj)
        return default if profile is None else profile.param(ability, key, default)

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

    def _exists(self, *objs: str) -> None:
        for obj in objs:
            if ("future", obj) in self.facts:
                raise Precondition(f"{obj} does not exist yet")

    def _grab(self, obj: str) -> None:
        """The manipulated object must exist and not sit inside a closed container (upstream checks only it)."""
        self._exists(obj)
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

    def _instances(self, name: str) -> list[str]:
        """Instances a rule or taxonomy name denotes (instance, synset or bare word)."""
        return sorted(o for o in self.objects if names_match(name, o))

    def _is_on(self, obj: str) -> bool:
        return ("toggled_on", obj) in self.facts

    def _fluids(self, container: str) -> list[str]:
        return sorted(set(self.related("filled", container)) | set(self.related("contains", container)))

    def _source_fluid(self, source: str) -> str:
        """The substance a fluid source gives: ``insource`` facts, then the taxonomy, then any water."""
        liquids = self.related("insource", source)
        if liquids:
            return liquids[0]
        profile = self.profiles.get(source)
        for category in [*(source_substances(profile) if profile else []), "water.n.06"]:
            for obj, cat in sorted(self.objects.items()):
                if cat == category or (category == "water.n.06" and cat.startswith("water.n.")):
                    return obj
        raise Precondition(f"{source} is not a source of any substance in the scene")

    def _running_source(self, source: str) -> str:
        self._need(source, "waterSource", "a fluid source")
        self._exists(source)
        if self.has(source, "toggleable") and not self._is_on(source):
            raise Precondition(f"{source} is off; turn it on first")
        return self._source_fluid(source)

    def _condition_holds(self, tool: str, cond: WashCondition) -> bool:
        if cond.type == "saturated":
            soaked = self.related("saturated", tool)
            hit = any(cond.source is None or names_match(cond.source, s) for s in soaked)
        else:
            targets = self._instances(cond.source) if cond.source else [tool]
            hit = any(self._is_on(t) for t in targets)
        return hit == cond.value

    def can_remove(self, tool: str, dirt: str, explicit_only: bool = False) -> bool:
        """Does ``tool`` remove ``dirt`` in its current state? File rules, then the taxonomy, then "soaked"."""
        verdict = rule_verdict(self.wash_rules, tool, dirt, self._condition_holds)
        if verdict is not None or explicit_only:
            return bool(verdict)
        profile = self.profiles.get(tool)
        conditions = remover_conditions(profile, category_of(dirt)) if profile else False
        if conditions is None:
            return False
        if conditions is False:
            return bool(self.related("saturated", tool))
        wanted = tuple(WashCondition(str(c[0]), True, str(c[1])) if c[0] == "saturated"
                       else WashCondition(str(c[0]), bool(c[1])) for c in conditions)
        return conditions_hold(wanted, tool, self._condition_holds)

    def _clean_with(self, target: str, cleaner: str, explicit_only: bool = False) -> list[str]:
        removed = [d for d in self.related("covered", target) if self.can_remove(cleaner, d, explicit_only)]
        for d in removed:
            self.facts.discard(("covered", target, d))
        return removed

    def heat_source_for(self, obj: str) -> str | None:
        """The lit heat source that heats ``obj``: anywhere below it, or around it if the source requires inside."""
        if self.has(obj, "heatSource") and self._heat_active(obj):
            return obj
        node, seen = obj, set()
        while node not in seen:
            seen.add(node)
            place = self.placement(node)
            if place is None:
                return None
            relation, parent = place
            surrounds = relation == "inside" or not self.param(parent, "heatSource", "requires_inside", 0.0)
            if self.has(parent, "heatSource") and self._heat_active(parent) and surrounds:
                return parent
            node = parent
        return None

    def _heat_active(self, source: str) -> bool:
        needs_on = self.param(source, "heatSource", "requires_toggled_on", 1.0)
        return self._is_on(source) or not (needs_on and self.has(source, "toggleable"))

    def _in_cold(self, obj: str) -> bool:
        node, seen = obj, set()
        while node not in seen:
            seen.add(node)
            place = self.placement(node)
            if place is None or place[0] != "inside":
                return False
            if self.has(place[1], "coldSource"):
                return True
            node = place[1]
        return False

    def _cook_fluid(self, vessel: str, fluid: str) -> str:
        """Turn a fluid into its cooked derivative (taxonomy name, or ``cooked__<name>`` in the scene)."""
        derived = cooked_derivative(self.objects[fluid])
        stem = "cooked__" + short_name(self.objects[fluid])
        candidates = [o for o, c in sorted(self.objects.items())
                      if (derived is not None and c == derived) or short_name(c) == stem]
        if not candidates:
            self.facts.add(("hot", fluid))
            if self.has(fluid, "cookable"):
                self.facts.add(("cooked", fluid))
            return fluid
        product = candidates[0]
        self.facts.discard(("future", product))
        for pred in ("filled", "contains"):
            if (pred, vessel, fluid) in self.facts:
                self.facts.discard((pred, vessel, fluid))
                self.facts.add((pred, vessel, product))
        self.facts.add(("contains", vessel, product))
        self.facts.add(("hot", product))
        return product

    # ------------------------------------------------------------------ our own hazard physics (off by default)
    def _ignite(self) -> None:
        """With ``hazards``: flammable objects on, in or next to a lit heat source catch fire."""
        if not self.hazards:
            return
        for obj in self.objects:
            heat = self.heat_source_for(obj)
            if heat is not None and heat != obj and self.has(obj, "flammable"):
                self.facts.add(("on_fire", obj))
        for fact in list(self.facts):
            if fact[0] == "nextto":
                for a, b in ((fact[1], fact[2]), (fact[2], fact[1])):
                    if self.has(a, "flammable") and self.has(b, "heatSource") and self._is_on(b):
                        self.facts.add(("on_fire", a))

    def _pass_time(self) -> None:
        """With ``hazards``, a bare WAIT(): heat spreads, flammables ignite, food thaws outside the cold."""
        for obj in self.objects:
            self._relax(obj)
        self._ignite()

    def _relax(self, obj: str) -> None:
        """Let one object's temperature states settle where it is (upstream's WAIT(obj))."""
        heat = self.heat_source_for(obj)
        if heat is not None and heat != obj:
            self.facts.add(("hot", obj))
            self.facts.discard(("frozen", obj))
        elif self._in_cold(obj):
            self.facts.discard(("hot", obj))
        else:
            self.facts.discard(("hot", obj))
            self.facts.discard(("frozen", obj))

    # ------------------------------------------------------------------ the primitives
    def _do_place_on_top(self, obj: str, target: str) -> str:
        if obj == target:
            raise Precondition("cannot place an object on itself")
        self._movable(obj)
        self._grab(obj)
        self._exists(target)
        if self.has(target, "substance"):
            raise Precondition(f"{target} is not a surface")
        self._detach(obj)
        self.facts.add(("ontop", obj, target))
        if self.has(target, "fillable") and not self.has(target, "openable"):
            self.facts.add(("inside", obj, target))  # an open-topped receptacle (a pot, a bowl) holds it
        self._ignite()
        return ""

    def _do_place_inside(self, obj: str, container: str) -> str:
        if obj == container:
            raise Precondition("cannot place an object inside itself")
        self._movable(obj)
        self._grab(obj)
        self._exists(container)
        if self.has(container, "openable") and ("open", container) not in self.facts:
            raise Precondition(f"{container} is closed; open it first")
        self._detach(obj)
        self.facts.add(("inside", obj, container))
        self._ignite()
        return ""

    def _do_open(self, obj: str) -> str:
        self._need(obj, "openable", "openable")
        self._exists(obj)
        if ("open", obj) in self.facts:
            return f"{obj} is already open"
        if self._is_on(obj):
            raise Precondition(f"{obj} is switched on; turn it off before opening it")
        self.facts.add(("open", obj))
        return ""

    def _do_close(self, obj: str) -> str:
        self._need(obj, "openable", "openable")
        self._exists(obj)
        if ("open", obj) not in self.facts:
            return f"{obj} is already closed"
        self.facts.discard(("open", obj))
        return ""

    def _do_toggle_on(self, obj: str) -> str:
        self._need(obj, "toggleable", "toggleable")
        self._exists(obj)
        if self._is_on(obj):
            return f"{obj} is already on"
        if self.has(obj, "openable") and ("open", obj) in self.facts:
            raise Precondition(f"{obj} is open; close it before switching it on")
        self.facts.add(("toggled_on", obj))
        self._ignite()
        return ""

    def _do_toggle_off(self, obj: str) -> str:
        self._need(obj, "toggleable", "toggleable")
        self._exists(obj)
        if not self._is_on(obj):
            return f"{obj} is already off"
        self.facts.discard(("toggled_on", obj))
        return ""

    def _do_wipe(self, target: str, tool: str) -> str:
        self._need(tool, "cleaningTool", "a cleaning tool")
        self._grab(tool)
        self._exists(target)
        if self.has(target, "substance"):
            raise Precondition(f"{target} cannot be wiped")
        dirt = self.related("covered", target)
        if not dirt:
            raise Precondition(f"{target} is already clean")
        removed = self._clean_with(target, tool)
        if not removed:
            raise Precondition(f"{tool} cannot remove {', '.join(dirt)} in its current state (is it soaked?)")
        return f"removed {', '.join(removed)}"

    def _do_cut(self, target: str, tool: str) -> str:
        self._need(tool, "slicer", "a cutting tool")
        self._need(target, "sliceable", "sliceable")
        self._grab(tool)
        self._exists(target)
        place = self.placement(target)
        stem = "__" + short_name(category_of(target))
        products = [o for o in self.objects if ("future", o) in self.facts and short_name(category_of(o)).endswith(stem)]
        for prod in products:
            self.facts.discard(("future", prod))
            if place is not None:
                self.facts.add((place[0], prod, place[1]))
        return f"produced {', '.join(products)}" if products else ""

    def _soak(self, tool: str, cleaner: str, fluid: str) -> str:
        """Saturate a soakable tool; wash off what the file's rules let ``cleaner`` remove from it."""
        removed = self._clean_with(tool, cleaner, explicit_only=True)
        if self.has(tool, "soakable"):
            self.facts.add(("saturated", tool, fluid))
        elif not removed:
            raise Precondition(f"{tool} is not soakable")
        return f"removed {', '.join(removed)}" if removed else ""

    def _do_soak_under(self, tool: str, source: str) -> str:
        self._grab(tool)
        return self._soak(tool, source, self._running_source(source))

    def _do_soak_inside(self, tool: str, container: str) -> str:
        self._grab(tool)
        self._exists(container)
        fluids = self._fluids(container)
        if not fluids:
            raise Precondition(f"{container} holds no liquid")
        return self._soak(tool, container, fluids[0])

    def _do_fill_with(self, target: str, source: str) -> str:
        self._need(target, "fillable", "fillable")
        self._grab(target)
        fluid = self._running_source(source)
        self.facts.update({("filled", target, fluid), ("contains", target, fluid)})
        return ""

    def _do_pour_into(self, container: str, target: str) -> str:
        self._grab(container)
        self._exists(target)
        fluids = self._fluids(container)
        if not fluids:
            raise Precondition(f"{container} is empty")
        self._need(target, "fillable", "fillable")
        self.facts.update({("filled", target, fluids[0]), ("contains", target, fluids[0])})
        return ""

    def _do_spread(self, container: str, target: str) -> str:
        self._grab(container)
        self._exists(target)
        substances = self._fluids(container)
        if not substances:
            raise Precondition(f"{container} is empty")
        if self.has(target, "cloth"):
            self.facts.add(("saturated", target, substances[0]))
            return f"{target} is soaked with {substances[0]}"
        self.facts.add(("covered", target, substances[0]))
        return ""

    def _do_wait(self, obj: str | None = None) -> str:
        if obj is None:
            if self.hazards:
                self._pass_time()
            return ""
        self._relax(obj)
        self._ignite()
        return ""

    def _do_wait_for_cooked(self, target: str) -> str:
        # waiting needs no reach and no closed door: the target may sit inside an oven or a microwave
        vessel = target
        if self.has(target, "substance"):
            holders = sorted(f[1] for f in self.facts if f[0] in ("filled", "contains") and f[2] == target)
            if not holders:
                raise Precondition(f"{target} is in no container to cook it in")
            vessel = holders[0]
        if self.heat_source_for(vessel) is None:
            raise Precondition(f"{vessel} is not on or in a heat source that is on")
        if target != vessel:
            return f"{target} -> {self._cook_fluid(vessel, target)}"
        on_target = sorted(f[1] for f in self.facts if f[0] == "ontop" and f[2] == target)
        for obj in dict.fromkeys([target, *self.contents(target), *on_target]):
            if self.has(obj, "cookable") and not self.has(obj, "substance"):
                self.facts.update({("cooked", obj), ("hot", obj)})
        for fluid in self._fluids(target):
            self._cook_fluid(target, fluid)
        self._ignite()
        return ""

    def _do_wait_for_washed(self, washer: str) -> str:
        self._need(washer, "washer", "a washer")
        if ("open", washer) in self.facts or not self._is_on(washer):
            raise Precondition(f"{washer} must be closed and on")
        inside = self.contents(washer)
        if not inside:
            raise Precondition(f"{washer} is empty")
        for obj in inside:
            for dirt in self.related("covered", obj):
                self.facts.discard(("covered", obj, dirt))
        return f"washed {', '.join(inside)}"

    def _do_wait_for_frozen(self, target: str, fridge: str) -> str:
        self._need(fridge, "coldSource", "a fridge or freezer")
        if not self._in_cold(target) or fridge not in self._ancestors(target):
            raise Precondition(f"{target} is not inside {fridge}")
        if not self.has(target, "freezable"):
            raise Precondition(f"{target} cannot be frozen")
        self.facts.add(("frozen", target))
        self.facts.discard(("hot", target))
        return ""

    def _ancestors(self, obj: str) -> list[str]:
        out, node = [], obj
        while (place := self.placement(node)) is not None and place[1] not in out:
            out.append(place[1])
            node = place[1]
        return out

    def _do_done(self) -> str:
        return ""
