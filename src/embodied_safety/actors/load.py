"""Build the actor a config names (two backends, one ``if``)."""

from __future__ import annotations

from ..config.shared import ActorConfig
from .base import Actor


def load_actor(cfg: ActorConfig) -> Actor:
    if cfg.backend == "hf":
        from .hf import HFActor

        return HFActor(cfg.model, max_new_tokens=cfg.max_new_tokens, batch_size=cfg.batch_size,
                       prompt_style=cfg.prompt_style)
    from .openai_backend import OpenAIActor

    return OpenAIActor(base_url=cfg.base_url, model=cfg.model, api_key_env=cfg.api_key_env,
                       prompt_style=cfg.prompt_style, max_tokens=cfg.max_new_tokens,
                       timeout_s=cfg.timeout_s, max_retries=cfg.max_retries, concurrency=cfg.concurrency)


def actor_id(cfg: ActorConfig) -> str:
    """Identifies the actor in shard hashes: the model dir's content hash, or endpoint + model."""
    from pathlib import Path

    from ..manifest import hash_path

    if cfg.backend == "hf" and Path(cfg.model).is_dir():
        return f"hf:{hash_path(cfg.model)[:16]}"
    return f"{cfg.backend}:{cfg.base_url if cfg.backend == 'openai' else ''}:{cfg.model}"
