"""Find the corrective primitive for a violated condition by trying candidates in the simulator.

The rule backend knows the ground-truth safety condition; it proposes the golden plan's safety
steps (and their toggles/closes) as candidates, executes each from a snapshot, and keeps the
first that makes the condition hold. The world is restored afterwards, so the search is free of
side effects.
"""

from __future__ import annotations

from .env import CompiledTask
from .task import SafetyCondition
from .world import HouseholdWorld


def candidate_actions(compiled: CompiledTask) -> list[str]:
    """The golden plan's safety steps first, then its other non-DONE steps (deduplicated, in order)."""
    steps = compiled.task.example_planning
    ordered = [s.action for s in steps if s.is_safety_step] + [s.action for s in steps if not s.is_safety_step]
    return [a for i, a in enumerate(ordered) if a != "DONE()" and a not in ordered[:i]]


def corrective_action(compiled: CompiledTask, world: HouseholdWorld, index: int) -> str | None:
    """The first candidate that executes and makes condition ``index`` hold, or None."""
    snap = world.snapshot()
    try:
        for action in candidate_actions(compiled):
            result = world.step(action)
            fixed = result.ok and compiled.condition_holds(index, world)
            world.restore(snap)
            if fixed:
                return action
        return None
    finally:
        world.restore(snap)


def corrective_plan(compiled: CompiledTask, world: HouseholdWorld, index: int) -> list[str] | None:
    """One action that fixes condition ``index``, else two (an enabling action such as opening the
    drawer the knife must go into, then the fix), else None. The world is left unchanged."""
    one = corrective_action(compiled, world, index)
    if one is not None:
        return [one]
    snap = world.snapshot()
    try:
        for first in candidate_actions(compiled):
            if world.step(first).ok:
                second = corrective_action(compiled, world, index)
                if second is not None:
                    return [first, second]
            world.restore(snap)
        return None
    finally:
        world.restore(snap)


def feedback_text(cond: SafetyCondition, action: str, then: str | None = None) -> str:
    """Templated critic feedback that names the corrective primitive (rule backend)."""
    tip = cond.safety_tip or cond.safety_principle or f"Resolve the {cond.risk_type.lower()}."
    return f"{tip.rstrip('.')}. Do {action} now." + (f" Then {then}." if then else "")
