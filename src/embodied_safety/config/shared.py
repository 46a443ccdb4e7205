"""Config types several stages share: the actor, tracking, the actor's model shape, the planner, the shard runner."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class ActorConfig:
    """Which actor a stage uses: a local transformers model or an OpenAI-compatible endpoint."""

    backend: Literal["hf", "openai"] = "hf"
    model: str = "models/bootstrap_actor/model"  # hf: model dir or cached hub id; openai: served model name
    prompt_style: Literal["full", "compact"] | None = None  # None: the model dir's profile (hf) or "full"
    max_new_tokens: int = 16
    batch_size: int = 64  # hf: contexts per generate call
    base_url: str = "http://127.0.0.1:8000/v1"  # openai
    api_key_env: str = "OPENAI_API_KEY"  # openai: name of the variable holding the key (never the key)
    concurrency: int = 8  # openai: parallel requests
    timeout_s: float = 60.0
    max_retries: int = 3


@dataclass(frozen=True)
class TrackingConfig:
    tracking_uri: str = "sqlite:///mlruns.db"
    artifact_root: str = "mlartifacts"
    experiment: str = "embodied-safety"


@dataclass(frozen=True)
class ModelShape:
    """Qwen3 shape of the bootstrap actor. Power-of-two head_dim: 48 was 3x slower than 64 on CPU
    (FIELD_NOTES part 3)."""

    hidden_size: int = 128
    intermediate_size: int = 256
    num_hidden_layers: int = 2
    num_attention_heads: int = 2
    num_key_value_heads: int = 1
    head_dim: int = 64
    max_position_embeddings: int = 1024


@dataclass(frozen=True)
class PlannerConfig:
    """The DFS planner settings shared by ``rollouts`` and ``branches`` (SafeBranch Table 7)."""

    splits: tuple[str, ...] = ("train",)
    temperatures: tuple[float, ...] = (0.0, 0.3, 0.7, 1.0)
    seed: int = 0
    max_steps: int = 30  # decision steps per episode
    max_fails_per_step: int = 3  # failed attempts before a decision step counts as spent
    stall_window: int = 5  # executed actions without a state change that end the episode
    reject_repeats: bool = True  # anti-stall: refuse an exact repeat of the previous successful action
    observation: Literal["full", "partial"] = "full"
    actor: dict[str, Any] = dataclasses.field(default_factory=dict)  # ActorConfig fields


@dataclass(frozen=True)
class ShardRunnerConfig:
    """Where a stage's shard tasks run (Prefect task runners).

    ``local``: in the stage's process, one after another (one batched model). ``dask`` / ``ray``: on a
    cluster, every worker loading its own model: a local one of ``runner_workers`` processes, or an
    existing one at ``runner_address`` (``tcp://host:8786`` for Dask, ``ray://host:10001`` or ``auto``
    for Ray). ``concurrency_tag`` tags the shard task runs so a Prefect concurrency limit on that tag
    (``prefect concurrency-limit create <tag> 4``) caps how many run at once, e.g. against one
    endpoint; off by default, since every tagged run costs two more API calls (docs/operations.md)."""

    task_runner: Literal["local", "dask", "ray"] = "local"
    runner_address: str | None = None
    runner_workers: int = 2
    concurrency_tag: str | None = None
