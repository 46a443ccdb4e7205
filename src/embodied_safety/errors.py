"""Errors a user can act on: each names the file, the field and what was expected."""

from __future__ import annotations


class TaskFormatError(ValueError):
    """A task file (JSON or BDDL) is malformed.

    The message always names the file and the field, e.g.
    ``tasks/cook.json: evaluation_goal_conditions.process_safety_goal_condition[0].safety_bddl:
    unknown predicate 'glowing'``.
    """

    def __init__(self, path: str, field: str, problem: str) -> None:
        self.path = path
        self.field = field
        self.problem = problem
        super().__init__(f"{path}: {field}: {problem}")


def require_package(module: str, extra: str) -> None:
    """Raise an ImportError naming the extra to install when an optional dependency is missing."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ImportError(
            f"'{module}' is not installed; install the extra: pip install 'embodied-safety[{extra}]'"
        )
