"""The actor interface: a batch of prompts and a temperature in, raw text samples out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .prompts import PromptStyle


class Actor(Protocol):
    """Any backend (local transformers, OpenAI-compatible endpoint) that samples next actions."""

    prompt_style: PromptStyle

    def generate(self, prompts: list[str], temperature: float = 0.0, seed: int | Sequence[int] = 0) -> list[str]:
        """One raw completion per prompt (parse with :func:`embodied_safety.actors.parsing.parse_output`).

        ``seed``: one seed for the call, or one per prompt; with one per prompt, a prompt's sample depends only on
        the prompt and its own seed, not on the other prompts of the batch (rollout shards rely on it)."""
        ...
