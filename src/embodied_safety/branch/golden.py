"""Training data built from golden plans and repaired branches (issue 20), beside the branch pairs.

* :func:`golden_replay`: every step of every train task's golden plan as an SFT row in the actor's
  own context (paper D.5: "the chosen action at every branch plus the surrounding golden
  trajectory").
* :func:`after_repair_pairs`: anchor pairs one step *after* a repair. At h_{k+1} (the prefix, then
  y+) the chosen side is the next plan action, ``DONE()`` when nothing is left, and the rejected
  side repeats the safety action. BranchPO then learns where the safety step ends, not only that
  ``DONE()`` is bad at the anchor.
* :func:`contrast_pairs`: on contrast tasks (``task_info.contrast``) the safety step the contrast
  makes unnecessary or goal-breaking is the rejected side, and the contrast plan's own next step
  the chosen. The step comes from the task's non-contrast twin (same template, same slots).

Rows use the TRL conversational format of ``dataset.preference_row`` / ``dataset.replay_rows``.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence

from ..actors.context import build_context
from ..actors.parsing import parse_output
from ..envs.household.env import CompiledTask, compile_task
from ..envs.household.world import HouseholdWorld
from ..records import RawBranch
from .dataset import replay_rows
from .judge import restore

Row = dict[str, object]


def golden_replay(tasks: Sequence[CompiledTask], level: str = "full") -> list[Row]:
    """The golden plan of every task, step by step (``kind`` golden)."""
    return [r for c in tasks for r in replay_rows(c, [s.action for s in c.task.example_planning], level, "golden")]


def _pair(prompt: str, chosen: str, rejected: str, pair_id: str, task: str, kind: str) -> Row:
    return {"prompt": [{"role": "user", "content": prompt}], "chosen": [{"role": "assistant", "content": chosen}],
            "rejected": [{"role": "assistant", "content": rejected}], "pair_id": pair_id, "task": task, "kind": kind}


def _canon(action: str) -> str:
    parsed = parse_output(action)
    return parsed.action if parsed.ok and parsed.action else " ".join(action.split())


def next_plan_action(compiled: CompiledTask, world: HouseholdWorld) -> str | None:
    """The first golden step not yet done (a multiset match against the executed actions) that
    executes from ``world``; ``DONE()`` when the rest is only ``DONE()`` and the goal holds; None
    when the golden plan gives no executable next step."""
    done = Counter(_canon(r.action) for r in world.history if r.ok)
    for step in compiled.task.example_planning:
        action = _canon(step.action)
        if done[action]:
            done[action] -= 1
            continue
        if action == "DONE()":
            return action if compiled.goal_met(world) else None
        snap = world.snapshot()
        try:
            return action if world.step(action).ok else None
        finally:
            world.restore(snap)
    return "DONE()" if compiled.goal_met(world) else None


def after_repair_pairs(tasks: dict[str, CompiledTask], branches: Sequence[RawBranch], level: str = "full") -> list[Row]:
    """One pair per repaired branch whose y+ executes: at h_{k+1}, next plan action (or ``DONE()``)
    over a repeat of y+."""
    out = []
    for b in branches:
        compiled = tasks.get(b.task)
        if compiled is None or not b.chosen_action:
            continue
        world = restore(compiled, b)
        if not world.step(b.chosen_action).ok:
            continue
        nxt = next_plan_action(compiled, world)
        if nxt is None or nxt == _canon(b.chosen_action):
            continue
        prompt = build_context(compiled, world, level).prompt("compact")  # type: ignore[arg-type]
        out.append({**_pair(prompt, nxt, b.chosen_action, f"{b.branch_id}__after", b.task, "after_repair"),
                    "risk_type": b.risk_type, "trigger": b.trigger})
    return out


def _twin_plan(compiled: CompiledTask) -> list[tuple[str, bool]] | None:
    """(action, is safety step) of the non-contrast twin's golden plan; None without template info."""
    from ..envs.household.suite.generate import instantiate
    from ..envs.household.suite.templates import TEMPLATES

    info = compiled.task.task_info
    template = next((t for t in TEMPLATES if t.name == info.get("template")), None)
    if template is None or not isinstance(info.get("slots"), dict):
        return None
    twin = compile_task(instantiate(template, dict(info["slots"]), False, str(info.get("split", "train"))))
    return [(_canon(s.action), s.is_safety_step) for s in twin.task.example_planning]


def contrast_pairs(tasks: Sequence[CompiledTask], level: str = "full") -> list[Row]:
    """On every contrast task: at each point where the twin takes a safety step the contrast plan
    drops, the contrast plan's step (chosen) over that safety step (rejected)."""
    out = []
    for c in tasks:
        if not c.task.task_info.get("contrast"):
            continue
        twin = _twin_plan(c)
        plan = [_canon(s.action) for s in c.task.example_planning]
        if twin is None:
            continue
        ops = difflib.SequenceMatcher(a=[a for a, _ in twin], b=plan, autojunk=False).get_opcodes()
        world = c.new_world()
        done = 0
        for tag, i1, i2, j1, _ in ops:
            dropped = [a for a, safety in twin[i1:i2] if safety and tag in ("delete", "replace")]
            if not dropped or j1 >= len(plan):
                continue
            for a in plan[done:j1]:
                world.step(a)
            done = j1
            prompt = build_context(c, world, level).prompt("compact")  # type: ignore[arg-type]
            out += [_pair(prompt, plan[j1], a, f"{c.name}__contrast{j1}_{n}", c.name, "contrast")
                    for n, a in enumerate(dropped) if a != plan[j1]]
    return out


def extra_pairs(kinds: Sequence[str], tasks: Sequence[CompiledTask], branches: Sequence[RawBranch],
                level: str = "full") -> list[Row]:
    """The extra BranchPO pairs ``kinds`` names (``after_repair``, ``contrast``) over ``tasks``;
    ``branches`` are the repaired branches of the final pairs."""
    out: list[Row] = []
    if "after_repair" in kinds:
        out += after_repair_pairs({c.name: c for c in tasks}, branches, level)
    if "contrast" in kinds:
        out += contrast_pairs(tasks, level)
    return out
