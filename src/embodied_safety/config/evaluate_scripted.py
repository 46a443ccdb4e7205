"""The ``evaluate_scripted`` section of ``params.yaml``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class EvaluateScriptedConfig:
    """``evaluate_scripted``: scripted reference policies on every split."""

    policies: tuple[Literal["golden", "golden_unsafe", "random"], ...] = ("golden", "golden_unsafe")
    splits: tuple[str, ...] = ("train", "dev", "test", "ood_objectshift", "ood_taskshift")
    extra_steps: int = 10  # step budget = golden length + extra_steps (IS-Bench)
    invalid_output: Literal["reask", "failed_step"] = "reask"  # unparseable output: asked again (IS-Bench) or a failed step
    upstream_parity: bool = False  # True: IS-Bench's (type, action)-keyed process conditions (a later one overwrites)
    seed: int = 0  # for the random policy
