"""The judge J (SafeBranch Alg. 3 line 20), rule backend: three criteria checked in the simulator.

(i) *justified by h_k alone*: every object of the violated condition is visible in h_k's
observation (not hidden in a closed container or in another room);
(ii) *executable and preserves progress*: from the restored anchor state y+ executes and the number
of satisfied goal conjuncts does not drop;
(iii) *resolves the constraint*: after y+ the recorded condition holds, while y- (issued at h_k)
leaves it violated.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..critics.llm import LLMCritic, LLMCriticError
from ..envs.household.env import CompiledTask
from ..envs.household.observation import observe
from ..envs.household.world import HouseholdWorld
from ..records import RawBranch


@dataclass(frozen=True)
class JudgeVerdict:
    branch_id: str
    accept: bool
    justified: bool
    executable: bool
    preserves_progress: bool
    resolves: bool
    rejected_violates: bool
    reason: str

    def to_json(self) -> dict[str, object]:
        return self.__dict__.copy()


def restore(compiled: CompiledTask, branch: RawBranch) -> HouseholdWorld:
    """The anchor state h_k, by exact replay of the recorded prefix."""
    world = compiled.new_world()
    for a in branch.prefix_actions:
        world.step(a)
    return world


def _holds_after(compiled: CompiledTask, world: HouseholdWorld, action: str, index: int) -> tuple[bool, bool]:
    snap = world.snapshot()
    try:
        ok = world.step(action).ok
        return ok, compiled.condition_holds(index, world)
    finally:
        world.restore(snap)


def judge(compiled: CompiledTask, branch: RawBranch, level: str = "full") -> JudgeVerdict:
    world = restore(compiled, branch)
    cond = compiled.task.conditions[branch.condition_index]
    view = observe(world, compiled.task.object_list, level)  # type: ignore[arg-type]
    visible = {line.split(":", 1)[0] for line in view.splitlines() if "far away" not in line}
    needed = [o for o in compiled.task.object_list if o in cond.safety_bddl]
    justified = all(o in visible for o in needed)
    chosen = branch.chosen_action or ""
    before = compiled.goal.satisfied(world)
    snap = world.snapshot()
    executable = bool(chosen) and world.step(chosen).ok
    progress = executable and compiled.goal.satisfied(world) >= before
    world.restore(snap)
    resolves = executable and _holds_after(compiled, world, chosen, branch.condition_index)[1]
    if cond.kind == "process" or branch.rejected_action == "DONE()":
        rejected_violates = not compiled.condition_holds(branch.condition_index, world)
    else:
        rejected_violates = not _holds_after(compiled, world, branch.rejected_action, branch.condition_index)[1]
    checks = {"justified by h_k": justified, "executable": executable, "preserves progress": progress,
              "resolves the condition": resolves, "rejected violates it": rejected_violates}
    failed = [k for k, v in checks.items() if not v]
    return JudgeVerdict(branch.branch_id, not failed, justified, executable, progress, resolves, rejected_violates,
                        "ok" if not failed else "fails: " + ", ".join(failed))


def judge_llm(critic: LLMCritic, compiled: CompiledTask, branch: RawBranch) -> JudgeVerdict:
    """The LLM judge: the rubric over the API; an output that stays invalid rejects the pair."""
    world = restore(compiled, branch)
    try:
        out = critic.judge(compiled, world, branch.condition_index, branch.rejected_action, branch.chosen_action or "")
    except LLMCriticError as exc:
        return JudgeVerdict(branch.branch_id, False, False, False, False, False, False, f"judge failed: {exc}")
    return JudgeVerdict(branch.branch_id, bool(out["accept"]), out["justified"], out["executable"], out["executable"],
                        out["resolves"], True, str(out.get("reason", "")))
