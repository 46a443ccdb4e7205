"""The ``rubric_label`` section of ``params.yaml``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from embodied_safety.config.control_envs import ENV_KEYS, env_defaults
from embodied_safety.config.shared import ShardRunnerConfig


@dataclass(frozen=True)
class RubricLabelConfig(ShardRunnerConfig):
    """``rubric_label``: per-frame rubric scores V(o, c_k) and severity ρ (§4.2 (ii)); shard = frame batch."""

    envs: tuple[str, ...] = ENV_KEYS
    backend: Literal["pixel", "vlm"] = "pixel"
    rubric_sets: dict[str, str] = env_defaults("rubric_label.rubric_sets")
    vlm: dict[str, Any] = dataclasses.field(default_factory=dict)  # vlm: base_url, model, max_tokens, timeout_s, ...
    retries: int = 2
    batch_frames: int = 4096
