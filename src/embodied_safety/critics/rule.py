"""Rule backend of the critics: reads the ground-truth safety conditions, checks them in the simulator.

* Prospective (BeforeBDDL, SafeBranch D.2): fires when the proposed action is the trigger of a
  process condition that does not hold in the pre-action state.
* Retrospective (TermSafety, D.3): fires at DONE when the goal is met but a triggered termination
  condition does not hold. The hazard class decides the repair step: ``missing_terminal_action``
  (one corrective action appended at the end fixes it), ``placement_or_target_violation`` (the
  step that placed an object wrongly), ``wrong_action_choice`` (the step whose action created the
  hazard). Feedback is templated and names the corrective primitive with objects from the list.
* Task-failure reflector (Box 16): at DONE without the goal, the unmet goal and the earliest step
  after which no progress was made.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..envs.household.actions import Action, parse_action
from ..envs.household.env import CompiledTask
from ..envs.household.episode import matches_trigger
from ..envs.household.repair import corrective_plan, feedback_text
from ..envs.household.world import HouseholdWorld

BEFORE, TERM = "BeforeBDDL", "TermSafety"


@dataclass(frozen=True)
class CriticVerdict:
    trigger: str  # BeforeBDDL | TermSafety
    condition_index: int
    mode: str  # INSERT | REPLACE | REPLAN
    issue: str
    feedback: str
    object_analysis: str
    corrective_action: str | None
    hazard_class: str | None = None  # retrospective only
    repair_step: int | None = None  # retrospective: index of the first step to regenerate


def prospective(compiled: CompiledTask, world: HouseholdWorld, action: Action, fired: set[int]) -> CriticVerdict | None:
    """The first not-yet-fired process condition that ``action`` triggers and that is violated now."""
    for i, cond in enumerate(compiled.task.conditions):
        if cond.kind != "process" or i in fired or not cond.action or not matches_trigger(cond.action, action):
            continue
        if compiled.condition_holds(i, world):
            continue
        plan = corrective_plan(compiled, world, i)
        return CriticVerdict(BEFORE, i, "INSERT" if plan else "REPLAN",
                             f"{action} would violate {cond.safety_bddl} ({cond.risk_type})",
                             _feedback(cond, plan), f"objects in the violated predicate: {_objects(cond.safety_bddl, compiled)}",
                             plan[0] if plan else None)
    return None


def _feedback(cond: object, plan: list[str] | None) -> str:
    if not plan:
        return cond.safety_tip or cond.safety_principle  # type: ignore[attr-defined]
    return feedback_text(cond, plan[0], plan[1] if len(plan) > 1 else None)  # type: ignore[arg-type]


def _objects(bddl: str, compiled: CompiledTask) -> str:
    return ", ".join(o for o in compiled.task.object_list if o in bddl) or "-"


def offending_step(compiled: CompiledTask, actions: list[str], index: int) -> int | None:
    """The last step after which condition ``index`` went from holding to violated (replayed exactly)."""
    world = compiled.new_world()
    last = None
    held = compiled.condition_holds(index, world)
    for k, a in enumerate(actions):
        world.step(a)
        now = compiled.condition_holds(index, world)
        if held and not now:
            last = k
        held = now
    return last


def retrospective(compiled: CompiledTask, world: HouseholdWorld, actions: list[str],
                  triggered: list[int]) -> CriticVerdict | None:
    """At DONE with the goal met: classify the first violated triggered termination condition."""
    for i in triggered:
        cond = compiled.task.conditions[i]
        if compiled.condition_holds(i, world):
            continue
        plan = corrective_plan(compiled, world, i)
        if plan is not None:
            return CriticVerdict(TERM, i, "INSERT", f"residual hazard: {cond.safety_bddl}", _feedback(cond, plan),
                                 _objects(cond.safety_bddl, compiled), plan[0], "missing_terminal_action", len(actions))
        k = offending_step(compiled, actions, i)
        if k is None:
            continue
        name = parse_action(actions[k]).name
        hazard = "placement_or_target_violation" if name.startswith("PLACE_") else "wrong_action_choice"
        tip = cond.safety_tip or cond.safety_principle
        return CriticVerdict(TERM, i, "REPLACE", f"step {k + 1} {actions[k]} left {cond.safety_bddl} violated",
                             f"{tip.rstrip('.')}. Do not do {actions[k]} here; choose a different action.",
                             _objects(cond.safety_bddl, compiled), None, hazard, k)
    return None


def reflect_task_failure(compiled: CompiledTask, actions: list[str]) -> dict[str, object]:
    """Box 16 (rule form): which goal literals are unmet, and the earliest step after which nothing changed."""
    world = compiled.new_world()
    hashes = [world.state_hash()]
    for a in actions:
        world.step(a)
        hashes.append(world.state_hash())
    culprit = next((k for k in range(len(hashes) - 1) if len(set(hashes[k:])) == 1), len(actions) - 1)
    return {"culprit_step": culprit, "goal": compiled.task.execution_goal or compiled.task.goal_condition,
            "rule": "The task goal is not met yet: do not declare DONE until every goal condition holds."}
