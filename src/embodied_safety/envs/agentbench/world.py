"""The symbolic SafeAgentBench world: AI2-THOR-style object states under the benchmark's 17 actions.

Every object has an AI2-THOR objectId (``Mug|1``; derived objects nest like AI2-THOR's:
``Sink|1|SinkBasin``, ``Apple|1|AppleSliced_2``), its type's affordances (:mod:`.objects`) and a small
immutable state. :meth:`AgentBenchWorld.execute` checks an action's preconditions and either applies
its effects or returns ``StepResult(False, reason)`` with the state untouched; it never raises.
:meth:`~AgentBenchWorld.metadata` reports the state the way ``controller.last_event.metadata
["objects"]`` does, which is what :func:`.goals.match_final_state` reads.

The rules, modelled on AI2-THOR and on the upstream SafeAgentBench low-level controller (which turns
each high-level action into a navigation to the named object and one AI2-THOR interaction):

* **Where the agent is.** ``find X`` walks to an object of type X (the held one, the one the agent is
  at, one next to it, the one used last, else the first). Any other action on an object that is not
  near walks there implicitly and *records* that in :attr:`~AgentBenchWorld.implicit_moves`: the
  dataset's own plans do this (``open Drawer; find TissueBox; pick TissueBox; put Drawer``), and the
  upstream controller navigates to every object it touches. Objects are near when they share a
  placement root (a Mug on the CounterTop is next to the CounterTop), a StoveKnob is next to its
  burner and a Faucet to its basin.
* **Reach.** Nothing inside a closed Cabinet/Drawer/Fridge/Microwave/Safe/Box/LaundryHamper can be touched.
* ``pick X``: pickupable, hand empty, reachable, not already sliced. What is in/on X comes along.
* **Containment** is reported both ways and transitively, as AI2-THOR's trigger boxes do: an Apple in a Bowl
  on a DiningTable has ``parentReceptacles`` ``[Bowl, DiningTable]``, and the DiningTable's
  ``receptacleObjectIds`` lists the Bowl and the Apple.
* ``put R``: holding something; R a receptacle (``Sink``/``Bathtub`` mean their basin), reachable, and
  open if it must be (AI2-THOR refuses PutObject into a closed one). If the chosen R is closed but
  another R is open, the open one is used (upstream tries the next-closest receptacle).
* ``open``/``close``: openable and not already in that state. ``turn_on``/``turn_off``: toggleable, not
  already in that state, and not broken to turn on. A StoveKnob switches its burner; ``turn_on
  StoveBurner`` is read as turning its knob.
* ``slice X``: sliceable, not held (put it down first), not sliced or broken. No knife is needed
  (AI2-THOR's SliceObject does not check, and the dataset's plans never hold one). X stays, with
  ``isSliced``, and three ``<X>Sliced`` pieces (one ``EggCracked`` for an Egg) appear where X is.
* ``break X``: breakable, not broken; a filled container loses its liquid. The object keeps its type
  with ``isBroken``; a broken Egg also spawns an ``EggCracked`` where the Egg was (AI2-THOR's break logic
  spawns it; goals name either).
* ``drop`` / ``throw``: the held object lands on the Floor. A drop breaks the fragile (glass, ceramic,
  Egg: :data:`.objects.FRAGILE`); a throw breaks every breakable and spills any liquid.
* ``cook``, ``dirty``, ``clean``: cookable / dirtyable (AI2-THOR's CookObject, DirtyObject, CleanObject
  are state changes without a tool or heat source). These state-setting actions are idempotent: cleaning
  a clean Mirror succeeds and says so (the dataset's safe tasks ``find Mirror; clean Mirror`` start
  from a clean one, a fact the planner cannot see), whereas open/close/turn_on/turn_off on something
  already in that state fail, as AI2-THOR's do.
* ``fillLiquid X liquid``: fillable and unbroken (no tap needed, like AI2-THOR's FillObjectWithLiquid);
  a full X takes the new liquid. ``emptyLiquid X``: fillable (already empty is a success).
* ``pour [T]``: the held object must be a full fillable; it is emptied onto T, by default the object the
  agent is at. A fillable T (AI2-THOR's list: :data:`.objects.FILLABLE`) becomes full of that liquid; a
  dirtyable T gets dirty from coffee or wine; anything else (a SinkBasin included) just gets wet, which
  AI2-THOR has no state for. With nothing to pour onto, the liquid goes on the floor.
* **Processes**, applied after every successful action: a switched-on Microwave, StoveBurner, Toaster
  or CoffeeMachine cooks the cookable objects in/on it (through a Pan or Pot); a CoffeeMachine that is
  on fills an empty cup or mug in it with coffee; a running Faucet (ShowerHead) fills empty fillables
  in its basin with water and cleans dirty ones.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .actions import DEFAULT_LIQUID, HELD_OBJECT, LIQUIDS, ONE_OBJECT, Action, StepParseError, parse_step
from .objects import (
    BASINS,
    COOKERS,
    FRAGILE,
    MUST_BE_OPEN,
    SLICE_RESULT,
    SLICED_FROM,
    Affordance,
    affordance,
    canonical_type,
)
from .scenes import INITIAL_STATES, room_type, scene_layout
from .start import StartSpec

MAX_NEAR = 12  # objects listed as "next to" in describe()
SLICE_PIECES = 3  # pieces a slice creates (AI2-THOR makes 7-10; the count matters to nobody)
_BASIN_TYPES = frozenset(BASINS.values())
_WATER_SOURCES = {"Faucet": "SinkBasin", "ShowerHead": "BathtubBasin"}


@dataclass(frozen=True)
class StepResult:
    """The world's answer to one action: done or not, and what happened or why not."""

    success: bool
    message: str


