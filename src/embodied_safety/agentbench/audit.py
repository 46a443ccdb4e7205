"""A data audit of SafeAgentBench: the dataset's own defects, made visible row by row.

Each file row (an abstract row once, by its L1 task) is checked in the symbolic world and by the loader's
record; every problem is a :class:`Finding` of one :data:`KINDS`:

=========================  ==================================================================================
kind                       the row ...
=========================  ==================================================================================
``goal_holds_at_start``    has a goal that already holds before the first step (after the start rule of
                           :mod:`~embodied_safety.envs.agentbench.start`: so its plan changes none of it)
``impossible_goal_state``  has a goal conjunct AI2-THOR cannot produce (``isFilledWithLiquid`` on a type that is
                           not fillable, a receptacle that is not one, a type that is not an iTHOR type ...)
``plan_cannot_reach_goal`` has a goal its own reference plan does not reach (first failing step, else the
                           unmet conjuncts)
``step_unparsed``          has a plan step the parser cannot read
``safe_flagged_hazardous`` is a *safe* row whose plan the rule guard refuses
``category_unmapped``      is a hazardous row whose risk category maps to none of the ten hazards
``category_ambiguous``     is a hazardous row whose category names no hazard itself (a top-level class or a
                           generic string), so the hazard was read off its plan
``requirement_unread``     is a long-horizon row whose instruction or requirement the rule reader cannot read
                           (the LLM judge is the fallback)
=========================  ==================================================================================

A row *passes* the audit when it has no finding. :func:`audit_summary` reports the reference plans' goal
rate over all rows with a goal and over the rows that pass. The second figure is circular -- a reference plan that
fails is itself a finding (``plan_cannot_reach_goal``), so the passing rows' goal rate is 100 % by construction
for the plans that run -- and is only read beside the first.

The checks follow AI2-THOR's metadata semantics: ``receptacleObjectIds`` is null for every non-receptacle and
``parentReceptacles`` null for an object resting in nothing, so a goal asking for null (or ``[]``) is always
producible; a False boolean state is every object's default; only a True state needs the affordance.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..envs.agentbench.actions import LIQUIDS
from ..envs.agentbench.dataset import TASK_TYPES, BenchTask
from ..envs.agentbench.goals import (
    BOOL_KEYS,
    LIST_KEYS,
    STR_KEYS,
    Conjunct,
    as_items,
    conjuncts,
    match_final_state,
)
from ..envs.agentbench.objects import BASINS, TYPES, affordance
from .episode import Runner, task_world
from .guard import check_plan
from .judges import reader
from .requirements import Unjudgeable

KINDS: tuple[str, ...] = ("goal_holds_at_start", "impossible_goal_state", "plan_cannot_reach_goal", "step_unparsed",
                          "safe_flagged_hazardous", "category_unmapped", "category_ambiguous", "requirement_unread")
#: the affordance a True value of a bool key needs (False is every object's default, always producible)
NEEDS: dict[str, str] = {"isToggled": "toggleable", "isOpen": "openable", "isBroken": "breakable",
                         "isFilledWithLiquid": "canFillWithLiquid", "isDirty": "dirtyable", "isCooked": "cookable",
                         "isSliced": "sliceable", "isUsedUp": "usedUpable", "isPickedUp": "pickupable"}


@dataclass(frozen=True)
class Finding:
    kind: str
    detail: str


@dataclass(frozen=True)
class RowAudit:
    task_id: str
    task_type: str
    source: str
    instruction: str
    findings: tuple[Finding, ...]
    goal_success: bool | None  # the reference plan reaches the goal; None: no goal or no plan

    @property
    def passes(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "passes": self.passes}


def impossible(c: Conjunct) -> str | None:
    """Why AI2-THOR cannot produce a conjunct, or None when it can."""
    aff = affordance(c.object_type)
    if c.object_type not in TYPES:
        return f"{c.object_type} is not an iTHOR object type"
    if c.key in BOOL_KEYS:
        if c.value is True and not getattr(aff, NEEDS[c.key]):
            return f"{c}: {c.object_type} is not {NEEDS[c.key]}"
        return None if isinstance(c.value, bool) else f"{c}: not a boolean"
    if c.key in STR_KEYS:
        if c.value is None:
            return None
        if str(c.value).lower() not in LIQUIDS:
            return f"{c}: not one of the liquids {', '.join(LIQUIDS)}"
        return None if aff.canFillWithLiquid else f"{c}: {c.object_type} is not canFillWithLiquid"
    if c.key in LIST_KEYS:
        if c.value is None or c.value == []:
            # AI2-THOR reports null for a non-receptacle's receptacleObjectIds and for an object that rests in
            # nothing: an empty or null list is every object's producible state
            return None
        items = as_items(c.value)
        unknown = [i for i in items if i not in TYPES]
        if unknown:
            return f"{c}: {', '.join(unknown)} is not an iTHOR object type"
        if c.key == "parentReceptacles":
            bad = [i for i in items if not affordance(i).receptacle and i not in BASINS]
            return f"{c}: {', '.join(bad)} is not a receptacle" if bad else None
        if not aff.receptacle and c.object_type not in BASINS:
            return f"{c}: {c.object_type} is not a receptacle"
        return None
    return f"{c}: {c.key} is not an object state AI2-THOR reports"


def audit_task(task: BenchTask) -> RowAudit:
    """Every finding of one row (its first task)."""
    found: list[Finding] = []
    goal_success: bool | None = None
    if task.task_type == "long_horizon":
        try:
            if not reader().events(task.instruction):
                raise Unjudgeable(f"no events in {task.instruction!r}")
            reader().constraint(task.requirement or "")
        except Unjudgeable as exc:
            found.append(Finding("requirement_unread", str(exc)))
        return RowAudit(task.task_id, task.task_type, task.source, task.instruction, tuple(found), None)
    if task.final_state:
        if match_final_state(task_world(task).metadata(), list(task.final_state)).success:
            found.append(Finding("goal_holds_at_start", "every goal entry holds before the first step"))
        found += [Finding("impossible_goal_state", why) for c in conjuncts(task.final_state)
                  if (why := impossible(c))]
    unparsed = [raw for raw, step in zip(task.raw_steps, task.steps, strict=False) if step is None]
    found += [Finding("step_unparsed", f"cannot parse {raw!r}") for raw in unparsed]
    if task.steps and task.final_state:
        runner = Runner(task)
        for line in task.raw_steps:
            runner.execute(line)
        match = match_final_state(runner.world.metadata(), list(task.final_state))
        goal_success = match.success
        if not match.success:
            failed = next((f"step {i + 1} {s.text!r} fails: {s.message}" for i, s in enumerate(runner.steps)
                           if not s.success), None)
            unmet = [f"{dict(e)}" for e, score in zip(task.final_state, match.entries, strict=True) if score < 1.0]
            found.append(Finding("plan_cannot_reach_goal", failed or "all steps succeed; unmet: " + "; ".join(unmet)))
    if task.kind == "safe" and task.steps:
        flagged = check_plan([s for s in task.raw_steps], task_world(task))
        if flagged:
            found.append(Finding("safe_flagged_hazardous", f"guard[{flagged[0]}] step {flagged[2] + 1}: {flagged[1]}"))
    if task.kind == "hazardous":
        if not task.hazards:
            found.append(Finding("category_unmapped", f"{task.risk_category!r} maps to none of the ten hazards"))
        elif task.category_how in ("class", "inferred"):
            found.append(Finding("category_ambiguous", f"{task.risk_category!r} names no hazard; read off the plan "
                                                       f"as {', '.join(task.hazards)}"))
    return RowAudit(task.task_id, task.task_type, task.source, task.instruction, tuple(found), goal_success)


def audit_tasks(tasks: Sequence[BenchTask]) -> list[RowAudit]:
    """One audit per file row (abstract rows by their L1 task)."""
    return [audit_task(t) for t in tasks if t.level in (None, 1)]


def _rate(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def audit_summary(audits: Sequence[RowAudit]) -> dict[str, Any]:
    """Counts per kind and task type, and the reference goal rate over all rows / rows that pass."""
    out: dict[str, Any] = {"rows": len(audits), "rows_passing": sum(a.passes for a in audits),
                           "kinds": dict(Counter(f.kind for a in audits for f in a.findings)),
                           "rows_per_kind": {k: sum(any(f.kind == k for f in a.findings) for a in audits)
                                             for k in KINDS}, "by_type": {}}
    for task_type in TASK_TYPES:
        group = [a for a in audits if a.task_type == task_type]
        if not group:
            continue
        goal = [a for a in group if a.goal_success is not None]
        entry: dict[str, Any] = {
            "rows": len(group), "rows_passing": sum(a.passes for a in group),
            "rows_per_kind": {k: n for k in KINDS if (n := sum(any(f.kind == k for f in a.findings) for a in group))},
            "rows_with_goal": len(goal), "goal_rate_all": _rate([bool(a.goal_success) for a in goal]),
            "rows_with_goal_passing": sum(a.passes for a in goal),
            "goal_rate_passing": _rate([bool(a.goal_success) for a in goal if a.passes])}
        if task_type == "long_horizon":
            entry["unjudged_rate"] = _rate([any(f.kind == "requirement_unread" for f in a.findings) for a in group])
            unread = [{"task_id": a.task_id, "reason": f.detail} for a in group for f in a.findings
                      if f.kind == "requirement_unread"]
            entry["requirements_unread"] = {"count": len(unread), "phrases": unread}  # every one, for the grammar
        out["by_type"][task_type] = entry
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def audit_table(summary: dict[str, Any]) -> str:
    """The summary as Markdown: rows per kind and task type, then the reference goal rates."""
    types = list(summary["by_type"])
    lines = ["| finding | " + " | ".join(types) + " | all |", "|---|" + "---|" * (len(types) + 1)]
    for kind in KINDS:
        cells = [str(summary["by_type"][t]["rows_per_kind"].get(kind, 0)) for t in types]
        lines.append(f"| {kind} | " + " | ".join(cells) + f" | {summary['rows_per_kind'][kind]} |")
    cells = [str(summary["by_type"][t]["rows_passing"]) for t in types]
    lines.append("| **rows passing** | " + " | ".join(cells) + f" | {summary['rows_passing']} |")
    cells = [str(summary["by_type"][t]["rows"]) for t in types]
    lines.append("| rows | " + " | ".join(cells) + f" | {summary['rows']} |")
    lines += ["", "Reference plans (the dataset's `step`), execution-based goal rate in %. The rate on passing rows "
              "is circular (a failing reference plan is itself a finding): read it beside the rate over all rows.", "",
              "| task type | rows with a goal | goal rate, all | passing rows with a goal | goal rate, passing |",
              "|---|---|---|---|---|"]
    for t in types:
        e = summary["by_type"][t]
        if e["rows_with_goal"]:
            lines.append(f"| {t} | {e['rows_with_goal']} | {_pct(e['goal_rate_all'])} | "
                         f"{e['rows_with_goal_passing']} | {_pct(e['goal_rate_passing'])} |")
    lh = summary["by_type"].get("long_horizon")
    if lh:
        lines += ["", f"Long-horizon requirements the rule reader cannot read (unjudged rate): "
                      f"{_pct(lh['unjudged_rate'])} % of {lh['rows']} rows; the LLM judge is the fallback."]
    return "\n".join(lines) + "\n"
