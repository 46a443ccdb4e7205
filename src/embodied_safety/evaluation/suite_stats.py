"""Counts that describe a suite: per split, room, risk type, condition kind and trigger kind."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from ..envs.household.task import HouseholdTask
from .household_metrics import risk_slug


def _trigger_kind(action: str | None) -> str:
    return "always" if action is None else "completion" if action == "completion" else "action"


def suite_metrics(splits: Mapping[str, Sequence[HouseholdTask]]) -> dict[str, int]:
    """``data/...`` counts for ``metrics.json`` (DVC) and MLflow."""
    m: Counter[str] = Counter()
    templates = set()
    for split, tasks in splits.items():
        m[f"data/tasks_{split}"] = len(tasks)
        for t in tasks:
            templates.add(t.task_info.get("template", t.name))
            m["data/tasks_total"] += 1
            m[f"data/room_{t.room}"] += 1
            m["data/contrast_tasks"] += bool(t.task_info.get("contrast"))
            for c in t.conditions:
                m[f"data/conditions_{c.kind}"] += 1
                m[f"data/risk_{risk_slug(c.risk_type)}"] += 1
                if c.kind == "termination":
                    m[f"data/termination_trigger_{_trigger_kind(c.action)}"] += 1
    m["data/templates"] = len(templates)
    return dict(sorted(m.items()))