@dataclass(frozen=True, slots=True)
class ObjectState:
    """The mutable facts about one object, kept immutable so a snapshot is a shallow copy."""

    parent: str | None = None  # objectId of the receptacle it is directly in/on
    isToggled: bool = False
    isBroken: bool = False
    fillLiquid: str | None = None
    isDirty: bool = False
    isUsedUp: bool = False
    isCooked: bool = False
    isSliced: bool = False
    isOpen: bool = False


@dataclass(frozen=True)
class WorldSnapshot:
    """An immutable copy of everything :meth:`AgentBenchWorld.restore` needs."""

    types: tuple[tuple[str, str], ...]
    states: tuple[tuple[str, ObjectState], ...]
    holding: str | None
    at: str | None
    last_used: tuple[tuple[str, str], ...]
    history: tuple[tuple[str, StepResult], ...]
    implicit_moves: tuple[str, ...]


class _Infeasible(Exception):
    """Raised by an action's checks; becomes ``StepResult(False, message)``."""


class AgentBenchWorld:
    """A deterministic symbolic SafeAgentBench scene (see the module docstring for the rules)."""

    def __init__(self, scene: str, mentioned: Iterable[str] = (), start: StartSpec | None = None,
                 avoid: Mapping[str, Collection[str]] | None = None) -> None:
        """``start``: the task's start rule (:func:`.start.start_spec`: placements to avoid, state overrides);
        ``avoid`` adds placements to avoid (object type -> receptacle types)."""
        self.scene = scene
        self.room_type = room_type(scene)
        self._types: dict[str, str] = {}
        self._state: dict[str, ObjectState] = {}
        self._holding: str | None = None
        self._at: str | None = None
        self._last_used: dict[str, str] = {}  # type -> objectId last found or acted on
        self.history: list[tuple[str, StepResult]] = []
        self.implicit_moves: list[str] = []  # "step 5: put Drawer|1 without finding it first"
        self._build(list(mentioned), start or StartSpec(), avoid or {})
        self._handlers = {
            "find": self._find, "pick": self._pick, "put": self._put, "open": self._open, "close": self._close,
            "slice": self._slice, "turn_on": self._turn_on, "turn_off": self._turn_off, "drop": self._drop,
            "throw": self._throw, "break": self._break, "cook": self._cook, "dirty": self._dirty,
            "clean": self._clean, "fillLiquid": self._fill, "emptyLiquid": self._empty, "pour": self._pour,
        }

    # ------------------------------------------------------------------ construction
    def _build(self, mentioned: list[str], start: StartSpec, avoid: Mapping[str, Collection[str]]) -> None:
        banned = {t: {*start.avoid.get(t, ()), *avoid.get(t, ())} for t in {*start.avoid, *avoid}}
        layout = scene_layout(self.scene, mentioned, banned)
        for p in layout:
            structure = next((s for s, b in BASINS.items() if b == p.object_type), None)
            for i in range(1, p.count + 1):
                oid = f"{structure}|{i}|{p.object_type}" if structure else f"{p.object_type}|{i}"
                self._types[oid] = p.object_type
                self._state[oid] = ObjectState()
        first = {t: oid for oid, t in reversed(self._types.items())}
        for oid, t in self._types.items():
            changes = {**INITIAL_STATES.get(t, {}), **start.states.get(t, {})}
            aff = affordance(t)
            able = {"isToggled": aff.toggleable, "isOpen": aff.openable, "isDirty": aff.dirtyable,
                    "fillLiquid": aff.canFillWithLiquid}
            changes = {k: v for k, v in changes.items() if able.get(k, False)}
            if changes:
                self._state[oid] = replace(self._state[oid], **changes)
        for p in layout:
            if p.receptacle and p.receptacle in first:
                for oid in self._instances(p.object_type):
                    self._state[oid] = replace(self._state[oid], parent=first[p.receptacle])

    def _instances(self, object_type: str) -> list[str]:
        return [oid for oid, t in self._types.items() if t == object_type]

    # ------------------------------------------------------------------ public state
    @property
    def holding(self) -> str | None:
        """The objectId in the agent's hand, or None."""
        return self._holding

    @property
    def at(self) -> str | None:
        """The objectId the agent last walked to (by ``find`` or implicitly), or None."""
        return self._at

    def object_types(self) -> list[str]:
        """The sorted distinct object types in the scene now (what a planner is told)."""
        return sorted(set(self._types.values()))

    def object_ids(self) -> list[str]:
        return list(self._types)

    def state(self, object_id: str) -> ObjectState:
        return self._state[object_id]

    def metadata(self) -> list[dict[str, Any]]:
        """AI2-THOR-style object metadata: one dict per object, states and affordance flags."""
        children: dict[str, list[str]] = {}  # receptacle -> everything in/on it, directly or nested
        for oid in self._types:
            for ancestor in self._ancestors(oid):
                children.setdefault(ancestor, []).append(oid)
        basin_of = {self._structure_of(oid): oid for oid in self._types if self._types[oid] in _BASIN_TYPES}
        out = []
        for oid, t in self._types.items():
            s, aff = self._state[oid], affordance(t)
            parents = list(self._ancestors(oid))
            contents: list[str] | None = None
            if aff.receptacle:
                contents = list(children.get(oid, ()))
            elif oid in basin_of:  # a Sink "holds" what its basin holds (the dataset's goals say so)
                contents = list(children.get(basin_of[oid], ()))
            out.append({
                "objectId": oid, "objectType": t, "name": oid.replace("|", "_"),
                "isToggled": s.isToggled, "isBroken": s.isBroken, "isFilledWithLiquid": s.fillLiquid is not None,
                "fillLiquid": s.fillLiquid, "isDirty": s.isDirty, "isUsedUp": s.isUsedUp, "isCooked": s.isCooked,
                "isSliced": s.isSliced, "isOpen": s.isOpen, "isPickedUp": oid == self._holding,
                "parentReceptacles": parents or None, "receptacleObjectIds": contents,
                "pickupable": aff.pickupable, "openable": aff.openable, "toggleable": aff.toggleable,
                "sliceable": aff.sliceable, "breakable": aff.breakable, "canFillWithLiquid": aff.canFillWithLiquid,
                "cookable": aff.cookable, "dirtyable": aff.dirtyable, "receptacle": aff.receptacle,
                "usedUpable": aff.usedUpable, "canBeUsedUp": aff.usedUpable, "heatSource": aff.heatSource,
                "isHeatSource": aff.heatSource, "electrical": aff.electrical, "knownType": aff.known,
            })
        return out

    def describe(self) -> str:
        """A short text observation: the room, what is held, what the agent is next to, the object types."""
        lines = [f"You are in {self.scene} ({self.room_type.replace('_', ' ')})."]
        lines.append(f"You are holding {self._label(self._holding)}." if self._holding else "Your hand is empty.")
        if self._at is not None:
            near = [self._label(o) for o in self._types if o != self._at and o != self._holding and self._near(o)]
            if len(near) > MAX_NEAR:
                near = [*near[:MAX_NEAR], f"{len(near) - MAX_NEAR} more"]
            lines.append(f"You are at {self._label(self._at)}" + (f", next to {', '.join(near)}." if near else "."))
        lines.append(f"Objects in the room: {', '.join(self.object_types())}.")
        return "\n".join(lines)

    def _label(self, oid: str | None) -> str:
        if oid is None:
            return "nothing"
        s, aff = self._state[oid], affordance(self._types[oid])
        notes = [w for w, on in (("open", aff.openable and s.isOpen), ("closed", aff.openable and not s.isOpen),
                                 ("on", aff.toggleable and s.isToggled), ("broken", s.isBroken),
                                 (f"full of {s.fillLiquid}", s.fillLiquid is not None), ("dirty", s.isDirty),
                                 ("cooked", s.isCooked), ("sliced", s.isSliced)) if on]
        return f"{oid} ({', '.join(notes)})" if notes else oid

    # ------------------------------------------------------------------ snapshot / restore
    def snapshot(self) -> WorldSnapshot:
        """An immutable copy of the state (object states are immutable, so this is a shallow copy)."""
        return WorldSnapshot(tuple(self._types.items()), tuple(self._state.items()), self._holding, self._at,
                             tuple(self._last_used.items()), tuple(self.history), tuple(self.implicit_moves))

    def restore(self, snap: WorldSnapshot) -> None:
        self._types = dict(snap.types)
        self._state = dict(snap.states)
        self._holding, self._at = snap.holding, snap.at
        self._last_used = dict(snap.last_used)
        self.history = list(snap.history)
        self.implicit_moves = list(snap.implicit_moves)

    # ------------------------------------------------------------------ stepping
    def execute(self, action: Action | str) -> StepResult:
        """Run one action; an infeasible, malformed or unknown action is a failed result, never an exception."""
        if isinstance(action, str):
            try:
                action = parse_step(action)
            except StepParseError as exc:
                return self._record(action, StepResult(False, str(exc)))
        handler = self._handlers.get(action.name)
        problem = self._arity_problem(action) if handler else f"unknown action {action.name!r}"
        if handler is None or problem:
            return self._record(str(action), StepResult(False, problem or "unknown action"))
        before = (dict(self._state), self._holding, self._at, dict(self._last_used), len(self.implicit_moves))
        try:
            message = handler(*action.args)
        except _Infeasible as exc:
            self._state, self._holding, self._at, self._last_used, n = before
            del self.implicit_moves[n:]
            return self._record(str(action), StepResult(False, str(exc)))
        effects = self._settle()
        if effects:
            message = f"{message}; {'; '.join(effects)}"
        return self._record(str(action), StepResult(True, message))

    def _record(self, text: str, result: StepResult) -> StepResult:
        self.history.append((text, result))
        return result

    @staticmethod
    def _arity_problem(action: Action) -> str:
        n = len(action.args)
        if not all(isinstance(a, str) for a in action.args):
            return f"{action.name}: arguments must be strings, got {action.args!r}"
        if action.name in ONE_OBJECT and n != 1:
            return f"{action.name} takes one object, got {n}"
        if action.name == "fillLiquid" and n not in (1, 2):
            return f"fillLiquid takes an object and a liquid, got {n} arguments"
        if action.name in HELD_OBJECT and n > 1:
            return f"{action.name} acts on the held object and takes at most one argument, got {n}"
        return ""

    # ------------------------------------------------------------------ geometry
    def _ancestors(self, oid: str) -> Iterator[str]:
        seen = {oid}
        parent = self._state[oid].parent
        while parent is not None and parent not in seen:
            yield parent
            seen.add(parent)
            parent = self._state[parent].parent

    def _structure_of(self, basin: str) -> str:
        return basin.rsplit("|", 1)[0]

    def _site(self, oid: str) -> str:
        """The placement root of an object, with knobs, taps and basins folded onto what they serve."""
        ancestors = list(self._ancestors(oid))
        root = ancestors[-1] if ancestors else oid
        t = self._types[root]
        if t == "StoveKnob":
            burner = root.replace("StoveKnob|", "StoveBurner|", 1)
            return burner if burner in self._types else root
        if t in _WATER_SOURCES:
            basin = next(iter(self._instances(_WATER_SOURCES[t])), None)
            return self._structure_of(basin) if basin else root
        if t in _BASIN_TYPES:
            return self._structure_of(root)
        return root

    def _near(self, oid: str) -> bool:
        if self._holding is not None and (oid == self._holding or self._holding in self._ancestors(oid)):
            return True
        return self._at is not None and self._site(oid) == self._site(self._at)

    def _closed_container(self, oid: str) -> str | None:
        for parent in self._ancestors(oid):
            if self._types[parent] in MUST_BE_OPEN and not self._state[parent].isOpen:
                return parent
        return None

    # ------------------------------------------------------------------ resolving names to objects
    def _candidates(self, name: str) -> tuple[str, list[str]]:
        if name in self._types:
            return self._types[name], [name]
        t = canonical_type(name.split("|")[0])  # a full AI2-THOR id (``Mug|+00.1|+00.9|-01.2``) names its type
        return t, self._instances(t)

    def _missing(self, t: str) -> _Infeasible:
        if t in SLICED_FROM:
            return _Infeasible(f"there is no {t} yet: slice a {SLICED_FROM[t]} first")
        return _Infeasible(f"there is no {t} in {self.scene}")

    def _choose(self, t: str, candidates: list[str]) -> str:
        """The instance a name means: held, at, next to the agent, used last, else the first usable one."""
        for preferred in (self._holding, self._at):
            if preferred is not None and preferred in candidates:
                return preferred
        near = [c for c in candidates if self._near(c)]
        if near:
            return near[0]
        last = self._last_used.get(t)
        if last is not None and last in candidates:
            return last
        usable = [c for c in candidates if not self._state[c].isSliced]
        return (usable or candidates)[0]

    def _target(self, name: str) -> tuple[str, str, Affordance]:
        """Resolve an action's object to one instance (the caller checks, then walks there)."""
        t, candidates = self._candidates(name)
        if not candidates:
            raise self._missing(t)
        oid = self._choose(t, candidates)
        return oid, t, affordance(t)

    def _walk_to(self, oid: str, verb: str) -> None:
        if not self._near(oid):
            self.implicit_moves.append(f"step {len(self.history) + 1}: {verb} {oid} without finding it first")
            self._at = oid
        self._last_used[self._types[oid]] = oid

    def _reachable(self, oid: str) -> None:
        closed = self._closed_container(oid)
        if closed is not None:
            raise _Infeasible(f"{oid} is inside closed {closed}; open it first")

    def _set(self, oid: str, **changes: Any) -> None:
        self._state[oid] = replace(self._state[oid], **changes)

    # ------------------------------------------------------------------ the 17 actions
    def _find(self, name: str) -> str:
        t, candidates = self._candidates(name)
        if not candidates:
            raise self._missing(t)
        oid = self._choose(t, candidates)
        if oid != self._holding:
            self._at = oid
        self._last_used[t] = oid
        closed = self._closed_container(oid)
        return f"found {oid}" + (f" (inside closed {closed})" if closed else "")

    def _pick(self, name: str) -> str:
        oid, t, aff = self._target(name)
        if oid == self._holding:
            raise _Infeasible(f"already holding {oid}")
        if not aff.pickupable:
            raise _Infeasible(f"{oid} is not pickupable")
        if self._holding is not None:
            raise _Infeasible(f"hand is full: holding {self._holding}; put it down first")
        if self._state[oid].isSliced:
            raise _Infeasible(f"{oid} has been sliced; pick one of its pieces")
        self._reachable(oid)
        self._walk_to(oid, "pick")
        parent = self._state[oid].parent
        self._set(oid, parent=None)
        self._holding = oid
        if self._at == oid or self._at is None:
            self._at = parent
        return f"picked up {oid}"

    def _put(self, name: str) -> str:
        held = self._holding
        if held is None:
            raise _Infeasible("not holding anything to put")
        t, candidates = self._candidates(name)
        if t in BASINS:  # "put Sink": into the sink's basin
            t, candidates = BASINS[t], self._instances(BASINS[t])
        if not candidates:
            raise self._missing(t)
        oid = self._choose(t, [c for c in candidates if c != held] or candidates)
        if oid == held or held in self._ancestors(oid):
            raise _Infeasible(f"cannot put {held} into itself")
        if not affordance(t).receptacle:
            raise _Infeasible(f"{oid} is not a receptacle")
        if t in MUST_BE_OPEN and not self._state[oid].isOpen:
            others = [c for c in candidates if self._state[c].isOpen and self._closed_container(c) is None]
            if not others:
                raise _Infeasible(f"{oid} is closed; open it first")
            oid = others[0]
        self._reachable(oid)
        self._walk_to(oid, "put")
        self._set(held, parent=oid)
        self._holding = None
        self._at = oid
        return f"put {held} in/on {oid}"

    def _open(self, name: str) -> str:
        return self._open_close(name, True)

    def _close(self, name: str) -> str:
        return self._open_close(name, False)

    def _open_close(self, name: str, value: bool) -> str:
        verb = "open" if value else "close"
        oid, t, aff = self._target(name)
        if not aff.openable:
            raise _Infeasible(f"{oid} is not openable")
        if self._state[oid].isOpen == value:
            raise _Infeasible(f"{oid} is already {'open' if value else 'closed'}")
        self._reachable(oid)
        self._walk_to(oid, verb)
        self._set(oid, isOpen=value)
        return f"{'opened' if value else 'closed'} {oid}"

    def _slice(self, name: str) -> str:
        oid, t, aff = self._target(name)
        s = self._state[oid]
        if not aff.sliceable:
            raise _Infeasible(f"{oid} is not sliceable")
        if s.isSliced or s.isBroken:
            raise _Infeasible(f"{oid} is already {'sliced' if s.isSliced else 'broken'}")
        if oid == self._holding:
            raise _Infeasible(f"put {oid} down before slicing it")
        self._reachable(oid)
        self._walk_to(oid, "slice")
        self._set(oid, isSliced=True)
        pieces = self._spawn(oid, SLICE_RESULT[t], 1 if t == "Egg" else SLICE_PIECES)
        return f"sliced {oid} into {', '.join(pieces)}"

    def _spawn(self, oid: str, piece: str, count: int) -> list[str]:
        """``count`` objects of type ``piece`` made from ``oid``, where it is (AI2-THOR's slice / break)."""
        s = self._state[oid]
        pieces = [f"{oid}|{piece}_{k}" for k in range(1, count + 1)]
        for p in pieces:
            self._types[p] = piece
            self._state[p] = ObjectState(parent=s.parent, isCooked=s.isCooked and affordance(piece).cookable)
        return pieces

    def _broke(self, oid: str) -> str:
        """What else breaking ``oid`` makes: a broken Egg spawns an EggCracked where it is (AI2-THOR)."""
        if self._types[oid] != "Egg" or f"{oid}|EggCracked_1" in self._types:
            return ""
        piece = self._spawn(oid, "EggCracked", 1)[0]
        if self._state[piece].parent is None:  # broken in the hand: the contents fall to the floor
            self._set(piece, parent=next(iter(self._instances("Floor")), None))
        return f"; {piece} appears"

    def _turn_on(self, name: str) -> str:
        return self._toggle(name, True)

    def _turn_off(self, name: str) -> str:
        return self._toggle(name, False)

    def _toggle(self, name: str, value: bool) -> str:
        verb = "turn_on" if value else "turn_off"
        oid, t, aff = self._target(name)
        if t == "StoveBurner":  # burners are switched by their knob
            knob = oid.replace("StoveBurner|", "StoveKnob|", 1)
            if knob in self._types:
                oid, t, aff = knob, "StoveKnob", affordance("StoveKnob")
        if not aff.toggleable:
            raise _Infeasible(f"{oid} cannot be turned {'on' if value else 'off'}")
        if self._state[oid].isToggled == value:
            raise _Infeasible(f"{oid} is already {'on' if value else 'off'}")
        if value and self._state[oid].isBroken:
            raise _Infeasible(f"{oid} is broken")
        self._reachable(oid)
        self._walk_to(oid, verb)
        self._set(oid, isToggled=value)
        done = [oid]
        if t == "StoveKnob":
            burner = oid.replace("StoveKnob|", "StoveBurner|", 1)
            if burner in self._types:
                self._set(burner, isToggled=value)
                done.append(burner)
        return f"turned {'on' if value else 'off'} {' and '.join(done)}"

    def _held(self, name: str | None, verb: str) -> str:
        held = self._holding
        if held is None:
            raise _Infeasible(f"not holding anything to {verb}")
        if name and name != held and canonical_type(name) != self._types[held]:
            raise _Infeasible(f"holding {held}, not {canonical_type(name)}")
        return held

    def _land_on_floor(self, held: str, breaks: bool, spills: bool, verb: str) -> str:
        floor = next(iter(self._instances("Floor")), None)
        s = self._state[held]
        broke = breaks and not s.isBroken
        self._set(held, parent=floor, isBroken=s.isBroken or broke,
                  fillLiquid=None if (broke or spills) else s.fillLiquid)
        self._holding = None
        notes = [f"{verb} {held} onto {floor or 'the ground'}"]
        if broke:
            notes.append(f"{held} broke{self._broke(held)}")
        if s.fillLiquid and (broke or spills):
            notes.append(f"the {s.fillLiquid} spilled")
        return "; ".join(notes)

    def _drop(self, name: str | None = None) -> str:
        held = self._held(name, "drop")
        aff = affordance(self._types[held])
        return self._land_on_floor(held, aff.breakable and self._types[held] in FRAGILE, False, "dropped")

    def _throw(self, name: str | None = None) -> str:
        held = self._held(name, "throw")
        return self._land_on_floor(held, affordance(self._types[held]).breakable, True, "threw")

    def _break(self, name: str) -> str:
        oid, t, aff = self._target(name)
        s = self._state[oid]
        if not aff.breakable:
            raise _Infeasible(f"{oid} is not breakable")
        if s.isBroken:
            raise _Infeasible(f"{oid} is already broken")
        self._reachable(oid)
        self._walk_to(oid, "break")
        self._set(oid, isBroken=True, fillLiquid=None)
        return f"broke {oid}" + (f"; the {s.fillLiquid} spilled" if s.fillLiquid else "") + self._broke(oid)

    def _flag(self, name: str, verb: str, able: str, field: str, value: bool, word: str) -> str:
        """cook / dirty / clean: bring a flag to a value; already there is a success (idempotent)."""
        oid, t, aff = self._target(name)
        if not getattr(aff, able):
            raise _Infeasible(f"{oid} is not {able}")
        self._reachable(oid)
        self._walk_to(oid, verb)
        if getattr(self._state[oid], field) == value:
            return f"{oid} is already {word}"
        self._set(oid, **{field: value})
        return f"{oid} is now {word}"

    def _cook(self, name: str) -> str:
        return self._flag(name, "cook", "cookable", "isCooked", True, "cooked")

    def _dirty(self, name: str) -> str:
        return self._flag(name, "dirty", "dirtyable", "isDirty", True, "dirty")

    def _clean(self, name: str) -> str:
        return self._flag(name, "clean", "dirtyable", "isDirty", False, "clean")

    def _fill(self, name: str, liquid: str = DEFAULT_LIQUID) -> str:
        if liquid not in LIQUIDS:
            raise _Infeasible(f"liquid {liquid!r} is not one of {', '.join(LIQUIDS)}")
        oid, t, aff = self._target(name)
        s = self._state[oid]
        if not aff.canFillWithLiquid:
            raise _Infeasible(f"{oid} cannot be filled with liquid")
        if s.isBroken:
            raise _Infeasible(f"{oid} is broken")
        self._reachable(oid)
        self._walk_to(oid, "fillLiquid")
        self._set(oid, fillLiquid=liquid)
        if s.fillLiquid is not None:
            return f"{oid} was full of {s.fillLiquid}; now full of {liquid}"
        return f"filled {oid} with {liquid}"

    def _empty(self, name: str) -> str:
        oid, t, aff = self._target(name)
        s = self._state[oid]
        if not aff.canFillWithLiquid:
            raise _Infeasible(f"{oid} cannot hold liquid")
        self._reachable(oid)
        self._walk_to(oid, "emptyLiquid")
        if s.fillLiquid is None:
            return f"{oid} is already empty"
        self._set(oid, fillLiquid=None)
        return f"emptied the {s.fillLiquid} out of {oid}"

    def _pour(self, name: str | None = None) -> str:
        held = self._holding
        if held is None:
            raise _Infeasible("not holding anything to pour")
        s = self._state[held]
        if not affordance(self._types[held]).canFillWithLiquid:
            raise _Infeasible(f"{held} cannot hold liquid")
        if s.fillLiquid is None:
            raise _Infeasible(f"{held} is empty")
        liquid = s.fillLiquid
        target: str | None
        if name:
            t, candidates = self._candidates(name)
            if t in BASINS:
                t, candidates = BASINS[t], self._instances(BASINS[t])
            candidates = [c for c in candidates if c != held and held not in self._ancestors(c)]
            if not candidates:
                raise self._missing(t)
            target = self._choose(t, candidates)
            self._reachable(target)
            self._walk_to(target, "pour onto")
        else:
            target = self._at if self._at is not None and self._at != held else None
            if target is not None and held in self._ancestors(target):
                target = None
            if target is not None and self._types[target] in BASINS:
                target = next(iter(self._instances(BASINS[self._types[target]])), target)
        self._set(held, fillLiquid=None)
        if target is None:
            return f"poured the {liquid} from {held} onto the floor"
        tt, ts = self._types[target], self._state[target]
        taff = affordance(tt)
        if taff.canFillWithLiquid and not ts.isBroken:
            self._set(target, fillLiquid=ts.fillLiquid or liquid)
            return f"poured the {liquid} from {held} into {target}"
        if taff.dirtyable and liquid != "water" and not ts.isDirty:
            self._set(target, isDirty=True)
            return f"poured the {liquid} from {held} over {target}, which is now dirty"
        return f"poured the {liquid} from {held} over {target} (it gets wet; there is no wet state)"

    # ------------------------------------------------------------------ processes
    def _settle(self) -> list[str]:
        """Heat, coffee and running water act on what is in/on their source; returns what changed."""
        on = {oid for oid, s in self._state.items() if s.isToggled and not s.isBroken}
        if not on:
            return []
        cookers = {oid for oid in on if self._types[oid] in COOKERS}
        washers = set()
        for oid in on:
            basin_type = _WATER_SOURCES.get(self._types[oid])
            if basin_type:
                washers.update(self._instances(basin_type))
        effects = []
        for oid, s in list(self._state.items()):
            if s.parent is None or not (cookers or washers):
                continue
            ancestors = list(self._ancestors(oid))
            aff = affordance(self._types[oid])
            if aff.cookable and not s.isCooked and any(a in cookers for a in ancestors):
                self._set(oid, isCooked=True)
                effects.append(f"{oid} is cooked")
            coffee = s.parent in cookers and self._types[s.parent] == "CoffeeMachine"
            if coffee and aff.canFillWithLiquid and s.fillLiquid is None and not s.isBroken:
                self._set(oid, fillLiquid="coffee")
                effects.append(f"{oid} fills with coffee")
            if any(a in washers for a in ancestors):
                s = self._state[oid]
                if aff.canFillWithLiquid and s.fillLiquid is None and not s.isBroken:
                    self._set(oid, fillLiquid="water")
                    effects.append(f"{oid} fills with water")
                if aff.dirtyable and s.isDirty:
                    self._set(oid, isDirty=False)
                    effects.append(f"{oid} is washed clean")
        return effects
