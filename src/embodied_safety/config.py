"""Frozen config dataclasses, one per ``params.yaml`` section; unknown keys are rejected."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

T = TypeVar("T")

DEFAULT_PARAMS = Path("params.yaml")


@dataclass(frozen=True)
class HouseholdSuiteConfig:
    """``household_suite``: the default task suite (SafeBranch App. B)."""

    seed: int = 0  # shuffles slot combinations and OOD choices
    per_template: int = 12  # slot combinations per template (train + dev + test)
    n_dev: int = 2  # dev combinations per template
    n_test: int = 3  # test combinations per template (unseen combinations of seen categories)
    contrast_every: int = 4  # every k-th combination is a contrast task (0 = none)
    taskshift_per_target: int = 2  # OOD-TaskShift tasks per held-out target category
    behavior_coverage: bool = True  # report how many BEHAVIOR-1K activities parse and initialise

    def __post_init__(self) -> None:
        if self.per_template < self.n_dev + self.n_test + 1:
            raise ValueError("household_suite.per_template must exceed n_dev + n_test")


@dataclass(frozen=True)
class EvaluateScriptedConfig:
    """``evaluate_scripted``: scripted reference policies on every split."""

    policies: tuple[Literal["golden", "golden_unsafe", "random"], ...] = ("golden", "golden_unsafe")
    splits: tuple[str, ...] = ("train", "dev", "test", "ood_objectshift", "ood_taskshift")
    extra_steps: int = 10  # step budget = golden length + extra_steps (IS-Bench)
    seed: int = 0  # for the random policy


def from_dict(cls: type[T], raw: dict[str, Any] | None, section: str) -> T:
    """Build ``cls`` from a mapping, naming the section and key of any unknown field."""
    raw = dict(raw or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ValueError(f"params.yaml: {section}: unknown key(s) {unknown}; expected some of {sorted(fields)}")
    for key, value in list(raw.items()):
        if isinstance(value, list):
            raw[key] = tuple(value)
    return cls(**raw)


def load_params(section: str, cls: type[T], path: str | os.PathLike[str] = DEFAULT_PARAMS) -> T:
    """Read one section of ``params.yaml`` into its dataclass (defaults when the file is absent)."""
    import yaml

    path = Path(path)
    data = yaml.safe_load(path.read_text()) if path.is_file() else {}
    return from_dict(cls, (data or {}).get(section), section)
