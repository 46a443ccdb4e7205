"""The ``household_suite`` section of ``params.yaml``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HouseholdSuiteConfig:
    """``household_suite``: the default task suite (SafeBranch App. B)."""

    seed: int = 0  # shuffles slot combinations and OOD choices
    per_template: int = 16  # slot combinations per template (train + dev + test)
    n_dev: int = 2  # dev combinations per template
    n_test: int = 3  # test combinations per template (unseen combinations of seen categories)
    contrast_every: int = 4  # every k-th combination is a contrast task (0 = none)
    taskshift_per_target: int = 2  # OOD-TaskShift tasks per held-out target category
    behavior_coverage: bool = True  # report how many BEHAVIOR-1K activities parse and initialise

    def __post_init__(self) -> None:
        if self.per_template < self.n_dev + self.n_test + 1:
            raise ValueError("household_suite.per_template must exceed n_dev + n_test")
