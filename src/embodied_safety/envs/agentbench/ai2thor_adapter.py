"""An optional adapter that runs the same 17 actions on a real AI2-THOR controller.

:class:`AI2ThorWorld` offers the interface of :class:`.world.AgentBenchWorld` that planners and the goal
check use (``execute``, ``metadata``, ``object_types``, ``holding``, ``describe``) over
``ai2thor.controller.Controller``. Honest status: it is a thin, best-effort mapping written against the
AI2-THOR 5 API and has **not been run** in this project (no Unity build on CPU-only machines; the
``ai2thor`` extra is optional). It is simpler than the upstream SafeAgentBench controller: ``find``
teleports to the first interactable pose of the nearest object of the type instead of walking and
retrying, and ``pour`` is emulated (fill the target if it is fillable, then empty the held object),
since AI2-THOR has no pour action. Expect to adjust it when a machine with AI2-THOR is at hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...errors import require_package
from .actions import Action, StepParseError, parse_step
from .objects import BASINS, canonical_type
from .world import StepResult

# action -> AI2-THOR action taking the target's objectId
_SIMPLE = {
    "pick": "PickupObject", "put": "PutObject", "open": "OpenObject", "close": "CloseObject",
    "slice": "SliceObject", "turn_on": "ToggleObjectOn", "turn_off": "ToggleObjectOff", "break": "BreakObject",
    "cook": "CookObject", "dirty": "DirtyObject", "clean": "CleanObject", "emptyLiquid": "EmptyLiquidFromObject",
}


class AI2ThorWorld:
    """The 17 high-level actions on ``ai2thor.controller.Controller(scene=scene, **controller_kwargs)``."""

    def __init__(self, scene: str, mentioned: Iterable[str] = (), **controller_kwargs: Any) -> None:
        require_package("ai2thor", "ai2thor")
        from ai2thor.controller import Controller  # lazy: the extra is optional

        self.scene = scene
        self.mentioned = list(mentioned)  # unused: the real scene has what it has
        self.controller = Controller(scene=scene, **controller_kwargs)
        self._at: str | None = None  # objectId of the last found object

    # ------------------------------------------------------------------ state
    def metadata(self) -> list[dict[str, Any]]:
        return list(self.controller.last_event.metadata["objects"])

    def object_types(self) -> list[str]:
        return sorted({o["objectType"] for o in self.metadata()})

    @property
    def holding(self) -> str | None:
        inventory = self.controller.last_event.metadata.get("inventoryObjects") or []
        return inventory[0]["objectId"] if inventory else None

    def describe(self) -> str:
        return (f"You are in {self.scene}. You are holding {self.holding or 'nothing'}. "
                f"Objects in the room: {', '.join(self.object_types())}.")

    def close(self) -> None:
        self.controller.stop()

    # ------------------------------------------------------------------ stepping
    def _object(self, name: str) -> dict[str, Any] | None:
        """The nearest object of the named type (a basin for Sink/Bathtub when the action needs one)."""
        t = canonical_type(name)
        objs = [o for o in self.metadata() if o["objectType"] == t or o["objectId"] == name]
        if not objs and t in BASINS:
            objs = [o for o in self.metadata() if o["objectType"] == BASINS[t]]
        if self._at is not None:
            for o in objs:
                if o["objectId"] == self._at:
                    return o
        return min(objs, key=lambda o: o.get("distance", 0.0), default=None)

    def _step(self, action: str, **kwargs: Any) -> StepResult:
        event = self.controller.step(action=action, **kwargs)
        ok = bool(event.metadata["lastActionSuccess"])
        return StepResult(ok, f"{action} ok" if ok else event.metadata.get("errorMessage") or f"{action} failed")

    def execute(self, action: Action | str) -> StepResult:
        if isinstance(action, str):
            try:
                action = parse_step(action)
            except StepParseError as exc:
                return StepResult(False, str(exc))
        name, args = action.name, action.args
        if name == "drop":
            return self._step("DropHandObject", forceAction=True)
        if name == "throw":
            return self._step("ThrowObject", moveMagnitude=150.0, forceAction=True)
        if name == "pour":
            return self._pour(args[0] if args else None)
        if not args:
            return StepResult(False, f"{name} needs an object")
        target = self._object(args[0])
        if target is None:
            return StepResult(False, f"there is no {canonical_type(args[0])} in {self.scene}")
        oid = target["objectId"]
        if name == "find":
            poses = self.controller.step(action="GetInteractablePoses", objectId=oid).metadata["actionReturn"]
            if not poses:
                return StepResult(False, f"no pose from which {oid} is interactable")
            result = self._step("TeleportFull", **poses[0])
            if result.success:
                self._at = oid
            return result
        if name == "fillLiquid":
            liquid = args[1] if len(args) > 1 else "water"
            return self._step("FillObjectWithLiquid", objectId=oid, fillLiquid=liquid, forceAction=True)
        if name in _SIMPLE:
            return self._step(_SIMPLE[name], objectId=oid, forceAction=True)
        return StepResult(False, f"unknown action {name!r}")

    def _pour(self, target_name: str | None) -> StepResult:
        held = self.holding
        if held is None:
            return StepResult(False, "not holding anything to pour")
        held_meta = next(o for o in self.metadata() if o["objectId"] == held)
        liquid = held_meta.get("fillLiquid")
        if not held_meta.get("isFilledWithLiquid") or not liquid:
            return StepResult(False, f"{held} is empty")
        target = self._object(target_name) if target_name else next(
            (o for o in self.metadata() if o["objectId"] == self._at), None)
        if target is not None and target.get("canFillWithLiquid") and target["objectId"] != held:
            filled = self._step("FillObjectWithLiquid", objectId=target["objectId"], fillLiquid=liquid,
                                forceAction=True)
            if not filled.success:
                return filled
        return self._step("EmptyLiquidFromObject", objectId=held, forceAction=True)
