"""How many BEHAVIOR-1K activity definitions shipped in ``bddl`` parse and initialise in the world.

Every predicate of the ``omnigibson`` domain is known to the world (issue 17), so a problem that
fails is reported with its reason, never dropped. ``python analysis/behavior_coverage.py``
prints the figure.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ...errors import TaskFormatError
from .bddl_backend import CompiledCondition, WorldRef, init_facts, parse_problem_text
from .world import HouseholdWorld


def activity_problems() -> list[Path]:
    """Every ``problem0.bddl`` of the activities shipped with the ``bddl`` package."""
    import bddl

    root = Path(bddl.__file__).parent / "activity_definitions"
    return sorted(root.glob("*/problem0.bddl"))


def behavior_coverage(paths: list[Path] | None = None) -> dict[str, object]:
    """Parse each problem, build its initial world, compile and evaluate its goal."""
    paths = activity_problems() if paths is None else paths
    parsed = initialised = 0
    reasons: Counter[str] = Counter()
    for path in paths:
        try:
            problem = parse_problem_text(path.read_text(), str(path))
        except TaskFormatError as exc:
            reasons[_reason(exc.problem)] += 1
            continue
        parsed += 1
        try:
            world = HouseholdWorld(problem.instances, {}, init_facts(problem))
            CompiledCondition(problem.goal, problem.objects, WorldRef()).holds(world)
        except Exception as exc:  # any failure here is a coverage gap, reported by type
            reasons[f"initialise: {type(exc).__name__}"] += 1
            continue
        initialised += 1
    return {
        "behavior/activities": len(paths),
        "behavior/parsed": parsed,
        "behavior/initialised": initialised,
        "behavior/coverage": initialised / len(paths) if paths else 0.0,
        "behavior/failure_reasons": dict(reasons.most_common()),
    }


def _reason(problem: str) -> str:
    if problem.startswith("unknown predicate"):
        return problem.split(" (supported")[0]
    return problem.split(":")[0][:80]
